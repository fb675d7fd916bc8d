import type { RequestHandler } from 'express';
import { ServiceUnavailableError } from '../errors';
import type { SignatureCheck } from '../webhooks';

/** Once the process drains, operations answer 503 and the connection closes, so the client retries elsewhere. */
export function refuseWhileDraining(isShuttingDown: () => boolean): RequestHandler {
  return function refuseWhileDraining(_req, res, next) {
    if (!isShuttingDown()) return next();
    res.setHeader('Connection', 'close');
    throw new ServiceUnavailableError('shutting_down');
  };
}

/** With a signing secret configured, the raw body's Standard Webhooks signature must verify (401 otherwise). */
export function verifySignature(signature: SignatureCheck | undefined): RequestHandler {
  return function verifySignature(req, res, next) {
    if (signature && res.locals.rawBody) res.locals.webhookId = signature.verify(res.locals.rawBody, req.headers);
    next();
  };
}
