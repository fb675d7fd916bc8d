import type { Server } from 'node:http';
import { createApp, createMetricsApp, type AppDeps } from '../../src/app';
import { loadConfig, type Config } from '../../src/process/config';
import { createHttpServer, type ServerTimeLimits } from '../../src/process/http-server';
import { Metrics } from '../../src/process/metrics';
import { MemoryStore } from '../../src/store/memory-store';
import type { Store } from '../../src/store/store';
import { captured, captureResponses, capturingLogger } from './capture';
import { FIXTURE, fixtureSeed } from './fixtures';
import { openEmptyPgStore, TEST_DATABASE_URL, warnIfNoDatabase } from './postgres';

export const FIXED_NOW = new Date('2026-01-02T03:04:05.678Z');

/** A store implementation under test: how to make a fresh, empty one. */
export interface StoreKind {
  name: string;
  create: () => Promise<Store>;
}

export const memoryStoreKind: StoreKind = { name: 'memory', create: async () => new MemoryStore() };

export const postgresStoreKind: StoreKind = { name: 'postgres', create: () => openEmptyPgStore() };

/** Every store the API suite runs against: PostgreSQL too when TEST_DATABASE_URL names a database. */
export function storeKinds(): StoreKind[] {
  warnIfNoDatabase();
  return TEST_DATABASE_URL ? [memoryStoreKind, postgresStoreKind] : [memoryStoreKind];
}

export interface TestApp {
  /** The server production runs (createHttpServer), not listening: supertest starts and stops it per request. */
  server: Server;
  /** The metrics listener's server (GET /metrics), on the same metrics as the app. */
  metricsServer: Server;
  store: Store;
}

/**
 * The settings an empty environment gives (config.ts's defaults), but for the rate limits, off unless a test turns
 * one on: a suite sends far more requests from one address and account than a minute allows.
 */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({}),
    rateLimitPerMinute: 0,
    rateLimitPerAddressPerMinute: 0,
    rateLimitDocumentsPerAddressPerMinute: 0,
    ...overrides,
  };
}

export interface TestAppOptions extends Partial<Omit<AppDeps, 'config'>> {
  config?: Partial<Config>;
  limits?: Partial<ServerTimeLimits>;
}

/** The app on a freshly seeded store, logs and responses captured for the traffic checks, testConfig's settings and a fixed clock unless a test says otherwise. */
export async function buildTestApp(kind: StoreKind = memoryStoreKind, options: TestAppOptions = {}): Promise<TestApp> {
  const store = options.store ?? (await kind.create());
  if (!options.store) await store.loadSeed(fixtureSeed());
  const metrics = options.metrics ?? new Metrics();
  const app = createApp({
    logger: options.logger ?? capturingLogger(),
    now: options.now ?? (() => FIXED_NOW),
    isShuttingDown: options.isShuttingDown,
    metrics,
    redis: options.redis,
    delivery: options.delivery,
    store,
    config: testConfig(options.config),
  });
  return {
    server: captureResponses(createHttpServer(app, options.limits)),
    metricsServer: createHttpServer(createMetricsApp(metrics)),
    store,
  };
}

/**
 * Runs a suite once per store kind, each test on a freshly seeded app.
 * `current()` is the app of the running test.
 */
/** The fixture accounts' changes, for the traffic checks' search for keys and secrets; none from a store the test closed. */
async function captureChanges(store: Store): Promise<void> {
  for (const account of FIXTURE.accounts) {
    const changes = await store.changesAfter(account.source_id, 0, 1_000_000).catch(() => []);
    if (changes.length > 0) captured.changes.push(JSON.stringify(changes));
  }
}

export function describeOnEveryStore(title: string, suite: (current: () => TestApp) => void, options: TestAppOptions = {}): void {
  describe.each(storeKinds().map((kind) => [kind.name, kind] as const))(`${title} on the %s store`, (_name, kind) => {
    let app: TestApp | undefined;
    beforeEach(async () => {
      app = await buildTestApp(kind, options);
    });
    afterEach(async () => {
      if (app) await captureChanges(app.store);
      await app?.store.close();
    });
    suite(() => app as TestApp);
  });
}
