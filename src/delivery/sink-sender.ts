import type { Logger } from '../process/logger';
import type { DeliveryMetrics } from '../process/metrics';
import type { Change } from '../store/store';
import { AccountWindow, type OpenChange } from './account-window';
import type { SenderWrite, SinkPositions, SinkState, WindowEntry } from './positions';
import type { DeliveryOutcome, Sink } from './sink';

/** The wait before retry `step` (0: the first), Retry-After considered; undefined once the schedule is spent. */
export type RetryDelay = (step: number, retryAfterMs?: number) => number | undefined;

export interface SenderSettings {
  positions: SinkPositions;
  read: (sourceId: string, after: number, limit: number) => Promise<Change[]>;
  retryDelay: RetryDelay;
  /** This process, unique among the instances sharing the database. */
  owner: string;
  leaseMs: number;
  /** Changes open or delivered above the position an account's window holds at most. */
  windowSize: number;
  logger: Logger;
  metrics?: DeliveryMetrics;
  /** The database failed a read or write of delivery. */
  databaseFailed: (error: unknown) => void;
}

/** The waits before a failed write is tried again; past them, what the sender loaded is dropped and loaded anew. */
const WRITE_RETRY_DELAYS_MS = [100, 500, 2_000];

/** Everything a sender loaded when it took the sink (or saw an enable or replay): dropped whole when it stops holding it. */
class Session {
  readonly accounts = new Map<string, AccountWindow>();
  inflight = 0;
  /** The sender's writes, one after the other: each is computed from what the one before left. */
  writes: Promise<void> = Promise.resolve();

  constructor(
    readonly state: SinkState,
    readonly positions: Map<string, number>,
    readonly rows: readonly WindowEntry[],
  ) {}

  /** The account's window, made on first sight from the snapshot (no position row: the account had no change when the sink appeared). */
  account(sourceId: string): AccountWindow {
    let window = this.accounts.get(sourceId);
    if (!window) {
      const rows = this.rows.filter((row) => row.sourceId === sourceId);
      this.accounts.set(sourceId, (window = new AccountWindow(sourceId, this.positions.get(sourceId) ?? 0, rows)));
    }
    return window;
  }

  abortAll(): void {
    for (const window of this.accounts.values()) for (const entry of window.open.values()) entry.inflight?.abort();
  }
}

/** A short text of an outcome's failure for the logs, the attempt's row and the reason of a disable. */
function describe(outcome: Exclude<DeliveryOutcome, { result: 'delivered' }>): string {
  const text = outcome.status === undefined ? outcome.error : `${outcome.status}: ${outcome.error}`;
  // An endpoint's answer may hold U+0000, which PostgreSQL's text refuses: the write would fail for ever, and the
  // endpoint be neither retried on its schedule nor disabled. Both stores keep the same text.
  return text.replaceAll('\u0000', '\uFFFD');
}

/**
 * Sends one sink's changes while this instance holds its lease: reads each account's changes by position, attempts
 * those that are due (in seq order per key, at most `sink.concurrency` at once), and writes each outcome, checked
 * against the lease, before it counts. No transaction is open during an attempt. A write the database failed drops
 * what the sender loaded: it is loaded again once the database answers, and a change whose outcome was not written is
 * sent again (at least once); a failed read only pauses it.
 */
export class SinkSender {
  private session: Session | undefined;
  /** Until when the lease is surely held: its last renewal's start plus its length. */
  private leaseValidUntil = 0;
  private lastRenewal = 0;
  /** Every attempt in flight, to await them on stop. */
  private readonly attempts = new Set<Promise<void>>();
  /** Across accounts, which one dispatch starts with: each gets its turn at the concurrency. */
  private turn = 0;
  private stopped = false;

  constructor(
    readonly sink: Sink,
    private readonly settings: SenderSettings,
  ) {}

  /** One round: the lease, the state, new changes. True when there is work left (poll again soon). */
  async step(heads: Map<string, number>): Promise<boolean> {
    if (this.stopped) return false;
    try {
      const busy = await this.refresh(heads);
      this.dispatch();
      return busy;
    } catch (error) {
      this.fail(error);
      return false;
    }
  }

  /** The age of the oldest change not yet taken, in ms, as this instance sees it; undefined when it does not hold the sink. */
  oldestUndeliveredAgeMs(now: number): number | undefined {
    if (!this.session) return undefined;
    let oldest = now;
    for (const window of this.session.accounts.values()) {
      const first = window.open.values().next();
      if (!first.done) oldest = Math.min(oldest, first.value.change.createdAt.getTime());
    }
    return now - oldest;
  }

