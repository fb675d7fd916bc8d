import { createClient, ErrorReply } from 'redis';
import type { RedisReply } from 'rate-limit-redis';
import type { Logger } from './logger';
import type { Metrics } from './metrics';

export type SendRedisCommand = (...args: string[]) => Promise<RedisReply>;

export interface RedisConnection {
  sendCommand: SendRedisCommand;
  /** Where a Redis outage is followed: the rate limiter tells it the requests it let through uncounted. */
  outage: RedisOutage;
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

/** While an outage lasts, at most one line this often between the lines of its start and its end. */
const OUTAGE_REPORT_INTERVAL_MS = 60_000;

/**
 * An outage of Redis, logged when it starts and when it ends (with the requests it let through uncounted), and at
 * most once a minute in between; never a line per request, never a stack: each request would otherwise add two
 * lines of a kilobyte (issue 42). receiver_redis_up says it while it lasts.
 */
export class RedisOutage {
  private since: number | undefined;
  private reportedAt = 0;
  private requests = 0;
  /** The requests counted already: a request passes two limiters, and both miss. */
  private readonly uncounted = new WeakSet<object>();

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  isOn(): boolean {
    return this.since !== undefined;
  }

  /** Redis refused, closed or did not answer: an outage starts, unless one is on. */
  failed(error: Error): void {
    if (this.since !== undefined) {
      this.reportIfDue();
      return;
    }
    this.since = this.now();
    this.reportedAt = this.since;
    this.requests = 0;
    this.logger.warn({ reason: error.message }, 'Redis unreachable: rate limits are counted by nobody until it returns');
  }

  /** A request went through without its count (passOnStoreError) during the outage. */
  requestUncounted(request: object): void {
    if (this.since === undefined || this.uncounted.has(request)) return;
    this.uncounted.add(request);
    this.requests += 1;
    this.reportIfDue();
  }

  /** Redis answered: the outage, if one was on, ends. */
  answered(): void {
    if (this.since === undefined) return;
    this.logger.info(
      { durationMs: this.now() - this.since, requestsUncounted: this.requests },
      'Redis reachable again: rate limits are shared',
    );
    this.since = undefined;
  }

  private reportIfDue(): void {
    const now = this.now();
    if (this.since === undefined || now - this.reportedAt < OUTAGE_REPORT_INTERVAL_MS) return;
    this.reportedAt = now;
    this.logger.warn(
      { durationMs: now - this.since, requestsUncounted: this.requests },
      'Redis still unreachable: rate limits are not counted',
    );
  }
}

/**
 * A Redis client for the shared rate-limit counts. It never ends the process
 * and never makes a request wait for Redis: commands fail at once while it is
 * disconnected (no offline queue) and after COMMAND_TIMEOUT_MS when it does
 * not answer on an open connection; the limiter then lets the request through,
 * and the client keeps reconnecting in the background. Start-up does not wait
 * for it either. An outage is followed by RedisOutage.
 */
export function connectRedis(url: string, logger: Logger, metrics?: Metrics): RedisConnection {
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: MAX_RECONNECT_DELAY_MS,
      reconnectStrategy: (retries) => Math.min(100 * 2 ** retries, MAX_RECONNECT_DELAY_MS),
    },
  });
  const outage = new RedisOutage(logger);
  metrics?.watchRedis(() => !outage.isOn());
  const sendCommand: SendRedisCommand = async (...args) => {
    try {
      const reply = await withTimeLimit(client.sendCommand(args) as Promise<RedisReply>);
      outage.answered();
      return reply;
    } catch (error) {
      // Redis's own refusal of a command (an error reply, such as NOSCRIPT) is an answer, not an outage.
      if (error instanceof ErrorReply) outage.answered();
      else outage.failed(error as Error);
      throw error;
    }
  };
  client.on('error', (error: Error) => outage.failed(error));
  // The outage ends with Redis's first answer, not with the client's 'ready': that is a connection taken, which a
  // proxy in front of a Redis that is away still gives before it drops it. Without traffic, a PING asks.
  client.on('ready', () => void sendCommand('PING').catch(() => undefined));
  client.connect().catch(() => undefined);
  return {
    sendCommand,
    outage,
    // At once, not gracefully: a graceful close waits for the answers a hung Redis never sends, and would hold the drain.
    close: async () => client.destroy(),
  };
}
