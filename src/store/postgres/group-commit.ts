/**
 * Group commit behind Store.transaction: units of work that arrive while a
 * batch is in flight form the next batch, which runs as one transaction
 * (batch.ts). No timer: an idle store runs a unit at once, alone. A batch
 * costs two round trips and one WAL flush whatever its size, where a unit on
 * its own cost two round trips and a flush each (docs/BENCHMARKS.md).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Pool } from 'pg';
import type { StoreTransaction } from '../store';
import type { Logger } from '../../process/logger';
import { Batch, MAX_QUIET_TURNS, type BatchOptions, type UnitOutcome } from './batch';
import { withClient } from './connection';
import { ServiceUnavailableError } from '../../errors';
import { isRetryable, toStoreError } from './errors';

/** A batch that lost a race on a unique key or a deadlock runs again, up to this many times in all, then each unit alone. */
const MAX_ATTEMPTS = 3;
/** The most units in one batch: a larger one holds its rows' locks longer than it saves. */
const MAX_BATCH = 128;
/**
 * The most units that wait, for the next batches or to run alone: past it a unit is refused at once with 503
 * (ServiceUnavailableError), as an overloaded store answers, rather than queued for longer than its caller waits.
 * 32 batches of the largest size: at a few milliseconds a batch, the last waits a fraction of a second.
 */
export const MAX_WAITING_UNITS = 32 * MAX_BATCH;
/**
 * The longest a batch of many waits for a row another transaction holds (an operator's session, a slow
 * transaction, a unit alone, a write of another batch outside the lock order: batch.ts, invariant 2): past it the
 * batch fails and each unit runs alone, so one held row holds up its batch-mates this long, not for the statement
 * timeout. Batches hold their rows for a few milliseconds.
 */
const LOCK_WAIT_MS = 250;
/** Turns in a row that bring no unit after which the next batch stops waiting for the callers the last one answered. */
const QUIET_TURNS_BEFORE_BATCH = 2;
/** The most turns the next batch waits for them: callers that keep coming one a turn do not hold it up for long. */
const MAX_GATHERING_TURNS = 64;

interface QueuedUnit {
  work: (tx: StoreTransaction) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** The trace of the request that queued it (StoreTracing.capture), for the batch's span to link to. */
  trace: unknown;
}

/**
 * Traces of the store, when the service exports them (tracing.ts): nothing of OpenTelemetry is loaded without it,
 * so the store knows traces only through this. A batch serves many requests, so its span is a trace of its own,
 * linked to each unit's request span, and its round trips are spans under it.
 */
export interface StoreTracing {
  /** The current request's trace, as a link will name it; undefined outside a traced request. */
  capture(): unknown;
  /** Runs a batch in a span of its own, linked to the traces its units were queued from. */
  inBatchSpan<T>(units: number, traces: unknown[], run: () => Promise<T>): Promise<T>;
}

/** How many units the batches held: for the benchmark and the operator. */
export interface BatchSizes {
  batches: number;
  units: number;
  largest: number;
  /** Batches by size: [1], [2, 3], [4, 7], [8, 15], … : the upper bound of each bucket (2^k - 1) to its count. */
  bySize: Record<string, number>;
}

/**
 * An error the database answered for a statement (an ERROR, not the session's end): the transaction did not
 * commit, so its units can run again, each alone, without applying anything twice. Not when the database
 * cannot write at all (out of disk, read-only, shutting down: 503): each unit alone would only meet it again.
 * A statement timeout is one: it may be one unit's wait on a row another transaction holds.
 */
function isRefusedStatement(error: unknown): boolean {
  const { code, severity } = (error ?? {}) as { code?: unknown; severity?: unknown };
  return typeof code === 'string' && severity === 'ERROR' && !(toStoreError(error) instanceof ServiceUnavailableError);
}

