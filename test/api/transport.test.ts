import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import request from 'supertest';
import { ServiceUnavailableError, StoreTimeoutError } from '../../src/errors';
import { OPERATIONS as CATALOGUE } from '../../src/operations/catalogue';
import { buildTestApp, type TestApp } from '../helpers/app';
import * as client from '../helpers/clients';
import { FailingStore, HoldingStore } from '../helpers/failing-store';
import { fixtureSeed, OTHER, TOKENS } from '../helpers/fixtures';
import { errorBody, readinessWithin, SUCCESS_BODY } from '../helpers/http';
import {
  bookingChange,
  bookingPath,
  otherAccountStatusChange,
  statusChange,
  tokenCreation,
  tokenPath,
  withdrawal,
} from '../helpers/payloads';
import { readState } from '../helpers/state';

/** Every operation route, by the name its tests carry, and how to send to it. */
const OPERATIONS: ReadonlyArray<readonly [string, (t: TestApp) => request.Test]> = [
  ['POST /v1/tokens/status-change', client.statusChange],
  ['POST /v1/tokens/withdraw', client.withdraw],
  // Withdraw's GET (a JSON body on a GET, as the published samples send it): no client sends a GET.
  ['GET /v1/tokens/withdraw', (t) => request(t.server).get('/v1/tokens/withdraw')],
  ['POST /v1/tokens/loaded', client.loaded],
  ['POST /v1/tokens/unloaded', client.unloaded],
  ['POST /v1/tokens/load-schedule', client.loadSchedule],
  ['POST /v1/tokens/expiry-date', client.expiryDate],
  ['POST /v1/tokens/available-date', client.availableDate],
  ['POST /v1/tokens/refund', client.refund],
  ['POST /v1/events', client.events],
  [`POST ${tokenPath()}`, client.createToken],
  [`PATCH ${tokenPath()}`, (t) => client.changeToken(t)],
  [`PATCH ${tokenPath()}/modify`, (t) => client.changeToken(t, undefined, undefined, 'modify')],
  [`PATCH ${tokenPath()}/load`, (t) => client.changeToken(t, undefined, undefined, 'load')],
  [`PATCH ${tokenPath()}/unload`, (t) => client.changeToken(t, undefined, undefined, 'unload')],
  [`POST ${bookingPath()}`, client.createBooking],
  [`PATCH ${bookingPath()}`, client.modifyBooking],
  [`DELETE ${bookingPath()}`, client.cancelBooking],
];

/**
 * Every method of every path of the catalogue that takes a body, as "METHOD /path/:param": the feed takes none, so
 * these rules of the body are not its (test/api/feed.test.ts).
 */
const CATALOGUE_ROUTES = CATALOGUE.filter((entry) => entry.kind !== 'feed').flatMap((entry) =>
  entry.methods.map((method) => `${method.toUpperCase()} ${entry.path}`),
);

/** Whether a route of OPERATIONS ("METHOD /v1/token/ACME/key") is the catalogue's route ("METHOD /:version/token/:partnerid/:randomkey"). */
function isRouteOf(sent: string, catalogued: string): boolean {
  return new RegExp(`^${catalogued.replace(/:\w+/g, '[^/]+')}$`).test(sent);
}

