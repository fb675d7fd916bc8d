import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Config } from './config';
import { EventLog } from './event-log';
import type { Logger } from './logger';
import { Metrics } from './metrics';
import { errorHandler, notFound, rejectWhileShuttingDown } from './middleware/errors';
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
  // Headers that fit an API: no sniffing, no framing, a strict CSP; and answers carry account data, so nobody caches them.
  app.use(helmet());
  app.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });
  app.use(observeRequests(metrics, events));
  app.use(healthRouter(store, isShuttingDown));
  app.use(metricsRouter(metrics));
  app.use(openApiRouter());
  app.use(docsRouter());
  if (config.adminToken) app.use(adminRouter({ store, events, adminToken: config.adminToken }));
  app.use(rejectWhileShuttingDown(isShuttingDown));

  // Every operation takes its body the same way: present, JSON, within the limit, signed when signatures are on,
  // parsed, rate limited by caller; a repeated signed delivery is answered as it was the first time.
  const signature = config.webhook && createSignatureCheck(config.webhook.secrets, config.webhook.toleranceSeconds);
  const intake = [
    ...jsonBody(config.bodyLimitBytes, signature),
    rateLimitPerCaller(config.rateLimitPerMinute),
    ...(signature ? [replayWebhookDelivery(store)] : []),
  ];
  app.use(tokenRouter({ store, intake, now }));
  app.use(bookingRouter({ store, intake, now }));

  app.use(notFound);
  app.use(errorHandler);
  return app;
}
