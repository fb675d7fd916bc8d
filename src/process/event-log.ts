import type { Verdict } from './metrics';

/** One operation request as ops see it: who, what, when, how it ended. Never a key or a secret. */
export interface OperationEvent {
  time: string;
  request_id: string;
  method: string;
  route: string;
  operation: string;
  source_id?: string;
  token_id?: string;
  booking_id?: string;
  transaction_id?: string;
  status: number;
  outcome: Verdict;
  reason?: string;
}

export interface EventFilter {
  source_id?: string;
  token_id?: string;
  outcome?: Verdict;
  limit: number;
}

/** The newest `capacity` events recorded in it, each with its place in the order of the whole log. */
class Ring {
  private readonly entries: Array<{ seq: number; event: OperationEvent } | undefined>;
  private next = 0;

  constructor(private readonly capacity: number) {
    this.entries = new Array(capacity);
  }

  record(seq: number, event: OperationEvent): void {
    this.entries[this.next] = { seq, event };
    this.next = (this.next + 1) % this.capacity;
  }

  /** Newest first. */
  *newestFirst(): Generator<{ seq: number; event: OperationEvent }> {
    for (let i = 1; i <= this.capacity; i += 1) {
      const entry = this.entries[(this.next - i + this.capacity) % this.capacity];
      if (!entry) return;
      yield entry;
    }
  }
}

/**
 * The most recent operation requests of this process, accepted or rejected: the newest `capacity` of each
 * account, and as many of requests that authenticated as no account, each in a ring of its own. Memory stays
 * bounded however long the process runs (accounts are few), and no caller's traffic, a stranger's least of all,
 * can push another account's requests out (contract section 11).
 */
export class EventLog {
  private readonly rings = new Map<string, Ring>();
  private readonly unauthenticated: Ring;
  private seq = 0;

  constructor(readonly capacity: number) {
    this.unauthenticated = new Ring(capacity);
  }

  record(event: OperationEvent): void {
    this.seq += 1;
    this.ringOf(event.source_id).record(this.seq, event);
  }

  private ringOf(sourceId: string | undefined): Ring {
    if (sourceId === undefined) return this.unauthenticated;
    let ring = this.rings.get(sourceId);
    if (!ring) this.rings.set(sourceId, (ring = new Ring(this.capacity)));
    return ring;
  }

  /** Newest first, across the rings the filter allows. */
  list(filter: EventFilter): OperationEvent[] {
    const rings =
      filter.source_id !== undefined
        ? [this.rings.get(filter.source_id)].filter((ring) => ring !== undefined)
        : [this.unauthenticated, ...this.rings.values()];
    const merged = rings.flatMap((ring) => [...ring.newestFirst()]).sort((a, b) => b.seq - a.seq);
    const found: OperationEvent[] = [];
    for (const { event } of merged) {
      if (found.length >= filter.limit) break;
      if (filter.token_id !== undefined && event.token_id !== filter.token_id) continue;
      if (filter.outcome !== undefined && event.outcome !== filter.outcome) continue;
      found.push(event);
    }
    return found;
  }
}
