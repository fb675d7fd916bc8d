import request from 'supertest';
import { createApp } from '../../src/app';
import { createHttpServer } from '../../src/process/http-server';
import { createLogger } from '../../src/process/logger';
import { Pool } from 'pg';
import { roundTrip, withClient } from '../../src/store/postgres/connection';
import { BEGIN, checkedWrites, statement } from '../../src/store/postgres/statements';
import { CHANGE_SWEEP_BATCH } from '../../src/store/postgres/sweeper';
import { writeCalls } from '../../src/store/postgres/table-statements';
import type { NewChange } from '../../src/store/store';
import { KEY_OF } from '../../src/store/unit/kinds';
import { StagedWrites } from '../../src/store/unit/staged-writes';
import { PgStore } from '../../src/store/postgres/pg-store';
import { FIXED_NOW, testConfig } from '../helpers/app';
import { fixtureSeed, TOKENS } from '../helpers/fixtures';
import * as client from '../helpers/clients';
import { withdrawal } from '../helpers/payloads';
import { openEmptyPgStore, sql, TEST_DATABASE_URL, warnIfNoDatabase, workerSchema } from '../helpers/postgres';

warnIfNoDatabase();

/** One app per store, as two replicas behind a load balancer would be. */
function appOn(store: PgStore) {
  return createHttpServer(createApp({ store, logger: createLogger('silent'), now: () => FIXED_NOW, config: testConfig() }));
}