describe('transport rules, the same on every operation route', () => {
  it('the routes these rules are checked on are every method of every path of the catalogue that takes a body, each once', () => {
    const sent = OPERATIONS.map(([route]) => route);
    expect(CATALOGUE_ROUTES.filter((route) => sent.filter((other) => isRouteOf(other, route)).length !== 1)).toEqual([]);
    expect(sent.filter((route) => !CATALOGUE_ROUTES.some((catalogued) => isRouteOf(route, catalogued)))).toEqual([]);
  });

  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp();
  });

  it.each(OPERATIONS)('%s: 415 for a body that is not JSON, and nothing changes', async (_route, send) => {
    const before = await readState(t.store);
    const response = await send(t).set('Content-Type', 'text/plain').send('token_id=1');
    expect({ status: response.status, body: response.body }).toEqual({
      status: 415,
      body: errorBody(415, 'Content-Type must be application/json'),
    });
    expect(await readState(t.store)).toEqual(before);
  });

  it.each(OPERATIONS)('%s: 400 when there is no body at all', async (_route, send) => {
    const response = await send(t);
    expect({ status: response.status, body: response.body }).toEqual({
      status: 400,
      body: errorBody(400, 'Request body is required: send a JSON object'),
    });
  });

  it.each(OPERATIONS)('%s: 400 for malformed JSON', async (_route, send) => {
    const response = await send(t).set('Content-Type', 'application/json').send('{"source_id": "ACME",');
    expect({ status: response.status, body: response.body }).toEqual({
      status: 400,
      body: errorBody(400, 'Malformed JSON body: it ends at line 1, column 22 before the JSON is complete'),
    });
  });

  it('a body that is not valid UTF-8 is a 400 and changes nothing, rather than stored with replacement characters', async () => {
    const before = await readState(t.store);
    const text = JSON.stringify(withdrawal());
    const bytes = Buffer.concat([Buffer.from(text.slice(0, -2)), Buffer.from([0xff, 0xc3]), Buffer.from(text.slice(-2))]);
    // superagent would serialise a Buffer as JSON: fetch sends the bytes as they are.
    await new Promise<void>((resolve) => t.server.listen(0, '127.0.0.1', resolve));
    const { port } = t.server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/v1/tokens/withdraw`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: bytes,
    });
    await new Promise((resolve) => t.server.close(resolve));
    expect({ status: response.status, body: await response.json() }).toEqual({
      status: 400,
      body: errorBody(400, 'Request body is not valid UTF-8'),
    });
    expect(await readState(t.store)).toEqual(before);
  });

  it.each([
    ['{"a":}', 'unexpected "}" at line 1, column 6'],
    ['{"a" 1}', 'unexpected "1" at line 1, column 6'],
    ['{\n  "a": 1\n  "b": 2\n}', 'unexpected "\\"" at line 3, column 3'],
    ['{"a": tru}', 'unexpected "}" at line 1, column 10'],
    ['{"a": 1} x', 'unexpected "x" at line 1, column 10'],
  ])('malformed JSON %j: the 400 says where parsing failed, without echoing the body', async (text, where) => {
    const response = await client.withdraw(t).set('Content-Type', 'application/json').send(text);
    expect({ status: response.status, body: response.body }).toEqual({
      status: 400,
      body: errorBody(400, `Malformed JSON body: ${where}`),
    });
  });

  it.each(OPERATIONS)('%s: 413 over the body limit, stating the limit', async (_route, send) => {
    const response = await send(t).send({ ...withdrawal(), padding: 'x'.repeat(33 * 1024) });
    expect({ status: response.status, body: response.body }).toEqual({
      status: 413,
      body: errorBody(413, 'Payload Too Large: the limit is 32kb'),
    });
  });

  it.each([
    ['a JSON array', '[1,2]'],
    ['a JSON string', '"hello"'],
    ['null', 'null'],
  ])('400 for %s as the body', async (_what, raw) => {
    const response = await client.withdraw(t).set('Content-Type', 'application/json').send(raw);
    expect(response.status).toBe(400);
    expect(response.body.success).toBe('false');
  });

  it('400 names the body when it is an array', async () => {
    const response = await client.withdraw(t).set('Content-Type', 'application/json').send('[]');
    expect(response.body).toEqual(errorBody(400, 'Invalid field: body', [{ field: 'body', message: 'must be a JSON object' }]));
  });

  it.each(['latin1', 'utf-16le', 'UTF-32'])('415 for the charset %s, and nothing changes', async (charset) => {
    const before = await readState(t.store);
    const response = await client
      .withdraw(t)
      .set('Content-Type', `application/json; charset=${charset}`)
      .send(JSON.stringify(withdrawal()));
    expect({ status: response.status, body: response.body }).toEqual({
      status: 415,
      body: errorBody(415, 'Unsupported charset: send the body as UTF-8 JSON'),
    });
    expect(await readState(t.store)).toEqual(before);
  });

  it.each(['application/jsonx', 'text/json', 'application/x-www-form-urlencoded', ''])('415 for the content type %p', async (type) => {
    const response = await client.withdraw(t).set('Content-Type', type).send(JSON.stringify(withdrawal()));
    expect({ status: response.status, body: response.body }).toEqual({
      status: 415,
      body: errorBody(415, 'Content-Type must be application/json'),
    });
  });

  // Parameters are read as Express's own body parser reads them (content-type 2): one it cannot read is passed over,
  // and the body must still be UTF-8 JSON.
  it.each([
    'APPLICATION/JSON',
    'application/json ; charset = utf-8',
    'application/json; foo=bar',
    'application/json; charset',
    'application/json;;',
    'application/json; charset="utf-8',
  ])('accepts the content type %p', async (type) => {
    const response = await client.withdraw(t).set('Content-Type', type).send(JSON.stringify(withdrawal()));
    expect(response.status).toBe(200);
  });

  it('accepts charset=UTF-8 in any case', async () => {
    const response = await client.withdraw(t).set('Content-Type', 'application/json; charset=UTF-8').send(JSON.stringify(withdrawal()));
    expect(response.status).toBe(200);
  });

  it('415 for an unsupported Content-Encoding', async () => {
    const response = await client
      .withdraw(t)
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'compress')
      .send(JSON.stringify(withdrawal()));
    expect({ status: response.status, body: response.body }).toEqual({ status: 415, body: errorBody(415, 'Unsupported Content-Encoding') });
  });

  it('checks the content type (415) before the size (413)', async () => {
    const response = await client
      .withdraw(t)
      .set('Content-Type', 'text/plain')
      .send('x'.repeat(40 * 1024));
    expect(response.status).toBe(415);
  });

  it.each([
    ['GET', '/'],
    ['GET', '/v1/tokens'],
    ['POST', '/v1/tokens/refunded'],
    ['PATCH', `${tokenPath()}/create`],
    ['PATCH', '/v1/booking/ACME'],
    ['PATCH', '/v1/booking/ACME/key-00000001/extra'],
  ])('404 JSON for an unknown route: %s %s', async (method, path) => {
    // Paths no operation has, which no client builds.
    const response = await request(t.server)[method.toLowerCase() as 'get' | 'post' | 'patch'](path);
    expect(response.status).toBe(404);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toEqual(errorBody(404, 'Not Found'));
  });

  it.each([
    ['PUT', '/v1/tokens/status-change', 'POST'],
    ['GET', '/v1/tokens/status-change', 'POST'],
    ['DELETE', '/v1/tokens/withdraw', 'GET, POST'],
    ['PATCH', '/v1/events', 'POST'],
    ['PUT', bookingPath(), 'POST, PATCH, DELETE'],
    ['GET', bookingPath('key-00000001', 'ACME', 'v2'), 'POST, PATCH, DELETE'],
    ['PUT', tokenPath(), 'POST, PATCH'],
    ['POST', `${tokenPath()}/load`, 'PATCH'],
    ['GET', '/v1/tokens/loaded', 'POST'],
    ['POST', '/healthz', 'GET, HEAD'],
    ['DELETE', '/readyz', 'GET, HEAD'],
  ])('405 with Allow for %s %s', async (method, path, allow) => {
    // A method the route does not serve, which no client sends.
    const response = await request(t.server)[method.toLowerCase() as 'put'](path).set('Content-Type', 'application/json').send('{}');
    expect({ status: response.status, body: response.body, allow: response.headers.allow }).toEqual({
      status: 405,
      body: errorBody(
        405,
        `Method Not Allowed: use ${allow
          .split(', ')
          .join(', ')
          .replace(/, (\w+)$/, ' or $1')}`,
      ),
      allow,
    });
  });

  it.each([
    ['/v1/tokens/withdraw', 'GET, POST'],
    ['/v1/tokens/status-change', 'POST'],
    [bookingPath(), 'POST, PATCH, DELETE'],
    [bookingPath('key-00000001', 'ACME', 'v2'), 'POST, PATCH, DELETE'],
    [tokenPath(), 'POST, PATCH'],
    [`${tokenPath()}/unload`, 'PATCH'],
  ])('OPTIONS %s is a 204 that lists every allowed method, with the API headers', async (path, allow) => {
    // OPTIONS, which no client sends.
    const response = await request(t.server).options(path);
    expect({ status: response.status, allow: response.headers.allow, text: response.text, type: response.headers['content-type'] }).toEqual(
      { status: 204, allow, text: '', type: undefined },
    );
    expect(response.headers['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
    expect(response.headers['x-content-type-options']).toBe('nosniff');
  });

  it.each(['/v1/tokens/withdraw', '/v1/tokens/status-change', '/v1/events'])(
    'HEAD on %s is a 405 and applies nothing, even with a valid withdrawal body',
    async (path) => {
      const body = withdrawal();
      const before = await readState(t.store, [String(body.transaction_id)]);
      // HEAD, which no client sends.
      const response = await request(t.server).head(path).set('Content-Type', 'application/json').send(JSON.stringify(body));
      expect({ status: response.status, allow: response.headers.allow }).toEqual({
        status: 405,
        allow: path === '/v1/tokens/withdraw' ? 'GET, POST' : 'POST',
      });
      expect(await readState(t.store, [String(body.transaction_id)])).toEqual(before);
    },
  );

  it('never fingerprints the server and always returns a request id', async () => {
    const response = await client.withdraw(t, withdrawal());
    expect(response.headers['x-powered-by']).toBeUndefined();
    expect(response.headers.server).toBeUndefined();
    expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it.each([
    ['a success', (t: TestApp) => client.withdraw(t, withdrawal())],
    ['an error', (t: TestApp) => client.withdraw(t, {})],
    ['an unknown route', (t: TestApp) => request(t.server).get('/nowhere')],
  ])("sends OWASP's REST API security headers on %s and forbids caching", async (_what, send) => {
    const response = await send(t);
    expect(response.headers).toMatchObject({
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'content-security-policy': "default-src 'none';frame-ancestors 'none'",
      'strict-transport-security': 'max-age=31536000; includeSubDomains',
      'cross-origin-resource-policy': 'same-origin',
      'referrer-policy': 'no-referrer',
    });
    expect(response.headers['x-powered-by']).toBeUndefined();
  });

  it("serves the /docs page with all of helmet's page headers", async () => {
    const response = await request(t.server).get('/docs');
    expect(response.headers).toMatchObject({
      'cache-control': 'no-store',
      'x-frame-options': 'SAMEORIGIN',
      'content-security-policy': expect.stringContaining("default-src 'self'"),
      'cross-origin-opener-policy': 'same-origin',
      'x-dns-prefetch-control': 'off',
    });
  });

  it('echoes a well-formed X-Request-Id and replaces a malformed one', async () => {
    const kept = await request(t.server).get('/healthz').set('X-Request-Id', 'partner-req.42');
    expect(kept.headers['x-request-id']).toBe('partner-req.42');
    const replaced = await request(t.server).get('/healthz').set('X-Request-Id', 'bad id with spaces');
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('GET /healthz answers 200', async () => {
    const response = await request(t.server).get('/healthz');
    expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: { status: 'ok' } });
  });

  it('GET /readyz answers 200 when the store answers', async () => {
    const response = await request(t.server).get('/readyz');
    expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: { status: 'ready' } });
  });
});

describe('when the store or the process fails', () => {
  let store: FailingStore;
  let t: TestApp;
  beforeEach(async () => {
    store = new FailingStore();
    await store.loadSeed(fixtureSeed());
    t = await buildTestApp(undefined, { store });
  });

  it.each([
    ['unreachable', new ServiceUnavailableError(), 503, 'Service Unavailable'],
    ['past its time limit', new StoreTimeoutError(), 504, 'Gateway Timeout'],
    ['failing unexpectedly', new Error('disk on fire at /var/lib/secret-path'), 500, 'internal Server Error'],
    ['throwing a non-error', 'a string', 500, 'internal Server Error'],
    ['throwing null', null, 500, 'internal Server Error'],
  ])('when the store is %s, operations answer %i with the envelope and no stack', async (_what, failure, status, message) => {
    store.failure = failure;
    for (const [operation, body] of [
      [client.withdraw, withdrawal()],
      [client.statusChange, statusChange()],
      [client.modifyBooking, bookingChange()],
    ] as const) {
      const response = await operation(t, body);
      expect({ status: response.status, body: response.body }).toEqual({ status, body: errorBody(status, message) });
      expect(response.text).not.toMatch(/at .*\.ts|disk on fire/);
    }
    store.failure = undefined;
    expect((await readState(store)).tokens.find((token) => token?.tokenId === TOKENS.active.token_id)?.balance).toBe(100000);
  });

  it('/readyz answers 503 while the store is unreachable, and recovers with it', async () => {
    store.failure = new ServiceUnavailableError();
    const down = await request(t.server).get('/readyz');
    expect({ status: down.status, body: down.body }).toEqual({ status: 503, body: errorBody(503, 'Service Unavailable') });
    store.failure = undefined;
    expect(await readinessWithin(() => request(t.server).get('/readyz'), 200)).toBe(200);
  });

  it('/readyz asks the store at most once a second, however many probes arrive (contract section 11)', async () => {
    let pings = 0;
    const ping = store.ping.bind(store);
    store.ping = () => {
      pings += 1;
      return ping();
    };
    const started = Date.now();
    for (let i = 0; i < 50; i += 1) await request(t.server).get('/readyz').expect(200);
    const seconds = Math.ceil((Date.now() - started) / 1000);
    expect(pings).toBeGreaterThan(0);
    expect(pings).toBeLessThanOrEqual(seconds + 1);
  });

  it('a closed store answers 503', async () => {
    await store.close();
    const response = await client.withdraw(t, withdrawal());
    expect({ status: response.status, body: response.body }).toEqual({ status: 503, body: errorBody(503, 'Service Unavailable') });
  });
});

describe('while shutting down', () => {
  it('readiness and operations answer 503 with Connection: close; liveness still answers', async () => {
    const t = await buildTestApp(undefined, { isShuttingDown: () => true });
    const ready = await request(t.server).get('/readyz');
    expect({ status: ready.status, body: ready.body }).toEqual({ status: 503, body: errorBody(503, 'Service Unavailable') });
    const operation = await client.withdraw(t, withdrawal());
    expect({ status: operation.status, body: operation.body }).toEqual({ status: 503, body: errorBody(503, 'Service Unavailable') });
    expect(operation.headers.connection).toBe('close');
    expect((await request(t.server).get('/healthz')).status).toBe(200);
  });
});

describe('rate limit per account, after authentication', () => {
  it('answers 429 with Retry-After past the limit, counting each account apart, and never limits health', async () => {
    const t = await buildTestApp(undefined, { config: { rateLimitPerMinute: 3 } });
    for (let i = 0; i < 3; i += 1) await client.statusChange(t, statusChange({ tokes_status: undefined })).expect(200);
    const limited = await client.withdraw(t, withdrawal()).set('Connection', 'keep-alive');
    // An account's own limit keeps its connection (docs/DECISIONS.md), unlike the per-address limits' 429.
    expect({ status: limited.status, body: limited.body, connection: limited.headers.connection }).toEqual({
      status: 429,
      body: errorBody(429, 'Too Many Requests'),
      connection: 'keep-alive',
    });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    const other = await client.statusChange(t, {
      share_public: OTHER.share_public,
      read_event: 'token.status_changed',
      source_id: 'OTHER',
      destination_id: 'X1',
      token_id: TOKENS.others.token_id,
    });
    expect({ status: other.status, body: other.body }).toEqual({ status: 200, body: SUCCESS_BODY });
    for (let i = 0; i < 5; i += 1) {
      await request(t.server).get('/healthz').expect(200);
      await request(t.server).get('/readyz').expect(200);
      await request(t.metricsServer).get('/metrics').expect(200);
    }
    expect((await readState(t.store)).tokens.find((token) => token?.tokenId === TOKENS.active.token_id)?.balance).toBe(100000);
  });

  it('replays and requests refused by a rule count like applied ones: past the limit even a replay is a 429 (contract section 11)', async () => {
    const t = await buildTestApp(undefined, { config: { rateLimitPerMinute: 3 } });
    const seen = withdrawal();
    await client.withdraw(t, seen).expect(200);
    const replay = await client.withdraw(t, seen);
    expect({ status: replay.status, replayed: replay.headers['idempotent-replayed'] }).toEqual({ status: 200, replayed: 'true' });
    await client.withdraw(t, withdrawal({ token_balance: '1.00' })).expect(409);
    const overBudget = await client.withdraw(t, seen);
    expect({ status: overBudget.status, body: overBudget.body }).toEqual({ status: 429, body: errorBody(429, 'Too Many Requests') });
    const state = await readState(t.store, [String(seen.transaction_id)]);
    expect(state.tokens.find((token) => token?.tokenId === TOKENS.active.token_id)?.balance).toBe(90000);
  });

  it('a request whose client hung up before the answer still counts: past the limit nothing more is applied (contract section 11)', async () => {
    const store = new HoldingStore();
    await store.loadSeed(fixtureSeed());
    const t = await buildTestApp(undefined, { store, config: { rateLimitPerMinute: 3 } });
    const open = new Set<Socket>();
    t.server.on('connection', (socket: Socket) => {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
    });
    await new Promise<void>((resolve) => t.server.listen(0, '127.0.0.1', resolve));
    const { port } = t.server.address() as AddressInfo;
    const statuses: Array<number | 'hung up'> = [];
    try {
      for (let i = 0; i < 6; i += 1) {
        const body = JSON.stringify(tokenCreation());
        // A socket of its own, which this client destroys mid-request: supertest cannot hang up.
        const sent = http.request({
          port,
          host: '127.0.0.1',
          method: 'POST',
          path: tokenPath(`hangup-key-${i}`),
          headers: { 'Content-Type': 'application/json' },
        });
        sent.on('error', () => undefined);
        const answered = new Promise<number>((resolve) => sent.on('response', (response) => resolve(response.statusCode as number)));
        sent.end(body);
        const outcome = await Promise.race([answered, store.holding().then(() => 'held' as const)]);
        if (outcome !== 'held') {
          statuses.push(outcome);
          continue;
        }
        // The client hangs up while its request is being applied; the server sees the connection close first.
        sent.destroy();
        while (open.size > 0) await new Promise((resolve) => setTimeout(resolve, 10));
        store.release();
        statuses.push('hung up');
      }
    } finally {
      store.holdUnits = false;
      store.release();
      t.server.closeAllConnections();
      await new Promise((resolve) => t.server.close(resolve));
    }
    expect(statuses).toEqual(['hung up', 'hung up', 'hung up', 429, 429, 429]);
    const { keyedRequests } = await readState(
      t.store,
      [],
      Array.from({ length: 6 }, (_, i) => `hangup-key-${i}`),
    );
    expect(keyedRequests.map((kept) => kept !== undefined)).toEqual([true, true, true, false, false, false]);
  });

  it("requests that fail authentication never spend the account's budget, and its headers show only the caller's own", async () => {
    const t = await buildTestApp(undefined, { config: { rateLimitPerMinute: 2 } });
    for (let i = 0; i < 5; i += 1) {
      const forged = await client.withdraw(t, withdrawal({ share_public: 'pk_guessed' }));
      expect({ status: forged.status, rateLimit: forged.headers.ratelimit }).toEqual({ status: 401, rateLimit: undefined });
    }
    const genuine = await client.withdraw(t, withdrawal());
    expect({ status: genuine.status, body: genuine.body }).toEqual({ status: 200, body: SUCCESS_BODY });
    // The IETF draft's format (draft-8): the policy, with a partition key derived from the account, and what is left.
    expect(genuine.headers['ratelimit-policy']).toMatch(/^"2-in-1min"; q=2; w=60; pk=:[A-Za-z0-9+/]+=*:$/);
    expect(genuine.headers.ratelimit).toBe('"2-in-1min"; r=1; t=60');
  });
});

describe('rate limit per client address, before the body is read', () => {
  it("the service's own failures never count against the client: 503s while the store is away, then 200 once it is back", async () => {
    const store = new FailingStore();
    await store.loadSeed(fixtureSeed());
    const t = await buildTestApp(undefined, { store, config: { rateLimitPerAddressPerMinute: 2 } });
    store.failure = new ServiceUnavailableError();
    for (let i = 0; i < 5; i += 1) {
      const response = await client.withdraw(t, withdrawal());
      expect({ status: response.status, body: response.body }).toEqual({ status: 503, body: errorBody(503, 'Service Unavailable') });
    }
    store.failure = undefined;
    const retried = await client.withdraw(t, withdrawal());
    expect({ status: retried.status, body: retried.body }).toEqual({ status: 200, body: SUCCESS_BODY });
  });

  it('counts only failed requests; past the limit the address is refused everything, and nothing is applied', async () => {
    const t = await buildTestApp(undefined, { config: { rateLimitPerAddressPerMinute: 2 } });
    for (let i = 1; i <= 4; i += 1) {
      await client.withdraw(t, withdrawal({ token_balance: `${1000 - i * 100}.00` })).expect(200);
    }
    await client.withdraw(t, {}).expect(400);
    await client.withdraw(t, withdrawal({ share_public: 'pk_guessed' })).expect(401);
    const valid = withdrawal({ token_balance: '500.00' });
    const before = await readState(t.store, [String(valid.transaction_id)]);
    const limited = await client.withdraw(t, valid).set('Connection', 'keep-alive');
    // Connection: close drops whatever the client pipelined behind it (test/api/connections.test.ts).
    expect({ status: limited.status, body: limited.body, connection: limited.headers.connection }).toEqual({
      status: 429,
      body: errorBody(429, 'Too Many Requests'),
      connection: 'close',
    });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.headers.ratelimit).toBeUndefined();
    expect(await readState(t.store, [String(valid.transaction_id)])).toEqual(before);
    await request(t.server).get('/healthz').expect(200);
  });

  it("an account's own refusals never count against its address: after its 403 key_limit and 422s, another account's valid request from the same address is a 200", async () => {
    const t = await buildTestApp(undefined, {
      config: { rateLimitPerAddressPerMinute: 2, quotas: { tokensPerAccount: 0, bookingsPerAccount: 0, keysPerAccount: 1 } },
    });
    await client.createToken(t, tokenCreation(), 'address-limit-0000').expect(200);
    for (let i = 1; i <= 4; i += 1) {
      const refused = await client.createToken(t, tokenCreation(), `address-limit-000${i}`);
      expect({ status: refused.status, message: refused.body.errors.message }).toEqual({
        status: 403,
        message: expect.stringMatching(/^Key limit reached/),
      });
    }
    for (let i = 1; i <= 2; i += 1)
      await client.withdraw(t, withdrawal({ withdrawn_amount: '5000.00', token_balance: '0.00' })).expect(422);
    const others = await client.statusChange(t, otherAccountStatusChange());
    expect({ status: others.status, body: others.body }).toEqual({ status: 200, body: SUCCESS_BODY });
    expect((await t.store.findToken(TOKENS.others.token_id))?.status).toBe('freezed');
  });

  it('with TRUST_PROXY, counts each address the proxy names apart; without it, X-Forwarded-For changes nothing', async () => {
    const failFrom = (t: TestApp, address: string) => client.withdraw(t).set('X-Forwarded-For', address).send({});
    const behindProxy = await buildTestApp(undefined, { config: { rateLimitPerAddressPerMinute: 1, trustProxy: 1 } });
    expect((await failFrom(behindProxy, '203.0.113.1')).status).toBe(400);
    expect((await failFrom(behindProxy, '203.0.113.2')).status).toBe(400);
    expect((await failFrom(behindProxy, '203.0.113.1')).status).toBe(429);
    const direct = await buildTestApp(undefined, { config: { rateLimitPerAddressPerMinute: 1 } });
    expect((await failFrom(direct, '203.0.113.1')).status).toBe(400);
    expect((await failFrom(direct, '203.0.113.2')).status).toBe(429);
  });
});
