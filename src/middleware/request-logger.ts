import type { Request, Response } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../logger';
import { requestContext } from './request-context';

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

/**
 * One JSON line per request: id, method, route, status and duration. Bodies are never logged.
 * Tuned for the hot path (see docs/BENCHMARKS.md): the route goes into the line itself rather than a
 * child logger per request, and the serializers get the raw request instead of a full copy of it.
 */
export function requestLogger(logger: Logger) {
  const withRoute = (req: Request, fields: object) => {
    const route = routePattern(req);
    return route ? { ...fields, route } : fields;
  };
  return pinoHttp<Request, Response>({
    logger,
    genReqId: (_req, res) => requestContext(res as Response).requestId,
    wrapSerializers: false,
    customLogLevel: (_req, res, error) => {
      if (error || res.statusCode >= 500) return 'error';
      return res.statusCode >= 400 ? 'warn' : 'info';
    },
    customSuccessObject: (req, _res, fields) => withRoute(req, fields),
    customErrorObject: (req, res, _error, fields) => {
      const { unexpectedError } = requestContext(res);
      return withRoute(req, unexpectedError ? { ...fields, err: unexpectedError } : fields);
    },
    serializers: {
      req: (req: Request) => ({ id: req.id, method: req.method, url: loggedUrl(req.url) }),
      res: (res: Response) => ({ statusCode: res.statusCode }),
    },
    customSuccessMessage: () => 'request completed',
    customErrorMessage: () => 'request failed',
  });
}
