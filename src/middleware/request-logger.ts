import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request } from 'express';
import { pinoHttp } from 'pino-http';
import { stateOf } from '../exchange';
import type { Logger } from '../logger';

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Honours a sane incoming X-Request-Id, otherwise makes one; every answer echoes it (exchange.ts). */
function requestId(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming) ? incoming : randomUUID();
}

/** The pattern of the route that answered (`/:version/booking/:partnerid/:randomkey`), once a route has matched. */
export function routePattern(req: IncomingMessage, res: ServerResponse): string | undefined {
  return ((req as Request).route as { path?: string } | undefined)?.path ?? stateOf(res).route;
}

/**
 * One JSON line per request: id, method, route, status and duration. Bodies are never logged.
 * Tuned for the hot path (see docs/BENCHMARKS.md): the route goes into the line itself rather than a
 * child logger per request, and the serializers get the raw request instead of a full copy of it.
 */
export function requestLogger(logger: Logger) {
  const withRoute = (req: IncomingMessage, res: ServerResponse, fields: object) => {
    const route = routePattern(req, res);
    return route ? { ...fields, route } : fields;
  };
  return pinoHttp({
    logger,
    genReqId: requestId,
    wrapSerializers: false,
    customLogLevel: (_req, res, error) => {
      if (error || res.statusCode >= 500) return 'error';
      return res.statusCode >= 400 ? 'warn' : 'info';
    },
    customSuccessObject: (req, res, fields) => withRoute(req, res, fields),
    customErrorObject: (req, res, _error, fields) => withRoute(req, res, fields),
    serializers: {
      req: (req: IncomingMessage & { id: string }) => ({ id: req.id, method: req.method, url: req.url }),
      res: (res: ServerResponse) => ({ statusCode: res.statusCode }),
    },
    customSuccessMessage: () => 'request completed',
    customErrorMessage: () => 'request failed',
  });
}
