import type { RequestHandler } from 'express';
import { rateLimit, type AugmentedRequest } from 'express-rate-limit';
import { TooManyRequestsError } from '../errors';
import { authenticatedAccount } from './authenticate';

const WINDOW_MS = 60_000;

/** express-rate-limit's middleware is called `middleware`: named for what it limits, so a route's chain reads. */
function named(name: string, handler: RequestHandler): RequestHandler {
  return Object.defineProperty(handler, 'name', { value: name });
}

const refuse: RequestHandler = (_req, _res, next) => next(new TooManyRequestsError());

/**
 * Before the body is read: failed requests per client address (Express's
 * req.ip, so "trust proxy" decides which address). Answers below 400 never
 * count, so legitimate traffic behind one proxy is not throttled; an address
 * over the limit is refused everything until its window passes. It says
 * nothing of its count but Retry-After: it is not an account's budget.
 */
export function limitPerAddress(perMinute: number): RequestHandler[] {
  if (perMinute === 0) return [];
  const limiter = rateLimit({
    windowMs: WINDOW_MS,
    limit: perMinute,
    skipSuccessfulRequests: true,
    standardHeaders: false,
    legacyHeaders: false,
    handler: (req, res, next) => {
      // The library's own type for the request it has counted (requestPropertyName defaults to rateLimit).
      const resetMs = (req as AugmentedRequest).rateLimit?.resetTime?.getTime() ?? Date.now() + WINDOW_MS;
      res.setHeader('Retry-After', String(Math.max(1, Math.ceil((resetMs - Date.now()) / 1000))));
      refuse(req, res, next);
    },
  });
  return [named('limitPerAddress', limiter)];
}

/**
 * After authentication: requests per account. A request that failed
 * authentication never reaches it, so nobody can spend another account's
 * budget, and its RateLimit headers describe the caller's own.
 */
export function limitPerAccount(perMinute: number): RequestHandler[] {
  if (perMinute === 0) return [];
  const limiter = rateLimit({
    windowMs: WINDOW_MS,
    limit: perMinute,
    keyGenerator: (_req, res) => `account:${authenticatedAccount(res).sourceId}`,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    handler: refuse,
  });
  return [named('limitPerAccount', limiter)];
}
