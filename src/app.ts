import express, { type Express } from 'express';
import type { Config } from './process/config';
import { ChangeFeed } from './delivery/feed';
import { ChangeSignal } from './delivery/change-signal';
import { EventLog } from './process/event-log';
import type { Logger } from './process/logger';
import { Metrics } from './process/metrics';
import { errorHandler, notFound } from './middleware/errors';
import { refuseWhileDraining } from './middleware/draining';
import { readJsonBody } from './middleware/json-body';
import { observeRequests } from './middleware/observe';
import { limitDocumentsPerAddress, limitPerAccount, limitPerAddress, type RateLimitCounts } from './middleware/rate-limit';
import { beginRequestContext } from './middleware/request-context';
import { logRequests } from './middleware/request-logger';
import { verifySignature } from './middleware/signature';
import { findAccount } from './middleware/find-account';
import { operationRoutes } from './operations/catalogue';
import { adminRouter } from './routes/admin';
import { docsRouter } from './routes/docs';
import { healthRouter } from './routes/health';
import { metricsRouter } from './routes/metrics';
import type { OperationSteps } from './routes/lifecycle';
import { operationRouter } from './routes/operation';
import { openApiRouter } from './routes/openapi';
import type { Store } from './store/store';
import type { DeliveryControl } from './delivery/engine';
import { createSignatureCheck } from './middleware/webhooks';

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
  /** True from the stop's signal on, before the drain (SHUTDOWN_DELAY_MS): readiness answers 503. Default: isShuttingDown. */
  isStopping?: () => boolean;
  /** Aborted when the drain begins (as isShuttingDown turns true): feed requests that wait for changes answer at once. */
  drainStarted?: AbortSignal;
  now?: () => Date;
  /** Webhooks out and the NATS relay (src/delivery/engine.ts), for the admin API; unset when there is nothing to hand on. */
  delivery?: DeliveryControl;
}

/**
 * Builds the receiver from its parts and returns the Express app itself. It
 * never listens: server.ts serves it through createHttpServer, and so do the tests.
 */
export function createApp(deps: AppDeps): Express {
  const { config, store, logger, redis, metrics = new Metrics(), isShuttingDown = () => false, now = () => new Date() } = deps;
  const isStopping = deps.isStopping ?? isShuttingDown;
  const stopWaiting = deps.drainStarted ?? new AbortController().signal;
  const events = new EventLog(config.eventLogSize);
  const counts: RateLimitCounts = { logger, metrics, redis };
  // One count per client address for every route that can fail authentication: operations and the admin API.
  const perAddress = limitPerAddress(config.rateLimitPerAddressPerMinute, counts);
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', config.trustProxy);

  // Every request: its context (middleware/request-context.ts), then one log line and its metrics when it finishes.
  app.use(beginRequestContext, logRequests(logger), observeRequests(metrics, events));

  // The operations: the steps their chains share, made once. routes/lifecycle.ts (chainOf) gives each kind's whole
  // chain: operation name, receive, schema, authenticate, what follows it, and applyInOneUnit, which applies the
  // service once in one unit of work and keeps the answer's bytes under the request's keys in that same unit (the
  // feed, without a body, its page instead).
  const tolerance = config.signatureToleranceSeconds;
  const intake = [
    refuseWhileDraining(isShuttingDown), // 503
    ...perAddress, // 429
  ];
  // The feed's waiting requests are woken by one signal; partners' and ops' waits are bounded apart (admin.ts).
  const changeSignal = new ChangeSignal(store);
  const operations: OperationSteps = {
    store,
    now,
    intake,
    receive: [
      ...intake,
      readJsonBody(config.bodyLimitBytes), // 415, 413, 400
      findAccount(store),
      verifySignature(tolerance, config.webhook && createSignatureCheck(config.webhook.secrets, tolerance)), // 401
    ],
    afterAuthentication: [
      ...limitPerAccount(config.rateLimitPerMinute, counts), // 429
    ],
    allowKeylessStatusChange: config.allowKeylessStatusChange,
    quotas: config.quotas,
    feed: new ChangeFeed(store, changeSignal, config.maxWaitingFeedsPerAccount),
    stopWaiting,
  };
  // One router per path of the catalogue (src/operations/catalogue.ts), in its order, POST /v1/events among them (any token
  // notification, by read_event).
  for (const route of operationRoutes()) app.use(operationRouter(route, operations));

  // Health, documents and the admin API (metrics are on a listener of their own: createMetricsApp).
  app.use(healthRouter(store, isStopping));
  // Every request for the documents counts, whatever its method or answer: they are open and large (docs/DECISIONS.md).
  const documentsLimit = limitDocumentsPerAddress(config.rateLimitDocumentsPerAddressPerMinute, counts);
  if (documentsLimit.length > 0) app.use(['/openapi.json', '/docs'], ...documentsLimit);
  app.use(openApiRouter());
  app.use(docsRouter());
  if (config.adminToken) {
    const feed = new ChangeFeed(store, changeSignal, config.maxWaitingFeedsPerAccount);
    const admin = {
      store,
      events,
      adminToken: config.adminToken,
      limits: perAddress,
      feed,
      stopWaiting,
      delivery: deps.delivery,
      bodyLimitBytes: config.bodyLimitBytes,
    };
    app.use(adminRouter(admin));
  }

  app.use(notFound);
  app.use(errorHandler);
  return app;
}

/**
 * The metrics listener's app: GET /metrics and nothing else (contract section 8). Apart from the partners' port,
 * so that a stranger's scrapes cannot slow an account's requests, and it can stay on the internal network.
 */
export function createMetricsApp(metrics: Metrics, clock?: () => number): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(beginRequestContext, metricsRouter(metrics, clock), notFound);
  app.use(errorHandler);
  return app;
}
