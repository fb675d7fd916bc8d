import type { RequestHandler } from 'express';
import { ServiceUnavailableError } from '../errors';

/** Once the process drains, operations answer 503 and the connection closes, so the client retries elsewhere. */
export function refuseWhileDraining(isShuttingDown: () => boolean): RequestHandler {
  return function refuseWhileDraining(_req, res, next) {
    if (!isShuttingDown()) return next();
    res.setHeader('Connection', 'close');
    throw new ServiceUnavailableError('shutting_down');
  };
}
