import type { Change } from '../store/store';

/** What one attempt to hand a change on came to (contract sections 13.3 and 13.4). */
export type DeliveryOutcome =
  /** Taken: a webhook endpoint's 2xx, JetStream's acknowledgement. */
  | { result: 'delivered'; status?: number; durationMs: number }
  /** Not taken, try again later: retried on the schedule; `retryAfterMs` is what the other side asked for, if it did. */
  | { result: 'failed'; status?: number; error: string; retryAfterMs?: number; durationMs: number }
  /** Not taken, and the other side said never again (a webhook endpoint's 410): the endpoint is disabled at once. */
  | { result: 'gone'; status?: number; error: string; durationMs: number };

/**
 * Where changes are handed on to: a webhook endpoint or the NATS relay. The delivery engine (src/delivery/) keeps each
 * sink's position per account, in order per `orderKey`, at most `concurrency` attempts in flight, and one sender
 * instance at a time; a sink only makes one attempt, and never throws: every failure is an outcome.
 */
export interface Sink {
  /** Unique among sinks, stable across restarts: a webhook endpoint's id from the seed; the relay's own name. */
  readonly id: string;
  /** At most this many attempts of this sink in flight at once. */
  readonly concurrency: number;
  /** Whether this sink hands the change on at all (its accounts and types); the others pass its position by. */
  accepts(change: Change): boolean;
  /** Whether it hands on any change of the account: what ops may replay for it. */
  takesAccount(sourceId: string): boolean;
  /** Changes with the same key are handed on in `seq` order, one after the other (a token's, a booking's, an account's). */
  orderKey(change: Change): string;
  /**
   * The wait before retry `step` (0: the first) of a failed attempt, when the sink has a schedule of its own (the NATS
   * relay: short and never spent, so it is never disabled); unset, DELIVERY_RETRY_SCHEDULE's. Undefined: disable.
   */
  readonly retryDelay?: (step: number) => number | undefined;
  /** One attempt; `signal` aborts it when the instance stops or loses its lease. */
  send(change: Change, signal: AbortSignal): Promise<DeliveryOutcome>;
  close(): Promise<void>;
}
