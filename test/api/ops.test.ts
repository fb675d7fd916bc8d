import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { ServiceUnavailableError, StoreTimeoutError } from '../../src/errors';
import { createMetricsApp } from '../../src/app';
import { createHttpServer } from '../../src/process/http-server';
import { Metrics } from '../../src/process/metrics';
import { buildTestApp, describeOnEveryStore, FIXED_NOW } from '../helpers/app';
import * as client from '../helpers/clients';
import { FailingStore } from '../helpers/failing-store';
import { ACME, fixtureSeed, OTHER, TOKENS } from '../helpers/fixtures';
import { errorBody } from '../helpers/http';
import { bookingCancellation, bookingChange, loaded, statusChange, withdrawal } from '../helpers/payloads';

const ADMIN_TOKEN = 'admin-test-token-0123456789';
const bearer = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const KEYS = [ACME.share_public, ACME.share_secret, OTHER.share_public, OTHER.share_secret];

/** The value of one sample of a metric in the Prometheus text, or undefined. */
function sample(text: string, metric: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${metric}{${labels}}`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

describe('GET /metrics', () => {
  it('counts requests by route and status, latency, and operations by outcome and reason', async () => {
    const t = await buildTestApp();
    const body = withdrawal();
    await client.withdraw(t, body).expect(200);
    await client.withdraw(t, body).expect(200);
    await client
      .withdraw(t, withdrawal({ token_id: TOKENS.freezed.token_id, withdrawn_amount: '1.00', token_balance: '49.00' }))
      .expect(409);
    await client.events(t, withdrawal({ withdrawn_amount: '5000.00', token_balance: '0.00' })).expect(422);
    await client.statusChange(t, statusChange()).expect(200);
    await client.modifyBooking(t, bookingChange()).expect(200);
    await client.modifyBooking(t, bookingChange({ booking_id: 'nope' })).expect(404);
    await request(t.server).get('/nowhere').expect(404);
    await client.loaded(t, loaded({ token_id: TOKENS.deleted.token_id, token_balance: '150.00' })).expect(409);
    await client.events(t, { read_event: 'token.unknown' }).expect(400);
    await client.cancelBooking(t, bookingCancellation(), 'key-cancel-01').expect(200);

    const response = await request(t.metricsServer).get('/metrics');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = response.text;
    expect(sample(text, 'receiver_http_requests_total', 'method="POST",route="/v1/tokens/withdraw",status="200"')).toBe(2);
    expect(sample(text, 'receiver_http_requests_total', 'method="GET",route="unmatched",status="404"')).toBe(1);
    expect(sample(text, 'receiver_http_request_duration_seconds_count', 'method="POST",route="/v1/tokens/withdraw",status="409"')).toBe(1);
    expect(sample(text, 'receiver_operations_total', 'operation="withdraw",outcome="accepted",reason=""')).toBe(1);
    expect(sample(text, 'receiver_operations_total', 'operation="withdraw",outcome="replayed",reason=""')).toBe(1);
    expect(sample(text, 'receiver_operations_total', 'operation="withdraw",outcome="rejected",reason="token_not_active"')).toBe(1);
    expect(sample(text, 'receiver_operations_total', 'operation="withdraw",outcome="rejected",reason="over_balance"')).toBe(1);
    expect(sample(text, 'receiver_operations_total', 'operation="status_change",outcome="accepted",reason=""')).toBe(1);
    expect(sample(text, 'receiver_operations_total', 'operation="modify_booking",outcome="accepted",reason=""')).toBe(1);
    expect(sample(text, 'receiver_operations_total', 'operation="modify_booking",outcome="rejected",reason="booking_not_found"')).toBe(1);
    expect(sample(text, 'receiver_operations_total', 'operation="loaded",outcome="rejected",reason="token_deleted"')).toBe(1);
    expect(sample(text, 'receiver_operations_total', 'operation="token_event",outcome="rejected",reason="invalid_request"')).toBe(1);
    expect(sample(text, 'receiver_operations_total', 'operation="cancel_booking",outcome="accepted",reason=""')).toBe(1);
  });

  it('counts methods the service does not serve as other, so what callers send cannot add series (contract section 11)', async () => {
    const t = await buildTestApp();
    await new Promise<void>((resolve) => t.server.listen(0, '127.0.0.1', resolve));
    const { port } = t.server.address() as AddressInfo;
    try {
      // Methods no client sends, on any path, through fetch, which sends whatever method it is given.
      for (const method of ['PROPFIND', 'MKCOL', 'LOCK', 'PURGE', 'SEARCH', 'REPORT', 'PUT', 'UNLOCK']) {
        for (const path of ['/', '/v1/tokens/withdraw', `/nothing-${method}`]) {
          const response = await fetch(`http://127.0.0.1:${port}${path}`, { method });
          await response.arrayBuffer();
          expect(response.status).toBeGreaterThanOrEqual(400);
        }
      }
      const text = (await request(t.metricsServer).get('/metrics')).text;
      const methods = new Set([...text.matchAll(/^receiver_http_requests_total\{method="([^"]*)"/gm)].map((match) => match[1]));
      expect([...methods].sort()).toEqual(['other']);
      const routes = new Set([...text.matchAll(/^receiver_http_requests_total\{[^}]*route="([^"]*)"/gm)].map((match) => match[1]));
      expect([...routes].sort()).toEqual(['/v1/tokens/withdraw', 'unmatched']);
    } finally {
      t.server.closeAllConnections();
      await new Promise((resolve) => t.server.close(resolve));
    }
  });

  it('counts store errors by kind', async () => {
    const store = new FailingStore();
    await store.loadSeed(fixtureSeed());
    const t = await buildTestApp(undefined, { store });
    store.failure = new ServiceUnavailableError();
    await client.withdraw(t, withdrawal()).expect(503);
    store.failure = new StoreTimeoutError();
    await client.withdraw(t, withdrawal()).expect(504);
    const text = (await request(t.metricsServer).get('/metrics')).text;
    expect(sample(text, 'receiver_store_errors_total', 'kind="unavailable"')).toBe(1);
    expect(sample(text, 'receiver_store_errors_total', 'kind="timeout"')).toBe(1);
    expect(sample(text, 'receiver_operations_total', 'operation="withdraw",outcome="rejected",reason="store_timeout"')).toBe(1);
  });

  it("is served on the metrics listener alone: the partners' port answers 404 for it", async () => {
    const t = await buildTestApp();
    const response = await request(t.server).get('/metrics');
    expect({ status: response.status, body: response.body }).toEqual({ status: 404, body: errorBody(404, 'Not Found') });
    const elsewhere = await request(t.metricsServer).get('/v1/tokens/withdraw');
    expect({ status: elsewhere.status, body: elsewhere.body }).toEqual({ status: 404, body: errorBody(404, 'Not Found') });
  });

  it('renders at most once a second: scrapes in between get the same page, the next second a new one', async () => {
    const metrics = new Metrics();
    let now = 0;
    const server = createHttpServer(createMetricsApp(metrics, () => now));
    const errorsOf = async () =>
      sample((await request(server).get('/metrics').expect(200)).text, 'receiver_store_errors_total', 'kind="timeout"');
    expect(await errorsOf()).toBe(0);
    metrics.countStoreError('timeout');
    now = 999;
    expect(await errorsOf()).toBe(0);
    now = 1_000;
    expect(await errorsOf()).toBe(1);
  });

  it('has every store error kind from the start, at 0, so an alert on its rate sees the series', async () => {
    const text = (await request((await buildTestApp()).metricsServer).get('/metrics')).text;
    for (const kind of ['unavailable', 'timeout', 'full']) expect(sample(text, 'receiver_store_errors_total', `kind="${kind}"`)).toBe(0);
  });

  it('includes the process metrics when asked, and is never rate limited', async () => {
    const t = await buildTestApp(undefined, { metrics: new Metrics({ processMetrics: true }), config: { rateLimitPerMinute: 1 } });
    for (let i = 0; i < 5; i += 1) await request(t.metricsServer).get('/metrics').expect(200);
    const text = (await request(t.metricsServer).get('/metrics')).text;
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain('nodejs_eventloop_lag_seconds');
  });
});

