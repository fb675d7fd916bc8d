import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, Response } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import { TooManyRequestsError } from '../errors';
import { stateOf } from '../exchange';

/**
 * The caller's account when the body names one, else its address: the
 * socket's peer, which is what Express's req.ip is with "trust proxy" off.
 */
function callerKey(req: IncomingMessage, res: ServerResponse): string {
  const sourceId: unknown = (stateOf(res).body as { source_id?: unknown } | undefined)?.source_id;
  if (typeof sourceId === 'string' && sourceId.length > 0) return `source:${sourceId}`;
  return `address:${ipKeyGenerator(req.socket.remoteAddress ?? 'unknown')}`;
}

export type RateLimit = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** Runs after the body is read, so it can key on source_id; 0 requests a minute turns it off (undefined). */
export function rateLimitPerCaller(perMinute: number): RateLimit | undefined {
  if (perMinute === 0) return undefined;
  const limiter = rateLimit({
    windowMs: 60_000,
    limit: perMinute,
    keyGenerator: (req, res) => callerKey(req, res),
    standardHeaders: false,
    legacyHeaders: true,
    handler: (_req, _res, next) => next(new TooManyRequestsError()),
  });
  // express-rate-limit only reads headers and the socket here, and sets headers: a plain request will do.
  return (req, res) =>
    new Promise((resolve, reject) => {
      void limiter(req as Request, res as Response, (error?: unknown) => (error === undefined ? resolve() : reject(error)));
    });
}
