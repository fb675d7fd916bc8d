import { Client } from 'pg';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { changeView } from '../../src/delivery/change-view';
import { DeliveryEngine } from '../../src/delivery/engine';
import { MemorySinkPositions } from '../../src/delivery/memory-positions';
import { PgSinkPositions } from '../../src/delivery/postgres-positions';
import { WebhookSink } from '../../src/delivery/webhook-sink';
import { MemoryStore } from '../../src/store/memory-store';
import type { Change, Store } from '../../src/store/store';
import type { EndpointConfig } from '../../src/delivery/endpoints';
import { buildTestApp, storeKinds, type StoreKind, type TestApp } from '../helpers/app';
import { captured, capturingLogger } from '../helpers/capture';
import * as clients from '../helpers/clients';
import { WebhookReceiver, type WebhookAnswer } from '../helpers/webhook-receiver';
import { ACME, fixtureSeed, OTHER, TOKENS } from '../helpers/fixtures';
import { errorBody } from '../helpers/http';
import { statusToggles, withdrawal } from '../helpers/payloads';
import { sql, TEST_DATABASE_URL, workerSchema } from '../helpers/postgres';
import { waitFor } from '../helpers/wait';

const ADMIN_TOKEN = 'admin-test-token-0123456789';
const bearer = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const SECRET = `whsec_${Buffer.from('endpoint-secret-of-the-tests-0123').toString('base64')}`;
/** Short retries, so a test sees several steps pass within a second or two; never spent within a test's wait. */
const SCHEDULE = Array.from({ length: 1_000 }, () => 100);
/**
 * Far beyond what a loaded machine takes: an attempt cut by the sink's time limit, or a lease lapsing while the
 * process waits for a core, is sent again (at least once), which the exact counts below must not see.
 */
const GENEROUS_MS = 30_000;
/** The delivery pool's application_name in this worker: the connections a test cuts, and no other worker's. */
const DELIVERY_CONNECTIONS = `delivery-${workerSchema()}`;

/** One request an endpoint received: the change it carried, its webhook-id and body, and whether its signature verifies. */
function receivedBy(receiver: WebhookReceiver) {
  const webhook = new Webhook(SECRET);
  return receiver.received.map((received) => {
    const body = received.body.toString('utf8');
    let verified = true;
    try {
      webhook.verify(body, received.headers as Record<string, string>);
    } catch {
      verified = false;
    }
    const change = JSON.parse(body) as { seq: number; type: string; token?: { token_id: string } };
    return { id: String(received.headers['webhook-id']), body, change, verified };
  });
}

/** The seq of each request for the token, in the order they arrived. */
const seqsOf = (receiver: WebhookReceiver, tokenId: string) =>
  receivedBy(receiver)
    .filter((received) => received.change.token?.token_id === tokenId)
    .map((received) => received.change.seq);

/** Answers every request with `status`, or, for 'never', never. */
const answering = (status: number | 'never', when: (change: { token?: { token_id: string } }) => boolean = () => true): WebhookAnswer => {
  return (received, response) => {
    if (!when(JSON.parse(received.body.toString('utf8')))) response.writeHead(204).end();
    else if (status !== 'never') response.writeHead(status).end();
  };
};

