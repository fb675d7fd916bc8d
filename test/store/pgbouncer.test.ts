import { Client } from 'pg';
import request from 'supertest';
import { createApp } from '../../src/app';
import { createHttpServer } from '../../src/process/http-server';
import { createLogger } from '../../src/process/logger';
import { formatAmount } from '../../src/domain/money';
import type { PgStore } from '../../src/store/postgres/pg-store';
import { FIXED_NOW, testConfig } from '../helpers/app';
import { fixtureSeed, TOKENS } from '../helpers/fixtures';
import { withdrawal } from '../helpers/payloads';
import { HAS_PGBOUNCER, openPooledStore, startPooler, warnIfNoPgBouncer, type Pooler } from '../helpers/pgbouncer';

warnIfNoPgBouncer();

/** One app per store, as two replicas behind a load balancer would be. */
function appOn(store: PgStore) {
  return createHttpServer(createApp({ store, logger: createLogger('silent'), now: () => FIXED_NOW, config: testConfig() }));
}

/**
 * Contract section 12: two instances through PgBouncer in transaction mode (Debian's package, as a process of the
 * test), which hands each transaction whichever server connection is free: no start-up parameter it refuses, no
 * prepared statement or setting that outlives a transaction, the migration lock a transaction's.
 */
(HAS_PGBOUNCER ? describe : describe.skip)('two instances through PgBouncer in transaction mode', () => {
  let pooler: Pooler;
  let first: PgStore;
  let second: PgStore;
  beforeAll(async () => {
    pooler = await startPooler('pooled');
    // Both start at once on the new database: each migration applies once, under the transaction's lock.
    [first, second] = await Promise.all([openPooledStore(pooler), openPooledStore(pooler)]);
    await first.loadSeed(fixtureSeed());
  });
  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()]);
    await pooler?.stop();
  });

  /** SQL past the pooler, on the test's database. */
  async function direct<Row>(text: string, values: unknown[] = []): Promise<Row[]> {
    const client = new Client({ connectionString: pooler.directUrl });
    await client.connect();
    try {
      return (await client.query(text, values)).rows as Row[];
    } finally {
      await client.end();
    }
  }

  const balanceOf = async (tokenId: string) =>
    Number((await direct<{ balance: string }>('SELECT balance FROM tokens WHERE token_id = $1', [tokenId]))[0].balance);

  it('applied every migration once though both instances started at once', async () => {
    const rows = await direct<{ version: string; n: number }>('SELECT version, count(*)::int AS n FROM schema_migrations GROUP BY version');
    expect(rows.length).toBeGreaterThanOrEqual(13);
    expect(rows.every((row) => row.n === 1)).toBe(true);
  });

  it('sets the statement timeout in each transaction: a unit that waits on a held row past it answers 504', async () => {
    const impatient = await openPooledStore(pooler, { statementTimeoutMs: 300, groupCommit: false });
    const holder = new Client({ connectionString: pooler.directUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM tokens WHERE token_id = $1 FOR UPDATE', [TOKENS.atD2.token_id]);
      const response = await request(appOn(impatient))
        .post('/v1/tokens/withdraw')
        .send(withdrawal({ destination_id: 'D2', token_id: TOKENS.atD2.token_id, withdrawn_amount: '1.00', token_balance: '79.00' }));
      expect([response.status, response.body.errors?.message]).toEqual([504, 'Gateway Timeout']);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
      await impatient.close();
    }
    expect(await balanceOf(TOKENS.atD2.token_id)).toBe(8000);
  });

  it('30 copies of one withdrawal and of one Load Token across both apply once each', async () => {
    const apps = [appOn(first), appOn(second)];
    const body = withdrawal({ withdrawn_amount: '10.00', token_balance: '990.00' });
    const withdrawals = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        request(apps[i % 2])
          .post('/v1/tokens/withdraw')
          .send(body),
      ),
    );
    expect(withdrawals.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    expect(withdrawals.filter((r) => r.status === 200 && r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    const load = {
      share_secret: 'sk_test_acme_1',
      token_event: 'load',
      source_id: 'ACME',
      token_id: TOKENS.active.token_id,
      load_amount: '5.00',
    };
    const loads = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        request(apps[i % 2])
          .patch('/v1/token/ACME/pooled-load-0001')
          .send(load),
      ),
    );
    expect(loads.map((r) => r.status)).toEqual(loads.map(() => 200));
    expect(new Set(loads.map((r) => r.text)).size).toBe(1);
    expect(await balanceOf(TOKENS.active.token_id)).toBe(100000 - 1000 + 500);
  });

  it('a flood of withdrawals, repeats and reused keys across both answers no 500, and the ledger holds exactly the 200s', async () => {
    const apps = [appOn(first), appOn(second)];
    // 40 tokens of 100.00, made through the pooler.
    const tokenIds: string[] = [];
    for (let i = 0; i < 40; i += 1) {
      const created = await request(apps[i % 2])
        .post(`/v1/token/ACME/pooled-token-${String(i).padStart(4, '0')}`)
        .send({
          share_secret: 'sk_test_acme_1',
          token_event: 'create',
          source_id: 'ACME',
          destination_id: 'D1',
          destination_currency: 'EUR',
          load_amount: '100.00',
          available_date: '01-01-2026',
          expiry_date: '31-12-2026',
        });
      tokenIds.push(created.body.token.token_id as string);
    }
    // On each: a withdrawal of i + 1 cents, three copies over both instances, and a fourth request reusing its key.
    const withdrawals = tokenIds.map((tokenId, i) =>
      withdrawal({ token_id: tokenId, withdrawn_amount: formatAmount(i + 1), token_balance: formatAmount(10000 - i - 1) }),
    );
    const sent = withdrawals.flatMap((body) => [body, body, body, { ...body, withdrawn_amount: '0.50', token_balance: '99.50' }]);
    const statuses = new Map<number, number>();
    const applied = new Set<string>();
    for (let round = 0; round < 2; round += 1) {
      const answers = await Promise.all(
        sent.map((body, i) =>
          request(apps[i % 2])
            .post('/v1/tokens/withdraw')
            .send(body),
        ),
      );
      answers.forEach((answer, i) => {
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (answer.status === 200 && answer.headers['idempotent-replayed'] === undefined)
          applied.add(`${sent[i].transaction_id} ${sent[i].withdrawn_amount}`);
      });
    }
    process.stdout.write(
      `pgbouncer flood: ${sent.length * 2} requests, answers by status ${JSON.stringify(Object.fromEntries(statuses))}, ${applied.size} applied\n`,
    );
    expect(statuses.get(500) ?? 0).toBe(0);
    expect([...statuses.keys()].every((status) => [200, 409, 422].includes(status))).toBe(true);
    // Each key applied once, whichever of its requests won; the ledger holds exactly those rows.
    expect(applied.size).toBe(40);
    const ledger = await direct<{ transaction_id: string; amount: string }>(
      'SELECT transaction_id, amount FROM ledger WHERE token_id = ANY($1::text[])',
      [tokenIds],
    );
    expect(new Set(ledger.map((row) => `${row.transaction_id} ${formatAmount(Number(row.amount))}`))).toEqual(applied);
    const balances = await direct<{ token_id: string; balance: string }>(
      'SELECT token_id, balance FROM tokens WHERE token_id = ANY($1::text[])',
      [tokenIds],
    );
    const moved = new Map(ledger.map((row) => [row.transaction_id, Number(row.amount)]));
    for (const { token_id: tokenId, balance } of balances) {
      const body = withdrawals[tokenIds.indexOf(tokenId)];
      expect(Number(balance)).toBe(10000 - (moved.get(body.transaction_id as string) ?? 0));
    }
  });

  it('hears account changes on DATABASE_DIRECT_URL; without it, behind the pooler, it does not listen', async () => {
    const listening = await openPooledStore(pooler, { directConnectionString: pooler.directUrl });
    try {
      const deadline = Date.now() + 30_000;
      while (!listening.connections().listening && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(listening.connections().listening).toBe(true);
      expect(first.connections().listening).toBe(false);
    } finally {
      await listening.close();
    }
  });
});
