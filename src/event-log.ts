import type { Outcome } from './metrics';

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
  outcome: Outcome;
  reason?: string;
}

export interface EventFilter {
  source_id?: string;
  token_id?: string;
  outcome?: Outcome;
  limit: number;
}

/**
 * The most recent operation requests of this process, accepted or rejected,
 * in a ring of fixed size: memory stays bounded however long the process runs.
 */
export class EventLog {
  private readonly ring: Array<OperationEvent | undefined>;
  private next = 0;

  constructor(readonly capacity: number) {
    this.ring = new Array<OperationEvent | undefined>(capacity);
  }

  record(event: OperationEvent): void {
    this.ring[this.next] = event;
    this.next = (this.next + 1) % this.capacity;
  }

  /** Newest first. */
  list(filter: EventFilter): OperationEvent[] {
    const found: OperationEvent[] = [];
    for (let i = 1; i <= this.capacity && found.length < filter.limit; i += 1) {
      const event = this.ring[(this.next - i + this.capacity) % this.capacity];
      if (!event) break;
      if (filter.source_id !== undefined && event.source_id !== filter.source_id) continue;
      if (filter.token_id !== undefined && event.token_id !== filter.token_id) continue;
      if (filter.outcome !== undefined && event.outcome !== filter.outcome) continue;
      found.push(event);
    }
    return found;
  }
}
