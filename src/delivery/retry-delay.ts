import { MAX_TIMER_MS } from '../process/config';

/** Contract section 13.3: each wait gets up to 20% more, so endpoints that failed together are not retried together. */
const JITTER = 0.2;

/**
 * How long to wait before retry `step` (0: the first retry) of a failed attempt, by DELIVERY_RETRY_SCHEDULE; undefined
 * once the schedule is spent, when the engine disables the endpoint. The wait is the step plus up to 20% jitter, never
 * less than the step, so "retried after 5 minutes" holds. A Retry-After (429, 503) lengthens it up to the step's
 * double, and never shortens it: an endpoint answering `Retry-After: 0` cannot run through the steps in seconds and
 * get itself disabled. At most MAX_TIMER_MS, a Node timer's reach.
 */
export function retryDelay(
  step: number,
  schedule: readonly number[],
  retryAfterMs?: number,
  random: () => number = Math.random,
): number | undefined {
  if (!Number.isInteger(step) || step < 0 || step >= schedule.length) return undefined;
  const base = schedule[step];
  const jittered = Math.floor(base * (1 + JITTER * random()));
  const asked = retryAfterMs === undefined ? 0 : Math.min(retryAfterMs, 2 * base);
  return Math.min(Math.max(jittered, asked), MAX_TIMER_MS);
}
