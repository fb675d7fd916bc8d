/**
 * One batch: units of work run as one transaction on one connection (see group-commit.ts). Every unit runs the
 * services' own rules in a unit of work (unit/unit-of-work.ts) that reads through the batch; the reads the units ask for are gathered
 * into round trips the whole batch shares; a unit's writes are staged on it and become the batch's only when it
 * succeeds; then every write of the batch goes as one statement, with COMMIT, in the last round trip. A unit that
 * runs alone is a batch of one.
 *
 * Invariants, asserted where they could break:
 * 1. A unit awaits only its transaction. After a turn of the event loop every unit has run as far as it can: it
 *    has ended, or waits on a read of this batch or on an in-batch lock. So a turn that leaves nothing to fetch
 *    means the units left wait on one another's locks (they give up and run alone, QUIET_TURNS), or on something
 *    else, which would hold up the batch for ever: past MAX_QUIET_TURNS every unit still running is deferred,
 *    and logged.
 * 2. Lock order: rows are ordered by kind (READS' order: tokens, holdings, bookings) and, within a kind, by key
 *    (byte order, compareKeys). A batch of many waits only for a row after every row it has locked: a round
 *    trip's reads go in READS' order, each locking read locks its rows in key order (table-statements.ts), and
 *    a row before one the batch locked in an earlier round trip (a signed unit reaches its token a round trip
 *    late; a booking's unit wants its holdings after the booking) is locked only if no other transaction holds
 *    it (SKIP LOCKED): when one does, the unit that wanted it is deferred and runs alone. So batches cannot wait
 *    on each other in a cycle over the rows they read. A unit alone waits as any transaction (PostgreSQL finds a
 *    deadlock it is part of, and it runs again); the commit's writes may still wait (holdings counted without
 *    being read, a key another transaction is inserting), which the batch's lock wait bounds.
 * 3. A row created and saved in one batch stays an insert, of the row as it ends up (unit/staged-writes.ts).
 * 4. Only a unit that succeeded reaches the batch's writes; outcomes go out after COMMIT (group-commit.ts).
 * 5. An invariant that fails while a succeeded unit's writes are taken in fails the whole batch (nothing commits),
 *    never that unit alone after part of its writes became the batch's.
 */
import { strict as assert } from 'node:assert';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { PoolClient } from 'pg';
import type { StoreTransaction } from '../store';
import { BatchLocks, lockKey, type LockKey } from './batch-locks';
import { roundTrip, type StatementResult } from './connection';
import { WRITTEN, type ReadKind, type ReadRecords } from '../unit/kinds';
import { plus, StagedWrites } from '../unit/staged-writes';
import { UnitOfWork, type UnitRows } from '../unit/unit-of-work';
import { BEGIN, checkedWrites, COMMIT, statement, type Call } from './statements';
import { byKey, compareKeys, keyParameters, lockingReadOf, readCall, READ_KINDS, writeCalls } from './table-statements';

/** Turns with nothing to fetch after which the units waiting on in-batch locks give up (they wait on each other). */
const QUIET_TURNS = 3;
/** Turns with nothing to fetch after which every unit still running is deferred: it awaits something other than its transaction. */
export const MAX_QUIET_TURNS = 100;

/**
 * What every batch sets for its transaction, in the round trip of its first reads. Generic plans: PostgreSQL
 * would otherwise plan the reads' unnest and LATERAL lookups anew at every execution, as custom plans cost it
 * little more than the generic one it compares them with (docs/BENCHMARKS.md, issue 29).
 */
const BATCH_SETTINGS = statement('batch_settings', "SELECT set_config('plan_cache_mode', 'force_generic_plan', true)");
/** The same and the batch's lock wait. */
const BATCH_SETTINGS_WITH_LOCK_WAIT = statement(
  'batch_settings_with_lock_wait',
  "SELECT set_config('plan_cache_mode', 'force_generic_plan', true), set_config('lock_timeout', $1, true)",
);

/** A unit of the batch that gave up: it waited on its batch-mates, or on something the batch does not fetch. */
class UnitDeferred extends Error {
  constructor() {
    super('the unit waited on its batch-mates; it runs alone');
  }
}

/** The batch failed as a whole: units still waiting on a read stop there. */
class BatchAborted extends Error {}

/** The outcome of one unit: its result, its refusal, or deferred (to run alone). */
export type UnitOutcome<T> = { ok: true; value: T } | { ok: false; error: unknown } | { deferred: true };