export interface GroupCommitOptions {
  /** false: every unit runs alone, in a transaction of its own (for comparison). Default: true. */
  grouped?: boolean;
  /** Told each batch's number of units as it forms, for the metrics' histogram. */
  observeBatch?: (units: number) => void;
  tracing?: StoreTracing;
  logger?: Logger;
}

export class GroupCommit {
  private readonly queue: QueuedUnit[] = [];
  private inFlight = false;
  /** Units to run alone, each in a transaction of its own, at most aloneAtOnce at a time. */
  private readonly waitingAlone: QueuedUnit[] = [];
  private runningAlone = 0;
  /** One connection less than the pool holds (at least one), so the next batch always finds one. */
  private readonly aloneAtOnce: number;
  private readonly sizes: BatchSizes = { batches: 0, units: 0, largest: 0, bySize: {} };
  private readonly batchOptions: BatchOptions;

  constructor(
    private readonly pool: Pool,
    private readonly storeError: (error: unknown) => unknown,
    private readonly options: GroupCommitOptions = {},
  ) {
    this.aloneAtOnce = Math.max(1, (pool.options.max ?? 10) - 1);
    this.batchOptions = {
      onStall: (units) =>
        options.logger?.error(
          { units, turns: MAX_QUIET_TURNS },
          'units of work awaited something other than their transaction: deferred, each to run alone',
        ),
    };
  }

