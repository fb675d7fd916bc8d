import net from 'node:net';
import { Writable } from 'node:stream';
import request from 'supertest';
import { ServiceUnavailableError } from '../../src/errors';
import { createLogger } from '../../src/process/logger';
import { buildTestApp, type TestApp } from '../helpers/app';
import * as client from '../helpers/clients';
import { FailingStore } from '../helpers/failing-store';
import { errorBody } from '../helpers/http';
import { waitFor } from '../helpers/wait';
import { ACME, fixtureSeed, OTHER } from '../helpers/fixtures';
import { bookingChange, statusChange, withdrawal } from '../helpers/payloads';

function captureLogs() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, entries: () => lines.map((line) => JSON.parse(line)), logger: createLogger('info', destination) };
}

const SECRETS = [ACME.share_public, ACME.share_secret, OTHER.share_public, OTHER.share_secret];

describe('request logs', () => {
  let t: TestApp;
  let logs: ReturnType<typeof captureLogs>;
  beforeEach(async () => {
    logs = captureLogs();
    t = await buildTestApp(undefined, { logger: logs.logger });
  });

  it('writes one JSON line per request with request id, method, route, status and duration', async () => {
    const response = await client.withdraw(t).set('X-Request-Id', 'req-123').send(withdrawal());
    expect(response.status).toBe(200);
    expect(logs.entries()).toEqual([
      {
        level: 30,
        time: expect.any(String),
        req: { id: 'req-123', method: 'POST', url: '/v1/tokens/withdraw' },
        route: '/v1/tokens/withdraw',
        res: { statusCode: 200 },
        responseTime: expect.any(Number),
        msg: 'request completed',
      },
    ]);
  });

  it("cuts a stranger's long URL to 256 characters in the log line, saying how long it was", async () => {
    const path = `/${'A'.repeat(8000)}`;
    // A path no operation has, which no client builds.
    await request(t.server).get(path).expect(404);
    const [entry] = logs.entries();
    expect(entry.req.url).toBe(`${path.slice(0, 256)}… (8001 characters)`);
    expect(logs.lines[0].length).toBeLessThan(1000);
  });

  it('logs client errors at warn and names the route pattern, not the key, for bookings', async () => {
    await client.modifyBooking(t, bookingChange(), 'key-00000001', 'OTHER');
    const [entry] = logs.entries();
    expect(entry).toMatchObject({ level: 40, route: '/:version/booking/:partnerid/:randomkey', res: { statusCode: 403 } });
  });

  it('logs a crash at error with its stack, while the client sees only the envelope', async () => {
    const store = new FailingStore();
    await store.loadSeed(fixtureSeed());
    store.failure = new Error('store exploded');
    const crashing = await buildTestApp(undefined, { store, logger: logs.logger });
    const response = await client.withdraw(crashing, withdrawal());
    expect(response.text).not.toContain('store exploded');
    const [entry] = logs.entries();
    expect(entry).toMatchObject({ level: 50, res: { statusCode: 500 }, err: { message: 'store exploded' } });
    expect(entry.err.stack).toContain('store exploded');
  });

  it("logs a drain's 503 at info, with its reason and no err or stack: every deploy drains", async () => {
    const draining = await buildTestApp(undefined, { logger: logs.logger, isShuttingDown: () => true });
    await client.withdraw(draining, withdrawal()).expect(503);
    const [entry] = logs.entries();
    expect(entry).toMatchObject({ level: 30, res: { statusCode: 503 }, reason: 'shutting_down', msg: 'request failed' });
    expect(Object.keys(entry)).toEqual(['level', 'time', 'req', 'res', 'reason', 'responseTime', 'route', 'msg']);
  });

  it("logs readiness's 503 while stopping at info as shutting_down, with no err or stack: a stop is expected", async () => {
    const stopping = await buildTestApp(undefined, { logger: logs.logger, isShuttingDown: () => true });
    const response = await request(stopping.server).get('/readyz');
    expect(response.status).toBe(503);
    expect(response.body).toEqual(errorBody(503, 'Service Unavailable'));
    const [entry] = logs.entries();
    expect(entry).toMatchObject({ level: 30, res: { statusCode: 503 }, reason: 'shutting_down', msg: 'request failed' });
    expect(entry).not.toHaveProperty('err');
  });

  it("logs readiness's 503 for a store that does not answer at error, as store_unavailable", async () => {
    const store = new FailingStore();
    await store.loadSeed(fixtureSeed());
    store.failure = new ServiceUnavailableError();
    const failing = await buildTestApp(undefined, { store, logger: logs.logger });
    await request(failing.server).get('/readyz').expect(503);
    const [entry] = logs.entries();
    expect(entry).toMatchObject({ level: 50, res: { statusCode: 503 }, reason: 'store_unavailable', msg: 'request failed' });
    expect(entry).not.toHaveProperty('err');
  });

  it('logs an unreachable store (503) at error, with its reason and no made-up stack', async () => {
    const store = new FailingStore();
    await store.loadSeed(fixtureSeed());
    store.failure = new ServiceUnavailableError();
    const failing = await buildTestApp(undefined, { store, logger: logs.logger });
    await client.withdraw(failing, withdrawal()).expect(503);
    const [entry] = logs.entries();
    expect(entry).toMatchObject({ level: 50, res: { statusCode: 503 }, reason: 'store_unavailable', msg: 'request failed' });
    expect(entry).not.toHaveProperty('err');
  });

  it('says why a 4xx was refused: its reason code, and the account once the request authenticated', async () => {
    await client.withdraw(t, withdrawal({ share_public: OTHER.share_public })).expect(401);
    await client.withdraw(t, withdrawal({ token_id: '999999' })).expect(428);
    const [unauthenticated, refused] = logs.entries();
    expect(unauthenticated).toMatchObject({ level: 40, res: { statusCode: 401 }, reason: 'unauthorized' });
    expect(unauthenticated).not.toHaveProperty('source_id');
    expect(refused).toMatchObject({ level: 40, res: { statusCode: 428 }, reason: 'token_mismatch', source_id: ACME.source_id });
    for (const entry of [unauthenticated, refused]) expect(entry).not.toHaveProperty('err');
  });

  it('redacts the values of key, secret and token parameters in the query string', async () => {
    const query = `?share_secret=${ACME.share_secret}&share%5Fpublic=${ACME.share_public}&api_key=k1&access_token=t1&page=2&flag`;
    // A query string on an operation's path: no client builds one.
    await request(t.server).post(`/v1/tokens/withdraw${query}`).send(withdrawal()).expect(200);
    const [entry] = logs.entries();
    expect(entry.req.url).toBe(
      '/v1/tokens/withdraw?share_secret=[redacted]&share%5Fpublic=[redacted]&api_key=[redacted]&access_token=[redacted]&page=2&flag',
    );
  });

  it('writes the one line of a request whose client hung up before the answer, when the connection closes', async () => {
    await new Promise<void>((resolve) => t.server.listen(0, '127.0.0.1', resolve));
    try {
      const socket = net.connect((t.server.address() as net.AddressInfo).port, '127.0.0.1');
      socket.on('error', () => undefined);
      // Expect: 100-continue: the body reader says continue, so the request is inside its chain when the client goes.
      const continued = new Promise((resolve) => socket.once('data', resolve));
      socket.write(
        'POST /v1/tokens/withdraw HTTP/1.1\r\nHost: x\r\nX-Request-Id: hung-up\r\nContent-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n',
      );
      expect(String(await continued)).toMatch(/^HTTP\/1\.1 100 Continue/);
      socket.destroy();
      await waitFor(async () => logs.lines.length > 0);
      expect(logs.entries()).toEqual([
        expect.objectContaining({
          req: { id: 'hung-up', method: 'POST', url: '/v1/tokens/withdraw' },
          route: '/v1/tokens/withdraw',
          msg: 'request completed',
        }),
      ]);
    } finally {
      t.server.closeAllConnections();
      await new Promise((resolve) => t.server.close(resolve));
    }
  });

  it('never writes a key or secret, whatever the requests and their outcomes', async () => {
    const requests = [
      () => client.withdraw(t, withdrawal()),
      () => client.withdraw(t, withdrawal({ share_public: OTHER.share_public })),
      // Withdraw's GET, which no client sends.
      () =>
        request(t.server)
          .get('/v1/tokens/withdraw')
          .send(withdrawal({ withdrawn_amount: 'bad' })),
      () => client.statusChange(t, statusChange()),
      () => client.events(t, statusChange({ read_event: 'nope' })),
      () => client.modifyBooking(t, bookingChange()),
      () => client.modifyBooking(t, bookingChange({ share_secret: OTHER.share_secret })),
      () => client.modifyBooking(t).set('Content-Type', 'application/json').send(`{"share_secret":"${ACME.share_secret}",`),
      () => client.withdraw(t).set('Authorization', `Bearer ${ACME.share_secret}`).send(withdrawal()),
    ];
    const bodies: string[] = [];
    for (const send of requests) bodies.push((await send()).text);
    expect(logs.lines).toHaveLength(requests.length);
    for (const text of [...logs.lines, ...bodies]) {
      for (const secret of SECRETS) expect(text).not.toContain(secret);
    }
  });

  it('redacts key fields if a log call ever carries them', () => {
    logs.logger.info({ share_public: ACME.share_public, body: { share_secret: ACME.share_secret } }, 'x');
    expect(logs.lines.join('\n')).not.toMatch(/pk_test|sk_test/);
  });
});