(TEST_DATABASE_URL ? describe : describe.skip)('changes on PostgreSQL across two instances (contract section 13.1)', () => {
  let first: PgStore;
  let second: PgStore;
  beforeEach(async () => {
    first = await openEmptyPgStore({ sweepIntervalMs: 0 });
    await first.loadSeed(fixtureSeed());
    second = await openEmptyPgStore({ poolSize: 10, sweepIntervalMs: 0 });
    await second.loadSeed(fixtureSeed());
  });
  afterEach(async () => {
    await Promise.all([first.close(), second.close()]);
  });

  it('a flood with duplicates across both, read through the feed of either with a small limit as it runs: each reader sees 1..N once, N the withdrawals applied', async () => {
    const apps = [appOn(first), appOn(second)];
    // A token each, so that every withdrawal states its token's balance after it, whatever the order they run in.
    const tokenIds = Array.from({ length: 60 }, (_, i) => String(5000000000000001 + i));
    await first.transaction(async (tx) => {
      for (const tokenId of tokenIds)
        await tx.createToken({ tokenId, sourceId: 'ACME', destinationId: 'D1', status: 'active', balance: 100000 });
    });
    const bodies = tokenIds.map((tokenId) => withdrawal({ token_id: tokenId, withdrawn_amount: '1.00', token_balance: '999.00' }));
    // Every body twice, once on each instance: one applies, the other is a replay (200) or loses the race (409).
    const sends = bodies.flatMap((body, i) =>
      [0, 1].map((copy) =>
        request(apps[(i + copy) % 2])
          .post('/v1/tokens/withdraw')
          .send(body),
      ),
    );
    let flooding = true;
    // Readers of the feed (contract section 13.2) on either instance, 3 changes a page, each from next_after.
    const pager = async (app: (typeof apps)[number], types?: string) => {
      const seen: number[] = [];
      let after = 0;
      for (;;) {
        const done = !flooding;
        const page = (await client.changes(app, { after: String(after), limit: '3', ...(types ? { types } : {}) }).expect(200)).body as {
          changes: Array<{ seq: number }>;
          next_after: number;
          has_more: boolean;
        };
        seen.push(...page.changes.map((change) => change.seq));
        after = page.next_after;
        if (done && !page.has_more && page.changes.length === 0) return seen;
      }
    };
    const pagers = [pager(apps[0]), pager(apps[1]), pager(apps[0], 'token.withdrawn,booking.created')];
    const responses = await Promise.all(sends).finally(() => {
      flooding = false;
    });
    const applied = responses.filter((r) => r.status === 200 && r.headers['idempotent-replayed'] === undefined).length;
    expect(responses.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    expect(applied).toBe(bodies.length);
    const everySeq = Array.from({ length: applied }, (_, i) => i + 1);
    for (const seen of await Promise.all(pagers)) expect(seen).toEqual(everySeq);
    const kept = await first.changesAfter('ACME', 0, 1000);
    expect(kept.map((change) => change.type)).toEqual(everySeq.map(() => 'token.withdrawn'));
    expect(new Set(kept.map((change) => (change.body.request as { transaction_id: string }).transaction_id))).toEqual(
      new Set(bodies.map((body) => body.transaction_id)),
    );
  });

  it("a transaction that rolls back after the batch's write statement numbered its change gives the number back", async () => {
    // The statement a batch sends (writeCalls, checkedWrites), its transaction rolled back after it numbered the change.
    const staged = new StagedWrites();
    const rolledBack: NewChange = { sourceId: 'ACME', id: 'chg_rolled_back', type: 'token.withdrawn', createdAt: FIXED_NOW, body: {} };
    staged.create('changes', KEY_OF.changes(rolledBack), rolledBack);
    const pool = new Pool({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${workerSchema()}`, max: 1 });
    try {
      const answers = await withClient(
        pool,
        (connection) =>
          roundTrip(connection, [
            { statement: BEGIN },
            checkedWrites(writeCalls(staged)),
            { statement: statement('t_numbered', 'SELECT last_seq FROM change_counters WHERE source_id = $1'), values: ['ACME'] },
            { statement: statement('t_rollback', 'ROLLBACK') },
          ]),
        async () => undefined,
      );
      expect(answers[2].rows).toEqual([{ last_seq: '1' }]);
    } finally {
      await pool.end();
    }
    await first.transaction(async (tx) => {
      const token = await tx.tokenForUpdate('ACME', TOKENS.active.token_id);
      if (token) await tx.saveToken({ ...token, balance: token.balance - 1 });
      await tx.recordChange({ sourceId: 'ACME', id: 'chg_kept', type: 'token.withdrawn', createdAt: FIXED_NOW, body: {} });
    });
    expect((await first.changesAfter('ACME', 0, 10)).map((change) => [change.seq, change.id])).toEqual([[1, 'chg_kept']]);
  });

  it('the sweep deletes changes past CHANGE_RETENTION_DAYS in bounded batches and the numbering goes on', async () => {
    const store = await openEmptyPgStore({ sweepIntervalMs: 0, changeRetentionMs: 24 * 60 * 60 * 1000 });
    try {
      const old = CHANGE_SWEEP_BATCH + 5;
      await sql(
        `INSERT INTO changes (source_id, seq, change_id, type, created_at, body)
         SELECT 'OTHER', i, 'chg_old_' || i, 'token.withdrawn', $1, '{}'
           FROM take_change_numbers(array_fill('OTHER'::text, ARRAY[$2::int])), generate_series(1, last_seq) AS i`,
        [new Date('2026-01-01T00:00:00.000Z'), old],
      );
      await store.transaction((tx) =>
        tx.recordChange({
          sourceId: 'OTHER',
          id: 'chg_new',
          type: 'token.withdrawn',
          createdAt: new Date('2026-01-02T12:00:00.000Z'),
          body: {},
        }),
      );
      expect(await store.sweep(new Date('2026-01-02T12:00:00.000Z'))).toBe(true);
      expect((await store.changesAfter('OTHER', 0, 10)).map((change) => [change.seq, change.id])).toEqual([[old + 1, 'chg_new']]);
      await store.transaction((tx) =>
        tx.recordChange({
          sourceId: 'OTHER',
          id: 'chg_next',
          type: 'token.withdrawn',
          createdAt: new Date('2026-01-02T12:00:01.000Z'),
          body: {},
        }),
      );
      expect((await store.changesAfter('OTHER', old + 1, 10)).map((change) => change.seq)).toEqual([old + 2]);
    } finally {
      await store.close();
    }
  });
});
