import { Client } from 'pg';
import request from 'supertest';
import { createApp } from '../../src/app';
import { createHttpServer } from '../../src/http-server';
import { createLogger } from '../../src/logger';
import type { PgStore } from '../../src/store/postgres/pg-store';
import { FIXED_NOW } from '../helpers/app';
import { CuttableProxy } from '../helpers/cuttable-proxy';
import { fixtureSeed, TOKENS } from '../helpers/fixtures';
import { errorBody } from '../helpers/http';
import { bookingChange, bookingPath, withdrawal } from '../helpers/payloads';
import { openEmptyPgStore, sql, TEST_DATABASE_URL, warnIfNoDatabase, workerSchema } from '../helpers/postgres';

warnIfNoDatabase();
jest.setTimeout(20_000);

function appOn(store: PgStore) {
  return createHttpServer(createApp({ store, logger: createLogger('silent'), now: () => FIXED_NOW, config: { bodyLimitBytes: 32 * 1024, rateLimitPerMinute: 0 } }));
}

/** Holds the token's row lock from another connection until released, so requests on it wait inside their transaction. */
async function lockToken(tokenId: string) {
  const client = new Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${workerSchema()}` });
  await client.connect();
  await client.query('BEGIN');
  await client.query('SELECT 1 FROM tokens WHERE token_id = $1 FOR UPDATE', [tokenId]);
  return async () => {
    await client.query('ROLLBACK');
    await client.end();
  };
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
    expect((await request(app).get('/readyz')).status).toBe(200);
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
    const pending = request(app).post('/v1/tokens/withdraw').send(body);
    await new Promise((resolve) => setTimeout(resolve, 150));
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
