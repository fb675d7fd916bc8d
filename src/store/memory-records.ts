/** The memory store's helpers for its holdings and the records it forgets after their retention. */
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
