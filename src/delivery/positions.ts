/**
 * Where the delivery engine keeps how far each sink has got (contract sections 13.3 and 13.4): positions, not copies.
 * Per sink and account, every change with seq <= position is done; above it a bounded window records what cannot be
 * told from the changes themselves (delivered out of order, being retried). One interface, kept in memory
 * (memory-positions.ts) or in PostgreSQL (postgres-positions.ts), so the engine is one piece of code over both.
 */

/** What a sink is, as ops see and change it. */
export interface SinkState {
  sinkId: string;
  enabled: boolean;
  /** Why it was disabled; null while enabled. */
  reason: string | null;
  disabledAt: Date | null;
  /** Bumped by enable, replay and disable: a sender that loaded an older one may write nothing more, and reloads. */
  generation: number;
}

/** A change above the position that has a row: delivered (out of order), or being retried. */
export interface WindowEntry {
  sourceId: string;
  seq: number;
  delivered: boolean;
  /** Failed attempts so far: the retry schedule's steps used. */
  attempts: number;
  nextAttemptAt: Date | null;
  lastError: string | null;
}

/** What a sender starts from when it takes a sink: its state, its positions (accounts without one: 0) and its window. */
export interface SinkSnapshot {
  state: SinkState;
  positions: Map<string, number>;
  window: WindowEntry[];
}

export type AttemptResult = 'delivered' | 'failed' | 'gone';

/** One attempt, as GET /admin/endpoints/{id}/attempts shows it. */
export interface AttemptRecord {
  /** Increasing per store: the page cursor. */
  id: number;
  sinkId: string;
  sourceId: string;
  seq: number;
  changeId: string;
  /** 1 for the first attempt of the change, 2 for the first retry, ... (from 1 again after an enable). */
  attempt: number;
  result: AttemptResult;
  status: number | null;
  error: string | null;
  durationMs: number;
  attemptedAt: Date;
}

/** What one step of a sender writes at once: an attempt's record, the account's window rows and position, a disable. */
export interface SenderWrite {
  attempt?: Omit<AttemptRecord, 'id' | 'sinkId'>;
  sourceId: string;
  /** Window rows to write (replacing the row of the same seq). */
  window: WindowEntry[];
  /** The account's position; its window rows at or below it are deleted. */
  position: number;
  /** Disables the sink with this reason. */
  disable?: string;
}

/** How many attempts are kept per sink, newest first: enough to see what went wrong, bounded whatever the traffic. */
export const ATTEMPTS_KEPT = 1_000;

export interface SinkPositions {
  /**
   * Makes the sinks known. A sink seen for the first time starts with the changes recorded after now: its position
   * in each account that has changes is that account's last seq; an account with none yet starts at 0 when it has one.
   */
  register(sinkIds: readonly string[]): Promise<void>;
  /** Every account with changes, and its last seq. */
  accountHeads(): Promise<Map<string, number>>;
  /** Takes or renews the sink's lease for `owner` for `leaseMs`; the state while it is held, undefined otherwise. */
  lease(sinkId: string, owner: string, leaseMs: number): Promise<SinkState | undefined>;
  /** Gives the lease up at once, so another instance takes over without waiting for it to expire. */
  release(sinkIds: readonly string[], owner: string): Promise<void>;
  state(sinkId: string): Promise<SinkState | undefined>;
  snapshot(sinkId: string): Promise<SinkSnapshot | undefined>;
  /**
   * Writes a sender's step only while `owner` holds the lease and the state is still at `generation`; false when
   * not (nothing written): a sender that lost its lease, or missed an enable or replay, never moves a position.
   */
  record(sinkId: string, owner: string, generation: number, write: SenderWrite): Promise<boolean>;
  /** Enabled again, from where it stopped: retries start from the first step. False for an unknown sink. */
  enable(sinkId: string): Promise<boolean>;
  /** The account's position moved to `after`, its window cleared: what follows is sent again. False for an unknown sink. */
  replay(sinkId: string, sourceId: string, after: number): Promise<boolean>;
  /** Newest first, at most `limit`, those before the attempt `before` when given. */
  attempts(sinkId: string, limit: number, before?: number): Promise<AttemptRecord[]>;
  close(): Promise<void>;
}
