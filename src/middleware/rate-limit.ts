import { createHash } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { rateLimit, type Options, type RateLimitInfo } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import { TooManyRequestsError } from '../errors';
import type { Logger } from '../process/logger';
import type { Metrics } from '../process/metrics';
import type { RedisOutage, SendRedisCommand } from '../process/redis';
import { requestContext } from './request-context';

const WINDOW_MS = 60_000;

/** Where each limiter puts a request's count (its requestPropertyName): apart, so each one's miss can be told. */
const ADDRESS_COUNT = 'addressRateLimit';
const ACCOUNT_COUNT = 'accountRateLimit';
const DOCUMENTS_COUNT = 'documentsRateLimit';

/** Where the counts live: this process alone, or Redis, shared by every instance. */
export interface RateLimitCounts {
  logger: Logger;
  metrics: Metrics;
  /** Unset: each instance counts alone. */
  redis?: { sendCommand: SendRedisCommand; keyPrefix: string; outage: RedisOutage };
}

/** express-rate-limit's own misconfiguration warnings carry codes like ERR_ERL_UNEXPECTED_X_FORWARDED_FOR. */
function isLimiterWarning(error: unknown): boolean {
  return String((error as { code?: unknown } | null)?.code ?? '').startsWith('ERR_ERL_');
}

/**
 * Where the counts live, and where the limiter's own messages go (the
 * service's log, not the console). With Redis, a request it cannot count goes
 * through (passOnStoreError) and the failure is counted: an outage of the
 * counter must not become an outage of the service. An outage is logged by
 * RedisOutage, at its start and end, not per request; a failure outside one
 * (Redis answered, but not as expected) is logged with its stack.
 */
function countsIn({ logger, metrics, redis }: RateLimitCounts, name: string): Partial<Options> {
  const logging: Partial<Options> = {
    logger: {
      warn: (error: unknown) => logger.warn({ err: error }, 'rate limiter configuration'),
      error: (error: unknown) => {
        if (isLimiterWarning(error)) return logger.warn({ err: error }, 'rate limiter configuration');
        metrics.countRateLimitStoreError();
        if (!redis?.outage.isOn())
          logger.warn({ err: error }, 'rate limit not counted: the shared counts (Redis) failed; the request was let through');
      },
    },
  };
  if (!redis) return logging;
  const store = new RedisStore({ sendCommand: loadingScriptsWhileUnreachable(redis.sendCommand), prefix: `${redis.keyPrefix}${name}:` });
  return { ...logging, store, passOnStoreError: true };
}

/**
 * The limiter, telling the outage of the requests it let through uncounted: express-rate-limit sets a request's
 * count (under `property`) only once the store gave it, and says nothing else of a request it passed on.
 */
function noticingUncounted(limiter: RequestHandler, property: string, counts: RateLimitCounts): RequestHandler {
  const outage = counts.redis?.outage;
  if (!outage) return limiter;
  return (req, res, next) =>
    limiter(req, res, (error?: unknown) => {
      if (error === undefined && !(property in req)) outage.requestUncounted(req);
      next(error);
    });
}

/**
 * rate-limit-redis loads its two scripts once, when the limiter is made, and
 * keeps the answers: a load that failed because Redis was not reachable yet
 * (the client connects in the background) would fail every count after it,
 * for good. A script's handle is its SHA1 digest, which is what Redis answers
 * to SCRIPT LOAD, so while Redis is unreachable the digest is worked out here;
 * once Redis is back, its NOSCRIPT answer makes the store load the script
 * there and count again.
 */
function loadingScriptsWhileUnreachable(sendCommand: SendRedisCommand): SendRedisCommand {
  return async (...args) => {
    try {
      return await sendCommand(...args);
    } catch (error) {
      const [command, subcommand, script] = args;
      if (command !== 'SCRIPT' || subcommand !== 'LOAD' || script === undefined) throw error;
      return createHash('sha1').update(script).digest('hex');
    }
  };
}

/** express-rate-limit's middleware is called `middleware`: named for what it limits, so a route's chain reads. */
function named(name: string, handler: RequestHandler): RequestHandler {
  return Object.defineProperty(handler, 'name', { value: name });
}

const refuse: RequestHandler = (_req, _res, next) => next(new TooManyRequestsError());

