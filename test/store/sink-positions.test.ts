import { randomUUID } from 'node:crypto';
import { MemorySinkPositions } from '../../src/delivery/memory-positions';
import { PgSinkPositions } from '../../src/delivery/postgres-positions';
import type { SenderWrite, SinkPositions } from '../../src/delivery/positions';
import { MemoryStore } from '../../src/store/memory-store';
import type { Store } from '../../src/store/store';
import { storeKinds, type StoreKind } from '../helpers/app';
import { ACME, fixtureSeed, OTHER } from '../helpers/fixtures';
import { TEST_DATABASE_URL, workerSchema } from '../helpers/postgres';
import { waitFor } from '../helpers/wait';

/** Long enough never to lapse within a test; a lapse is made with a short one where a test needs it. */
const LEASE_MS = 60_000;

/** The same cases against both SinkPositions: the engine is one piece of code over either. */
describe.each(storeKinds().map((kind) => [kind.name, kind] as const))('sink positions on the %s store', (name, kind: StoreKind) => {
  let store: Store;
  let positions: SinkPositions;

  beforeEach(async () => {
    store = await kind.create();
    await store.loadSeed(fixtureSeed());
    positions =
      store instanceof MemoryStore
        ? new MemorySinkPositions(() => (store as MemoryStore).changeHeads())
        : new PgSinkPositions({ connectionString: TEST_DATABASE_URL as string, schema: workerSchema(), statementTimeoutMs: 5_000 });
  });
  afterEach(async () => {
    await positions.close();
    await store.close();
  });

  const record = (sourceId: string) =>
    store.transaction((tx) =>
      tx.recordChange({ sourceId, id: `chg_${randomUUID()}`, type: 'token.withdrawn', createdAt: new Date(), body: {} }),
    );
  const write = (position: number, window: SenderWrite['window'] = [], sourceId = ACME.source_id): SenderWrite => ({
    sourceId,
    window,
    position,
  });
  const row = (seq: number, delivered: boolean) => ({
    sourceId: ACME.source_id,
    seq,
    delivered,
    attempts: delivered ? 0 : 2,
    nextAttemptAt: delivered ? null : new Date('2026-01-02T03:04:05.000Z'),
    lastError: delivered ? null : 'HTTP 503',
  });
  async function taken(sinkId = 'erp') {
    const state = await positions.lease(sinkId, 'a', LEASE_MS);
    if (!state) throw new Error('lease not taken');
    return state;
  }

  it('a new sink starts after each account last change; an account with none then starts at 0; known sinks keep theirs', async () => {
    await record(ACME.source_id);
    await record(ACME.source_id);
    await positions.register(['erp']);
    await record(OTHER.source_id);
    await record(ACME.source_id);
    await positions.register(['erp']);
    const snapshot = await positions.snapshot('erp');
    expect(snapshot?.positions).toEqual(new Map([[ACME.source_id, 2]]));
    expect(await positions.accountHeads()).toEqual(
      new Map([
        [ACME.source_id, 3],
        [OTHER.source_id, 1],
      ]),
    );
    expect(await positions.snapshot('unknown')).toBeUndefined();
  });

  it('a write moves the position and keeps window rows above it only; a disable bumps the generation', async () => {
    await positions.register(['erp']);
    const { generation } = await taken();
    expect(await positions.record('erp', 'a', generation, write(1, [row(3, true), row(4, false)]))).toBe(true);
    expect((await positions.snapshot('erp'))?.window).toEqual([row(3, true), row(4, false)]);
    expect(await positions.record('erp', 'a', generation, { ...write(3), disable: 'gone' })).toBe(true);
    const snapshot = await positions.snapshot('erp');
    expect(snapshot?.positions.get(ACME.source_id)).toBe(3);
    expect(snapshot?.window).toEqual([row(4, false)]);
    expect(snapshot?.state).toMatchObject({ enabled: false, reason: 'gone', generation: generation + 1 });
    // The sender that loaded the older generation writes nothing more.
    expect(await positions.record('erp', 'a', generation, write(4))).toBe(false);
    expect((await positions.snapshot('erp'))?.positions.get(ACME.source_id)).toBe(3);
  });

  it('enable bumps the generation, clears the retries and keeps what was delivered; replay moves one account back', async () => {
    await positions.register(['erp']);
    const { generation } = await taken();
    await positions.record('erp', 'a', generation, write(2, [row(3, false), row(4, true)]));
    await positions.record('erp', 'a', generation, write(5, [], OTHER.source_id));
    expect(await positions.enable('erp')).toBe(true);
    let snapshot = await positions.snapshot('erp');
    expect(snapshot?.state).toMatchObject({ enabled: true, reason: null, generation: generation + 1 });
    expect(snapshot?.window).toEqual([row(4, true)]);
    expect(await positions.record('erp', 'a', generation, write(9))).toBe(false);
    expect(await positions.replay('erp', ACME.source_id, 0)).toBe(true);
    snapshot = await positions.snapshot('erp');
    expect(snapshot?.state.generation).toBe(generation + 2);
    expect(snapshot?.positions).toEqual(
      new Map([
        [ACME.source_id, 0],
        [OTHER.source_id, 5],
      ]),
    );
    expect(snapshot?.window).toEqual([]);
    expect(await positions.enable('unknown')).toBe(false);
    expect(await positions.replay('unknown', ACME.source_id, 0)).toBe(false);
  });

  it('attempts come newest first, a page at a time', async () => {
    await positions.register(['erp']);
    const { generation } = await taken();
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      const made = { sourceId: ACME.source_id, seq: 1, changeId: 'chg_1', attempt, result: 'failed' as const, status: 503 };
      const details = { error: 'HTTP 503', durationMs: 5, attemptedAt: new Date() };
      await positions.record('erp', 'a', generation, { ...write(0, [row(1, false)]), attempt: { ...made, ...details } });
    }
    const newest = await positions.attempts('erp', 2);
    expect(newest.map((attempt) => attempt.attempt)).toEqual([3, 2]);
    expect((await positions.attempts('erp', 2, newest[1].id)).map((attempt) => attempt.attempt)).toEqual([1]);
  });

  (name === 'postgres' ? it : it.skip)(
    'one owner at a time: renewed by its owner, refused to another, taken over once it lapses, and the old owner writes nothing',
    async () => {
      await positions.register(['erp']);
      const first = await positions.lease('erp', 'a', LEASE_MS);
      expect(await positions.lease('erp', 'b', LEASE_MS)).toBeUndefined();
      // Renewed by its owner: the same generation, its writes go on.
      expect(await positions.lease('erp', 'a', 1)).toEqual(first);
      await waitFor(async () => (await positions.lease('erp', 'b', LEASE_MS)) !== undefined);
      const takenOver = await positions.state('erp');
      expect(takenOver?.generation).toBe((first?.generation as number) + 1);
      expect(await positions.record('erp', 'a', first?.generation as number, write(7))).toBe(false);
      expect((await positions.snapshot('erp'))?.positions.get(ACME.source_id)).toBeUndefined();
      expect(await positions.record('erp', 'b', takenOver?.generation as number, write(7))).toBe(true);
      // Released: another takes it at once.
      await positions.release(['erp'], 'b');
      expect(await positions.lease('erp', 'a', LEASE_MS)).toMatchObject({ generation: (takenOver?.generation as number) + 1 });
    },
  );

  (name === 'postgres' ? it : it.skip)(
    'set for a transaction-mode pooler (statements unnamed, the time limit set in each transaction), a write goes in the same',
    async () => {
      await positions.close();
      // A direct connection treated as a pooler's: what the positions send is what a pooler would pass on.
      positions = new PgSinkPositions({
        connectionString: TEST_DATABASE_URL as string,
        schema: workerSchema(),
        statementTimeoutMs: 5_000,
        pooled: true,
      });
      await positions.register(['erp']);
      const { generation } = await taken();
      const attempt = { sourceId: ACME.source_id, seq: 4, changeId: 'chg_4', attempt: 1, result: 'failed' as const, status: 503 };
      const details = { error: 'HTTP 503', durationMs: 5, attemptedAt: new Date('2026-01-02T03:04:05.000Z') };
      for (let i = 0; i < 3; i += 1) {
        expect(
          await positions.record('erp', 'a', generation, {
            ...write(2, [row(3, true), row(4, false)]),
            attempt: { ...attempt, ...details },
          }),
        ).toBe(true);
      }
      const snapshot = await positions.snapshot('erp');
      expect(snapshot?.positions.get(ACME.source_id)).toBe(2);
      expect(snapshot?.window).toEqual([row(3, true), row(4, false)]);
      expect((await positions.attempts('erp', 5)).map(({ id: _id, ...rest }) => rest)).toEqual(
        Array.from({ length: 3 }, () => ({ ...attempt, ...details, sinkId: 'erp' })),
      );
    },
  );
});
