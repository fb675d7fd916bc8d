import type { Request, RequestHandler, Response } from 'express';
import type { Level } from 'pino';
import type { Logger } from '../process/logger';
import { redactedUrl } from '../process/redaction';
import { requestContext, type RequestContext } from './request-context';

/**
 * The longest URL a log line carries: every route of the service is far shorter, and a stranger's 16 KB URL
 * would otherwise be written again on every line (the attack review grew the log by 70 MB a second).
 */
const MAX_LOGGED_URL = 256;

/** The URL as the log line carries it: secret-like query values redacted, cut past MAX_LOGGED_URL, saying how long it was. */
function loggedUrl(rawUrl: string): string {
  const url = redactedUrl(rawUrl);
  return url.length <= MAX_LOGGED_URL ? url : `${url.slice(0, MAX_LOGGED_URL)}… (${url.length} characters)`;
}

/** The pattern of the route that answered (`/:version/booking/:partnerid/:randomkey`), once a route has matched. */
export function routePattern(req: Request): string | undefined {
  return (req.route as { path?: string } | undefined)?.path;
}

/**
 * The reason of a drain's 503 (errors.ts). A drain is part of every deploy and a 4xx is the caller's to fix: answers
 * the service gives by design are logged below error level (contract section 8).
 */
const DRAIN_REASON = 'shutting_down';

function levelOf(statusCode: number, context: RequestContext, streamError: Error | undefined): Level {
  if (streamError || context.unexpectedError) return 'error';
  if (statusCode >= 500) return context.errorReason === DRAIN_REASON ? 'info' : 'error';
  return statusCode >= 400 ? 'warn' : 'info';
}

/**
 * One JSON line per request, written with pino when the answer is finished (or the connection closed before it
 * was): the request (id, method, URL), the status, on a refusal its reason code and the account once known, an
 * unforeseen error with its stack, the duration in ms, the route pattern once a route matched. Level: 2xx and a
 * drain's 503 info, 4xx warn, any other 5xx or an unforeseen error: error. Bodies are never logged. The request
 * and the URL are taken as the request arrives, before any router strips a prefix.
 */
export function logRequests(logger: Logger): RequestHandler {
  // Without the logger's redaction (pino's documented child option): these lines are built here from fields that never
  // hold a key (the URL's secret-like query values are redacted by process/redaction.ts), and matching the logger's paths against each
  // line was about 8% of a withdrawal's instructions (docs/BENCHMARKS.md, "Counting instructions").
  const lines = logger.child({}, { redact: [] });
  return function logRequest(req, res, next) {
    const context = requestContext(res);
    const { method } = req;
    const url = loggedUrl(req.url);
    const written = (streamError?: Error) => {
      res.off('finish', written);
      res.off('close', written);
      res.off('error', written);
      writeLine(lines, req, res, context, method, url, streamError);
    };
    res.on('finish', written);
    res.on('close', written);
    res.on('error', written);
    next();
  };
}

function writeLine(
  logger: Logger,
  req: Request,
  res: Response,
  context: RequestContext,
  method: string,
  url: string,
  streamError: Error | undefined,
): void {
  const { statusCode } = res;
  const level = levelOf(statusCode, context, streamError);
  if (!logger.isLevelEnabled(level)) return;
  const route = routePattern(req);
  const responseTime = Math.round(performance.now() - context.startedAt);
  const request = { id: context.requestId, method, url };
  const err = streamError ?? context.unexpectedError;
  if (statusCode < 400 && !err) {
    logger[level]({ req: request, res: { statusCode }, responseTime, route }, 'request completed');
    return;
  }
  // A refusal says why: its reason code (errors.ts) and, once the request authenticated, whose it was. Only a
  // failure nobody foresaw carries an err, with its stack.
  const sourceId = context.accountIfAuthenticated?.sourceId;
  const line = { req: request, res: { statusCode }, err, reason: context.errorReason, source_id: sourceId, responseTime, route };
  logger[level](line, 'request failed');
}