  run<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    if (this.options.grouped === false) return this.runAlone(work);
    if (this.queue.length + this.waitingAlone.length >= MAX_WAITING_UNITS) return Promise.reject(new ServiceUnavailableError());
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject, trace: this.options.tracing?.capture() });
      if (!this.inFlight) void this.drain();
    });
  }

  batchSizes(): BatchSizes {
    return { ...this.sizes, bySize: { ...this.sizes.bySize } };
  }

  /**
   * One batch at a time, each of the units that arrived while the one before was in flight. Measured against
   * two and three in flight, the next batch reading while one commits (docs/BENCHMARKS.md, issues 22 and 29):
   * those split the callers into small batches and did no better.
   */
  private async drain(): Promise<void> {
    this.inFlight = true;
    try {
      while (this.queue.length > 0) {
        const units = this.queue.splice(0, MAX_BATCH);
        try {
          await this.runTraced(units);
          await this.awaitAnsweredCallers(units.length);
        } catch (error) {
          // runBatch settles every unit whatever the database does: a throw here is a bug of the store's own (a
          // throwing observer or tracer, say). The batch's units not yet answered answer 500, and the next batch runs.
          this.options.logger?.error({ err: error, units: units.length }, 'group commit failed outside a batch');
          for (const unit of units) unit.reject(error);
        }
      }
    } finally {
      this.inFlight = false;
    }
  }

  private async runTraced(units: QueuedUnit[]): Promise<void> {
    this.count(units.length);
    const { tracing } = this.options;
    if (tracing) {
      await tracing.inBatchSpan(
        units.length,
        units.map((unit) => unit.trace),
        () => this.runBatch(units),
      );
    } else {
      await this.runBatch(units);
    }
  }

  /**
   * Before the next batch: the callers the last one answered send their next units over the next turns of the
   * event loop, as each request is read, parsed and checked, a few at a turn. The next batch waits for them while
   * turns bring new units, up to as many as were answered, so that it takes them all rather than leave most to the
   * batch after it: with a wait of one turn, batches of 15 and of 1 took turns at 16 callers (docs/BENCHMARKS.md,
   * issue 29). No timer: a store that nothing calls runs a unit at once.
   */
  private async awaitAnsweredCallers(answered: number): Promise<void> {
    let quietTurns = 0;
    for (let turn = 0; turn < MAX_GATHERING_TURNS && quietTurns < QUIET_TURNS_BEFORE_BATCH && this.queue.length < answered; turn += 1) {
      const queued = this.queue.length;
      await nextTurn();
      quietTurns = this.queue.length === queued ? quietTurns + 1 : 0;
    }
  }

  private count(size: number): void {
    this.options.observeBatch?.(size);
    const { sizes } = this;
    sizes.batches += 1;
    sizes.units += size;
    sizes.largest = Math.max(sizes.largest, size);
    const bucket = String(2 ** Math.floor(Math.log2(size) + 1) - 1);
    sizes.bySize[bucket] = (sizes.bySize[bucket] ?? 0) + 1;
  }

  /**
   * The batch, and again when it lost a race (a unique key, a deadlock); when the database refused a statement
   * for another reason, each unit alone, so one bad unit cannot fail the others; when the database could not be
   * reached or did not answer, every unit fails as the store's error (503, 504). Outcomes go out only after COMMIT.
   */
  private async runBatch(units: QueuedUnit[]): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      let outcomes: Array<UnitOutcome<unknown>>;
      try {
        outcomes = await this.attempt(units);
      } catch (error) {
        if (isRetryable(error) && attempt < MAX_ATTEMPTS) continue;
        if (isRetryable(error) || isRefusedStatement(error)) {
          this.runEachAlone(units);
        } else {
          const failure = this.storeError(error);
          for (const unit of units) unit.reject(failure);
        }
        return;
      }
      const deferred: QueuedUnit[] = [];
      outcomes.forEach((outcome, i) => {
        if ('deferred' in outcome) deferred.push(units[i]);
        else if (outcome.ok) units[i].resolve(outcome.value);
        else units[i].reject(outcome.error);
      });
      this.runEachAlone(deferred);
      return;
    }
  }

  private attempt(units: QueuedUnit[]): Promise<Array<UnitOutcome<unknown>>> {
    return this.inBatch(
      units.map((unit) => unit.work),
      { ...this.batchOptions, lockWaitMs: LOCK_WAIT_MS },
    );
  }

  /** The works as one batch on a connection of the pool; ROLLBACK when it fails. */
  private inBatch<T>(works: Array<(tx: StoreTransaction) => Promise<T>>, options: BatchOptions): Promise<Array<UnitOutcome<T>>> {
    let batch: Batch | undefined;
    return withClient(
      this.pool,
      (client) => {
        batch = new Batch(client, options);
        return batch.run(works);
      },
      async (client) => {
        if (batch?.started) await client.query('ROLLBACK');
      },
    );
  }

  /**
   * Each unit in a transaction of its own, on connections of the pool, while the next batches go on: a unit
   * that waits on a row another transaction holds (up to the statement timeout) holds up no one else. At most
   * aloneAtOnce at a time: a failed batch of 128 would otherwise ask the pool for 128 connections at once.
   */
  private runEachAlone(units: QueuedUnit[]): void {
    this.waitingAlone.push(...units);
    while (this.runningAlone < this.aloneAtOnce && this.waitingAlone.length > 0) {
      const unit = this.waitingAlone.shift() as QueuedUnit;
      this.runningAlone += 1;
      void this.runAlone(unit.work)
        .then(unit.resolve, unit.reject)
        .finally(() => {
          this.runningAlone -= 1;
          this.runEachAlone([]);
        });
    }
  }

  /**
   * One unit as a batch of its own, waiting for rows as any transaction would (up to the statement timeout), and
   * again (up to MAX_ATTEMPTS in all) when it lost a race on a unique key; any other failure, or the last, is
   * thrown as the store's error.
   */
  async runAlone<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      let outcome: UnitOutcome<T>;
      try {
        [outcome] = await this.inBatch([work], this.batchOptions);
      } catch (error) {
        if (isRetryable(error) && attempt < MAX_ATTEMPTS) continue;
        throw this.storeError(error);
      }
      if ('deferred' in outcome) throw new Error('a unit of work awaited something other than its transaction');
      if (!outcome.ok) throw outcome.error;
      return outcome.value;
    }
  }
}
