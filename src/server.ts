// First: with OTEL_EXPORTER_OTLP_ENDPOINT set, the instrumentations must patch http, express and pg before they load.
import { tracing } from './process/tracing';
import type { AddressInfo } from 'node:net';
import { createApp, createMetricsApp } from './app';
import { loadConfig, loadEnvFile, type DatabaseConfig } from './process/config';
import { createHttpServer } from './process/http-server';
import { createLogger, exitOnceWritten, logDestination, type LogDestination, type Logger } from './process/logger';
import { Metrics } from './process/metrics';
import { connectRedis } from './process/redis';
import {
  DEMO_SEED_FILE,
  readSeedFileApart,
  incomingSigners,
  refuseEndpointsAgainstSettings,
  refusePublishedKeysInProduction,
  SeedFileError,
  seedFileToServe,
} from './seed/file';
import { createDrain } from './process/shutdown';
import { DatabaseStartError, exitForStartFailure, startProblemsOf } from './process/start-failure';
import { MemoryStore } from './store/memory-store';
import { PgStore } from './store/postgres/pg-store';
import { DeliveryStartError, DeliveryThread } from './delivery/delivery-thread';
import type { EndpointConfig } from './delivery/endpoints';
import type { Config } from './process/config';

const DAY_MS = 24 * 60 * 60 * 1000;

/** The database must answer at start: failing fast lets the orchestrator restart the service once it does. */
async function openDatabase(database: DatabaseConfig, changeRetentionMs: number, logger: Logger, metrics: Metrics): Promise<PgStore> {
  try {
    const store = await PgStore.open({
      connectionString: database.url,
      statementTimeoutMs: database.statementTimeoutMs,
      poolSize: database.poolSize,
      connectTimeoutMs: database.connectTimeoutMs,
      changeRetentionMs,
      logger,
      observeBatch: (units) => metrics.observeBatch(units),
      tracing: tracing?.store,
      pooler: database.pooler,
      directConnectionString: database.directUrl,
      migrate: database.migrateOnStart,
    });
    metrics.watchStoreConnections(() => store.connections());
    return store;
  } catch (error) {
    throw new DatabaseStartError(error);
  }
}

/**
 * Webhooks out and the NATS relay (contract sections 13.3 and 13.4), once the store holds the seed: only when the
 * seed lists endpoints or NATS_URL is set. They run on a thread of their own at the lowest priority
 * (delivery/delivery-thread.ts), with their positions on a pool of their own on PostgreSQL (straight to the database
 * when a pooler is in front and DATABASE_DIRECT_URL is set) or in that thread beside the memory store. A fault that
 * ends the thread ends the service, as one in its engine would on this thread: the orchestrator restarts it, and on
 * PostgreSQL delivery resumes from its positions.
 */
async function startDelivery(
  config: Config,
  store: MemoryStore | PgStore,
  endpoints: readonly EndpointConfig[],
  logger: Logger,
  metrics: Metrics,
  destination: LogDestination,
): Promise<DeliveryThread | undefined> {
  if (endpoints.length === 0 && !config.nats) return undefined;
  try {
    return await DeliveryThread.start({
      endpoints,
      store,
      metrics,
      log: (line) => destination.write(line),
      onFailure: (error) => {
        logger.fatal({ err: error }, 'the delivery thread failed: nothing is handed on any more; stopping');
        exitOnceWritten(destination, 1);
      },
    });
  } catch (error) {
    throw error instanceof DeliveryStartError ? new DatabaseStartError(error) : error;
  }
}

async function main(): Promise<void> {
  loadEnvFile();
  const config = loadConfig(process.env);
  const destination = logDestination();
  const logger = createLogger(config.logLevel, destination, config.instanceId, tracing?.logFields);
  const seedFile = seedFileToServe(config.seedFile, config.production);
  const seed = await readSeedFileApart(seedFile);
  refusePublishedKeysInProduction(seed, config.seedFile, config.production);
  refuseEndpointsAgainstSettings(seed.endpoints, seedFile, {
    production: config.production,
    allowHttp: config.delivery.allowHttp,
    incomingSigners: incomingSigners(seed.accounts, config),
  });
  const metrics = new Metrics({ processMetrics: true });
  const changeRetentionMs = config.changes.retentionDays * DAY_MS;
  const store = config.database
    ? await openDatabase(config.database, changeRetentionMs, logger, metrics)
    : new MemoryStore({ logger, changeRetentionMs, changesPerAccount: config.changes.memoryPerAccount });
  await store.loadSeed(seed);
  if (seedFile === DEMO_SEED_FILE) logger.warn({ seedFile }, 'serving the demo seed: its keys are public, never use it for real accounts');
  if (!config.database) logger.warn('memory store: nothing survives a restart; set DATABASE_URL for durable state');

  const delivery = await startDelivery(config, store, seed.endpoints, logger, metrics, destination);

  const drain = createDrain(store, logger, config.shutdownTimeoutMs, config.shutdownDelayMs, delivery);
  const redis = config.redis && connectRedis(config.redis.url, logger, metrics);
  const sharedCounts = redis && config.redis && { sendCommand: redis.sendCommand, keyPrefix: config.redis.keyPrefix, outage: redis.outage };
  const app = createApp({
    config,
    store,
    logger,
    metrics,
    isShuttingDown: drain.isShuttingDown,
    isStopping: drain.isStopping,
    drainStarted: drain.drainStarted,
    redis: sharedCounts,
    delivery,
  });
  const server = createHttpServer(app, {}, config.connections).listen(config.port, config.host, () => {
    const { port } = server.address() as AddressInfo;
    logger.info({ host: config.host, port, seedFile, store: config.database ? 'postgres' : 'memory', node: process.version }, 'listening');
  });
  server.on('error', (error) => {
    logger.fatal({ err: error }, 'server error');
    exitOnceWritten(destination, 1);
  });
  const metricsServer = createHttpServer(createMetricsApp(metrics), {}, config.connections).listen(
    config.metrics.port,
    config.metrics.host,
    () => {
      const { port } = metricsServer.address() as AddressInfo;
      logger.info({ host: config.metrics.host, port }, 'metrics listening');
    },
  );
  metricsServer.on('error', (error) => {
    logger.fatal({ err: error }, 'metrics server error');
    exitOnceWritten(destination, 1);
  });

  // `on`, not `once`: a supervisor that signals the whole process group of `npm start` reaches node twice (npm
  // forwards its own copy), and a second signal must not end the stop: only SHUTDOWN_DELAY_MS + SHUTDOWN_TIMEOUT_MS does.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (drain.isStopping()) {
        logger.info({ signal }, 'signal during the stop: it goes on through its delay and its drain, until its time limit');
        return;
      }
      void drain
        .shutdown(server, signal)
        .then(async (code) => {
          await redis?.close();
          await tracing?.shutdown().catch((error: unknown) => logger.warn({ err: error }, 'traces not all exported'));
          return code;
        })
        .then((code) => exitOnceWritten(destination, code));
    });
  }
}

main().catch((error: unknown) =>
  exitForStartFailure(error, error instanceof SeedFileError ? error.problems : startProblemsOf(error), 'the service could not start'),
);