/**
 * A per-address refusal says nothing of its count but Retry-After: it is not an account's budget. It closes its
 * connection (Connection: close), so the requests a client pipelined behind it are dropped unread instead of each
 * answered with a 429 of its own: bursts of 12,500 pipelined requests from one address, refused one by one, stalled
 * every other caller for seconds a burst (issue 42, H1). An account's own 429 (limitPerAccount) keeps its connection.
 */
function refuseWithRetryAfter(property: string): RequestHandler {
  return (req, res, next) => {
    const resetMs = (req as unknown as Record<string, RateLimitInfo | undefined>)[property]?.resetTime?.getTime() ?? Date.now() + WINDOW_MS;
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil((resetMs - Date.now()) / 1000))));
    res.setHeader('Connection', 'close');
    refuse(req, res, next);
  };
}

/**
 * What the per-address limit counts: the failures of a client that did not authenticate as an account. An
 * account's own refusals (403 key_limit, 409, 422 ...) count against that account's limit alone (contract
 * section 8): counted per address, one account's refusals locked out every partner behind the same NAT, or behind
 * the one upstream sender. The service's failures (5xx: the database away, a time limit) and a duplicate still in
 * flight (409, safe to retry) are not the client's doing; counted, a few seconds of outage would lock every
 * retrying client out for the rest of the minute.
 */
function isUnauthenticatedClientFailure(res: Response): boolean {
  const context = requestContext(res);
  if (context.accountIfAuthenticated !== undefined) return false;
  return res.statusCode >= 400 && res.statusCode < 500 && context.errorReason !== 'in_flight';
}

/**
 * Before the body is read: failed requests per client address (Express's
 * req.ip, so "trust proxy" decides which address). Only the failures of requests that did not authenticate
 * count (isUnauthenticatedClientFailure), so legitimate traffic behind one proxy is not throttled; an address
 * over the limit is refused everything until its window passes. It says
 * nothing of its count but Retry-After: it is not an account's budget.
 */
export function limitPerAddress(perMinute: number, counts: RateLimitCounts): RequestHandler[] {
  if (perMinute === 0) return [];
  const limiter = rateLimit({
    windowMs: WINDOW_MS,
    limit: perMinute,
    skipSuccessfulRequests: true,
    requestWasSuccessful: (_req, res) => !isUnauthenticatedClientFailure(res),
    standardHeaders: false,
    legacyHeaders: false,
    requestPropertyName: ADDRESS_COUNT,
    handler: refuseWithRetryAfter(ADDRESS_COUNT),
    ...countsIn(counts, 'address'),
  });
  return [named('limitPerAddress', noticingUncounted(limiter, ADDRESS_COUNT, counts))];
}

/**
 * After authentication: requests per account. A request that failed
 * authentication never reaches it, so nobody can spend another account's
 * budget, and its RateLimit headers describe the caller's own. Every request
 * that reaches it counts, whatever its outcome (applied, replayed, refused by
 * a rule) and whether or not its client waited for the answer (contract
 * section 11): a replay costs the service as much as the request, and a
 * request whose client hung up may still have been applied.
 */
export function limitPerAccount(perMinute: number, counts: RateLimitCounts): RequestHandler[] {
  if (perMinute === 0) return [];
  const limiter = rateLimit({
    windowMs: WINDOW_MS,
    limit: perMinute,
    keyGenerator: (_req, res) => requestContext(res).account.sourceId,
    requestPropertyName: ACCOUNT_COUNT,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    handler: refuse,
    ...countsIn(counts, 'account'),
  });
  return [named('limitPerAccount', noticingUncounted(limiter, ACCOUNT_COUNT, counts))];
}

/**
 * Every request for the documents (/openapi.json, /docs and its files) per client address, whatever its answer.
 * They are open and large (the OpenAPI document is about 240 KB): one address pipelining them on a few hundred
 * connections had the service write about 900 MB a round and starved every other client, and their 200s never count
 * toward the failures limitPerAddress counts (docs/DECISIONS.md).
 */
export function limitDocumentsPerAddress(perMinute: number, counts: RateLimitCounts): RequestHandler[] {
  if (perMinute === 0) return [];
  const limiter = rateLimit({
    windowMs: WINDOW_MS,
    limit: perMinute,
    standardHeaders: false,
    legacyHeaders: false,
    requestPropertyName: DOCUMENTS_COUNT,
    handler: refuseWithRetryAfter(DOCUMENTS_COUNT),
    ...countsIn(counts, 'documents'),
  });
  return [named('limitDocumentsPerAddress', noticingUncounted(limiter, DOCUMENTS_COUNT, counts))];
}
