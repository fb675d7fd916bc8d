/** What both stores do alike with the records they keep: copy them for a caller, and key them within their account. */

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

/** A record's key within its account, as both stores file them: tokens, bookings, request keys, deliveries and ledger rows are all per account. */
export function accountKey(sourceId: string, id: string): string {
  return `${sourceId}\u0000${id}`;
}
