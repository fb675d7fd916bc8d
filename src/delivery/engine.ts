/**
 * The delivery engine (contract sections 13.3 and 13.4): hands every change on to each sink (webhook endpoints, the
 * NATS relay), by position, in order per key, retried on the schedule, one sending instance per sink at a time. It
 * reads the store by position (Store.changesAfter) and is never called by a request's chain but for ops.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../process/logger';
import type { DeliveryMetrics } from '../process/metrics';
import type { Store } from '../store/store';
import type { AttemptRecord, SinkPositions, SinkState } from './positions';
import type { Sink } from './sink';
import { SinkSender, type RetryDelay } from './sink-sender';

export interface DeliveryEngineOptions {
  sinks: readonly Sink[];
  positions: SinkPositions;
  store: Pick<Store, 'changesAfter' | 'watchChanges'>;
  retryDelay: RetryDelay;
  /** INSTANCE_ID: the lease's owner is it and a random part, so two processes never pass for one. */
  instanceId: string;
  /** DELIVERY_LEASE_MS. */
  leaseMs: number;
  logger: Logger;
  metrics?: DeliveryMetrics;
  /** Changes open or delivered above the position, per sink and account. Default: 500. */
  windowSize?: number;
  /** How often the engine looks for new changes while there is work. Default: 250 ms. */
  busyPollMs?: number;
  /** ... and while there is none (at most a third of the lease, which it renews). Default: 1 s. */
  idlePollMs?: number;
}

/** One account of an endpoint, as ops see it. */
export interface PositionView {
  sourceId: string;
  position: number;
  /** The first change after the position that the endpoint takes and has not taken, within the next page read. */
  oldestUndelivered: { seq: number; createdAt: Date } | null;
}

export interface EndpointView {
  state: SinkState;
  positions: PositionView[];
  lastAttempt: AttemptRecord | null;
}

/**
 * What ops (the admin routes) and the drain do with delivery, wherever its engine runs: here, or on the delivery
 * thread (delivery-thread.ts), which answers the same calls by message.
 */
export interface DeliveryControl {
  sinkIds(): string[];
  endpoint(sinkId: string): Promise<EndpointView | undefined>;
  attempts(sinkId: string, limit: number, before?: number): Promise<AttemptRecord[] | undefined>;
  enable(sinkId: string): Promise<EndpointView | undefined>;
  takesAccount(sinkId: string, sourceId: string): Promise<boolean | undefined>;
  replay(sinkId: string, sourceId: string, after: number): Promise<EndpointView | undefined>;
  stop(boundMs: number): Promise<void>;
}

/** The engine reads no account's last seq through the store's watch: it reads positions itself. */
const NO_ACCOUNTS: ReadonlyMap<string, number> = new Map();

/** How many changes after a position GET /admin/endpoints reads to find the oldest one not yet taken. */
const OLDEST_LOOKAHEAD = 100;

export class DeliveryEngine implements DeliveryControl {
  private readonly senders: SinkSender[];
  private readonly owner: string;
  private stopped = false;
  private wakeUp: (() => void) | undefined;
  /** Woken during a round: the next round starts without waiting, so a change told of mid-round is not left to the poll. */
  private wokenDuringRound = false;
  /**
   * Rounds, enables and replays, one at a time: an enable or replay answers the state it made, read before a round
   * can act on it (a round is where a sender takes up a new generation and sends again).
   */
  private turns: Promise<unknown> = Promise.resolve();
  private loop: Promise<void> = Promise.resolve();
  private unwatch: () => void = () => undefined;
  /** The database failed delivery since the last round that went through whole: logged once, not per sink or poll. */
  private databaseDown = false;
  private failedThisRound = false;

  private constructor(private readonly options: DeliveryEngineOptions) {
    this.owner = `${options.instanceId}/${randomUUID()}`;
    const settings = {
      positions: options.positions,
      read: (sourceId: string, after: number, limit: number) => options.store.changesAfter(sourceId, after, limit),
      retryDelay: options.retryDelay,
      owner: this.owner,
      leaseMs: options.leaseMs,
      windowSize: options.windowSize ?? 500,
      logger: options.logger,
      metrics: options.metrics,
      databaseFailed: (error: unknown) => this.databaseFailed(error),
    };
    this.senders = options.sinks.map((sink) => new SinkSender(sink, settings));
  }

  /** Makes the sinks known (a new one starts after the last change of each account) and starts sending. */
  static async start(options: DeliveryEngineOptions): Promise<DeliveryEngine> {
    const engine = new DeliveryEngine(options);
    await options.positions.register(options.sinks.map((sink) => sink.id));
    options.metrics?.watchDelivery(() => engine.held());
    // Woken as a unit's changes apply where the store can tell at once (the memory store); on PostgreSQL, whose
    // NOTIFY is only for accounts a feed request waits on, the engine finds new changes by its own poll.
    engine.unwatch = options.store.watchChanges({ watched: () => NO_ACCOUNTS, changed: () => engine.wake() });
    engine.loop = engine.run();
    options.logger.info({ endpoints: options.sinks.map((sink) => sink.id) }, 'delivery started');
    return engine;
  }

  /** Looks for new changes now rather than at the next poll (a change committed). */
  wake(): void {
    this.wokenDuringRound = true;
    this.wakeUp?.();
  }

  sinkIds(): string[] {
    return this.senders.map((sender) => sender.sink.id);
  }