  /** Whether this instance holds the sink and it is disabled. */
  heldDisabled(): boolean {
    return this.session !== undefined && !this.session.state.enabled;
  }

  /** Aborts what is in flight and waits for it until `bound`; whatever was not written is sent again by the next holder. */
  async stop(bound: Promise<void>): Promise<void> {
    this.stopped = true;
    const session = this.session;
    this.drop();
    await Promise.race([Promise.allSettled([...this.attempts, session?.writes]), bound]);
  }

  private async refresh(heads: Map<string, number>): Promise<boolean> {
    const { positions, owner, leaseMs } = this.settings;
    const now = Date.now();
    let state: SinkState | undefined;
    if (now - this.lastRenewal >= leaseMs / 3) {
      state = await positions.lease(this.sink.id, owner, leaseMs);
      if (state) {
        this.lastRenewal = now;
        this.leaseValidUntil = now + leaseMs;
      }
    } else {
      state = await positions.state(this.sink.id);
    }
    if (!state || now >= this.leaseValidUntil) {
      this.leaseValidUntil = 0;
      if (this.session) this.settings.logger.info({ endpoint: this.sink.id }, 'another instance holds the endpoint now');
      this.drop();
      return false;
    }
    if (!this.session || this.session.state.generation !== state.generation) {
      this.drop();
      const snapshot = await positions.snapshot(this.sink.id);
      if (!snapshot || this.stopped) return false;
      this.session = new Session(snapshot.state, snapshot.positions, snapshot.window);
    }
    const session = this.session;
    let busy = false;
    for (const [sourceId, head] of heads) {
      const window = session.account(sourceId);
      await window.fill((after, limit) => this.settings.read(sourceId, after, limit), this.sink, head, this.settings.windowSize);
      if (this.session !== session) return false;
      if (window.open.size > 0 || window.frontier < head) busy = true;
      // Changes the sink does not take move the position on by themselves.
      if (window.nextPosition() > window.position) {
        await this.write(session, () => {
          const position = window.nextPosition();
          return position > window.position
            ? { write: { sourceId, window: [], position }, apply: () => window.moveTo(position) }
            : undefined;
        });
      }
    }
    return busy;
  }

  /** Starts the due changes, up to the sink's concurrency, each account in turn first. */
  private dispatch(): void {
    const session = this.session;
    if (this.stopped || !session || !session.state.enabled || Date.now() >= this.leaseValidUntil) return;
    const windows = [...session.accounts.values()];
    const now = Date.now();
    for (let i = 0; i < windows.length && session.inflight < this.sink.concurrency; i += 1) {
      const window = windows[(this.turn + i) % windows.length];
      for (const entry of window.due(now)) {
        if (session.inflight >= this.sink.concurrency) break;
        this.attempt(session, window, entry);
      }
    }
    this.turn += 1;
  }

  private attempt(session: Session, window: AccountWindow, entry: OpenChange): void {
    const controller = new AbortController();
    entry.inflight = controller;
    session.inflight += 1;
    const attemptedAt = new Date();
    const attempt = this.sink
      .send(entry.change, controller.signal)
      // A sink never throws (sink.ts); one that does has failed this attempt.
      .catch((error: unknown): DeliveryOutcome => ({
        result: 'failed',
        error: String(error),
        durationMs: Date.now() - attemptedAt.getTime(),
      }))
      .then(async (outcome) => {
        if (controller.signal.aborted || this.session !== session) return;
        this.settings.metrics?.observeDelivery(this.sink.id, outcome.result, outcome.durationMs / 1000);
        await this.settle(session, window, entry, outcome, attemptedAt);
      })
      .finally(() => {
        entry.inflight = undefined;
        session.inflight -= 1;
        this.attempts.delete(attempt);
        this.dispatch();
      });
    this.attempts.add(attempt);
  }

