import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../logger';

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Honours a sane incoming X-Request-Id, otherwise makes one; either way it is echoed back. */
function requestId(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming) ? incoming : randomUUID();
  res.setHeader('X-Request-Id', id);
  return id;
}

/** The pattern of the route that answered (`/:version/booking/:partnerid/:randomkey`), once routing has matched. */
export function routePattern(req: IncomingMessage): string | undefined {
  return ((req as Request).route as { path?: string } | undefined)?.path;
}

/**
 * One JSON line per request: id, method, route, status and duration. Bodies are never logged.
 * Tuned for the hot path (see docs/BENCHMARKS.md): the route goes into the line itself rather than a
 * child logger per request, and the serializers get the raw request instead of a full copy of it.
 */
export function requestLogger(logger: Logger) {
  const withRoute = (req: IncomingMessage, fields: object) => {
    const route = routePattern(req);
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
    customSuccessObject: (req, _res, fields) => withRoute(req, fields),
    customErrorObject: (req, _res, _error, fields) => withRoute(req, fields),
    serializers: {
      req: (req: IncomingMessage & { id: string }) => ({ id: req.id, method: req.method, url: req.url }),
      res: (res: ServerResponse) => ({ statusCode: res.statusCode }),
    },
    customSuccessMessage: () => 'request completed',
    customErrorMessage: () => 'request failed',
  });
}