  async endpoint(sinkId: string): Promise<EndpointView | undefined> {
    const sender = this.senders.find((candidate) => candidate.sink.id === sinkId);
    if (!sender) return undefined;
    const { positions, store } = this.options;
    const [snapshot, heads, attempts] = await Promise.all([
      positions.snapshot(sinkId),
      positions.accountHeads(),
      positions.attempts(sinkId, 1),
    ]);
    if (!snapshot) return undefined;
    const accounts = [...new Set([...snapshot.positions.keys(), ...heads.keys()])].sort();
    const views: PositionView[] = [];
    for (const sourceId of accounts) {
      const position = snapshot.positions.get(sourceId) ?? 0;
      const delivered = new Set(snapshot.window.filter((row) => row.sourceId === sourceId && row.delivered).map((row) => row.seq));
      const after = (heads.get(sourceId) ?? 0) > position ? await store.changesAfter(sourceId, position, OLDEST_LOOKAHEAD) : [];
      const oldest = after.find((change) => !delivered.has(change.seq) && sender.sink.accepts(change));
      views.push({ sourceId, position, oldestUndelivered: oldest ? { seq: oldest.seq, createdAt: oldest.createdAt } : null });
    }
    return { state: snapshot.state, positions: views, lastAttempt: attempts[0] ?? null };
  }

  /** Undefined for an endpoint the seed does not list. */
  async attempts(sinkId: string, limit: number, before?: number): Promise<AttemptRecord[] | undefined> {
    if (!this.sinkIds().includes(sinkId)) return undefined;
    return this.options.positions.attempts(sinkId, limit, before);
  }

  /** Resumes where it stopped, the failed change from the first step. */
  async enable(sinkId: string): Promise<EndpointView | undefined> {
    if (!this.sinkIds().includes(sinkId)) return undefined;
    const view = await this.inTurn(async () => {
      await this.options.positions.enable(sinkId);
      return this.endpoint(sinkId);
    });
    this.options.logger.info({ endpoint: sinkId }, 'endpoint enabled by ops');
    this.wake();
    return view;
  }

  /** Whether the sink hands on the account's changes (undefined: no such sink). */
  async takesAccount(sinkId: string, sourceId: string): Promise<boolean | undefined> {
    return this.senders.find((sender) => sender.sink.id === sinkId)?.sink.takesAccount(sourceId);
  }

  /** Moves the account's position back to `after`: what follows and matches is sent again, in order. */
  async replay(sinkId: string, sourceId: string, after: number): Promise<EndpointView | undefined> {
    if (!this.sinkIds().includes(sinkId)) return undefined;
    const view = await this.inTurn(async () => {
      await this.options.positions.replay(sinkId, sourceId, after);
      return this.endpoint(sinkId);
    });
    this.options.logger.info({ endpoint: sinkId, source_id: sourceId, after }, 'endpoint replay by ops');
    this.wake();
    return view;
  }

  /** Runs `work` once the rounds, enables and replays queued before it are done. */
  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const turn = this.turns.then(work);
    this.turns = turn.catch(() => undefined);
    return turn;
  }

  /**
   * Stops within about `boundMs`: no new attempt; those in flight aborted and awaited up to the bound; the leases
   * released, so another instance takes over at once; then the sinks and positions closed.
   */
  async stop(boundMs: number): Promise<void> {
    this.stopped = true;
    this.unwatch();
    this.wake();
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, boundMs)));
    await Promise.all([...this.senders.map((sender) => sender.stop(bound)), Promise.race([this.loop, bound])]);
    clearTimeout(timer);
    await this.options.positions
      .release(this.sinkIds(), this.owner)
      .catch((error: unknown) => this.options.logger.warn({ err: error }, 'delivery leases not released: they expire by themselves'));
    await Promise.all(this.options.sinks.map((sink) => sink.close()));
    await this.options.positions.close();
  }

  private databaseFailed(error: unknown): void {
    this.failedThisRound = true;
    if (this.databaseDown) return;
    this.databaseDown = true;
    this.options.logger.warn({ err: error }, 'delivery paused: the database did not answer; it resumes where it stopped once it does');
  }

  private held() {
    const now = Date.now();
    return this.senders.flatMap((sender) => {
      const age = sender.oldestUndeliveredAgeMs(now);
      return age === undefined ? [] : [{ endpoint: sender.sink.id, oldestUndeliveredSeconds: age / 1000, disabled: sender.heldDisabled() }];
    });
  }

  /** One round over every sink, then a wait: short while there is work, up to a third of the lease when there is none. */
  private async run(): Promise<void> {
    const { busyPollMs = 250, idlePollMs = 1_000, leaseMs } = this.options;
    while (!this.stopped) {
      let busy = false;
      this.failedThisRound = false;
      this.wokenDuringRound = false;
      await this.inTurn(async () => {
        try {
          const heads = await this.options.positions.accountHeads();
          for (const sender of this.senders) if (!this.stopped && (await sender.step(heads))) busy = true;
        } catch (error) {
          this.databaseFailed(error);
        }
      });
      if (this.databaseDown && !this.failedThisRound) {
        this.databaseDown = false;
        this.options.logger.info('delivery resumed: the database answers again');
      }
      if (this.stopped) break;
      if (this.wokenDuringRound) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, busy ? busyPollMs : Math.min(idlePollMs, leaseMs / 3));
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = undefined;
    }
  }
}
