import request from 'supertest';
import { createApp } from '../../src/app';
import { createHttpServer } from '../../src/http-server';
import { createLogger } from '../../src/logger';
import { formatAmount } from '../../src/money';
import { PgStore } from '../../src/store/postgres/pg-store';
import { FIXED_NOW } from '../helpers/app';
import { fixtureSeed, TOKENS } from '../helpers/fixtures';
import { withdrawal } from '../helpers/payloads';
import { openEmptyPgStore, sql, TEST_DATABASE_URL, warnIfNoDatabase, workerSchema } from '../helpers/postgres';

warnIfNoDatabase();

/** One app per store, as two replicas behind a load balancer would be. */
function appOn(store: PgStore) {
  return createHttpServer(createApp({ store, logger: createLogger('silent'), now: () => FIXED_NOW, config: { bodyLimitBytes: 32 * 1024, rateLimitPerMinute: 0 } }));
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

  const balance = async () => Number((await sql('SELECT balance FROM tokens WHERE token_id = $1', [TOKENS.active.token_id])).rows[0].balance);

  it('50 concurrent copies of one withdrawal split across both apply once', async () => {
    const apps = [appOn(first), appOn(second)];
    const body = withdrawal();
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) => request(apps[i % 2]).post('/v1/tokens/withdraw').send(body)),
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
    process.stdout.write(`two instances, 50 copies: ${applied} applied, ${replayed} replayed, ${statuses.filter((s) => s === 409).length} answered 409\n`);
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
            .send(withdrawal({ transaction_id: w.id, withdrawn_amount: formatAmount(w.amount), token_balance: formatAmount(current - w.amount) })),
        ),
      );
      expect(outcomes.every((r) => r.status === 200 || r.status === 409)).toBe(true);
      pending = pending.filter((_, i) => outcomes[i].status !== 200);
    }
    expect(pending).toEqual([]);
    const sum = Array.from({ length: 50 }, (_, i) => 100 + i).reduce((a, b) => a + b, 0);
    expect(await balance()).toBe(100000 - sum);
    const ledger = await sql('SELECT count(*)::int AS n, sum(amount)::bigint AS total FROM ledger WHERE token_id = $1', [TOKENS.active.token_id]);
    expect({ n: ledger.rows[0].n, total: Number(ledger.rows[0].total) }).toEqual({ n: 50, total: sum });
    process.stdout.write(`two instances, 50 distinct: ledger ${ledger.rows[0].n} rows, ${sum} cents, balance ${await balance()} in ${rounds} rounds\n`);
  });

  it('the same booking change sent to both at once applies once', async () => {
    const apps = [appOn(first), appOn(second)];
    const body = { share_secret: 'sk_test_acme_1', booking_event: 'modify', source_id: 'ACME', booking_id: '1396', guests_count: '7' };
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => request(apps[i % 2]).patch('/v1/booking/ACME/key-race-0001').send(body)));
    expect(responses.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    expect(responses.filter((r) => r.status === 200 && r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(new Set(responses.filter((r) => r.status === 200).map((r) => r.text)).size).toBe(1);
    expect((await sql('SELECT count(*)::int AS n FROM keyed_requests')).rows[0].n).toBe(1);
  });

  it('several instances starting at once on a new schema apply each migration once', async () => {
    const schema = `${workerSchema()}_fresh`;
    await sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    const stores = await Promise.all(
      Array.from({ length: 4 }, () => PgStore.open({ connectionString: TEST_DATABASE_URL as string, statementTimeoutMs: 5000, poolSize: 2, schema })),
    );
    await Promise.all(stores.map((store) => store.close()));
    const versions = await sql('SELECT version FROM schema_migrations ORDER BY version', [], schema);
    expect(versions.rows).toEqual([
      { version: '001_initial' },
      { version: '002_ledger_order' },
      { version: '003_webhook_deliveries' },
      { version: '004_lock_token_and_find_withdrawal' },
      { version: '005_per_account_keys' },
      { version: '006_token_dates' },
    ]);
    await sql(`DROP SCHEMA ${schema} CASCADE`);
  });

  it('the database itself refuses a negative balance and a malformed transaction id', async () => {
    await expect(sql('UPDATE tokens SET balance = -1 WHERE token_id = $1', [TOKENS.active.token_id])).rejects.toThrow(/check constraint/);
    await expect(
      sql(`INSERT INTO withdrawals VALUES ('123', 'ACME', 'D1', $1, 1, 1, now())`, [TOKENS.active.token_id]),
    ).rejects.toThrow(/check constraint/);
  });
});
