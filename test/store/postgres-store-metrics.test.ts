import type { PgStore } from '../../src/store/postgres/pg-store';
import { fixtureSeed } from '../helpers/fixtures';
import { openEmptyPgStore, TEST_DATABASE_URL, warnIfNoDatabase } from '../helpers/postgres';
import { waitFor } from '../helpers/wait';

warnIfNoDatabase();

/** Contract section 12: what /metrics shows of the PostgreSQL store comes from these two. */
(TEST_DATABASE_URL ? describe : describe.skip)('what the PostgreSQL store tells the metrics', () => {
  let store: PgStore;
  afterEach(async () => {
    await store.close();
  });

  it('each group-commit batch is observed with its number of units: together, every unit', async () => {
    const batches: number[] = [];
    store = await openEmptyPgStore({ observeBatch: (units) => batches.push(units) });
    await store.loadSeed(fixtureSeed());
    await Promise.all(Array.from({ length: 20 }, () => store.transaction((tx) => tx.holdingsForUpdate('ACME'))));
    expect(batches.reduce((sum, units) => sum + units, 0)).toBe(20);
    expect(batches.every((units) => units >= 1)).toBe(true);
  });

  it('the pool: connections in use while units run, idle after, nobody waiting; the LISTEN connection up', async () => {
    store = await openEmptyPgStore({ poolSize: 4 });
    await store.loadSeed(fixtureSeed());
    await waitFor(async () => store.connections().listening);
    let duringUnit = store.connections();
    await store.transaction(async (tx) => {
      await tx.holdingsForUpdate('ACME');
      duringUnit = store.connections();
    });
    expect(duringUnit.inUse).toBeGreaterThanOrEqual(1);
    const after = store.connections();
    expect(after).toEqual({ inUse: 0, idle: after.idle, waiting: 0, listening: true });
    expect(after.idle).toBeGreaterThanOrEqual(1);
  });
});
