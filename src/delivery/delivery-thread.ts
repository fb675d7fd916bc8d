/**
 * Delivery on a thread of its own (delivery-worker.ts), at the lowest CPU priority: webhooks out and the NATS relay
 * (contract sections 13.3 and 13.4) never take the serving thread's time, which partners' answers wait for. This is
 * the serving thread's side: it starts the thread, answers what it asks of the memory store, tells it of changes,
 * feeds the metrics, and passes on what ops and the drain ask of delivery (DeliveryControl).
 */
import { access } from 'node:fs/promises';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { HeldSinks, Metrics } from '../process/metrics';
import type { MemoryStore } from '../store/memory-store';
import type { Store } from '../store/store';
import type { AttemptRecord } from './positions';
import type { DeliveryReport, DeliveryStart, DeliveryWorkerData } from './delivery-worker';
import type { DeliveryControl, EndpointView } from './engine';
import type { EndpointConfig } from './endpoints';
import { ThreadCalls } from './thread-calls';

/** The worker's own file beside this one: .js when built, .ts when run by tsx (the thread inherits its loader). */
const WORKER_FILE = path.join(__dirname, `delivery-worker${path.extname(__filename)}`);

/** The thread reads no account's last seq through the store's watch: it reads positions itself. */
const NO_ACCOUNTS: ReadonlyMap<string, number> = new Map();

/**
 * The most often the thread is told that changes were made. Each telling starts a round of the engine, which asks
 * this thread for the accounts' heads and their new changes: a burst of units makes one round, not one each. A change
 * waits up to this much longer to be sent.
 */
const CHANGES_TOLD_EVERY_MS = 10;

/** Past the engine's own bound, what a stop waits for the thread (leases released, sinks closed) before ending it anyway. */
const STOP_MARGIN_MS = 2_000;

/** The engine could not start: its positions' database did not answer (or refused), as a start of the store would. */
export class DeliveryStartError extends Error {}

export interface DeliveryThreadOptions {
  endpoints: readonly EndpointConfig[];
  /** The serving thread's store: the memory store's changes and heads are read here, for the thread. */
  store: Pick<Store, 'watchChanges'> & Partial<Pick<MemoryStore, 'packedChangesAfter' | 'changeHeads'>>;
  metrics: Metrics;
  /** Writes a log line of the thread's, as the serving thread writes its own. */
  log: (line: string) => void;
  /** The thread ended without being stopped (a fault of its own): nothing is handed on any more. */
  onFailure: (error: Error) => void;
}

export class DeliveryThread implements DeliveryControl {
  /** Told by the thread once its engine runs. */
  private ids: string[] | undefined;
  private stopping = false;
  /** The sinks the thread holds, as its last report gave them. */
  private held: HeldSinks = [];

  private constructor(
    private readonly worker: Worker,
    private readonly calls: ThreadCalls,
    private readonly unwatch: () => void,
  ) {}

  /** Starts the thread and resolves once its engine runs; rejects with DeliveryStartError when its positions cannot be opened. */
  static async start(options: DeliveryThreadOptions): Promise<DeliveryThread> {
    const { store, metrics } = options;
    // libuv's thread pool is the process's, made by the first thread that needs it, and its threads take their maker's
    // priority: made here (this check uses it), not by the delivery thread once it runs under SCHED_IDLE.
    await access(WORKER_FILE);
    const worker = new Worker(WORKER_FILE, { workerData: { endpoints: [...options.endpoints] } satisfies DeliveryWorkerData });
    let started: (start: DeliveryStart) => void = () => undefined;
    const calls = new ThreadCalls(
      worker,
      {
        // Only the memory store's: on PostgreSQL the thread reads the database itself.
        packedChangesAfter: (sourceId: string, after: number, limit: number) => store.packedChangesAfter?.(sourceId, after, limit),
        changeHeads: () => store.changeHeads?.(),
      },
      (name, value) => {
        if (name === 'started') started(value as DeliveryStart);
        if (name === 'log') options.log(value as string);
        if (name === 'report') {
          const { deliveries, disables, held } = value as DeliveryReport;
          for (const [endpoint, result, seconds] of deliveries) metrics.observeDelivery(endpoint, result, seconds);
          for (const endpoint of disables) metrics.countDisable(endpoint);
          thread.held = held;
        }
      },
    );
    // Coalesced: the store tells of every unit; the thread hears at most every CHANGES_TOLD_EVERY_MS, of the accounts
    // that moved on.
    const moved = new Set<string>();
    const unwatch = store.watchChanges({
      watched: () => NO_ACCOUNTS,
      changed: (sourceId) => {
        if (moved.size === 0) {
          setTimeout(() => {
            calls.tell('changed', [...moved]);
            moved.clear();
          }, CHANGES_TOLD_EVERY_MS).unref();
        }
        moved.add(sourceId);
      },
    });
    const thread = new DeliveryThread(worker, calls, unwatch);
    let over = false;
    const ended = (error: Error) => {
      if (over) return;
      over = true;
      unwatch();
      calls.failAll(error);
      started({ error: error.message, database: false });
      if (thread.ids && !thread.stopping) options.onFailure(error);
    };
    worker.on('error', (error) => ended(error));
    worker.on('messageerror', (error) => ended(error));
    worker.on('exit', (code) => ended(new Error(`the delivery thread ended with code ${code}`)));

    const start = await new Promise<DeliveryStart>((resolve) => (started = resolve));
    if ('error' in start) {
      unwatch();
      await worker.terminate();
      throw start.database ? new DeliveryStartError(start.error) : new Error(`delivery could not start: ${start.error}`);
    }
    thread.ids = start.sinkIds;
    metrics.watchDelivery(() => (thread.stopping ? [] : thread.held));
    return thread;
  }

  sinkIds(): string[] {
    return [...(this.ids ?? [])];
  }

  endpoint(sinkId: string): Promise<EndpointView | undefined> {
    return this.calls.call('endpoint', sinkId);
  }

  attempts(sinkId: string, limit: number, before?: number): Promise<AttemptRecord[] | undefined> {
    return this.calls.call('attempts', sinkId, limit, before);
  }

  enable(sinkId: string): Promise<EndpointView | undefined> {
    return this.calls.call('enable', sinkId);
  }

  takesAccount(sinkId: string, sourceId: string): Promise<boolean | undefined> {
    return this.calls.call('takesAccount', sinkId, sourceId);
  }

  replay(sinkId: string, sourceId: string, after: number): Promise<EndpointView | undefined> {
    return this.calls.call('replay', sinkId, sourceId, after);
  }

  /** The engine stops within `boundMs` (DeliveryEngine.stop), then the thread is ended; ended anyway if it does not answer. */
  async stop(boundMs: number): Promise<void> {
    this.stopping = true;
    this.unwatch();
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.calls.call('stop', boundMs),
        new Promise((resolve) => (timer = setTimeout(resolve, boundMs + STOP_MARGIN_MS))),
      ]);
    } finally {
      clearTimeout(timer);
      await this.worker.terminate();
    }
  }
}
