import { Client } from 'pg';
import request from 'supertest';
import { createApp } from '../../src/app';
import { createHttpServer } from '../../src/process/http-server';
import { createLogger } from '../../src/process/logger';
import { formatAmount } from '../../src/domain/money';
import { readMigrations } from '../../src/store/postgres/migrate';
import { PgStore } from '../../src/store/postgres/pg-store';
import { FIXED_NOW, testConfig } from '../helpers/app';
import { BOOKING, fixtureSeed, TOKENS } from '../helpers/fixtures';
import { withdrawal } from '../helpers/payloads';
import { openEmptyPgStore, sql, TEST_DATABASE_URL, warnIfNoDatabase, workerSchema } from '../helpers/postgres';
import { waitFor } from '../helpers/wait';

warnIfNoDatabase();

/** One app per store, as two replicas behind a load balancer would be. */
function appOn(store: PgStore) {
  return createHttpServer(createApp({ store, logger: createLogger('silent'), now: () => FIXED_NOW, config: testConfig() }));
}

(TEST_DATABASE_URL ? describe : describe.skip)('two instances on two pools sharing one database', () => {
  let first: PgStore;
  let second: PgStore;
  beforeEach(async () => {
    first = await openEmptyPgStore();
    await first.loadSeed(fixtureSeed());
    second = await openEmptyPgStore({ poolSize: 10 });
    await second.loadSeed(fixtureSeed());
  });
  afterEach(async () => {
    await Promise.all([first.close(), second.close()]);
  });

  const balance = async () =>
    Number((await sql('SELECT balance FROM tokens WHERE token_id = $1', [TOKENS.active.token_id])).rows[0].balance);

  it('50 concurrent copies of one withdrawal split across both apply once', async () => {
    const apps = [appOn(first), appOn(second)];
    const body = withdrawal();
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        request(apps[i % 2])
          .post('/v1/tokens/withdraw')
          .send(body),
      ),
    );
    const statuses = responses.map((r) => r.status);
    const applied = responses.filter((r) => r.status === 200 && r.headers['idempotent-replayed'] === undefined).length;
    const replayed = responses.filter((r) => r.headers['idempotent-replayed'] === 'true').length;
    expect(statuses.every((status) => status === 200 || status === 409)).toBe(true);
    expect(applied).toBe(1);
    expect(replayed).toBe(statuses.filter((s) => s === 200).length - 1);
    const rows = await sql('SELECT count(*)::int AS n FROM ledger WHERE transaction_id = $1', [body.transaction_id]);
    expect(rows.rows[0].n).toBe(1);
    expect(await balance()).toBe(90000);
    process.stdout.write(
      `two instances, 50 copies: ${applied} applied, ${replayed} replayed, ${statuses.filter((s) => s === 409).length} answered 409\n`,
    );
  });

  it('MAX_KEYS_PER_ACCOUNT holds across both: 20 Modify Bookings under new keys at once with room for 5, exactly 5 apply', async () => {
    const limited = (store: PgStore) =>
      createHttpServer(
        createApp({
          store,
          logger: createLogger('silent'),
          now: () => FIXED_NOW,
          config: testConfig({ quotas: { tokensPerAccount: 0, bookingsPerAccount: 0, keysPerAccount: 5 } }),
        }),
      );
    const apps = [limited(first), limited(second)];
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        request(apps[i % 2])
          .patch(`/v1/booking/ACME/keys-race-${String(i).padStart(4, '0')}`)
          .send({
            share_secret: 'sk_test_acme_1',
            booking_event: 'modify',
            source_id: 'ACME',
            booking_id: BOOKING.booking_id,
            guests_count: String(i + 1),
          }),
      ),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((status) => status === 200)).toHaveLength(5);
    expect(statuses.filter((status) => status !== 200).every((status) => status === 403)).toBe(true);
    expect((await sql("SELECT count(*)::int AS n FROM keyed_requests WHERE source_id = 'ACME'")).rows[0].n).toBe(5);
    expect((await sql("SELECT keys::int AS n FROM account_holdings WHERE source_id = 'ACME'")).rows[0].n).toBe(5);
  });

  it('50 distinct withdrawals across both leave the balance equal to the start less their sum', async () => {
    const apps = [appOn(first), appOn(second)];
    // Each states the balance it expects; racing requests that see another balance answer 409 and are retried.
    let pending = Array.from({ length: 50 }, (_, i) => ({ id: withdrawal().transaction_id as string, amount: 100 + i }));
    let rounds = 0;
    while (pending.length > 0 && rounds < 200) {
      rounds += 1;
      const current = await balance();
      const outcomes = await Promise.all(
        pending.map((w, i) =>
          request(apps[i % 2])
            .post('/v1/tokens/withdraw')
            .send(
              withdrawal({
                transaction_id: w.id,
                withdrawn_amount: formatAmount(w.amount),
                token_balance: formatAmount(current - w.amount),
              }),
            ),
        ),
      );
      expect(outcomes.every((r) => r.status === 200 || r.status === 409)).toBe(true);
      pending = pending.filter((_, i) => outcomes[i].status !== 200);
    }
    expect(pending).toEqual([]);
    const sum = Array.from({ length: 50 }, (_, i) => 100 + i).reduce((a, b) => a + b, 0);
    expect(await balance()).toBe(100000 - sum);
    const ledger = await sql('SELECT count(*)::int AS n, sum(amount)::bigint AS total FROM ledger WHERE token_id = $1', [
      TOKENS.active.token_id,
    ]);
    expect({ n: ledger.rows[0].n, total: Number(ledger.rows[0].total) }).toEqual({ n: 50, total: sum });
    process.stdout.write(
      `two instances, 50 distinct: ledger ${ledger.rows[0].n} rows, ${sum} cents, balance ${await balance()} in ${rounds} rounds\n`,
    );
  });

  it('the same booking change sent to both at once applies once', async () => {
    const apps = [appOn(first), appOn(second)];
    const body = { share_secret: 'sk_test_acme_1', booking_event: 'modify', source_id: 'ACME', booking_id: '1396', guests_count: '7' };
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        request(apps[i % 2])
          .patch('/v1/booking/ACME/key-race-0001')
          .send(body),
      ),
    );
    expect(responses.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    expect(responses.filter((r) => r.status === 200 && r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(new Set(responses.filter((r) => r.status === 200).map((r) => r.text)).size).toBe(1);
    expect((await sql('SELECT count(*)::int AS n FROM keyed_requests')).rows[0].n).toBe(1);
  });

  it('several instances starting at once on a new schema apply each migration once', async () => {
    const schema = `${workerSchema()}_fresh`;
    await sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    const stores = await Promise.all(
      Array.from({ length: 4 }, () =>
        PgStore.open({ connectionString: TEST_DATABASE_URL as string, statementTimeoutMs: 5000, poolSize: 2, schema }),
      ),
    );
    await Promise.all(stores.map((store) => store.close()));
    const versions = await sql('SELECT version FROM schema_migrations ORDER BY version', [], schema);
    expect(versions.rows).toEqual(readMigrations().map(({ version }) => ({ version })));
    await sql(`DROP SCHEMA ${schema} CASCADE`);
  });

  it('the database itself refuses a balance out of bounds, a malformed transaction id, an unknown kind and a fee on anything but a load', async () => {
    for (const balance of [-1, 1_000_000_000_000]) {
      await expect(sql('UPDATE tokens SET balance = $2 WHERE token_id = $1', [TOKENS.active.token_id, balance])).rejects.toThrow(
        /check constraint/,
      );
    }
    const insert = (transactionId: string, kind: string, amount: number, fee: number) =>
      sql(
        `INSERT INTO ledger (kind, transaction_id, source_id, destination_id, token_id, amount, fee, token_balance, created_at)
         VALUES ($1, $2, 'ACME', 'D1', $3, $4, $5, 1, now())`,
        [kind, transactionId, TOKENS.active.token_id, amount, fee],
      );
    await expect(insert('123', 'withdrawal', 1, 0)).rejects.toThrow(/check constraint/);
    await expect(insert('00000000000000000001', 'bonus', 1, 0)).rejects.toThrow(/check constraint/);
    await expect(insert('00000000000000000001', 'refund', 1, 5)).rejects.toThrow(/check constraint/);
    await expect(sql('UPDATE tokens SET refundable = -1 WHERE token_id = $1', [TOKENS.active.token_id])).rejects.toThrow(
      /check constraint/,
    );
    await expect(insert('00000000000000000001', 'withdrawal', 1, 5)).rejects.toThrow(/check constraint/);
    await expect(insert('00000000000000000001', 'load', 0, 5)).rejects.toThrow(/check constraint/);
  });

  it('30 copies of one Load Token sent to both at once move money once, and every copy answers the same transaction_id', async () => {
    const apps = [appOn(first), appOn(second)];
    const body = {
      share_secret: 'sk_test_acme_1',
      token_event: 'load',
      source_id: 'ACME',
      token_id: TOKENS.active.token_id,
      load_amount: '25.00',
    };
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        request(apps[i % 2])
          .patch('/v1/token/ACME/key-load-race-1')
          .send(body),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(responses.map(() => 200));
    expect(responses.filter((r) => r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    const transactionIds = new Set(responses.map((r) => r.body.transaction.transaction_id as string));
    expect(new Set(responses.map((r) => r.text)).size).toBe(1);
    expect(transactionIds.size).toBe(1);
    expect(await balance()).toBe(102500);
    const rows = await sql('SELECT transaction_id, kind, amount::int FROM ledger WHERE token_id = $1', [TOKENS.active.token_id]);
    expect(rows.rows).toEqual([{ transaction_id: [...transactionIds][0], kind: 'load_token', amount: 2500 }]);
  });

  it('the same Create Booking sent to both at once creates it once, and every copy is answered 200 as its replay, never "already exists"', async () => {
    const apps = [appOn(first), appOn(second)];
    const { updated_at: _updatedAt, ...fields } = BOOKING;
    const body = { ...fields, share_secret: 'sk_test_acme_1', booking_event: 'new', booking_id: 'B-race-1' };
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        request(apps[i % 2])
          .post('/v1/booking/ACME/key-create-race-1')
          .send(body),
      ),
    );
    const statuses = responses.map((r) =>
      r.status === 200 ? (r.headers['idempotent-replayed'] ? 'replayed' : 'applied') : `${r.status} ${r.body.errors?.message}`,
    );
    expect(statuses.filter((status) => status !== 'replayed' && status !== 'applied' && !status.includes('still being processed'))).toEqual(
      [],
    );
    expect(statuses.filter((status) => status === 'applied')).toHaveLength(1);
    expect(new Set(responses.filter((r) => r.status === 200).map((r) => r.text)).size).toBe(1);
  });

  it('the same Create Token sent to both at once makes one token; the same load sent to both applies once', async () => {
    const apps = [appOn(first), appOn(second)];
    const creation = {
      share_secret: 'sk_test_acme_1',
      token_event: 'create',
      source_id: 'ACME',
      destination_id: 'D1',
      destination_currency: 'EUR',
      load_amount: '10.00',
      available_date: '01-01-2020',
      expiry_date: '31-12-2099',
    };
    const created = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        request(apps[i % 2])
          .post('/v1/token/ACME/key-token-race-1')
          .send(creation),
      ),
    );
    expect(created.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    expect(created.filter((r) => r.status === 200 && r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(new Set(created.filter((r) => r.status === 200).map((r) => r.text)).size).toBe(1);
    expect((await sql("SELECT count(*)::int AS n FROM tokens WHERE source_id = 'ACME' AND destination_currency = 'EUR'")).rows[0].n).toBe(
      1,
    );

    const load = {
      share_public: 'pk_test_acme_1',
      read_event: 'token.loaded_created',
      source_id: 'ACME',
      destination_id: 'D1',
      token_id: TOKENS.active.token_id,
      transaction_id: '55555555555555555555',
      load_amount: '5.00',
      fee_amount: '0.50',
      token_balance: '1005.00',
    };
    const loads = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        request(apps[i % 2])
          .post('/v1/tokens/loaded')
          .send(load),
      ),
    );
    expect(loads.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    expect(loads.filter((r) => r.status === 200 && r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect((await first.findToken(TOKENS.active.token_id))?.balance).toBe(100500);
    expect((await sql("SELECT count(*)::int AS n FROM ledger WHERE transaction_id = '55555555555555555555'")).rows[0].n).toBe(1);
  });

  it("a token another instance creates while the seed loads is counted in the holdings, not lost to the seed's recount", async () => {
    // As a batch of the first instance commits a token: the row inserted and the holdings counted, not yet committed.
    const creating = new Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${workerSchema()}` });
    await creating.connect();
    try {
      await creating.query('BEGIN');
      await creating.query(
        `INSERT INTO tokens SELECT (jsonb_populate_record(NULL::tokens, to_jsonb(t) || '{"token_id": "1000000000000999"}')).*
           FROM tokens t WHERE token_id = $1`,
        [TOKENS.active.token_id],
      );
      await creating.query("UPDATE account_holdings SET tokens = tokens + 1 WHERE source_id = 'ACME'");
      const creatingPid = (await creating.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      const seeding = second.loadSeed(fixtureSeed());
      await waitFor(
        async () =>
          Number(
            (await sql('SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))', [creatingPid])).rows[0].count,
          ) >= 1,
      );
      await creating.query('COMMIT');
      await seeding;
    } finally {
      await creating.end();
    }
    const counted = await sql(
      "SELECT h.tokens::int AS held, (SELECT count(*)::int FROM tokens WHERE source_id = 'ACME') AS rows FROM account_holdings h WHERE source_id = 'ACME'",
    );
    const acmeTokens = Object.values(TOKENS).filter((token) => token.source_id === 'ACME').length + 1;
    expect(counted.rows).toEqual([{ held: acmeTokens, rows: acmeTokens }]);
  });
});
