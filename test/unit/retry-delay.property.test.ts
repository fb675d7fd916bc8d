import fc from 'fast-check';
import { MAX_TIMER_MS } from '../../src/process/config';
import { retryDelay } from '../../src/delivery/retry-delay';

const schedules = fc.array(fc.integer({ min: 1, max: MAX_TIMER_MS }), { minLength: 1, maxLength: 10 });
/** Math.random's range: 0 included, 1 not. */
const randoms = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

describe('retryDelay (contract section 13.3)', () => {
  it('waits the step plus at most 20% jitter, never less than the step, within a timer’s reach', () => {
    fc.assert(
      fc.property(schedules, fc.nat(9), randoms, (schedule, at, random) => {
        const step = at % schedule.length;
        const delay = retryDelay(step, schedule, undefined, () => random);
        expect(delay).toBeGreaterThanOrEqual(Math.min(schedule[step], MAX_TIMER_MS));
        expect(delay).toBeLessThanOrEqual(Math.min(Math.floor(schedule[step] * 1.2), MAX_TIMER_MS));
      }),
    );
  });

  it('honours a Retry-After up to the step’s double, and never waits less than the schedule for it', () => {
    fc.assert(
      fc.property(schedules, fc.nat(9), randoms, fc.nat(2 * MAX_TIMER_MS), (schedule, at, random, retryAfterMs) => {
        const step = at % schedule.length;
        const base = schedule[step];
        const delay = retryDelay(step, schedule, retryAfterMs, () => random) as number;
        const plain = retryDelay(step, schedule, undefined, () => random) as number;
        expect(delay).toBeGreaterThanOrEqual(plain);
        expect(delay).toBeGreaterThanOrEqual(Math.min(retryAfterMs, 2 * base, MAX_TIMER_MS));
        expect(delay).toBeLessThanOrEqual(Math.min(Math.max(plain, 2 * base), MAX_TIMER_MS));
        if (retryAfterMs <= plain) expect(delay).toBe(plain);
      }),
    );
  });

  it('is undefined once the schedule is spent, so the engine disables the endpoint', () => {
    fc.assert(
      fc.property(schedules, fc.nat(1000), fc.option(fc.nat(), { nil: undefined }), (schedule, past, retryAfterMs) => {
        expect(retryDelay(schedule.length + past, schedule, retryAfterMs)).toBeUndefined();
        expect(retryDelay(schedule.length - 1, schedule, retryAfterMs)).toBeDefined();
      }),
    );
  });

  it('spreads the default schedule’s first retry over 5 to 6 seconds', () => {
    const schedule = [5000, 300_000];
    expect([0, 0.5, 0.999999].map((random) => retryDelay(0, schedule, undefined, () => random))).toEqual([5000, 5500, 5999]);
    expect(retryDelay(1, schedule, 3_600_000, () => 0)).toBe(600_000);
  });
});
