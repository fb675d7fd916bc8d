import express, { type Express } from 'express';
import type { Config } from './config';
import { EventLog } from './event-log';
import type { Logger } from './logger';
import { Metrics } from './metrics';
import { errorHandler, notFound, rejectWhileShuttingDown } from './middleware/errors';
import { securityHeaders } from './middleware/security-headers';
import { jsonBody } from './middleware/json-body';
import { observeRequests } from './middleware/observe';
import { rateLimitPerCaller } from './middleware/rate-limit';
import { requestLogger } from './middleware/request-logger';
import { adminRouter } from './routes/admin';
import { bookingRouter } from './routes/bookings';
import { docsRouter } from './routes/docs';
import { healthRouter } from './routes/health';
import { metricsRouter } from './routes/metrics';
import { openApiRouter } from './routes/openapi';
import { replayWebhookDelivery } from './routes/respond';
import { tokenRouter } from './routes/tokens';
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

/** Builds the receiver from its parts. It never listens: server.ts does, and tests use supertest. */
export function createApp({
  config,
  store,
  logger,
  metrics = new Metrics(),
  isShuttingDown = () => false,
  now = () => new Date(),
}: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  const events = new EventLog(config.eventLogSize ?? DEFAULT_EVENT_LOG_SIZE);

  app.use(requestLogger(logger));
  app.use(securityHeaders());
  app.use(observeRequests(metrics, events));
  // Operations first: they are the traffic, and each router in front of them costs every request a match.
  // Every operation takes its body the same way: refused while draining; present, JSON, within the limit, signed
  // when signatures are on, parsed, rate limited by caller; a repeated signed delivery is answered as the first time.
  const signature = config.webhook && createSignatureCheck(config.webhook.secrets, config.webhook.toleranceSeconds);
  const intake = [
    rejectWhileShuttingDown(isShuttingDown),
    jsonBody(config.bodyLimitBytes, signature),
    rateLimitPerCaller(config.rateLimitPerMinute),
    ...(signature ? [replayWebhookDelivery(store)] : []),
  ];
  app.use(tokenRouter({ store, intake, now }));
  app.use(bookingRouter({ store, intake, now }));
  app.use(healthRouter(store, isShuttingDown));
  app.use(metricsRouter(metrics));
  app.use(openApiRouter());
  app.use(docsRouter());
  if (config.adminToken) app.use(adminRouter({ store, events, adminToken: config.adminToken }));

  app.use(notFound);
  app.use(errorHandler);
  return app;
}