describe('admin routes without ADMIN_TOKEN', () => {
  it('do not exist', async () => {
    const t = await buildTestApp();
    const response = await request(t.server).get(`/admin/tokens/${TOKENS.active.token_id}`).set(bearer);
    expect({ status: response.status, body: response.body }).toEqual({ status: 404, body: errorBody(404, 'Not Found') });
  });
});

describe('admin routes and the per-address rate limit', () => {
  it('count a wrong admin token against the client address like any failed request: past the limit the address is refused everything (contract section 11)', async () => {
    const t = await buildTestApp(undefined, { config: { adminToken: ADMIN_TOKEN, rateLimitPerAddressPerMinute: 3 } });
    await request(t.server).get('/admin/events').set(bearer).expect(200);
    for (let i = 0; i < 2; i += 1)
      await request(t.server).get('/admin/events').set({ Authorization: 'Bearer wrong-token-0000000000' }).expect(401);
    await client.withdraw(t, withdrawal({ share_public: 'pk_guessed' })).expect(401);
    for (const refused of [
      await request(t.server).get('/admin/events').set({ Authorization: 'Bearer wrong-token-0000000001' }),
      await request(t.server).get('/admin/events').set(bearer),
      await client.withdraw(t, withdrawal()),
    ]) {
      expect({ status: refused.status, body: refused.body }).toEqual({ status: 429, body: errorBody(429, 'Too Many Requests') });
    }
    expect((await t.store.findToken(TOKENS.active.token_id))?.balance).toBe(100000);
  });
});

