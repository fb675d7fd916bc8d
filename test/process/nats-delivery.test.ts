import request from 'supertest';
import { DeliveryEngine } from '../../src/delivery/engine';
import { MemorySinkPositions } from '../../src/delivery/memory-positions';
import { openNatsSink } from '../../src/delivery/nats-sink';
import { changeSubject } from '../../src/delivery/nats-subject';
import { PgSinkPositions } from '../../src/delivery/postgres-positions';
import { Metrics } from '../../src/process/metrics';
import { MemoryStore } from '../../src/store/memory-store';
import type { Change, Store } from '../../src/store/store';
import { buildTestApp, storeKinds, type TestApp } from '../helpers/app';
import { capturingLogger } from '../helpers/capture';
import * as clients from '../helpers/clients';
import { ACME, fixtureSeed, OTHER, TOKENS } from '../helpers/fixtures';
import { HAS_NATS_SERVER, noteIfNoNatsServer, readStream, type ReadMessage, TestNatsServer } from '../helpers/nats-server';
import { statusToggles } from '../helpers/payloads';
import { schemaDatabaseUrl, sql, TEST_DATABASE_URL, warnIfNoDatabase, workerSchema } from '../helpers/postgres';
import { DEMO_WITHDRAWAL } from '../helpers/slow-request';
import { startServer, type ServerProcess } from '../helpers/server-process';
import { waitFor } from '../helpers/wait';

noteIfNoNatsServer();

const ADMIN_TOKEN = 'admin-test-token-0123456789';

/** What the stream should hold of these changes: each once, on its subject, with its id, as the feed shows it. */
function asStream(changes: Change[]) {
  return changes.map((change) => ({ subject: changeSubject(change), msgId: change.id, seq: change.seq }));
}

function asRead(messages: ReadMessage[]) {
  return messages.map(({ subject, msgId, body }) => ({ subject, msgId, seq: body.seq }));
}

/** Contract section 13.4 end to end: the relay as one more sink of the delivery engine, on each store. */
(HAS_NATS_SERVER ? describe : describe.skip).each(storeKinds().map((kind) => [kind.name, kind] as const))(
  'the NATS relay hosted by the delivery engine, on the %s store',
  (_name, kind) => {
    let store: Store;
    let nats: TestNatsServer;
    let engine: DeliveryEngine | undefined;

    afterEach(async () => {
      await engine?.stop(2_000);
      engine = undefined;
      await nats.remove();
      await store.close();
    });

    it('publishes every change recorded after it appeared once, in seq order per account, across a nats-server killed mid-flood; no 5xx to partners', async () => {
      store = await kind.create();
      await store.loadSeed(fixtureSeed());
      let app: TestApp = await buildTestApp(kind, { store });
      const statusToggle = statusToggles();
      /** One change of the token (its status toggled); the answer's status. */
      const toggle = async (token: Parameters<typeof statusToggle>[0]) => (await clients.statusChange(app, statusToggle(token))).status;
      // Recorded before the relay appears: never published (contract 13.4: it starts with the changes recorded after).
      expect(await toggle(TOKENS.active)).toBe(200);

      nats = await TestNatsServer.start();
      const metrics = new Metrics();
      engine = await DeliveryEngine.start({
        sinks: [
          openNatsSink(
            {
              servers: [`127.0.0.1:${nats.port}`],
              tls: false,
              credentials: {},
              stream: 'RECEIVER_CHANGES',
              publishTimeoutMs: 2_000,
              maxAgeMs: 86_400_000,
            },
            capturingLogger(),
          ),
        ],
        positions:
          store instanceof MemoryStore
            ? new MemorySinkPositions(() => (store as MemoryStore).changeHeads())
            : new PgSinkPositions({ connectionString: TEST_DATABASE_URL as string, schema: workerSchema(), statementTimeoutMs: 5_000 }),
        store,
        // The relay's own schedule applies; this one is the webhooks'.
        retryDelay: () => 60_000,
        instanceId: 'test',
        leaseMs: 3_000,
        logger: capturingLogger(),
        metrics,
        busyPollMs: 50,
        idlePollMs: 100,
      });
      app = await buildTestApp(kind, { store, delivery: engine, metrics, config: { adminToken: ADMIN_TOKEN } });

      // Three tokens of two accounts, in parallel rounds; nats-server is killed (SIGKILL) after the fourth.
      const statuses: number[] = [];
      for (let round = 0; round < 12; round += 1) {
        if (round === 4) await nats.kill();
        statuses.push(...(await Promise.all([toggle(TOKENS.active), toggle(TOKENS.atD2), toggle(TOKENS.others)])));
      }
      expect(statuses.filter((status) => status !== 200)).toEqual([]);
      // While NATS is away, the relay's lag is a metric: the age of its oldest change not yet published.
      await waitFor(async () => {
        const page = (await request(app.metricsServer).get('/metrics')).text;
        return /^receiver_delivery_oldest_undelivered_seconds\{endpoint="nats"\} [1-9]/m.test(page);
      });

      await nats.restart();
      const acme = await store.changesAfter(ACME.source_id, 1, 1000);
      const others = await store.changesAfter(OTHER.source_id, 0, 1000);
      expect(acme.length + others.length).toBe(36);
      await waitFor(async () => (await readStream(nats)).length >= 36);
      const stream = await readStream(nats);
      // Each account's messages in its seq order (the two accounts interleave), every change once.
      expect(asRead(stream.filter((message) => message.body.source_id === ACME.source_id))).toEqual(asStream(acme));
      expect(asRead(stream.filter((message) => message.body.source_id === OTHER.source_id))).toEqual(asStream(others));
      expect(stream).toHaveLength(36);

      const endpoints = await request(app.server)
        .get('/admin/endpoints')
        .set({ Authorization: `Bearer ${ADMIN_TOKEN}` })
        .expect(200);
      expect(endpoints.body.endpoints).toEqual([
        expect.objectContaining({
          id: 'nats',
          state: 'enabled',
          positions: expect.arrayContaining([
            expect.objectContaining({ source_id: ACME.source_id, position: acme[acme.length - 1].seq, oldest_undelivered: null }),
          ]),
        }),
      ]);
    });
  },
);

