import type { AddressInfo } from 'node:net';
import { createApp } from './app';
import { ConfigError, loadConfig, loadEnvFile } from './config';
import { createLogger } from './logger';
import { DEMO_SEED_FILE, readSeedFile, SeedFileError } from './seed';
import { createDrain } from './shutdown';
import { MemoryStore } from './store/memory-store';

/** Slow clients must not hold connections forever; values sit below typical load-balancer idle timeouts. */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
const KEEP_ALIVE_TIMEOUT_MS = 5_000;

async function main(): Promise<void> {
  loadEnvFile();
  const config = loadConfig(process.env);
  const logger = createLogger(config.logLevel);
  const seedFile = config.seedFile ?? DEMO_SEED_FILE;
  const store = new MemoryStore();
  await store.loadSeed(readSeedFile(seedFile));

  const drain = createDrain(store, logger, config.shutdownTimeoutMs);
  const app = createApp({ config, store, logger, isShuttingDown: drain.isShuttingDown });
  const server = app.listen(config.port, config.host, () => {
    const { port } = server.address() as AddressInfo;
    logger.info({ host: config.host, port, seedFile, store: 'memory' }, 'listening');
  });
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.on('error', (error) => {
    logger.fatal({ err: error }, 'server error');
    process.exit(1);
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      void drain.shutdown(server, signal).then((code) => process.exit(code));
    });
  }
}

main().catch((error: unknown) => {
  // Settings and seed problems are the operator's to fix: print the message, not a stack.
  const known = error instanceof ConfigError || error instanceof SeedFileError;
  process.stderr.write(`${known ? (error as Error).message : String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
