import { Client } from 'pg';
import request from 'supertest';
import { createApp } from '../../src/app';
import { createHttpServer } from '../../src/process/http-server';
import { createLogger } from '../../src/process/logger';
import { PgStore } from '../../src/store/postgres/pg-store';
import { FIXED_NOW, testConfig } from '../helpers/app';
import { CuttableProxy } from '../helpers/cuttable-proxy';
import { fixtureSeed, TOKENS } from '../helpers/fixtures';
import { errorBody, readinessWithin } from '../helpers/http';
import { waitFor } from '../helpers/wait';
import { bookingChange, bookingPath, withdrawal } from '../helpers/payloads';
import { openEmptyPgStore, sql, TEST_DATABASE_URL, warnIfNoDatabase, workerSchema } from '../helpers/postgres';

warnIfNoDatabase();
function appOn(store: PgStore) {
  return createHttpServer(createApp({ store, logger: createLogger('silent'), now: () => FIXED_NOW, config: testConfig() }));
}

/** Holds the token's row lock from another connection until released, so requests on it wait inside their transaction. */
async function lockToken(tokenId: string) {
  const client = new Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${workerSchema()}` });
  await client.connect();
  await client.query('BEGIN');
  await client.query('SELECT 1 FROM tokens WHERE token_id = $1 FOR UPDATE', [tokenId]);
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  /** Resolves once some session waits for this lock: a request is inside its transaction, blocked on it. */
  const blocking = () =>
    waitFor(
      async () =>
        (await sql('SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [rows[0].pid], 'public'))
          .rows[0].n > 0,
    );
  const release = async () => {
    await client.query('ROLLBACK');
    await client.end();
  };
  return Object.assign(release, { blocking });
}

const ledgerRows = async (transactionId: unknown) =>
  (await sql('SELECT count(*)::int AS n FROM ledger WHERE transaction_id = $1', [transactionId])).rows[0].n;
const balance = async () => Number((await sql('SELECT balance FROM tokens WHERE token_id = $1', [TOKENS.active.token_id])).rows[0].balance);

(TEST_DATABASE_URL ? describe : describe.skip)('PostgreSQL failures map to the contract and apply nothing', () => {
  let proxy: CuttableProxy;
  let store: PgStore;
  beforeEach(async () => {
    const started = await CuttableProxy.start(TEST_DATABASE_URL as string);
    proxy = started.proxy;
    store = await openEmptyPgStore({ connectionString: started.url, statementTimeoutMs: 400, connectTimeoutMs: 500 });
    await store.loadSeed(fixtureSeed());
  });
  afterEach(async () => {
    await proxy.stop();
    await store.close();
  });

  it('when the database is unreachable, operations and /readyz answer 503, and all recover when it returns', async () => {
    const app = appOn(store);
    proxy.cut();
    const body = withdrawal();
    for (const response of [
      await request(app).post('/v1/tokens/withdraw').send(body),
      await request(app).patch(bookingPath()).send(bookingChange()),
      await request(app).get('/readyz'),
    ]) {
      expect({ status: response.status, body: response.body }).toEqual({ status: 503, body: errorBody(503, 'Service Unavailable') });
    }
    proxy.restore();
    expect(await readinessWithin(() => request(app).get('/readyz'), 200)).toBe(200);
    expect(await ledgerRows(body.transaction_id)).toBe(0);
    expect(await balance()).toBe(100000);
    const retried = await request(app).post('/v1/tokens/withdraw').send(body);
    expect(retried.status).toBe(200);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(await balance()).toBe(90000);
  });

  it('when the connection drops in the middle of a transaction, the answer is 503 and nothing is half-applied', async () => {
    const app = appOn(store);
    const release = await lockToken(TOKENS.active.token_id);
    const body = withdrawal();
    // then() sends it: a supertest request is only sent once awaited.
    const pending = request(app)
      .post('/v1/tokens/withdraw')
      .send(body)
      .then((response) => response);
    await release.blocking();
    proxy.cut();
    const response = await pending;
    expect({ status: response.status, body: response.body }).toEqual({ status: 503, body: errorBody(503, 'Service Unavailable') });
    await release();
    proxy.restore();
    expect(await ledgerRows(body.transaction_id)).toBe(0);
    expect(await balance()).toBe(100000);
  });

  it('a statement past DATABASE_STATEMENT_TIMEOUT_MS answers 504 and applies nothing; the retry then succeeds', async () => {
    const app = appOn(store);
    const release = await lockToken(TOKENS.active.token_id);
    const body = withdrawal();
    const response = await request(app).post('/v1/tokens/withdraw').send(body);
    expect({ status: response.status, body: response.body }).toEqual({ status: 504, body: errorBody(504, 'Gateway Timeout') });
    await release();
    expect(await ledgerRows(body.transaction_id)).toBe(0);
    expect(await balance()).toBe(100000);
    expect((await request(app).post('/v1/tokens/withdraw').send(body)).status).toBe(200);
  });
});

/** A database of its own, so that closing it or making it read-only touches no other test. */
(TEST_DATABASE_URL ? describe : describe.skip)('PostgreSQL refusing connections or writes answers 503, and recovers', () => {
  const database = `receiver_refusing_${process.pid}_${process.env.JEST_WORKER_ID ?? '1'}`;
  const admin = (text: string) => sql(text, [], 'public');
  /** New sessions see the database's settings: the pool's open connections are ended, so the next ones are new. */
  const endSessions = () =>
    admin(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '${database}' AND pid <> pg_backend_pid()`);
  let store: PgStore;
  beforeEach(async () => {
    await admin(`DROP DATABASE IF EXISTS ${database}`);
    await admin(`CREATE DATABASE ${database}`);
    const url = new URL(TEST_DATABASE_URL as string);
    url.pathname = `/${database}`;
    store = await PgStore.open({ connectionString: url.toString(), statementTimeoutMs: 2_000, poolSize: 2, connectTimeoutMs: 1_000 });
    await store.loadSeed(fixtureSeed());
  });
  afterEach(async () => {
    await store.close();
    await endSessions();
    await admin(`DROP DATABASE IF EXISTS ${database}`);
  });

  it.each([
    [
      'made read-only, as after a failover to a standby',
      `ALTER DATABASE ${database} SET default_transaction_read_only = on`,
      `ALTER DATABASE ${database} RESET default_transaction_read_only`,
    ],
    ['closed to connections', `ALTER DATABASE ${database} ALLOW_CONNECTIONS false`, `ALTER DATABASE ${database} ALLOW_CONNECTIONS true`],
  ])(
    'when the database is %s: 503 for operations and /readyz, nothing applied, 200 again once it is back',
    async (_what, refuse, restore) => {
      const app = appOn(store);
      await admin(refuse);
      await endSessions();
      const body = withdrawal();
      for (const response of [await request(app).post('/v1/tokens/withdraw').send(body), await request(app).get('/readyz')]) {
        expect({ status: response.status, body: response.body }).toEqual({ status: 503, body: errorBody(503, 'Service Unavailable') });
      }
      await admin(restore);
      await endSessions();
      // The pool learns that its connections were ended as the news arrives, and readiness is a check at most a second old.
      expect(await readinessWithin(() => request(app).get('/readyz'), 200)).toBe(200);
      expect((await request(app).post('/v1/tokens/withdraw').send(body)).status).toBe(200);
      expect((await store.findToken(TOKENS.active.token_id))?.balance).toBe(90000);
    },
  );
});
