import { createClient } from 'redis';
import type { RedisReply } from 'rate-limit-redis';
import type { Logger } from './logger';

export type SendRedisCommand = (...args: string[]) => Promise<RedisReply>;

export interface RedisConnection {
  sendCommand: SendRedisCommand;
  /** Stops reconnecting and closes the connection. */
  close(): Promise<void>;
}

/** Longest wait between reconnection attempts. */
const MAX_RECONNECT_DELAY_MS = 2_000;

/**
 * A Redis client for the shared rate-limit counts. It never ends the process
 * and never makes a request wait for Redis: commands fail at once while it is
 * disconnected (no offline queue), the limiter then lets the request through,
 * and the client keeps reconnecting in the background. Start-up does not wait
 * for it either. Losing and regaining Redis is logged once each way.
 */
export function connectRedis(url: string, logger: Logger): RedisConnection {
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: MAX_RECONNECT_DELAY_MS, reconnectStrategy: (retries) => Math.min(100 * 2 ** retries, MAX_RECONNECT_DELAY_MS) },
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
    sendCommand: (...args) => client.sendCommand(args) as Promise<RedisReply>,
    close: async () => {
      if (client.isOpen) await client.close();
      else client.destroy();
    },
  };
}
