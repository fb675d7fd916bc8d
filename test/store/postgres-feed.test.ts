import { createApp } from '../../src/app';
import { createHttpServer } from '../../src/process/http-server';
import { createLogger } from '../../src/process/logger';
import { PgStore, READ_CHANGES_OF_TYPES, type PgStoreOptions } from '../../src/store/postgres/pg-store';
import { FIXED_NOW, testConfig } from '../helpers/app';
import * as client from '../helpers/clients';
import { fixtureSeed, OTHER } from '../helpers/fixtures';
import { withdrawal } from '../helpers/payloads';
import { openEmptyPgStore, sql, TEST_DATABASE_URL, warnIfNoDatabase } from '../helpers/postgres';
import { waitFor } from '../helpers/wait';

warnIfNoDatabase();

const DAY_MS = 24 * 60 * 60 * 1000;

/** One app per store, as two replicas behind a load balancer would be. */
function appOn(store: PgStore) {
  return createHttpServer(createApp({ store, logger: createLogger('silent'), now: () => FIXED_NOW, config: testConfig() }));
}

/** The store, its reads counted once answered: a waiting feed request has made its first. */
function countingReads(store: PgStore): { reads: () => number } {
  let reads = 0;
  const read = store.readChanges.bind(store);
  store.readChanges = async (...args) => {
    const result = await read(...args);
    reads += 1;
    return result;
  };
  return { reads: () => reads };
}

(TEST_DATABASE_URL ? describe : describe.skip)('the feed on PostgreSQL (contract section 13.2)', () => {
  const open: PgStore[] = [];
  const openStore = async (options: Partial<PgStoreOptions> = {}) => {
    const store = await openEmptyPgStore({ sweepIntervalMs: 0, ...options });
    open.push(store);
    await store.loadSeed(fixtureSeed());
    return store;
  };
  afterEach(async () => {
    await Promise.all(open.splice(0).map((store) => store.close()));
  });

  /**
   * A feed request waiting on `waiter` is answered with the withdrawal `writer` commits: the delay from the
   * withdrawal's 200 to the feed's answer is printed, the figure docs/OPERATIONS.md gives.
   */
  async function wokenAcrossInstances(waiter: PgStore, writer: PgStore, path: string, readsBeforeWaiting: number) {
    const { reads } = countingReads(waiter);
    const waiting = client.changes(appOn(waiter), { wait: '30' }).then((answer) => ({ answer, at: performance.now() }));
    await waitFor(async () => reads() >= readsBeforeWaiting);
    await client.withdraw(appOn(writer), withdrawal({ transaction_id: '20240121000000000301' })).expect(200);
    const committed = performance.now();
    const { answer, at } = await waiting;
    process.stdout.write(`${path}: a feed waiting on one instance answered ${(at - committed).toFixed(1)} ms after the other's 200\n`);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ changes: [{ seq: 1, type: 'token.withdrawn' }], next_after: 1, has_more: false });
  }

  it("a waiting request is woken by a change committed on another instance, through the instance's LISTEN session", async () => {
    const waiter = await openStore();
    const writer = await openStore();
    await waitFor(async () => waiter.connections().listening);
    // Its second read follows the account's registration (migration 019): from then on the writer's NOTIFY wakes it.
    await wokenAcrossInstances(waiter, writer, 'LISTEN', 2);
  });

  it('behind a transaction-mode pooler without a direct connection, by the poll', async () => {
    // A direct connection treated as a pooler's: no LISTEN session, so the poll is what wakes it.
    const waiter = await openStore({ pooler: 'transaction' });
    const writer = await openStore();
    expect(waiter.connections().listening).toBe(false);
    await wokenAcrossInstances(waiter, writer, 'poll', 1);
  });

  it('after the retention sweep, a cursor before the oldest kept change is a 410 naming it; an account with every change swept keeps its numbering', async () => {
    const store = await openStore({ changeRetentionMs: DAY_MS });
    const old = (sourceId: string, count: number) =>
      sql(
        `INSERT INTO changes (source_id, seq, change_id, type, created_at, body)
         SELECT $1, i, 'chg_old_' || $1 || i, 'token.withdrawn', '2026-01-01T00:00:00Z', '{}'
           FROM take_change_numbers(array_fill($1::text, ARRAY[$2::int])), generate_series(1, last_seq) AS i`,
        [sourceId, count],
      );
    await old('ACME', 3);
    await old('OTHER', 2);
    await store.transaction((tx) =>
      tx.recordChange({ sourceId: 'ACME', id: 'chg_new', type: 'token.withdrawn', createdAt: FIXED_NOW, body: {} }),
    );
    expect(await store.sweep(new Date('2026-01-02T12:00:00.000Z'))).toBe(true);
    const app = appOn(store);
    expect((await client.changes(app, { after: '2' }).expect(410)).body.errors.message).toBe(
      'Cursor expired: the changes after seq 2 are no longer kept; the oldest seq still kept is 4 (read on with after=3)',
    );
    expect((await client.changes(app, { after: '3' }).expect(200)).body).toMatchObject({
      changes: [{ id: 'chg_new', seq: 4 }],
      next_after: 4,
    });
    const others = (query: Record<string, string>) => client.changes(app, query, OTHER.source_id, OTHER.share_secret);
    expect((await others({ after: '1' }).expect(410)).body.errors.message).toBe(
      'Cursor expired: the changes after seq 1 are no longer kept; no change is kept now; the next will be seq 3 (read on with after=2)',
    );
    expect((await others({ after: '2' }).expect(200)).body).toEqual({ changes: [], next_after: 2, has_more: false });
  });

  it("a types filter reads a rare type among many changes from its index, a page of it, not the account's every change", async () => {
    const store = await openStore();
    await sql(
      `INSERT INTO changes (source_id, seq, change_id, type, created_at, body)
       SELECT 'ACME', i, 'chg_' || i, CASE WHEN i % 10000 = 0 THEN 'booking.created' ELSE 'token.withdrawn' END, now(), '{}'
         FROM generate_series(1, 50000) AS i;
       INSERT INTO change_counters (source_id, last_seq) VALUES ('ACME', 50000);
       ANALYZE changes`,
    );
    // The store's own statement, planned for these values as the store sends them.
    const plan = await sql(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${READ_CHANGES_OF_TYPES}`, ['ACME', 0, 101, ['booking.created']]);
    const [{ Plan: root }] = plan.rows[0]['QUERY PLAN'] as Array<{ Plan: { 'Shared Hit Blocks': number; 'Shared Read Blocks': number } }>;
    process.stdout.write(
      `a rare type among 50000 changes: ${root['Shared Hit Blocks'] + root['Shared Read Blocks']} buffers read for the page\n`,
    );
    expect(JSON.stringify(plan.rows[0]['QUERY PLAN'])).toContain('"Index Name":"changes_by_type"');
    const { changes } = await store.readChanges('ACME', { after: 0, limit: 100, types: ['booking.created'] });
    expect(changes.map((change) => change.seq)).toEqual([10000, 20000, 30000, 40000, 50000]);
  });
});
