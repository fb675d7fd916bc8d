import type { Change } from '../store/store';
import type { Sink } from './sink';
import type { WindowEntry } from './positions';

/** A change above the position that the sink takes and has not taken yet: waiting, due, in flight or retrying. */
export interface OpenChange {
  change: Change;
  /** The sink's orderKey: changes with the same key go one after the other, in seq order. */
  key: string;
  /** Failed attempts so far (the retry schedule's steps used). */
  attempts: number;
  /** Epoch ms before which it is not tried again; 0: due. */
  nextAttemptAt: number;
  lastError: string | null;
  /** Set while an attempt is in flight: it aborts it. */
  inflight?: AbortController;
}

/** How many changes are read from the store at a time. */
const PAGE = 200;

/**
 * One account's changes for one sink, as the sender holding its lease sees them: the position, the changes read
 * above it (up to `frontier`) that are not done, and those done out of order. Bounded: it reads on only while fewer
 * than `limit` changes above the position are open or delivered; past that, a blocked key holds the account up.
 */
export class AccountWindow {
  readonly open = new Map<number, OpenChange>();
  /** Delivered while an earlier change is not: kept as window rows until the position passes them. */
  readonly delivered = new Set<number>();
  /** The last seq read. */
  frontier: number;
  /** Retry rows of the snapshot, by seq, for changes not read yet. */
  private readonly retries = new Map<number, WindowEntry>();
  /** How many open changes each key has: due() stops once it has seen every key. */
  private readonly openByKey = new Map<string, number>();

  constructor(
    readonly sourceId: string,
    public position: number,
    rows: readonly WindowEntry[],
  ) {
    this.frontier = position;
    for (const row of rows) {
      if (row.delivered) this.delivered.add(row.seq);
      else this.retries.set(row.seq, row);
    }
  }

  /** Where the position can move: just below the first open change, or to the last change read when none is open. */
  nextPosition(): number {
    const first = this.open.keys().next();
    return first.done ? this.frontier : first.value - 1;
  }

  /** Reads the account's changes after the frontier, up to `head`, while the window has room. */
  async fill(read: (after: number, limit: number) => Promise<Change[]>, sink: Sink, head: number, limit: number): Promise<void> {
    while (this.frontier < head && this.open.size + this.delivered.size < limit) {
      const page = await read(this.frontier, Math.min(PAGE, limit - this.open.size - this.delivered.size));
      // Nothing kept up to the head: the retention sweep deleted it (contract 13.1), so there is nothing to hand on.
      if (page.length === 0) this.frontier = head;
      for (const change of page) {
        this.frontier = change.seq;
        if (this.delivered.has(change.seq) || !sink.accepts(change)) continue;
        const retry = this.retries.get(change.seq);
        this.retries.delete(change.seq);
        const key = sink.orderKey(change);
        this.openByKey.set(key, (this.openByKey.get(key) ?? 0) + 1);
        this.open.set(change.seq, {
          change,
          key,
          attempts: retry?.attempts ?? 0,
          nextAttemptAt: retry?.nextAttemptAt?.getTime() ?? 0,
          lastError: retry?.lastError ?? null,
        });
      }
    }
  }

  /** The change was delivered: it is open no more (a failed one stays open while it waits for its retry). */
  close(seq: number): void {
    const entry = this.open.get(seq);
    if (!entry) return;
    this.open.delete(seq);
    const left = (this.openByKey.get(entry.key) as number) - 1;
    if (left === 0) this.openByKey.delete(entry.key);
    else this.openByKey.set(entry.key, left);
  }

  /** The position moved: what is at or below it needs no row any more. */
  moveTo(position: number): void {
    this.position = position;
    for (const seq of this.delivered) if (seq <= position) this.delivered.delete(seq);
  }

  /**
   * The open changes that may be attempted now, oldest first: due, not in flight, and the first open change of their
   * key (a later one of the same key waits, which is not a failure and uses no step).
   */
  *due(now: number): Generator<OpenChange> {
    const held = new Set<string>();
    for (const entry of this.open.values()) {
      // Every key's first open change seen: the rest all wait behind one. The relay's one key per account made
      // this walk the whole window (up to 500 changes) for each publish, 3.4% of the process's time.
      if (held.size === this.openByKey.size) return;
      if (held.has(entry.key)) continue;
      held.add(entry.key);
      if (!entry.inflight && entry.nextAttemptAt <= now) yield entry;
    }
  }
}