describe.each(storeKinds().map((kind) => [kind.name, kind] as const))('webhooks out on the %s store', (_name, kind: StoreKind) => {
  let store: Store;
  let app: TestApp;
  let engine: DeliveryEngine | undefined;
  const endpoints: WebhookReceiver[] = [];

  beforeEach(async () => {
    store = await kind.create();
    await store.loadSeed(fixtureSeed());
    toggle = statusToggles();
  });
  afterEach(async () => {
    await engine?.stop(2_000);
    engine = undefined;
    await Promise.all(endpoints.splice(0).map((endpoint) => endpoint.stop()));
    await store.close();
  });

  async function endpoint(): Promise<WebhookReceiver> {
    const receiver = await WebhookReceiver.start();
    endpoints.push(receiver);
    return receiver;
  }

  async function start(specs: Array<Omit<EndpointConfig, 'secrets'>>, attemptsKept?: number): Promise<void> {
    const logger = capturingLogger();
    const positions =
      store instanceof MemoryStore
        ? new MemorySinkPositions(() => (store as MemoryStore).changeHeads(), attemptsKept)
        : new PgSinkPositions({
            connectionString: TEST_DATABASE_URL as string,
            schema: workerSchema(),
            statementTimeoutMs: 5_000,
            applicationName: DELIVERY_CONNECTIONS,
            attemptsKept,
            logger,
          });
    engine = await DeliveryEngine.start({
      sinks: specs.map((spec) => new WebhookSink({ ...spec, secrets: [SECRET] }, { timeoutMs: GENEROUS_MS, concurrency: 8 })),
      positions,
      store,
      retryDelay: (step) => SCHEDULE[step],
      instanceId: 'test',
      leaseMs: GENEROUS_MS,
      logger,
      busyPollMs: 50,
      idlePollMs: 100,
    });
    app = await buildTestApp(kind, { store, delivery: engine, config: { adminToken: ADMIN_TOKEN } });
  }

  /** Toggles a token's status between freezed and active: one change each time. */
  let toggle = statusToggles();
  async function change(token: { token_id: string; destination_id: string; source_id: string } = TOKENS.active): Promise<void> {
    await clients.statusChange(app, toggle(token)).expect(200);
  }

  const changesOf = async (sourceId = ACME.source_id) => store.changesAfter(sourceId, 0, 1000);

  it('a new endpoint gets every change recorded after it appears, once, signed, with the change id as webhook-id and the feed body; filters by account and type', async () => {
    const all = await endpoint();
    const filtered = await endpoint();
    // Recorded before the endpoints appear: never sent (a replay would).
    app = await buildTestApp(kind, { store });
    await change();
    await start([
      { id: 'all', url: all.url() },
      { id: 'filtered', url: filtered.url(), sourceIds: [ACME.source_id], types: ['token.withdrawn'] },
    ]);
    await change();
    await clients.withdraw(app, withdrawal({ token_balance: '900.00' })).expect(200);
    await change(TOKENS.atD2);
    await change(TOKENS.others);
    await waitFor(async () => all.received.length >= 4 && filtered.received.length >= 1);
    const acme = (await changesOf()).slice(1);
    const others = await changesOf(OTHER.source_id);
    const expected = [...acme, ...others];
    expect(
      receivedBy(all)
        .map((received) => received.id)
        .sort(),
    ).toEqual(expected.map((c) => c.id).sort());
    for (const received of receivedBy(all)) {
      const sent = expected.find((c) => c.id === received.id) as Change;
      expect(received.body).toBe(JSON.stringify(changeView(sent)));
      expect(received.verified).toBe(true);
    }
    expect(receivedBy(filtered).map((received) => received.change.type)).toEqual(['token.withdrawn']);
    // Nothing more arrives: the engine has caught up, and each change went once.
    const settled = await request(app.server).get('/admin/endpoints').set(bearer).expect(200);
    expect(settled.body.endpoints.map((e: { id: string }) => e.id)).toEqual(['all', 'filtered']);
    expect(all.received).toHaveLength(4);
  });

  it("a token's changes wait behind its failing one, in order, while another token's pass; retries keep the webhook-id", async () => {
    const server = await endpoint();
    let failing = true;
    server.answer = answering(503, (change) => failing && change.token?.token_id === TOKENS.active.token_id);
    await start([{ id: 'erp', url: server.url() }]);
    await change();
    await change(TOKENS.atD2);
    await change();
    await change(TOKENS.atD2);
    await waitFor(async () => seqsOf(server, TOKENS.atD2.token_id).length >= 2 && seqsOf(server, TOKENS.active.token_id).length >= 3);
    // The first change of the active token was tried again and again, its second never.
    expect(new Set(seqsOf(server, TOKENS.active.token_id))).toEqual(new Set([1]));
    failing = false;
    await waitFor(async () => seqsOf(server, TOKENS.active.token_id).includes(3));
    const active = seqsOf(server, TOKENS.active.token_id);
    expect(active.slice(-2)).toEqual([1, 3]);
    expect(active.slice(0, -1).every((seq) => seq === 1)).toBe(true);
    expect(seqsOf(server, TOKENS.atD2.token_id)).toEqual([2, 4]);
    expect(
      new Set(
        receivedBy(server)
          .filter((r) => r.change.seq === 1)
          .map((r) => r.id),
      ).size,
    ).toBe(1);
  });

  it('a 410 disables the endpoint; what is recorded meanwhile all arrives, in order, after ops enable it', async () => {
    const server = await endpoint();
    server.answer = answering(410);
    await start([{ id: 'erp', url: server.url() }]);
    await change();
    await waitFor(async () => (await request(app.server).get('/admin/endpoints').set(bearer)).body.endpoints[0].state === 'disabled');
    await change();
    await change(TOKENS.atD2);
    const disabled = await request(app.server).get('/admin/endpoints').set(bearer).expect(200);
    const [first] = await changesOf();
    expect(disabled.body.endpoints[0]).toMatchObject({
      id: 'erp',
      state: 'disabled',
      reason: expect.stringContaining(`change ${first.id}`),
      positions: [{ source_id: 'ACME', position: 0, oldest_undelivered: { seq: 1, created_at: first.createdAt.toISOString() } }],
      last_attempt: { change_id: first.id, attempt: 1, result: 'gone', status: 410 },
    });
    expect(server.received).toHaveLength(1);
    server.answer = answering(200);
    const enabled = await request(app.server).post('/admin/endpoints/erp/enable').set(bearer).expect(200);
    expect(enabled.body).toMatchObject({ id: 'erp', state: 'enabled', reason: null });
    await waitFor(async () => server.received.length >= 4);
    expect(seqsOf(server, TOKENS.active.token_id)).toEqual([1, 1, 2]);
    expect(server.received).toHaveLength(4);
    const attempts = await request(app.server).get('/admin/endpoints/erp/attempts?limit=2').set(bearer).expect(200);
    expect(attempts.body.attempts).toHaveLength(2);
    expect(attempts.body.attempts[0].id).toBeGreaterThan(attempts.body.attempts[1].id);
  });

  it('an answer holding a NUL byte is recorded, with the byte replaced, and a 410 holding one still disables the endpoint', async () => {
    const server = await endpoint();
    server.answer = (_received, response) => response.writeHead(410).end('gone\u0000for good');
    await start([{ id: 'erp', url: server.url() }]);
    await change();
    await waitFor(async () => (await request(app.server).get('/admin/endpoints').set(bearer)).body.endpoints[0].state === 'disabled');
    const [first] = await changesOf();
    const attempts = await request(app.server).get('/admin/endpoints/erp/attempts?limit=5').set(bearer).expect(200);
    expect(attempts.body.attempts).toEqual([
      expect.objectContaining({ change_id: first.id, attempt: 1, result: 'gone', status: 410, error: '410: HTTP 410: gone\uFFFDfor good' }),
    ]);
    expect(server.received).toHaveLength(1);
  });

  it('a replay sends the changes after the position again, same ids and bodies; unknown ids are 404 and bad bodies 400', async () => {
    const server = await endpoint();
    await start([{ id: 'erp', url: server.url() }]);
    await change();
    await change(TOKENS.atD2);
    await waitFor(async () => server.received.length >= 2);
    const replay = (id: string, body: unknown) =>
      request(app.server)
        .post(`/admin/endpoints/${id}/replay`)
        .set(bearer)
        .send(body as object);
    await replay('nope', { source_id: 'ACME', after: 0 }).expect(
      404,
      errorBody(404, 'Endpoint not found: the seed lists no endpoint with this id'),
    );
    await replay('erp', { source_id: 'ACME', after: -1 }).expect(400);
    await replay('erp', { source_id: 'ACME', after: 3 }).expect(400);
    // A position is kept only for an account of the seed whose changes the endpoint takes, never for any string.
    await replay('erp', { source_id: 'NOPE', after: 0 }).expect(
      400,
      errorBody(400, 'Invalid field: source_id', [
        { field: 'source_id', message: 'must be an account of the seed whose changes the endpoint erp takes' },
      ]),
    );
    const answered = await replay('erp', { source_id: 'ACME', after: 0 }).expect(200);
    expect(answered.body.positions).toEqual([{ source_id: 'ACME', position: 0, oldest_undelivered: expect.objectContaining({ seq: 1 }) }]);
    await waitFor(async () => server.received.length >= 4);
    expect(server.received).toHaveLength(4);
    const [firstTime, again] = [receivedBy(server).slice(0, 2), receivedBy(server).slice(2)];
    expect(again.map((r) => [r.id, r.body]).sort()).toEqual(firstTime.map((r) => [r.id, r.body]).sort());
  });

  it('attempts are kept to the newest few per endpoint (the bound injected small), newest first', async () => {
    const server = await endpoint();
    server.answer = answering(503);
    await start([{ id: 'erp', url: server.url() }], 5);
    await change();
    await waitFor(async () => server.received.length >= 12);
    // Hanging from now on: once the next attempt is at the endpoint, the one before is written and pruned.
    server.answer = answering('never');
    await waitFor(async () => server.inFlight === 1);
    const made = server.received.length - 1;
    const page = await request(app.server).get('/admin/endpoints/erp/attempts?limit=100').set(bearer).expect(200);
    expect(page.body.attempts.map((attempt: { attempt: number }) => attempt.attempt)).toEqual([
      made,
      made - 1,
      made - 2,
      made - 3,
      made - 4,
    ]);
  });

  (kind.name === 'postgres' ? it : it.skip)(
    "the delivery pool's connections cut while changes are pending: no crash, one log line for all endpoints, and every change arrives by itself",
    async () => {
      const server = await endpoint();
      const second = await endpoint();
      await start([
        { id: 'erp', url: server.url() },
        { id: 'crm', url: second.url() },
      ]);
      await change();
      await change(TOKENS.atD2);
      await waitFor(async () => server.received.length >= 2 && second.received.length >= 2);
      const delivery = `application_name = '${DELIVERY_CONNECTIONS}'`;
      const waitingOnLock =
        (query = '') =>
        async () =>
          (await sql(`SELECT 1 FROM pg_stat_activity WHERE ${delivery} AND wait_event_type = 'Lock' AND query LIKE $1`, [`%${query}%`]))
            .rowCount! > 0;
      // Answers held, so that attempts are in flight when the lock comes.
      const held: Array<() => void> = [];
      const hold: WebhookAnswer = (_received, response) => held.push(() => response.writeHead(204).end());
      server.answer = hold;
      second.answer = hold;
      await change();
      await waitFor(async () => held.length === 2);
      // A lock holds delivery's reads of its state and then its writes of the outcomes, so that the cut finds
      // both a query and a transaction of it under way.
      const locker = new Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${workerSchema()}` });
      await locker.connect();
      const logged = captured.logLines.length;
      try {
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE sink_states IN ACCESS EXCLUSIVE MODE');
        await waitFor(waitingOnLock());
        for (const answer of held.splice(0)) answer();
        await waitFor(waitingOnLock('FOR SHARE'));
        server.answer = answering(204);
        second.answer = answering(204);
        await change(TOKENS.atD2);
        const cut = await sql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE ${delivery}`);
        expect(cut.rowCount).toBeGreaterThan(0);
      } finally {
        await locker.query('ROLLBACK');
        await locker.end();
      }
      await change();
      const recorded = (await changesOf()).map((c) => c.id);
      expect(recorded).toHaveLength(5);
      const firstArrivals = (seqs: number[]) => seqs.filter((seq, i) => seqs.indexOf(seq) === i);
      for (const receiver of [server, second]) {
        await waitFor(async () => recorded.every((id) => receivedBy(receiver).some((received) => received.id === id)));
        expect(firstArrivals(seqsOf(receiver, TOKENS.active.token_id))).toEqual([1, 3, 5]);
        expect(firstArrivals(seqsOf(receiver, TOKENS.atD2.token_id))).toEqual([2, 4]);
      }
      const lines = captured.logLines.slice(logged).map((line) => JSON.parse(line) as { level: number; msg: string });
      expect(lines.filter((line) => line.level >= 40).map((line) => line.msg)).toEqual([
        'delivery paused: the database did not answer; it resumes where it stopped once it does',
      ]);
      expect(lines.map((line) => line.msg)).toContain('delivery resumed: the database answers again');
    },
  );

  it('an endpoint that never answers does not delay another endpoint', async () => {
    const hanging = await endpoint();
    hanging.answer = answering('never');
    const healthy = await endpoint();
    await start([
      { id: 'hanging', url: hanging.url() },
      { id: 'healthy', url: healthy.url() },
    ]);
    const delays: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const committed = Date.now();
      await change(i % 2 ? TOKENS.active : TOKENS.atD2);
      await waitFor(async () => healthy.received.length > i);
      delays.push(Date.now() - committed);
    }
    process.stdout.write(`${kind.name}: beside an endpoint that never answers, deliveries took ${delays.join(', ')} ms\n`);
    // Generous for a loaded machine (the figures above are the measure); a healthy endpoint held up behind the
    // hanging one would wait for its whole time limit, GENEROUS_MS.
    expect(Math.max(...delays)).toBeLessThan(10_000);
    expect(healthy.received).toHaveLength(5);
  });
});