export interface BatchOptions {
  /**
   * The longest the batch waits for a row another transaction holds; undefined: up to the statement timeout. A
   * batch of many sets one (250 ms: an operator's session, a slow transaction or a unit alone holds up its
   * batch-mates that long, then each runs alone), and waits for no row out of its lock order (invariant 2); a
   * unit alone waits as any transaction would.
   */
  lockWaitMs?: number;
  /** Told when units were deferred for awaiting something other than their transaction (invariant 1). */
  onStall?: (units: number) => void;
}

type RowsByKind = { [Kind in ReadKind]: Map<string, ReadRecords[Kind] | null> };

/** Keys of one kind a round trip reads (key -> the key's parts); outOfOrder: before a row the batch has locked, so read only if free. */
interface ReadPart {
  kind: ReadKind;
  keys: Map<string, string[]>;
  outOfOrder: boolean;
}

/** Where a row stands in the lock order (invariant 2): its kind's place in READS, then its key's parts. */
interface LockPosition {
  kind: number;
  keyParts: string[];
}

function isAfter(a: LockPosition, b: LockPosition): boolean {
  return a.kind !== b.kind ? a.kind > b.kind : compareKeys(a.keyParts, b.keyParts) > 0;
}

/** A unit in the batch, and how its outcome is settled: by its work, or by the batch deferring it. */
interface RunningUnit {
  view: UnitOfWork;
  settle: (outcome: UnitOutcome<unknown>) => void;
  settled: boolean;
}

export class Batch implements UnitRows {
  /** Rows read or written by the batch's units that succeeded, by kind and key; null: read, and there is no such row. */
  private readonly rows = Object.fromEntries(READ_KINDS.map((kind) => [kind, new Map()])) as unknown as RowsByKind;
  private readonly writes = new StagedWrites();
  private readonly locks = new BatchLocks<UnitOfWork>();
  /** Reads asked for since the last round trip: kind, then key, then the key's parts. */
  private readonly wanted = new Map<ReadKind, Map<string, string[]>>();
  /** Units waiting for the next round trip's rows. */
  private readonly waiters: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  private readonly deferred = new Set<UnitOfWork>();
  /** Why the batch fails as a whole (invariant 5): thrown once every unit has settled, so nothing commits. */
  private failure: { error: unknown } | undefined;
  private begun = false;
  /** Set when a round trip failed: the batch is over, and no unit may go on against it (BatchAborted). */
  private aborted = false;
  /** The last row in the lock order the batch has asked to lock in order (invariant 2). */
  private lockedUpTo: LockPosition | undefined;
  /** Rows the last round trip found held elsewhere and out of the batch's lock order: the unit that wanted each is deferred. */
  private readonly skipped = new Set<LockKey>();

  constructor(
    private readonly client: PoolClient,
    private readonly options: BatchOptions = {},
  ) {}

  /** Runs every unit against the batch, then COMMIT with every write; the outcomes in the units' order. */
  async run<T>(works: ReadonlyArray<(tx: StoreTransaction) => Promise<T>>): Promise<Array<UnitOutcome<T>>> {
    const units: RunningUnit[] = [];
    const outcomes = works.map(
      (work) =>
        new Promise<UnitOutcome<T>>((resolve) => {
          // settle is made in the literal, not assigned after it: assigned after, V8 pretenured the units (allocated
          // them in the old generation), and through them every batch's promises, rows and requests outlived each
          // scavenge until a full collection (docs/BENCHMARKS.md, "What survives a scavenge").
          const unit: RunningUnit = {
            view: new UnitOfWork(this),
            settled: false,
            settle: (outcome) => {
              unit.settled = true;
              resolve(outcome as UnitOutcome<T>);
            },
          };
          units.push(unit);
          void this.runUnit(unit.view, work).then(unit.settle, (error: unknown) => {
            this.failure ??= { error };
            unit.settle({ ok: false, error });
          });
        }),
    );
    let quietTurns = 0;
    for (;;) {
      // Every unit runs until it ends or waits on a read or a lock: after one turn of the event loop, all have.
      await nextTurn();
      if (units.every((unit) => unit.settled)) break;
      if (this.wanted.size > 0) {
        quietTurns = 0;
        await this.fetch();
        continue;
      }
      quietTurns += 1;
      if (quietTurns === QUIET_TURNS) {
        for (const view of this.locks.abandonWaiting()) this.deferred.add(view);
      } else if (quietTurns >= MAX_QUIET_TURNS) {
        const running = units.filter((unit) => !unit.settled);
        this.options.onStall?.(running.length);
        for (const unit of running) this.defer(unit);
        break;
      }
    }
    const settled = await Promise.all(outcomes);
    if (this.failure) throw this.failure.error;
    await this.commit();
    return settled;
  }

