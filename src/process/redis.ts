import { createClient } from 'redis';
import type { RedisReply } from 'rate-limit-redis';
import type { Logger } from './logger';

export type SendRedisCommand = (...args: string[]) => Promise<RedisReply>;

export interface RedisConnection {
  sendCommand: SendRedisCommand;
  /** Stops reconnecting and closes the connection at once; commands still waiting fail. */
  close(): Promise<void>;
}

/** Longest wait between reconnection attempts. */
const MAX_RECONNECT_DELAY_MS = 2_000;
/** Longest a request waits for a count: a Redis that stops answering without closing the connection (hung, cut off). */
const COMMAND_TIMEOUT_MS = 500;

/**
 * The client's own command timeout covers only the wait to be written: a command written to a connection that
 * no longer answers would wait for ever. Its late answer, if any, is dropped.
 */
function withTimeLimit(reply: Promise<RedisReply>): Promise<RedisReply> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${COMMAND_TIMEOUT_MS} ms`)), COMMAND_TIMEOUT_MS);
  });
  reply.catch(() => undefined);
  return Promise.race([reply, late]).finally(() => clearTimeout(timer));
}

/**
 * A Redis client for the shared rate-limit counts. It never ends the process
 * and never makes a request wait for Redis: commands fail at once while it is
 * disconnected (no offline queue) and after COMMAND_TIMEOUT_MS when it does
 * not answer on an open connection; the limiter then lets the request through,
 * and the client keeps reconnecting in the background. Start-up does not wait
 * for it either. Losing and regaining Redis is logged once each way.
 */
export function connectRedis(url: string, logger: Logger): RedisConnection {
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: MAX_RECONNECT_DELAY_MS,
      reconnectStrategy: (retries) => Math.min(100 * 2 ** retries, MAX_RECONNECT_DELAY_MS),
    },
  });
  let reachable = true;
  client.on('error', (error: Error) => {
    if (!reachable) return;
    reachable = false;
    logger.warn({ err: error }, 'Redis unreachable: rate limits are counted by nobody until it returns');
  });
  client.on('ready', () => {
    if (!reachable) logger.info('Redis reachable again: rate limits are shared');
    reachable = true;
  });
  client.connect().catch(() => undefined);
  return {
    sendCommand: (...args) => withTimeLimit(client.sendCommand(args) as Promise<RedisReply>),
    // At once, not gracefully: a graceful close waits for the answers a hung Redis never sends, and would hold the drain.
    close: async () => client.destroy(),
  };
}
