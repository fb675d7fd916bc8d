import type { Request, RequestHandler, Response } from 'express';
import type { Level } from 'pino';
import type { Logger } from '../logger';
import { requestContext, type RequestContext } from './request-context';

/**
 * The longest URL a log line carries: every route of the service is far shorter, and a stranger's 16 KB URL
 * would otherwise be written again on every line (the attack review grew the log by 70 MB a second).
 */
const MAX_LOGGED_URL = 256;

/** The URL as the log line carries it: cut past MAX_LOGGED_URL, saying how long it was. */
function loggedUrl(url: string): string {
  return url.length <= MAX_LOGGED_URL ? url : `${url.slice(0, MAX_LOGGED_URL)}… (${url.length} characters)`;
}

/** The pattern of the route that answered (`/:version/booking/:partnerid/:randomkey`), once a route has matched. */
export function routePattern(req: Request): string | undefined {
  return (req.route as { path?: string } | undefined)?.path;
}

function levelOf(statusCode: number, error: Error | undefined): Level {
  if (error || statusCode >= 500) return 'error';
  return statusCode >= 400 ? 'warn' : 'info';
}

/** What went wrong on a failed request's line: the error nobody foresaw, or else the status itself. */
function failureOf(statusCode: number, context: RequestContext, streamError: Error | undefined): Error | undefined {
  const error = streamError ?? context.unexpectedError;
  if (error || statusCode < 500) return error;
  return new Error(`failed with status code ${statusCode}`);
}

/**
 * One JSON line per request, written with pino when the answer is finished (or the connection closed before it
 * was): the request (id, method, URL), the status, an error and its stack on a failure, the duration in ms, the
 * route pattern once a route matched. Level by status: 2xx info, 4xx warn, 5xx or an error: error. Bodies are
 * never logged. The request and the URL are taken as the request arrives, before any router strips a prefix.
 */
export function logRequests(logger: Logger): RequestHandler {
  return function logRequest(req, res, next) {
    const context = requestContext(res);
    const { method } = req;
    const url = loggedUrl(req.url);
    const written = (streamError?: Error) => {
      res.off('finish', written);
      res.off('close', written);
      res.off('error', written);
      writeLine(logger, req, res, context, method, url, streamError);
    };
    res.on('finish', written);
    res.on('close', written);
    res.on('error', written);
    next();
  };
}

function writeLine(logger: Logger, req: Request, res: Response, context: RequestContext, method: string, url: string, streamError: Error | undefined): void {
  const { statusCode } = res;
  const failure = failureOf(statusCode, context, streamError);
  const level = levelOf(statusCode, streamError);
  if (!logger.isLevelEnabled(level)) return;
  const route = routePattern(req);
  const responseTime = Math.round(performance.now() - context.startedAt);
  const request = { id: context.requestId, method, url };
  // The fields in the order the lines have always had: req, res, err, responseTime, route.
  const line = failure ? { req: request, res: { statusCode }, err: failure, responseTime, route } : { req: request, res: { statusCode }, responseTime, route };
  logger[level](line, failure ? 'request failed' : 'request completed');
}