warnIfNoDatabase();
const SCHEMA = 'nats_takeover_test';

/** DATABASE_URL on a schema of this file's own: the two instances share it. */
const databaseUrl = () => schemaDatabaseUrl(SCHEMA);

/** The demo token's next withdrawal of 1.00 (its balance is 1000.00 in the demo seed). */
async function withdrawOne(port: number, n: number): Promise<number> {
  const body = { ...JSON.parse(DEMO_WITHDRAWAL), transaction_id: `2024012100000${String(n).padStart(7, '0')}`, withdrawn_amount: '1.00' };
  body.token_balance = `${1000 - n}.00`;
  const response = await fetch(`http://127.0.0.1:${port}/v1/tokens/withdraw`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return response.status;
}

/** The instance holding the relay's lease: its INSTANCE_ID starts the lease's owner. */
async function relayHolder(): Promise<string | undefined> {
  const { rows } = await sql("SELECT lease_owner FROM sink_states WHERE sink_id = 'nats' AND lease_until > now()", [], SCHEMA);
  return (rows[0]?.lease_owner as string | undefined)?.split('/')[0];
}

(TEST_DATABASE_URL && HAS_NATS_SERVER ? describe : describe.skip)('two instances on one PostgreSQL, the publishing one SIGKILLed', () => {
  let nats: TestNatsServer;
  const servers: ServerProcess[] = [];
  beforeAll(async () => {
    await sql(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`, [], 'public');
    await sql(`CREATE SCHEMA ${SCHEMA}`, [], 'public');
    nats = await TestNatsServer.start();
  });
  afterAll(async () => {
    for (const server of servers) server.child.kill('SIGKILL');
    await Promise.all(servers.map((server) => server.exited));
    await nats.remove();
    await sql(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`, [], 'public');
  });

  it('the other takes over within the lease: the stream holds every change once, in seq order', async () => {
    const env = { DATABASE_URL: databaseUrl(), NATS_URL: nats.url, DELIVERY_LEASE_MS: '3000' };
    servers.push(await startServer({ ...env, INSTANCE_ID: 'a' }));
    servers.push(await startServer({ ...env, INSTANCE_ID: 'b' }));
    const [a, b] = servers;
    for (let n = 1; n <= 6; n += 1) expect(await withdrawOne((n % 2 ? a : b).port, n)).toBe(200);
    await waitFor(async () => (await readStream(nats)).length === 6);

    const holder = await relayHolder();
    expect(['a', 'b']).toContain(holder);
    const [publishing, other] = holder === 'a' ? [a, b] : [b, a];
    publishing.child.kill('SIGKILL');
    await publishing.exited;
    for (let n = 7; n <= 12; n += 1) expect(await withdrawOne(other.port, n)).toBe(200);

    await waitFor(async () => (await readStream(nats)).length >= 12);
    expect(await relayHolder()).toBe(holder === 'a' ? 'b' : 'a');
    const stream = await readStream(nats);
    expect(stream.map((message) => [message.subject, message.body.seq])).toEqual(
      Array.from({ length: 12 }, (_, index) => ['receiver.changes.PDR28.token.withdrawn', index + 1]),
    );
    expect(new Set(stream.map((message) => message.msgId)).size).toBe(12);
  });
});
