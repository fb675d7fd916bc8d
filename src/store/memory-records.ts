/** The memory store's helpers for the records it keeps whole (bookings, request keys, deliveries) and its holdings. */
import type { Holdings } from './store';

export function addHoldings(counts: Map<string, Holdings>, sourceId: string, what: keyof Holdings, n = 1): void {
  let held = counts.get(sourceId);
  if (!held) counts.set(sourceId, (held = { tokens: 0, bookings: 0, keys: 0 }));
  held[what] += n;
}

/**
 * Entries are inserted in time order, so the expired ones are at the front of the map; each forgotten one stops
 * counting toward its account's keys.
 */
export function forgetOlderThan<Value extends { sourceId: string }>(
  entries: Map<string, Value>,
  cutoffMs: number,
  stampOf: (value: Value) => Date,
  holdings: Map<string, Holdings>,
): void {
  for (const [key, value] of entries) {
    if (stampOf(value).getTime() >= cutoffMs) break;
    entries.delete(key);
    addHoldings(holdings, value.sourceId, 'keys', -1);
  }
}

/**
 * A copy that callers may change freely. Records are flat but for a booking's
 * fields and a token's details; Dates are never mutated, so they are shared.
 * Far cheaper than structuredClone on every read and write.
 */
export function copy<Value>(value: Value): Value {
  const record: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  if (record.fields) record.fields = { ...(record.fields as Record<string, unknown>) };
  if (record.details) record.details = { ...(record.details as Record<string, unknown>) };
  return record as Value;
}

/** A record's key within its account: bookings, request keys, deliveries and ledger rows are all per account. */
export function accountKey(sourceId: string, id: string): string {
  return `${sourceId}\u0000${id}`;
}