  /** A unit that awaits something other than its transaction: deferred now, and whatever it does later is refused or dropped. */
  private defer(unit: RunningUnit): void {
    this.deferred.add(unit.view);
    this.locks.release(unit.view);
    unit.settle({ deferred: true });
  }

  /** The unit's outcome; rejects, failing the batch, when its writes cannot be taken in (invariant 5). */
  private async runUnit<T>(view: UnitOfWork, work: (tx: StoreTransaction) => Promise<T>): Promise<UnitOutcome<T>> {
    let value: T;
    try {
      value = await work(view);
    } catch (error) {
      this.locks.release(view);
      if (this.deferred.has(view) || error instanceof UnitDeferred) return { deferred: true };
      return { ok: false, error };
    }
    // Taken in before its locks pass on, so the unit waiting next reads its writes; outside the catch above, so a
    // failed invariant is the batch's, not this unit's refusal.
    try {
      if (this.deferred.has(view) || this.aborted) return { deferred: true };
      this.merge(view);
      return { ok: true, value };
    } finally {
      this.locks.release(view);
    }
  }

  async read<Kind extends ReadKind>(view: UnitOfWork, kind: Kind, key: string, keyParts: string[]): Promise<ReadRecords[Kind] | null> {
    if (this.aborted) throw new BatchAborted();
    if (this.deferred.has(view)) throw new UnitDeferred();
    const waiting = this.locks.acquire(view, lockKey(kind, key));
    if (waiting) {
      const granted = await waiting;
      // A unit granted the lock as a failed batch's units let theirs go would otherwise run on against rows it read.
      if (this.aborted) throw new BatchAborted();
      if (!granted) throw new UnitDeferred();
    }
    const rows = this.rows[kind];
    if (!rows.has(key)) await this.want(kind, key, keyParts);
    if (this.skipped.delete(lockKey(kind, key))) {
      this.deferred.add(view);
      throw new UnitDeferred();
    }
    return rows.get(key) as ReadRecords[Kind] | null;
  }

