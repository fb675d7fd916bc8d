/**
 * The 401 oracle (contract sections 3 and 11): a wrong key for a known account and any key for an unknown one
 * must take the same time. Measured here, not in the test suite (which checks the cause: the same work for both,
 * test/store/auth-timing.test.ts): on a shared machine a time is a sample of the machine as much as of the code.
 */
import { Agent, request } from 'node:http';
import { BENCH_ACCOUNT } from './seed';
import { median } from './median';

export interface UnauthorizedTiming {
  pairs: number;
  /** Median time of each kind of 401, in µs, over all rounds. */
  knownMedianUs: number;
  unknownMedianUs: number;
  /** |known - unknown| / max, of the medians, in percent: the target is under 10. */
  mediansApartPercent: number;
  /**
   * The probability that a known account's 401 takes longer than an unknown one's (ties count half; Vargha and
   * Delaney's A): 50 when the two distributions cannot be told apart, 100 or 0 when every sample gives it away.
   */
  knownSlowerPercent: number;
  non401: number;
}

/** P(a > b) + P(a = b) / 2 over every pair of samples, from the ranks of both together (O(n log n)). */
function probabilityGreater(a: number[], b: number[]): number {
  const all = [...a.map((value) => ({ value, fromA: true })), ...b.map((value) => ({ value, fromA: false }))].sort(
    (x, y) => x.value - y.value,
  );
  let rankSumA = 0;
  for (let i = 0; i < all.length;) {
    let j = i;
    while (j < all.length && all[j].value === all[i].value) j += 1;
    const rank = (i + 1 + j) / 2;
    for (let k = i; k < j; k += 1) if (all[k].fromA) rankSumA += rank;
    i = j;
  }
  return (rankSumA - (a.length * (a.length + 1)) / 2) / (a.length * b.length);
}

/**
 * `pairs` pairs of withdrawals on one keep-alive connection, each pair a known account's (wrong key) and an
 * unknown account's in an order drawn at random, so that drift on a shared machine falls on both alike.
 */
export async function measureUnauthorizedTiming(port: number, pairs: number): Promise<UnauthorizedTiming> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const bodyOf = (sourceId: string) =>
    JSON.stringify({
      share_public: 'pk_bench_wrong_key_0001',
      read_event: 'token.withdrawn_created',
      source_id: sourceId,
      destination_id: BENCH_ACCOUNT.destinations[0],
      token_id: '1000000000000',
      transaction_id: '00000000000000000001',
      withdrawn_amount: '0.01',
      token_balance: '999999.99',
    });
  const bodies = { known: bodyOf(BENCH_ACCOUNT.source_id), unknown: bodyOf('NOBODY01') };
  let non401 = 0;
  const send = (body: string) =>
    new Promise<number>((resolve, reject) => {
      const started = process.hrtime.bigint();
      const outgoing = request(
        { host: '127.0.0.1', port, path: '/v1/tokens/withdraw', method: 'POST', agent, headers: { 'content-type': 'application/json' } },
        (response) => {
          if (response.statusCode !== 401) non401 += 1;
          response.resume();
          response.on('end', () => resolve(Number(process.hrtime.bigint() - started) / 1000));
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  try {
    for (let i = 0; i < 50; i += 1) await send(i % 2 ? bodies.known : bodies.unknown);
    const times = { known: [] as number[], unknown: [] as number[] };
    for (let i = 0; i < pairs; i += 1) {
      const order = Math.random() < 0.5 ? (['known', 'unknown'] as const) : (['unknown', 'known'] as const);
      for (const kind of order) times[kind].push(await send(bodies[kind]));
    }
    const knownMedianUs = median(times.known);
    const unknownMedianUs = median(times.unknown);
    return {
      pairs,
      knownMedianUs: Math.round(knownMedianUs),
      unknownMedianUs: Math.round(unknownMedianUs),
      mediansApartPercent: Math.round((1000 * Math.abs(knownMedianUs - unknownMedianUs)) / Math.max(knownMedianUs, unknownMedianUs)) / 10,
      knownSlowerPercent: Math.round(1000 * probabilityGreater(times.known, times.unknown)) / 10,
      non401,
    };
  } finally {
    agent.destroy();
  }
}