describeOnEveryStore(
  'admin inspection API',
  (current) => {
    it.each([
      ['no Authorization header', {}],
      ['a wrong token', { Authorization: 'Bearer wrong-token-0000000000' }],
      ['another scheme', { Authorization: `Basic ${ADMIN_TOKEN}` }],
    ])('answers 401 with WWW-Authenticate for %s', async (_what, headers) => {
      const response = await request(current().server).get('/admin/events').set(headers);
      expect({ status: response.status, body: response.body, challenge: response.headers['www-authenticate'] }).toEqual({
        status: 401,
        body: errorBody(401, 'Unauthorized'),
        challenge: 'Bearer realm="admin"',
      });
    });

    it.each([
      ['the scheme in lower case', `bearer ${ADMIN_TOKEN}`],
      ['two spaces after the scheme', `Bearer  ${ADMIN_TOKEN}`],
    ])('takes the token with %s, as the feed does (RFC 9110: the scheme is case-insensitive)', async (_what, authorization) => {
      const response = await request(current().server).get('/admin/events').set({ Authorization: authorization });
      expect(response.status).toBe(200);
    });

    it('shows a token with its status, balance and latest ledger rows with their kind, newest first', async () => {
      const first = withdrawal({ withdrawn_amount: '100.00', token_balance: '900.00' });
      const second = loaded({ load_amount: '0.50', fee_amount: '0.10', token_balance: '900.50' });
      await client.withdraw(current(), first).expect(200);
      await client.loaded(current(), second).expect(200);
      const response = await request(current().server).get(`/admin/tokens/${TOKENS.active.token_id}`).set(bearer);
      expect({ status: response.status, body: response.body }).toEqual({
        status: 200,
        body: {
          token_id: TOKENS.active.token_id,
          source_id: 'ACME',
          destination_id: 'D1',
          status: 'active',
          balance: '900.50',
          last_ledger_entries: [
            {
              transaction_id: second.transaction_id,
              kind: 'load',
              amount: '0.50',
              fee_amount: '0.10',
              token_balance: '900.50',
              created_at: FIXED_NOW.toISOString(),
            },
            {
              transaction_id: first.transaction_id,
              kind: 'withdrawal',
              amount: '100.00',
              token_balance: '900.00',
              created_at: FIXED_NOW.toISOString(),
            },
          ],
        },
      });
    });

    it("shows a token's available and expiry dates as DD-MM-YYYY", async () => {
      const response = await request(current().server).get(`/admin/tokens/${TOKENS.dated.token_id}`).set(bearer);
      expect({ status: response.status, body: response.body }).toEqual({
        status: 200,
        body: {
          token_id: TOKENS.dated.token_id,
          source_id: 'ACME',
          destination_id: 'D1',
          status: 'active',
          balance: '60.00',
          available_date: '01-01-2026',
          expiry_date: '02-01-2026',
          last_ledger_entries: [],
        },
      });
    });

    it('answers 404 for an unknown token and 400 for a malformed id', async () => {
      const missing = await request(current().server).get('/admin/tokens/424242').set(bearer);
      expect({ status: missing.status, body: missing.body }).toEqual({ status: 404, body: errorBody(404, 'Token not found') });
      expect((await request(current().server).get('/admin/tokens/0abc').set(bearer)).status).toBe(400);
    });

    it("shows a booking as Modify Booking answers it, and 404 for another account's", async () => {
      const response = await request(current().server).get('/admin/bookings/ACME/1396').set(bearer);
      expect(response.status).toBe(200);
      expect(response.body.booking).toMatchObject({ source_id: 'ACME', booking_id: '1396', guests_count: '2' });
      expect((await request(current().server).get('/admin/bookings/OTHER/1396').set(bearer)).status).toBe(404);
    });

    it('lists recent operations, accepted, replayed and rejected, newest first, with filters; never a key', async () => {
      const body = withdrawal();
      await client.withdraw(current()).set('X-Request-Id', 'req-a').send(body).expect(200);
      await client.withdraw(current()).set('X-Request-Id', 'req-b').send(body).expect(200);
      await client
        .statusChange(current())
        .set('X-Request-Id', 'req-c')
        .send(
          statusChange({
            tokes_status: undefined,
            source_id: 'OTHER',
            share_public: OTHER.share_public,
            destination_id: 'X1',
            token_id: TOKENS.others.token_id,
          }),
        )
        .expect(200);
      await client
        .modifyBooking(current())
        .set('X-Request-Id', 'req-d')
        .send(bookingChange({ share_secret: 'wrong' }))
        .expect(401);

      const all = await request(current().server).get('/admin/events').set(bearer);
      expect(all.status).toBe(200);
      expect(all.body.events.map((e: { request_id: string }) => e.request_id)).toEqual(['req-d', 'req-c', 'req-b', 'req-a']);
      expect(all.body.events[0]).toEqual({
        time: expect.any(String),
        request_id: 'req-d',
        method: 'PATCH',
        route: '/:version/booking/:partnerid/:randomkey',
        operation: 'modify_booking',
        status: 401,
        outcome: 'rejected',
        reason: 'unauthorized',
      });
      expect(all.body.events[2]).toMatchObject({
        operation: 'withdraw',
        outcome: 'replayed',
        token_id: TOKENS.active.token_id,
        transaction_id: body.transaction_id,
      });
      for (const key of KEYS) expect(all.text).not.toContain(key);

      const bySource = await request(current().server).get('/admin/events?source_id=OTHER').set(bearer);
      expect(bySource.body.events.map((e: { request_id: string }) => e.request_id)).toEqual(['req-c']);
      const byAcme = await request(current().server).get('/admin/events?source_id=ACME').set(bearer);
      expect(byAcme.body.events.map((e: { request_id: string }) => e.request_id)).toEqual(['req-b', 'req-a']);
      const byToken = await request(current().server).get(`/admin/events?token_id=${TOKENS.active.token_id}&outcome=accepted`).set(bearer);
      expect(byToken.body.events.map((e: { request_id: string }) => e.request_id)).toEqual(['req-a']);
      const limited = await request(current().server).get('/admin/events?limit=1').set(bearer);
      expect(limited.body.events).toHaveLength(1);
    });

    it('files a request that failed authentication under no account and with nothing its body names, whatever source_id it claims (contract section 11)', async () => {
      await client
        .withdraw(current())
        .set('X-Request-Id', 'req-forged')
        .send(withdrawal({ source_id: 'OTHER', share_public: 'pk_guessed', destination_id: 'X1', token_id: TOKENS.others.token_id }))
        .expect(401);
      const bySource = await request(current().server).get('/admin/events?source_id=OTHER').set(bearer);
      expect(bySource.body).toEqual({ events: [] });
      const all = await request(current().server).get('/admin/events').set(bearer);
      expect(all.body.events).toEqual([
        {
          time: expect.any(String),
          request_id: 'req-forged',
          method: 'POST',
          route: '/v1/tokens/withdraw',
          operation: 'withdraw',
          status: 401,
          outcome: 'rejected',
          reason: 'unauthorized',
        },
      ]);
    });

    it('answers 400 naming bad filters', async () => {
      const response = await request(current().server).get('/admin/events?outcome=maybe&limit=0').set(bearer);
      expect({ status: response.status, body: response.body }).toEqual({
        status: 400,
        body: errorBody(400, 'Invalid fields: outcome, limit', [
          { field: 'outcome', message: 'must be accepted, replayed or rejected' },
          { field: 'limit', message: 'must be a whole number from 1 to 1000' },
        ]),
      });
    });
  },
  { config: { adminToken: ADMIN_TOKEN } },
);
