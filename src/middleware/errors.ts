import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { MethodNotAllowedError, NotFoundError, toErrorResponse } from '../errors';
import { requestContext } from './request-context';
import { sendJson, sendNoContent } from './send-json';

/** Any path no router claimed. */
export const notFound: RequestHandler = () => {
  throw new NotFoundError();
};

/** Mounted after a path's handlers: another method is a 405 naming the allowed ones; OPTIONS lists them. */
export function methodNotAllowed(allowed: readonly string[]): RequestHandler {
  return function methodNotAllowed(req, res) {
    if (req.method === 'OPTIONS') {
      sendNoContent(res, { Allow: allowed.join(', ') });
      return;
    }
    throw new MethodNotAllowedError(allowed);
  };
}

/** The one place where errors become HTTP: the envelope, never HTML, never a stack. */
export function sendError(res: Response, error: unknown): void {
  const response = toErrorResponse(error);
  const context = requestContext(res);
  // The request's log line carries an unexpected error, with its stack; the client sees only the envelope.
  if (response.unexpected) context.unexpectedError = error instanceof Error ? error : new Error(String(error));
  context.errorReason = response.reason;
  sendJson(res, response.status, JSON.stringify(response.body), response.headers);
}

export const errorHandler: ErrorRequestHandler = (error: unknown, _req, res, next) => {
  if (res.headersSent) return next(error);
  sendError(res, error);
};
