/**
 * The delivery thread (started by delivery-thread.ts): the delivery engine, its sinks and its positions, run at the
 * lowest CPU priority, so that handing changes on takes only the CPU partners' requests leave (contract 13.3: delivery
 * never delays the answers partners wait for). Under a load that takes every core, delivery falls behind, by position,
 * and catches up once the load passes; it never drops a change for it.
 *
 * It loads the settings as the serving thread did (a worker starts with a copy of its environment, `.env` included).
 * On PostgreSQL it reads changes and keeps positions on delivery's own pool; the memory store is the serving thread's,
 * so its changes and heads are asked of it by message.
 */
import { execFileSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { formatWithOptions } from 'node:util';
import { parentPort, workerData } from 'node:worker_threads';
import { loadConfig } from '../process/config';
import { createLogger, type Logger } from '../process/logger';
import type { DeliveryMetrics, HeldSinks } from '../process/metrics';
import { unpackedChanges, type PackedChanges } from '../store/memory-change-log';
import type { ChangeListener } from '../store/store';
import { DeliveryEngine } from './engine';
import type { EndpointConfig } from './endpoints';
import { MemorySinkPositions } from './memory-positions';
import { openNatsRelay } from './nats-sink';
import { PgSinkPositions } from './postgres-positions';
import { retryDelay } from './retry-delay';
import type { Sink } from './sink';
import { ThreadCalls, type ThreadPort } from './thread-calls';
import { WebhookSink } from './webhook-sink';

export interface DeliveryWorkerData {
  endpoints: EndpointConfig[];
}

/** What the thread tells once it has started, or failed to. */
export type DeliveryStart = { sinkIds: string[] } | { error: string; database: boolean };

/** For the serving thread's metrics: attempts' outcomes and disables since the last report, and the sinks held now. */
export interface DeliveryReport {
  deliveries: Array<[endpoint: string, result: 'delivered' | 'failed' | 'gone', seconds: number]>;
  disables: string[];
  held: HeldSinks;
}

/** Linux's lowest nice value. On Linux a nice value is per thread: this one alone lowers (os.setPriority on pid 0). */
const LOWEST_PRIORITY = 19;
/**
 * How often the thread reports to the serving thread's metrics: one message for many attempts, a scrape at most this
 * late. Pushed, not asked for when the page renders: a thread under SCHED_IDLE on busy cores may take seconds to answer.
 */
const REPORT_EVERY_MS = 250;

const { endpoints } = workerData as DeliveryWorkerData;
let engine: DeliveryEngine | undefined;
let held: () => HeldSinks = () => [];
const listeners = new Set<ChangeListener>();
let outcomes: Omit<DeliveryReport, 'held'> = { deliveries: [], disables: [] };

function running(): DeliveryEngine {
  if (!engine) throw new Error('delivery has not started');
  return engine;
}

function report(): void {
  calls.tell('report', { ...outcomes, held: held() } satisfies DeliveryReport);
  outcomes = { deliveries: [], disables: [] };
}

const reportTimer = setInterval(report, REPORT_EVERY_MS).unref();

const metrics: DeliveryMetrics = {
  observeDelivery: (endpoint, result, seconds) => outcomes.deliveries.push([endpoint, result, seconds]),
  countDisable: (endpoint) => outcomes.disables.push(endpoint),
  watchDelivery: (sinks) => {
    held = sinks;
  },
};

const calls = new ThreadCalls(
  parentPort as ThreadPort,
  {
    endpoint: (sinkId: string) => running().endpoint(sinkId),
    attempts: (sinkId: string, limit: number, before?: number) => running().attempts(sinkId, limit, before),
    enable: (sinkId: string) => running().enable(sinkId),
    takesAccount: (sinkId: string, sourceId: string) => running().takesAccount(sinkId, sourceId),
    replay: (sinkId: string, sourceId: string, after: number) => running().replay(sinkId, sourceId, after),
    stop: async (boundMs: number) => {
      // At the normal policy again (still at nice 19): the stop releases the leases on time however busy the cores.
      // Refused, it stops at the idle policy all the same.
      try {
        setPolicy('--other');
      } catch {
        // Logged at start already, if the system refuses policies.
      }
      await running().stop(boundMs);
      clearInterval(reportTimer);
      report();
    },
  },
  (name, value) => {
    // The serving thread's store moved these accounts' changes on: the engine looks now rather than at its next poll.
    if (name === 'changed') for (const sourceId of value as string[]) for (const listener of listeners) listener.changed(sourceId);
  },
);

/**
 * This thread at nice 19, then under SCHED_IDLE: a thread of that policy runs only on a core no other thread wants.
 * Nice 19 alone was not enough: beside bench:delivery, a busy loop at nice 19 cut partners' rate to 0.59 of a quiet
 * machine's, one under SCHED_IDLE to 0.87 (docs/BENCHMARKS.md). Node has no call for a thread's policy: util-linux's
 * chrt sets it, by this thread's id. Either step may be refused (another system, a sandbox): delivery then runs at
 * what it got, and says so.
 */
function runOnlyWhenIdle(logger: Logger): void {
  // Elsewhere a nice value is the whole process's: the serving thread's too.
  if (process.platform !== 'linux') return;
  try {
    setPriority(LOWEST_PRIORITY);
    setPolicy('--idle');
  } catch (error) {
    logger.warn({ err: error }, 'delivery runs at a higher priority than it asks: its thread could not lower its own');
  }
}

/** The most of one console write a log line keeps: a server that sends what the client cannot parse chooses its length. */
const MAX_CONSOLE_TEXT = 1_000;

/**
 * What this thread writes to the console becomes a warning of its logger. nats.js writes a few errors of its own with
 * the console's log method (a connection's reader that could not parse what the server sent, say), and Node writes the thread's
 * warnings (process.emitWarning, a library's deprecation) with console.error: as they were, they were the only lines
 * of the log that are not JSON (contract section 8), and the first kind's length was the NATS server's to choose. A
 * worker's console is its own (as all its globals are): the serving thread's is untouched. Formatting is bounded
 * (strings, depth) and may not throw: it runs inside a library's error path, where a throw would go unhandled.
 */
function consoleAsLog(logger: Logger): void {
  const write = (...args: unknown[]) => {
    if (!logger.isLevelEnabled('warn')) return;
    let text: string;
    try {
      text = formatWithOptions({ depth: 2, maxStringLength: MAX_CONSOLE_TEXT, maxArrayLength: 20 }, ...args).slice(0, MAX_CONSOLE_TEXT);
    } catch (error) {
      text = `(what was written could not be formatted: ${error instanceof Error ? error.message : 'an error'})`.slice(0, MAX_CONSOLE_TEXT);
    }
    logger.warn({ console: text }, 'the delivery thread wrote to the console');
  };
  Object.assign(console, Object.fromEntries(['log', 'info', 'warn', 'error', 'debug', 'trace'].map((method) => [method, write])));
}

/** This thread's scheduling policy (chrt's --idle or --other), at priority 0. */
function setPolicy(policy: '--idle' | '--other'): void {
  if (process.platform !== 'linux') return;
  const threadId = readlinkSync('/proc/thread-self').split('/').pop() as string;
  execFileSync('chrt', [policy, '--pid', '0', threadId], { stdio: 'ignore', timeout: 5_000 });
}

async function start(): Promise<DeliveryStart> {
  const config = loadConfig(process.env);
  // Each line goes to the serving thread, which writes it with its own: two writers on one pipe could split a line.
  const logger = createLogger(config.logLevel, { write: (line: string) => calls.tell('log', line) }, config.instanceId);
  consoleAsLog(logger);
  runOnlyWhenIdle(logger);
  const { database, delivery } = config;
  const natsRelay = openNatsRelay(config, logger);
  const sinks: Sink[] = endpoints.map((endpoint) => new WebhookSink(endpoint, delivery));
  if (natsRelay) sinks.push(natsRelay);
  // PostgreSQL's own pool, straight to the database when a pooler is in front and DATABASE_DIRECT_URL is set.
  const pgPositions =
    database &&
    new PgSinkPositions({
      connectionString: database.directUrl ?? database.url,
      pooled: database.pooler === 'transaction' && !database.directUrl,
      statementTimeoutMs: database.statementTimeoutMs,
      connectTimeoutMs: database.connectTimeoutMs,
      logger,
    });
  const positions = pgPositions || new MemorySinkPositions(() => calls.call<Map<string, number>>('changeHeads'));
  const store = {
    changesAfter: pgPositions
      ? (sourceId: string, after: number, limit: number) => pgPositions.changesAfter(sourceId, after, limit)
      : async (sourceId: string, after: number, limit: number) =>
          unpackedChanges(await calls.call<PackedChanges>('packedChangesAfter', sourceId, after, limit)),
    watchChanges: (listener: ChangeListener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  try {
    engine = await DeliveryEngine.start({
      sinks,
      positions,
      store,
      retryDelay: (step, retryAfterMs) => retryDelay(step, delivery.retryScheduleMs, retryAfterMs),
      instanceId: config.instanceId,
      leaseMs: delivery.leaseMs,
      logger,
      metrics,
    });
    return { sinkIds: engine.sinkIds() };
  } catch (error) {
    await positions.close();
    await natsRelay?.close();
    return { error: error instanceof Error ? error.message : String(error), database: true };
  }
}

start().then(
  (started) => calls.tell('started', started),
  (error: unknown) => calls.tell('started', { error: String((error as Error)?.stack ?? error), database: false }),
);
