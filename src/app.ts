import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import type { Config } from './config';
import { EventLog } from './event-log';
import { commonHeaders, startRequestState } from './exchange';
import type { Logger } from './logger';
import { Metrics } from './metrics';
import { errorHandler, methodNotAllowed, notFound } from './middleware/errors';
import { observeRequests } from './middleware/observe';
import { rateLimitPerCaller } from './middleware/rate-limit';
import { requestLogger } from './middleware/request-logger';
import { adminRouter } from './routes/admin';
import { bookingRoutes } from './routes/bookings';
import { docsRouter } from './routes/docs';
import { healthRouter } from './routes/health';
import { metricsRouter } from './routes/metrics';
import { openApiRouter } from './routes/openapi';
import { operationDispatcher } from './routes/operations';
import { tokenRoutes } from './routes/tokens';
import type { Store } from './store/store';
import { createSignatureCheck } from './webhooks';

export interface AppDeps {
  config: Pick<Config, 'bodyLimitBytes' | 'rateLimitPerMinute'> & Partial<Pick<Config, 'adminToken' | 'eventLogSize' | 'webhook'>>;
  store: Store;
  logger: Logger;
  /** Default: a registry of the app's own, without process metrics. */
  metrics?: Metrics;
  /** True once the process has begun to drain; readiness and operations then answer 503. */
  isShuttingDown?: () => boolean;
  now?: () => Date;
}

const DEFAULT_EVENT_LOG_SIZE = 1000;

/** A Node request listener: what server.ts hands to http.createServer and tests hand to supertest. */
export type App = (req: IncomingMessage, res: ServerResponse) => void;

/** Builds the receiver from its parts. It never listens: server.ts does, and tests use supertest. */
export function createApp({
  config,
  store,
  logger,
  metrics = new Metrics(),
  isShuttingDown = () => false,
  now = () => new Date(),
}: AppDeps): App {
  const events = new EventLog(config.eventLogSize ?? DEFAULT_EVENT_LOG_SIZE);
  const logRequest = requestLogger(logger);
  const observe = observeRequests(metrics, events);

  const operations = [...tokenRoutes({ store, now }), ...bookingRoutes({ store, now })];
  const serveOperation = operationDispatcher(operations, {
    store,
    bodyLimitBytes: config.bodyLimitBytes,
    signature: config.webhook && createSignatureCheck(config.webhook.secrets, config.webhook.toleranceSeconds),
    rateLimit: rateLimitPerCaller(config.rateLimitPerMinute),
    isShuttingDown,
  });

  // Everything else goes through Express: health, metrics, documents, admin, and the operations' other methods.
  const web = express();
  web.disable('x-powered-by');
  web.disable('etag');
  web.use(commonHeaders);
  for (const route of operations) web.all(route.path, methodNotAllowed(route.methods));
  web.use(healthRouter(store, isShuttingDown));
  web.use(metricsRouter(metrics));
  web.use(openApiRouter());
  web.use(docsRouter());
  if (config.adminToken) web.use(adminRouter({ store, events, adminToken: config.adminToken }));
  web.use(notFound);
  web.use(errorHandler);

  return (req, res) => {
    startRequestState(res);
    logRequest(req, res);
    observe(req, res);
    if (!serveOperation(req, res)) web(req, res);
  };
}
