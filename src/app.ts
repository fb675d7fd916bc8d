import express, { type Express } from 'express';
import type { Config } from './config';
import type { Logger } from './logger';
import { errorHandler, notFound, rejectWhileShuttingDown } from './middleware/errors';
import { jsonBody } from './middleware/json-body';
import { rateLimitPerCaller } from './middleware/rate-limit';
import { requestLogger } from './middleware/request-logger';
import { bookingRouter } from './routes/bookings';
import { healthRouter } from './routes/health';
import { tokenRouter } from './routes/tokens';
import type { Store } from './store/store';

export interface AppDeps {
  config: Pick<Config, 'bodyLimitBytes' | 'rateLimitPerMinute'>;
  store: Store;
  logger: Logger;
  /** True once the process has begun to drain; readiness and operations then answer 503. */
  isShuttingDown?: () => boolean;
  now?: () => Date;
}

/** Builds the receiver from its parts. It never listens: server.ts does, and tests use supertest. */
export function createApp({ config, store, logger, isShuttingDown = () => false, now = () => new Date() }: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');

  app.use(requestLogger(logger));
  app.use(healthRouter(store, isShuttingDown));
  app.use(rejectWhileShuttingDown(isShuttingDown));

  // Every operation takes its body the same way: present, JSON, within the limit, parsed, then rate limited by caller.
  const intake = [...jsonBody(config.bodyLimitBytes), rateLimitPerCaller(config.rateLimitPerMinute)];
  app.use(tokenRouter({ store, intake, now }));
  app.use(bookingRouter({ store, intake, now }));

  app.use(notFound);
  app.use(errorHandler);
  return app;
}
