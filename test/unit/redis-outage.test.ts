import { Writable } from 'node:stream';
import { createLogger } from '../../src/process/logger';
import { RedisOutage } from '../../src/process/redis';

/** An outage on a clock the test moves, and the messages of the lines it wrote. */
function outageOnClock() {
  const lines: Array<{ msg: string; requestsUncounted?: number }> = [];
  const logger = createLogger(
    'info',
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    }),
  );
  const clock = { now: 0 };
  return { outage: new RedisOutage(logger, () => clock.now), clock, lines };
}

describe('a Redis outage', () => {
  it('is logged at its start, at most once a minute while it lasts, and at its end with the requests it let through once each', () => {
    const { outage, clock, lines } = outageOnClock();
    outage.failed(new Error('Socket closed unexpectedly'));
    const requests = Array.from({ length: 120 }, () => ({}));
    for (const [second, request] of requests.entries()) {
      clock.now = second * 1_000;
      outage.failed(new Error('The client is offline'));
      // Two limiters miss the same request: it counts once.
      outage.requestUncounted(request);
      outage.requestUncounted(request);
    }
    outage.answered();
    outage.answered();
    expect(lines.map(({ msg, requestsUncounted }) => ({ msg, requestsUncounted }))).toEqual([
      { msg: 'Redis unreachable: rate limits are counted by nobody until it returns', requestsUncounted: undefined },
      { msg: 'Redis still unreachable: rate limits are not counted', requestsUncounted: 60 },
      { msg: 'Redis reachable again: rate limits are shared', requestsUncounted: 120 },
    ]);
  });
});
