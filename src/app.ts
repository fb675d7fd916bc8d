import express, { type Express } from 'express';
import type { Config } from './config';
import { EventLog } from './event-log';
import './locals';
import type { Logger } from './logger';
import { Metrics } from './metrics';
import { errorHandler, notFound } from './middleware/errors';
import { refuseWhileDraining, verifySignature } from './middleware/intake';
import { jsonBody } from './middleware/json-body';
import { observeRequests } from './middleware/observe';
import { limitPerAccount, limitPerAddress, type RateLimitCounts } from './middleware/rate-limit';
import { requestLogger } from './middleware/request-logger';
import { adminRouter } from './routes/admin';
import { docsRouter } from './routes/docs';
import { eventsRouter } from './routes/events';
import { healthRouter } from './routes/health';
import { metricsRouter } from './routes/metrics';
import { bookingRouter } from './routes/booking-operations';
import { availableDateRouter } from './routes/available-date';
import { createTokenRouter } from './routes/create-token';
import { expiryDateRouter } from './routes/expiry-date';
import { loadScheduleRouter } from './routes/load-schedule';
import { loadedRouter } from './routes/loaded';
import { unloadedRouter } from './routes/unloaded';
import type { OperationRouterDeps } from './routes/operation-deps';
import { openApiRouter } from './routes/openapi';
import { statusChangeRouter } from './routes/status-change';
import { withdrawRouter } from './routes/withdraw';
import type { Store } from './store/store';
import { createSignatureCheck } from './webhooks';

export interface AppDeps {
  /** The settings loadConfig gives, defaults included: createApp adds none of its own. */
  config: Config;
  store: Store;
  logger: Logger;
  /** Rate-limit counts shared by every instance; unset: this instance counts alone. */
  redis?: RateLimitCounts['redis'];
  /** Default: a registry of the app's own, without process metrics. */
  metrics?: Metrics;
  /** True once the process has begun to drain; readiness and operations then answer 503. */
  isShuttingDown?: () => boolean;
  now?: () => Date;
}

/**
 * Builds the receiver from its parts and returns the Express app itself. It
 * never listens: server.ts serves it through createHttpServer, and so do the tests.
 */
export function createApp(deps: AppDeps): Express {
  const { config, store, logger, redis, metrics = new Metrics(), isShuttingDown = () => false, now = () => new Date() } = deps;
  const events = new EventLog(config.eventLogSize);
  const counts: RateLimitCounts = { logger, metrics, redis };
  // One count per client address for every route that can fail authentication: operations and the admin API.
  const perAddress = limitPerAddress(config.rateLimitPerAddressPerMinute, counts);
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', config.trustProxy);

  // Every request: one log line and its metrics when it finishes.
  app.use(requestLogger(logger), observeRequests(metrics, events));

  // The operations. Each router's chain is: operation name, intake, schema, authenticate, what follows it, and
  // respond: the service in one unit of work, with a signed request's delivery record (a repeat is answered there).
  const tolerance = config.signatureToleranceSeconds;
  const operations: OperationRouterDeps = {
    store,
    now,
    intake: [
      refuseWhileDraining(isShuttingDown), // 503
      ...perAddress, // 429
      jsonBody(config.bodyLimitBytes), // 415, 413, 400
      verifySignature(store, tolerance, config.webhook && createSignatureCheck(config.webhook.secrets, tolerance)), // 401
    ],
    afterAuthentication: [
      ...limitPerAccount(config.rateLimitPerMinute, counts), // 429
    ],
    allowKeylessStatusChange: config.allowKeylessStatusChange,
    quotas: config.quotas,
  };
  app.use(statusChangeRouter(operations)); // POST /v1/tokens/status-change
  app.use(withdrawRouter(operations)); // GET, POST /v1/tokens/withdraw
  app.use(loadedRouter(operations)); // POST /v1/tokens/loaded
  app.use(unloadedRouter(operations)); // POST /v1/tokens/unloaded
  app.use(loadScheduleRouter(operations)); // POST /v1/tokens/load-schedule
  app.use(expiryDateRouter(operations)); // POST /v1/tokens/expiry-date
  app.use(availableDateRouter(operations)); // POST /v1/tokens/available-date
  app.use(eventsRouter(operations)); // POST /v1/events: any of the above, by read_event
  app.use(createTokenRouter(operations)); // POST /:version/token/:partnerid/:randomkey
  app.use(bookingRouter(operations)); // POST, PATCH, DELETE /:version/booking/:partnerid/:randomkey

  // Health, metrics, documents and the admin API.
  app.use(healthRouter(store, isShuttingDown));
  app.use(metricsRouter(metrics));
  app.use(openApiRouter());
  app.use(docsRouter());
  if (config.adminToken) app.use(adminRouter({ store, events, adminToken: config.adminToken, limits: perAddress }));

  app.use(notFound);
  app.use(errorHandler);
  return app;
}