  /** Asks for a row in the next round trip; resolves once it is in `rows`. */
  private want(kind: ReadKind, key: string, keyParts: string[]): Promise<void> {
    assert(!this.aborted, 'no read is asked of a failed batch');
    let ofKind = this.wanted.get(kind);
    if (!ofKind) this.wanted.set(kind, (ofKind = new Map()));
    ofKind.set(key, keyParts);
    return new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /** One round trip with every read asked for (BEGIN before the first), in READS' order and lock order (invariant 2); then wakes the units that asked. */
  private async fetch(): Promise<void> {
    const wanted = READ_KINDS.flatMap((kind) => {
      const keys = this.wanted.get(kind);
      return keys ? [[kind, keys] as const] : [];
    });
    assert.equal(wanted.length, this.wanted.size, 'every read asked for is of a kind READS sends');
    this.wanted.clear();
    const waiters = this.waiters.splice(0);
    const parts = this.inLockOrder(wanted);
    let results: StatementResult[];
    try {
      results = await this.send(parts.flatMap((part) => this.callsOf(part)));
    } catch (error) {
      this.aborted = true;
      for (const waiter of waiters) waiter.reject(new BatchAborted());
      // Units waiting on an in-batch lock stop too (read throws BatchAborted), rather than wait for ever.
      this.locks.abandonWaiting();
      throw error;
    }
    let next = 0;
    for (const { kind, keys, outOfOrder } of parts) {
      const rows = this.rows[kind] as Map<string, unknown>;
      const found = byKey(kind, results[next].rows);
      // Out of order, the second read finds the rows whether held or not: one it found that the first did not lock is held elsewhere.
      const existing = outOfOrder ? byKey(kind, results[next + 1].rows) : found;
      next += outOfOrder ? 2 : 1;
      for (const key of keys.keys()) {
        if (rows.has(key)) continue;
        if (found.has(key) || !existing.has(key)) rows.set(key, found.get(key) ?? null);
        else this.skipped.add(lockKey(kind, key));
      }
      // Holdings read for the first time: plus what the batch's succeeded units added to them before (see merge).
      if (kind !== 'holdings') continue;
      for (const sourceId of keys.keys()) {
        const added = this.writes.holdings.get(sourceId);
        if (added && this.rows.holdings.has(sourceId)) {
          this.rows.holdings.set(sourceId, { sourceId, ...plus(this.rows.holdings.get(sourceId), added) });
        }
      }
    }
    for (const waiter of waiters) waiter.resolve();
  }

  /**
   * The round trip's reads, each locking kind's keys split at the last row the batch locked (invariant 2): those
   * after it are locked in order, waiting as need be; those before it only if free. A unit alone (no lock wait)
   * waits for every row, as any transaction would.
   */
  private inLockOrder(wanted: ReadonlyArray<readonly [ReadKind, Map<string, string[]>]>): ReadPart[] {
    if (this.options.lockWaitMs === undefined) return wanted.map(([kind, keys]) => ({ kind, keys, outOfOrder: false }));
    const parts: ReadPart[] = [];
    let last = this.lockedUpTo;
    for (const [kind, keys] of wanted) {
      if (!lockingReadOf(kind)) {
        parts.push({ kind, keys, outOfOrder: false });
        continue;
      }
      const inOrder = new Map<string, string[]>();
      const outOfOrder = new Map<string, string[]>();
      for (const [key, keyParts] of keys) {
        const position = { kind: READ_KINDS.indexOf(kind), keyParts };
        if (this.lockedUpTo && !isAfter(position, this.lockedUpTo)) {
          outOfOrder.set(key, keyParts);
        } else {
          inOrder.set(key, keyParts);
          if (!last || isAfter(position, last)) last = position;
        }
      }
      if (inOrder.size > 0) parts.push({ kind, keys: inOrder, outOfOrder: false });
      if (outOfOrder.size > 0) parts.push({ kind, keys: outOfOrder, outOfOrder: true });
    }
    this.lockedUpTo = last;
    return parts;
  }

  /** A part's reads: as READS reads its kind; out of lock order, locked only if free, then found without a lock. */
  private callsOf({ kind, keys, outOfOrder }: ReadPart): Call[] {
    const keyParts = [...keys.values()];
    const locking = lockingReadOf(kind);
    if (!outOfOrder || !locking) return [readCall(kind, keyParts)];
    const values = keyParameters(keyParts);
    return [
      { statement: locking.ifFree, values },
      { statement: locking.find, values },
    ];
  }

  private async send(calls: Call[]): Promise<StatementResult[]> {
    const { lockWaitMs } = this.options;
    const settings: Call =
      lockWaitMs === undefined ? { statement: BATCH_SETTINGS } : { statement: BATCH_SETTINGS_WITH_LOCK_WAIT, values: [`${lockWaitMs}ms`] };
    const opening: Call[] = this.begun ? [] : [{ statement: BEGIN }, settings];
    this.begun = true;
    const results = await roundTrip(this.client, [...opening, ...calls]);
    return results.slice(opening.length);
  }

  /** A succeeded unit's writes become the batch's (invariant 4): its later units read them, and COMMIT writes them. */
  private merge(view: UnitOfWork): void {
    assert(!this.aborted && !this.deferred.has(view), 'only a unit of a live batch that was not deferred reaches its writes');
    const { staged } = view;
    this.writes.takeIn(staged);
    for (const kind of WRITTEN) {
      // A change is never read back in a unit (unit/kinds.ts), so the batch files none for its units' reads.
      if (kind === 'changes') continue;
      const rows = this.rows[kind] as Map<string, unknown>;
      for (const [key, item] of staged.created[kind]) rows.set(key, item);
      for (const [key, item] of staged.saved[kind]) rows.set(key, item);
    }
    for (const token of staged.created.tokens.values()) this.rows.tokenIds.set(token.tokenId, token.tokenId);
    // Counts the batch has read go up by what the unit added; counts it has not (a unit may count a key without
    // reading its quota, when that quota is off) stay unread, so a later read locks the row and adds the
    // batch's additions to what the database holds (fetch), rather than take the additions for the counts.
    for (const [sourceId, added] of staged.holdings) {
      if (this.rows.holdings.has(sourceId))
        this.rows.holdings.set(sourceId, { sourceId, ...plus(this.rows.holdings.get(sourceId), added) });
    }
  }

  /**
   * Every write of the batch as one statement that checks each write's row count, and COMMIT, in one round trip;
   * nothing when the batch neither read nor wrote.
   */
  private async commit(): Promise<void> {
    const writes = writeCalls(this.writes);
    if (!this.begun && writes.length === 0) return;
    await this.send([...(writes.length > 0 ? [checkedWrites(writes)] : []), { statement: COMMIT }]);
  }

  /** True when the database holds a transaction for this batch that must be rolled back. */
  get started(): boolean {
    return this.begun;
  }
}
