let formattedMs = Number.NaN;
let formatted = '';

/**
 * A time in ISO 8601 (toISOString), made once per millisecond: at thousands of requests a second most of them
 * share theirs, and toISOString on every log line and event was about 4% of a request's CPU (the log's, and a
 * money change's ledger row, are formatted here).
 */
export function isoTime(ms: number): string {
  if (ms !== formattedMs) {
    formattedMs = ms;
    formatted = new Date(ms).toISOString();
  }
  return formatted;
}