  /** Writes the attempt's outcome (checked against the lease), then applies it here. */
  private async settle(session: Session, window: AccountWindow, entry: OpenChange, outcome: DeliveryOutcome, attemptedAt: Date) {
    const { change } = entry;
    const record: SenderWrite['attempt'] = {
      sourceId: change.sourceId,
      seq: change.seq,
      changeId: change.id,
      attempt: entry.attempts + 1,
      result: outcome.result,
      status: outcome.status ?? null,
      error: outcome.result === 'delivered' ? null : describe(outcome),
      durationMs: outcome.durationMs,
      attemptedAt,
    };
    if (outcome.result === 'delivered') {
      await this.write(session, () => {
        const position = this.positionWithout(window, change.seq);
        const rows = change.seq > position ? [{ ...this.row(entry), delivered: true }] : [];
        const apply = () => {
          window.close(change.seq);
          if (change.seq > position) window.delivered.add(change.seq);
          window.moveTo(position);
        };
        return { write: { attempt: record, sourceId: change.sourceId, window: rows, position }, apply };
      });
      return;
    }
    const attempts = entry.attempts + 1;
    const schedule = this.sink.retryDelay ?? this.settings.retryDelay;
    const delay = outcome.result === 'failed' ? schedule(attempts - 1, outcome.retryAfterMs) : undefined;
    const lastError = describe(outcome);
    const disable =
      delay !== undefined
        ? undefined
        : outcome.result === 'gone'
          ? `the endpoint answered that it is gone (${lastError}) to change ${change.id} (account ${change.sourceId}, seq ${change.seq})`
          : `change ${change.id} (account ${change.sourceId}, seq ${change.seq}) failed every step of the retry schedule, last with ${lastError}`;
    const nextAttemptAt = delay === undefined ? 0 : Date.now() + delay;
    const row: WindowEntry = {
      ...this.row(entry),
      attempts,
      nextAttemptAt: delay === undefined ? null : new Date(nextAttemptAt),
      lastError,
    };
    await this.write(session, () => ({
      write: { attempt: record, sourceId: change.sourceId, window: [row], position: window.nextPosition(), disable },
      apply: () => {
        entry.attempts = attempts;
        entry.nextAttemptAt = nextAttemptAt;
        entry.lastError = lastError;
        window.moveTo(window.nextPosition());
      },
    }));
    if (disable !== undefined && this.session === session) {
      this.settings.logger.error(
        { endpoint: this.sink.id, reason: disable },
        'endpoint disabled: nothing is sent to it until ops enable it',
      );
      this.settings.metrics?.countDisable(this.sink.id);
      // Nothing more is sent: the next step loads the disabled state.
      this.drop();
    }
  }

  private row(entry: OpenChange): WindowEntry {
    return { sourceId: entry.change.sourceId, seq: entry.change.seq, delivered: false, attempts: 0, nextAttemptAt: null, lastError: null };
  }

  /** The account's position once `seq` is done: just below the first other open change. */
  private positionWithout(window: AccountWindow, seq: number): number {
    for (const next of window.open.keys()) if (next !== seq) return next - 1;
    return window.frontier;
  }

  /**
   * One write of this session, made when the writes before it are done (so it starts from what they left), and applied
   * here once written. Not written (another instance holds the lease, or an enable or replay came in): the session is
   * dropped, and the next step loads the sink again. A database that keeps failing drops it too.
   */
  private write(session: Session, make: () => { write: SenderWrite; apply: () => void } | undefined): Promise<void> {
    const done = session.writes.then(async () => {
      const step = this.session === session ? make() : undefined;
      if (!step) return;
      const written = await this.record(session, step.write);
      if (this.session !== session) return;
      if (written) step.apply();
      else this.drop();
    });
    session.writes = done.catch((error: unknown) => {
      // Whether it committed is unknown: what was loaded may be stale, so it is loaded again.
      this.fail(error);
      this.drop();
    });
    return session.writes;
  }

  /**
   * Records a write, tried again after a short wait when the database failed it (a connection cut or slow to open on
   * a loaded machine): the same rows again, the lease checked anew, so one that did commit is written twice to the
   * same effect (but for a second attempt row), and an attempt that went well is not sent again for a hiccup.
   */
  private async record(session: Session, write: SenderWrite): Promise<boolean> {
    const { positions, owner } = this.settings;
    for (let retry = 0; ; retry += 1) {
      try {
        return await positions.record(this.sink.id, owner, session.state.generation, write);
      } catch (error) {
        if (retry >= WRITE_RETRY_DELAYS_MS.length || this.session !== session) throw error;
        this.fail(error);
        await new Promise((resolve) => setTimeout(resolve, WRITE_RETRY_DELAYS_MS[retry]));
      }
    }
  }

  private drop(): void {
    this.session?.abortAll();
    this.session = undefined;
  }

  /**
   * The database failed the sender: told to the engine (which logs it once for all sinks), and the lease renewed at
   * the next step. What was loaded stays when a read failed (attempts in flight go on, their outcomes written once it
   * answers); a failed write drops it (see write).
   */
  private fail(error: unknown): void {
    this.settings.databaseFailed(error);
    this.lastRenewal = 0;
  }
}
