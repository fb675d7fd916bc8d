import { createClient } from 'redis';
import type { RedisReply } from 'rate-limit-redis';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL;

/** Says once per file that the Redis runs are skipped, so a green run without them is not mistaken for a full one. */
export function noteIfNoRedis(): void {
  if (!TEST_REDIS_URL)
    process.stderr.write(`${expect.getState().testPath ?? 'a suite'}: Redis runs SKIPPED, TEST_REDIS_URL is not set (.ci/run sets it)\n`);
}

/** A connected client for the tests, and the sendCommand the app takes. */
export async function testRedis() {
  const client = createClient({ url: TEST_REDIS_URL });
  await client.connect();
  return { client, sendCommand: (...args: string[]) => client.sendCommand(args) as Promise<RedisReply> };
}
