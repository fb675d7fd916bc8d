import type { Request, RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import { TooManyRequestsError } from '../errors';

/** The caller's account when the body names one, else its address. */
function callerKey(req: Request): string {
  const sourceId: unknown = (req.body as { source_id?: unknown } | undefined)?.source_id;
  if (typeof sourceId === 'string' && sourceId.length > 0) return `source:${sourceId}`;
  return `address:${ipKeyGenerator(req.ip ?? 'unknown')}`;
}

/** Placed after body parsing so it can key on source_id; 0 requests a minute turns it off. */
export function rateLimitPerCaller(perMinute: number): RequestHandler {
  if (perMinute === 0) return (_req, _res, next) => next();
  return rateLimit({
    windowMs: 60_000,
    limit: perMinute,
    keyGenerator: callerKey,
    standardHeaders: false,
    legacyHeaders: true,
    handler: (_req, _res, next) => next(new TooManyRequestsError()),
  });
}
