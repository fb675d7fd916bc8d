import type { ErrorRequestHandler, RequestHandler } from 'express';
import { MethodNotAllowedError, NotFoundError, ServiceUnavailableError, toErrorResponse } from '../errors';

/** Any path no router claimed. */
export const notFound: RequestHandler = () => {
  throw new NotFoundError();
};

/** Mounted after a path's handlers: another method is a 405 naming the allowed ones; OPTIONS lists them. */
export function methodNotAllowed(allowed: readonly string[]): RequestHandler {
  return (req, res) => {
    if (req.method === 'OPTIONS') {
      res.set('Allow', allowed.join(', ')).status(204).end();
      return;
    }
    throw new MethodNotAllowedError(allowed);
  };
}

/** While draining, operations answer 503 and the connection is closed after the answer. */
export function rejectWhileShuttingDown(isShuttingDown: () => boolean): RequestHandler {
  return (_req, res, next) => {
    if (!isShuttingDown()) return next();
    res.set('Connection', 'close');
    throw new ServiceUnavailableError('shutting_down');
  };
}

/** The one place where errors become HTTP: the envelope, never HTML, never a stack. */
export const errorHandler: ErrorRequestHandler = (error: unknown, _req, res, next) => {
  if (res.headersSent) return next(error);
  const response = toErrorResponse(error);
  // pino-http logs res.err, with its stack, on the request's log line; the client sees only the envelope.
  if (response.unexpected) (res as { err?: unknown }).err = error;
  res.locals.errorReason = response.reason;
  res.status(response.status).set(response.headers).json(response.body);
};
