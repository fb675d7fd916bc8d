/**
 * npm run bench: the receiver against bare Express 5 (as usually written, and
 * on the receiver's server options) and raw node:http,
 * each server alone in its process and autocannon in this one, interleaved
 * over rounds; then the receiver at scale, and on PostgreSQL when
 * DATABASE_URL is set, beside a naive receiver and pgbench -N. `--smoke` runs
 * a few seconds of it, to prove it works.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { Client } from 'pg';
import { startCommand } from '../start-command';
import {
  batchSizesLogged,
  CLOCK_TICK_US,
  cpuMicros,
  lastLines,
  listeningPort,
  mainThreadCpuMicros,
  natsServer,
  provenFreePort,
  serverEnvironment,
  stopServer,
} from './servers';
import { measureStoreAlone, openBenchStore, withdrawalBodies, withdrawals, type StoreAloneMeasurement } from './store-alone';
import { measureUnauthorizedTiming, type UnauthorizedTiming } from './unauthorized-timing';
import { BENCH_ACCOUNT, BOOKINGS, bookingIdOf, START_BALANCE_CENTS, tokenIdOf, writeBenchSeed } from './seed';
import { median } from './median';

const ROOT = path.resolve(__dirname, '..', '..');
const SMOKE = process.argv.includes('--smoke');
const SETTINGS = SMOKE
  ? {
      rounds: 1,
      warmupSeconds: 1,
      seconds: 1,
      tokens: 20_000,
      scaleTokens: [1_000, 5_000],
      appliedWithdrawals: 2_000,
      settleSeconds: 1,
      pgSeconds: 1,
      pgWarmupSeconds: 1,
      pgTokens: 2_000,
      unauthorizedPairs: 200,
    }
  : {
      rounds: 3,
      warmupSeconds: 2,
      seconds: 8,
      tokens: 300_000,
      scaleTokens: [1_000, 100_000, 1_000_000],
      appliedWithdrawals: 1_000_000,
      settleSeconds: 10,
      pgSeconds: 10,
      // A fresh receiver on PostgreSQL took longer than a second to reach its steady rate with changes recorded: with
      // one second the receiver made 0.61 of ec79d46 at 16 connections, with five 0.81 (docs/BENCHMARKS.md, issue 44).
      pgWarmupSeconds: 5,
      pgTokens: 50_000,
      unauthorizedPairs: 5_000,
    };
/**
 * For quick iterations while profiling: BENCH_ROUNDS, BENCH_SECONDS, BENCH_WORKLOADS=withdraw,status (empty: none), BENCH_SERVERS=receiver,express,
 * BENCH_SKIP_SCALE=1, BENCH_SKIP_401=1, BENCH_SCALE_TOKENS=1000000; BENCH_LOG_LEVEL=warn to see what the per-request log line costs.
 * BENCH_BASELINE=DIR adds the receiver built in another tree (DIR/dist/server.js, with DIR's own node_modules), e.g.
 * a checkout of main, as `receiver-baseline`: a change's before and after, interleaved in one run, on the memory store
 * and (with DATABASE_URL) on PostgreSQL, in a schema its own migrations make.
 */
if (process.env.BENCH_ROUNDS) SETTINGS.rounds = Number(process.env.BENCH_ROUNDS);
if (process.env.BENCH_SECONDS) SETTINGS.seconds = Number(process.env.BENCH_SECONDS);
if (process.env.BENCH_SCALE_TOKENS) SETTINGS.scaleTokens = process.env.BENCH_SCALE_TOKENS.split(',').map(Number);
const CONNECTIONS = 10;

type ServerName =
  'receiver' | 'receiver-baseline' | 'receiver-traced' | 'receiver-nats' | 'express' | 'express-prototypes' | 'node' | 'naive';
type WorkloadName = 'withdraw' | 'status' | 'booking';

const write = (text: string) => process.stdout.write(`${text}\n`);

// ---------------------------------------------------------------- workloads

/** A generator of valid, never-repeating requests; one per measured run. */
function workload(name: WorkloadName, tokens: number, runId: number): autocannon.Request {
  let counter = 0;
  const uses = new Uint32Array(tokens);
  const prefix = String(runId).padStart(8, '0');
  const withdrawal = withdrawalBodies(tokens, runId);
  const body = (): string => {
    counter += 1;
    const index = counter % tokens;
    uses[index] += 1;
    if (name === 'withdraw') return withdrawal();
    if (name === 'status') {
      return JSON.stringify({
        share_public: BENCH_ACCOUNT.share_public,
        read_event: 'token.status_changed',
        source_id: 'BENCH',
        destination_id: 'D1',
        token_id: Number(tokenIdOf(index)),
        tokes_status: uses[index] % 2 === 1 ? 'disputed' : 'active',
      });
    }
    return JSON.stringify({
      share_secret: BENCH_ACCOUNT.share_secret,
      booking_event: 'modify',
      source_id: 'BENCH',
      booking_id: bookingIdOf(counter % BOOKINGS),
      guests_count: String(1 + (counter % 9)),
    });
  };
  const isBooking = name === 'booking';
  return {
    method: isBooking ? 'PATCH' : 'POST',
    path: '/v1/tokens/withdraw',
    headers: { 'content-type': 'application/json' },
    setupRequest: (request) => {
      const path = isBooking
        ? `/v1/booking/BENCH/k${prefix}-${counter + 1}`
        : name === 'withdraw'
          ? '/v1/tokens/withdraw'
          : '/v1/tokens/status-change';
      return { ...request, path, body: body() };
    },
  };
}

// ---------------------------------------------------------------- servers

const BASELINE = process.env.BENCH_BASELINE ? path.resolve(process.env.BENCH_BASELINE) : undefined;
const SCRIPTS: Record<ServerName, string> = {
  receiver: 'dist/server.js',
  'receiver-baseline': BASELINE ? path.join(BASELINE, 'dist', 'server.js') : '',
  // The receiver with traces on, exported to traceSink(): what OpenTelemetry costs a request.
  'receiver-traced': 'dist/server.js',
  // The receiver with NATS_URL set, publishing every change to natsServer()'s JetStream (contract section 13.4).
  'receiver-nats': 'dist/server.js',
  express: 'scripts/bench/bare-express.js',
  'express-prototypes': 'scripts/bench/bare-express-prototypes.js',
  node: 'scripts/bench/raw-node.js',
  // The PostgreSQL runs' peer: the withdrawal as a user would write it instead of the receiver.
  naive: 'scripts/bench/naive-receiver.js',
};

/** Where each server's output goes: a file, so the harness spends nothing reading it, and a failed start can show it. */
const isReceiver = (name: ServerName) => name.startsWith('receiver');

let sinkEndpoint: Promise<string> | undefined;
/** A local OTLP/HTTP collector for receiver-traced, in this process: it takes every export and keeps nothing. */
function traceSink(): Promise<string> {
  sinkEndpoint ??= (async () => {
    const sink = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}'));
    }).unref();
    sink.listen(0, '127.0.0.1');
    await once(sink, 'listening');
    return `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
  })();
  return sinkEndpoint;
}

const START_COMMAND = startCommand(ROOT);

/**
 * The node flags of package.json's start script (and the Dockerfile's CMD, test/unit/runtime.test.ts): the receivers
 * run as npm start runs them. Node 24's default young generation (two 64 MB semi-spaces) and the pages it keeps held
 * a memory store of 1,000,000 tokens at 749-782 MB after 1,000,000 withdrawals; with 4 MB semi-spaces, 547-553 MB, at
 * less CPU per request. Since the token-id index, 16 MB semi-spaces hold it at 426 MB, and scavenge a quarter as often
 * on PostgreSQL, where a withdrawal allocates about 60 KB: 12-18% more withdrawals at 64 connections than with 4 MB
 * (docs/BENCHMARKS.md, issue 29).
 */
const RECEIVER_NODE_FLAGS = START_COMMAND.nodeFlags;

/**
 * The environment npm start gives node by default (`NAME=${NAME:-value}`, the image's ENV too): glibc's mmap threshold
 * fixed at 1 MB took the memory store of 1,000,000 tokens from 535-539 to 485-490 MB after 1,000,000 withdrawals.
 */
const RECEIVER_ENVIRONMENT = START_COMMAND.environmentDefaults;

/** The baseline runs as its own npm start runs it, from its own tree: its flags, its node_modules, its migrations. */
const BASELINE_START_COMMAND = BASELINE ? startCommand(BASELINE) : undefined;

const serverLogDirectory = mkdtempSync(path.join(tmpdir(), 'receiver-bench-logs-'));
let serversStarted = 0;

interface Running {
  child: ChildProcess;
  port: number;
  /** The receiver's metrics listener (METRICS_PORT). */
  metricsPort: number;
  startMs: number;
  logFile: string;
}

async function waitUntilServing(port: number, child: ChildProcess, logFile: string): Promise<number> {
  for (let attempt = 0; attempt < 1200; attempt += 1) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}; its last lines:\n${lastLines(logFile)}`);
    if (
      await fetch(`http://127.0.0.1:${port}/healthz`).then(
        () => true,
        () => false,
      )
    )
      return port;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`server did not start within 30 s; its last lines:\n${lastLines(logFile)}`);
}

async function startServer(name: ServerName, env: Record<string, string> = {}): Promise<Running> {
  const logFile = path.join(serverLogDirectory, `${(serversStarted += 1)}-${name}.log`);
  const output = openSync(logFile, 'w');
  const started = performance.now();
  // BENCH_PROFILE=1: the receiver writes a CPU profile to bench-results/profile when it stops.
  const profile =
    process.env.BENCH_PROFILE && name === 'receiver' ? ['--cpu-prof', `--cpu-prof-dir=${path.join(ROOT, 'bench-results', 'profile')}`] : [];
  const quiet = isReceiver(name) && process.env.BENCH_LOG_LEVEL !== undefined && process.env.BENCH_LOG_LEVEL !== 'info';
  const fixedPort = quiet ? await provenFreePort() : 0;
  const metricsPort = await provenFreePort();
  const baseline = name === 'receiver-baseline' ? BASELINE_START_COMMAND : undefined;
  const nodeFlags = isReceiver(name) ? (baseline?.nodeFlags ?? RECEIVER_NODE_FLAGS) : [];
  const startEnvironment = isReceiver(name) ? (baseline?.environmentDefaults ?? RECEIVER_ENVIRONMENT) : {};
  const child = spawn(process.execPath, [...nodeFlags, ...profile, SCRIPTS[name]], {
    cwd: name === 'receiver-baseline' && BASELINE ? BASELINE : ROOT,
    stdio: ['ignore', output, output],
    env: { ...startEnvironment, ...serverEnvironment(fixedPort, metricsPort, process.env.BENCH_LOG_LEVEL ?? 'info'), ...env },
  });
  closeSync(output);
  const port = quiet ? await waitUntilServing(fixedPort, child, logFile) : await listeningPort(child, logFile);
  return { child, port, metricsPort, startMs: performance.now() - started, logFile };
}

const stop = (server: Running): Promise<void> => stopServer(server.child);

/**
 * CPU time the whole machine spent, every core and process (user, system, interrupts; not idle, I/O wait or time
 * stolen by the hypervisor), in microseconds, from /proc/stat: what a withdrawal costs the machine with the
 * receiver, its database and the load generator all on it, against what a pgbench transaction costs it.
 */
function machineCpuMicros(): number {
  const [user, nice, system, , , irq, softirq] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return (user + nice + system + irq + softirq) * CLOCK_TICK_US;
}

/** This process's CPU (the load generator's, autocannon running in it) in microseconds. */
function loadCpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

function memoryMb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`)) as string;
  return Math.round(Number(line.split(/\s+/)[1]) / 1024);
}

interface Measurement {
  rps: number;
  p50: number;
  p99: number;
  cpuUsPerRequest: number;
  /** The server's main thread's alone: the one that answers (delivery runs on a thread of its own). */
  mainThreadCpuUsPerRequest: number;
  /** Every process's CPU per request while it ran: the server's, the load generator's, a database's. */
  machineCpuUsPerRequest: number;
  /** The load generator's own CPU per request. */
  loadCpuUsPerRequest: number;
  peakRssMb: number;
  requests: number;
  non200: number;
}

async function load(port: number, request: autocannon.Request, options: { seconds?: number; amount?: number; connections?: number }) {
  return autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: options.connections ?? CONNECTIONS,
    ...(options.amount ? { amount: options.amount } : { duration: options.seconds }),
    requests: [request],
  });
}

async function measure(server: Running, request: autocannon.Request, seconds: number, connections = CONNECTIONS): Promise<Measurement> {
  const pid = server.child.pid as number;
  const [cpuBefore, threadBefore, machineBefore, loadBefore] = [
    cpuMicros(pid),
    mainThreadCpuMicros(pid),
    machineCpuMicros(),
    loadCpuMicros(),
  ];
  const result = await load(server.port, request, { seconds, connections });
  const [cpuUsed, threadUsed, machineUsed, loadUsed] = [
    cpuMicros(pid) - cpuBefore,
    mainThreadCpuMicros(pid) - threadBefore,
    machineCpuMicros() - machineBefore,
    loadCpuMicros() - loadBefore,
  ];
  const completed = Math.max(result.requests.total, 1);
  return {
    rps: Math.round(result.requests.total / seconds),
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuUsPerRequest: Math.round(cpuUsed / completed),
    mainThreadCpuUsPerRequest: Math.round(threadUsed / completed),
    machineCpuUsPerRequest: Math.round(machineUsed / completed),
    loadCpuUsPerRequest: Math.round(loadUsed / completed),
    peakRssMb: memoryMb(pid, 'VmHWM'),
    requests: result.requests.total,
    non200: result.non2xx + result.errors + result.timeouts,
  };
}

/** A fresh server of `name`, warmed up, measured, stopped. */
async function measureFresh(
  name: ServerName,
  env: Record<string, string>,
  request: autocannon.Request,
  { warmupSeconds, seconds, connections = CONNECTIONS }: { warmupSeconds: number; seconds: number; connections?: number },
): Promise<Measurement> {
  const server = await startServer(name, env);
  await load(server.port, request, { seconds: warmupSeconds, connections });
  const result = await measure(server, request, seconds, connections);
  await stop(server);
  return result;
}

// ---------------------------------------------------------------- the runs

async function compareServers(seedFile: string) {
  const servers = (process.env.BENCH_SERVERS?.split(',') ?? [
    'receiver',
    ...(BASELINE ? ['receiver-baseline'] : []),
    'receiver-traced',
    ...(spawnSync('nats-server', ['--version']).status === 0 ? ['receiver-nats'] : []),
    'express',
    'express-prototypes',
    'node',
  ]) as ServerName[];
  const workloads = (process.env.BENCH_WORKLOADS?.split(',').filter(Boolean) ?? ['withdraw', 'status', 'booking']) as WorkloadName[];
  const samples: Record<string, Measurement[]> = {};
  let runId = 1;
  for (let round = 0; round < SETTINGS.rounds; round += 1) {
    for (const name of workloads) {
      // Interleaved: the order of the servers turns every round, so drift on a shared machine spreads over all of them.
      const order = servers.map((_, i) => servers[(i + round) % servers.length]);
      for (const serverName of order) {
        const traces: Record<string, string> = serverName === 'receiver-traced' ? { OTEL_EXPORTER_OTLP_ENDPOINT: await traceSink() } : {};
        const nats: Record<string, string> = serverName === 'receiver-nats' ? { NATS_URL: await natsServer() } : {};
        const env = isReceiver(serverName) ? { SEED_FILE: seedFile, ...traces, ...nats } : {};
        const request = workload(name, SETTINGS.tokens, runId++);
        const result = await measureFresh(serverName, env, request, { warmupSeconds: SETTINGS.warmupSeconds, seconds: SETTINGS.seconds });
        (samples[`${serverName}/${name}`] ??= []).push(result);
        write(
          `  round ${round + 1} ${name.padEnd(8)} ${serverName.padEnd(17)} ${String(result.rps).padStart(6)} req/s  p99 ${result.p99} ms  ${result.cpuUsPerRequest} µs CPU/req (main thread ${result.mainThreadCpuUsPerRequest})  ${result.non200} non-200`,
        );
      }
    }
  }
  const summary: Record<string, Record<string, Measurement & { vsExpress: number; vsNode: number; vsBaseline: number }>> = {};
  for (const name of workloads) {
    summary[name] = {};
    const medians = Object.fromEntries(
      servers.map((serverName) => {
        const runs = samples[`${serverName}/${name}`];
        const pick = (key: keyof Measurement) => median(runs.map((run) => run[key]));
        return [
          serverName,
          {
            rps: pick('rps'),
            p50: pick('p50'),
            p99: pick('p99'),
            cpuUsPerRequest: pick('cpuUsPerRequest'),
            mainThreadCpuUsPerRequest: pick('mainThreadCpuUsPerRequest'),
            peakRssMb: Math.max(...runs.map((r) => r.peakRssMb)),
            requests: pick('requests'),
            non200: Math.max(...runs.map((r) => r.non200)),
          },
        ];
      }),
    ) as Record<ServerName, Measurement>;
    for (const serverName of servers) {
      const m = medians[serverName];
      summary[name][serverName] = {
        ...m,
        vsExpress: round2(m.rps / (medians.express?.rps ?? NaN)),
        vsNode: round2(m.rps / (medians.node?.rps ?? NaN)),
        vsBaseline: round2(m.rps / (medians['receiver-baseline']?.rps ?? NaN)),
      };
    }
  }
  return summary;
}

const round2 = (value: number) => Math.round(value * 100) / 100;

/** One sample of the receiver's metrics, by its name and labels as printed. */
async function metricSample(port: number, series: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const sample = text.split('\n').find((line) => line.startsWith(`${series} `));
  return Number(sample?.split(' ').pop() ?? 0);
}

/** The receiver's own count of accepted withdrawals. */
const appliedWithdrawals = (port: number) =>
  metricSample(port, 'receiver_operations_total{operation="withdraw",outcome="accepted",reason=""}');

/** Where the memory is: V8's heap (used, and held) and memory outside it (the ledger's typed arrays), in MB. */
async function heapMb(port: number) {
  const mb = async (series: string) => Math.round((await metricSample(port, series)) / 1024 / 1024);
  return {
    heapUsedMb: await mb('nodejs_heap_size_used_bytes'),
    heapTotalMb: await mb('nodejs_heap_size_total_bytes'),
    externalMb: await mb('nodejs_external_memory_bytes'),
  };
}

async function scale(directory: string) {
  const results: Array<Record<string, number | string>> = [];
  let runId = 900;
  const largest = SETTINGS.scaleTokens[SETTINGS.scaleTokens.length - 1];
  // At the largest count, the previous build too (BENCH_BASELINE): resident memory depends on the machine's memory
  // and V8's sizing of its heap, so it is compared side by side, not with a figure from another machine.
  const runs = SETTINGS.scaleTokens.flatMap((tokens) =>
    (tokens === largest && BASELINE ? (['receiver', 'receiver-baseline'] as const) : (['receiver'] as const)).map((name) => ({
      tokens,
      name,
    })),
  );
  for (const { tokens, name } of runs) {
    const seedFile = path.join(directory, `scale-${tokens}.json`);
    await writeBenchSeed(seedFile, tokens);
    const server = await startServer(name, { SEED_FILE: seedFile });
    const startRssMb = memoryMb(server.child.pid as number, 'VmRSS');
    const request = workload('withdraw', tokens, runId++);
    await load(server.port, request, { seconds: SETTINGS.warmupSeconds });
    const result = await measure(server, request, SETTINGS.seconds);
    const row: Record<string, number | string> = {
      server: name,
      tokens,
      startSeconds: round2(server.startMs / 1000),
      startRssMb,
      rps: result.rps,
      p99: result.p99,
      cpuUsPerRequest: result.cpuUsPerRequest,
      non200: result.non200,
    };
    if (tokens === largest) {
      // Apply withdrawals until the ledger holds SETTINGS.appliedWithdrawals, counted by the receiver itself, then read the memory.
      const remaining = SETTINGS.appliedWithdrawals - (await appliedWithdrawals(server.metricsPort));
      if (remaining > 0) await load(server.port, request, { amount: remaining });
      row.appliedWithdrawals = await appliedWithdrawals(server.metricsPort);
      row.rssAfterWithdrawalsMb = memoryMb(server.child.pid as number, 'VmRSS');
      Object.assign(row, await heapMb(server.metricsPort));
      // And once the collector has had a few idle seconds, as a service between bursts would.
      await new Promise((resolve) => setTimeout(resolve, SETTINGS.settleSeconds * 1000));
      row.rssSettledMb = memoryMb(server.child.pid as number, 'VmRSS');
      row.peakRssMb = memoryMb(server.child.pid as number, 'VmHWM');
    }
    await stop(server);
    results.push(row);
    write(`  scale ${JSON.stringify(row)}`);
  }
  return results;
}

/** The connections of the PostgreSQL runs: every server's pool stays at 16 whatever its callers' count. */
const PG_CONNECTIONS = [16, 64] as const;

/**
 * The servers of the PostgreSQL runs: the receiver, the previous build (BENCH_BASELINE) in a schema its own migrations
 * made, and the naive receiver on the receiver's schema (scripts/bench/naive-receiver.js).
 */
type PgServerName = 'receiver' | 'receiver-baseline' | 'naive';
const PG_SERVERS: PgServerName[] = ['receiver', ...(BASELINE ? (['receiver-baseline'] as const) : []), 'naive'];

interface PgMeasurement extends Measurement {
  /** The CPU of the server's database backends per committed withdrawal. */
  databaseCpuUsPerWithdrawal: number;
  walBytesPerWithdrawal: number;
  batchSizes: unknown;
}

interface PgbenchMeasurement {
  /** Transactions per second over the measured window. */
  tps: number;
  /** Over the measured window, per row pgbench -N added to pgbench_history (one a transaction): its backends' CPU. */
  databaseCpuUsPerTransaction: number;
  /** pgbench's own process (the load generator). */
  clientCpuUsPerTransaction: number;
  walBytesPerTransaction: number;
  machineCpuUsPerTransaction: number;
}

interface PgRound {
  servers: Record<number, Partial<Record<PgServerName, PgMeasurement>>>;
  pgbench: Record<number, PgbenchMeasurement>;
  /** The same receiver and requests on the memory store: what the HTTP path does with no database behind it. */
  onMemory: Record<number, Measurement>;
  storeAlone: StoreAloneMeasurement;
  unitsAlone: StoreAloneMeasurement;
}

/**
 * What the database did so far for the bench's database: the CPU of its client backends (each server's connections,
 * and pgbench's), the WAL written, and the rows of `countedTable` (one a withdrawal or a
 * pgbench transaction).
 */
async function databaseCounters(admin: Client, countedTable: string) {
  const { rows } = await admin.query(
    `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint AS wal, (SELECT count(*) FROM ${countedTable}) AS counted,
            ARRAY(SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()) AS pids`,
  );
  const pids = rows[0].pids as number[];
  const cpu = new Map(
    pids.flatMap((pid) => {
      try {
        return [[pid, cpuMicros(pid)] as const];
      } catch {
        return []; // ended meanwhile
      }
    }),
  );
  return { cpu, walBytes: Number(rows[0].wal), counted: Number(rows[0].counted) };
}

/**
 * CPU the backends open at the second reading used since the first: all of it for one opened between them. A pool
 * opens a connection when two batches overlap and hands out the idle one released last, so the backend that did a
 * window's work was often one opened inside it: counting only backends open at both readings read 0 µs for the
 * receiver at 16 connections. A backend that closes inside the window (node-postgres closes one idle for 10 s) is
 * still missed.
 */
function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let used = 0;
  for (const [pid, cpu] of after) used += cpu - (before.get(pid) ?? 0);
  return used;
}

/**
 * `during` between two readings of databaseCounters: the backends' CPU and the WAL per row it added to `countedTable`.
 * An ended backend's CPU is no longer in /proc, so the window must close while the load's connections are open.
 */
async function databaseWindow<T>(admin: Client, countedTable: string, during: () => Promise<T>) {
  const before = await databaseCounters(admin, countedTable);
  const result = await during();
  const after = await databaseCounters(admin, countedTable);
  const rows = Math.max(after.counted - before.counted, 1);
  return {
    result,
    rows,
    databaseCpuUsPerRow: Math.round(cpuBetween(before.cpu, after.cpu) / rows),
    walBytesPerRow: Math.round((after.walBytes - before.walBytes) / rows),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits (up to 30 s) until `check` holds, polling every 100 ms; throws `failure()` when it does not, or at once when
 * `gaveUp` says it never will.
 */
async function waitFor(check: () => Promise<boolean>, failure: () => string, gaveUp: () => boolean = () => false): Promise<void> {
  for (let attempt = 0; attempt < 300 && !gaveUp(); attempt += 1) {
    if (await check()) return;
    await sleep(100);
  }
  throw new Error(failure());
}

/** Client connections PostgreSQL would still accept. */
async function freeConnections(admin: Client): Promise<number> {
  const { rows } = await admin.query(
    `SELECT current_setting('max_connections')::int - count(*) AS free FROM pg_stat_activity WHERE backend_type = 'client backend'`,
  );
  return Number(rows[0].free);
}

/** pgbench's connection arguments and environment, on its own schema of the bench's database. */
interface PgbenchTarget {
  connection: string[];
  env: NodeJS.ProcessEnv;
  schema: string;
}

/**
 * `pgbench -N` at `connections`: a warm-up second once every connection is open, then the measured seconds, its
 * transactions counted in pgbench_history (one row each) and its backends' CPU and the WAL read from the database as
 * for the servers. pgbench's -T is only a bound: it runs on past the window and is stopped after it, since its
 * backends must still be open at the second reading (databaseWindow).
 */
async function measurePgbench(admin: Client, target: PgbenchTarget, connections: number): Promise<PgbenchMeasurement> {
  // The store alone's pools hold connections for 10 s after their last use; 64 more may not fit until they close.
  await waitFor(
    async () => (await freeConnections(admin)) >= connections,
    () => `PostgreSQL has fewer than ${connections} free connections for pgbench -c ${connections} (max_connections)`,
  );
  const seconds = SETTINGS.pgSeconds;
  const args = ['-N', '-n', '-c', String(connections), '-j', '2', '-T', String(seconds + 60), ...target.connection];
  const child = spawn('pgbench', args, { env: target.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const closed = once(child, 'close');
  const running = () => child.exitCode === null && child.signalCode === null;
  try {
    const opened = async () =>
      Number(
        (await admin.query(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'pgbench'`))
          .rows[0].count,
      ) >= connections;
    await waitFor(
      opened,
      () => `pgbench -c ${connections} did not open its connections: ${output}`,
      () => !running(),
    );
    await sleep(1_000);
    const pid = child.pid as number;
    const window = await databaseWindow(admin, `${target.schema}.pgbench_history`, async () => {
      const [machineBefore, clientBefore] = [machineCpuMicros(), cpuMicros(pid)];
      await sleep(seconds * 1_000);
      return { machine: machineCpuMicros() - machineBefore, client: cpuMicros(pid) - clientBefore };
    });
    if (!running()) throw new Error(`pgbench -c ${connections} ended before its measured seconds did: ${output}`);
    return {
      tps: Math.round(window.rows / seconds),
      databaseCpuUsPerTransaction: window.databaseCpuUsPerRow,
      walBytesPerTransaction: window.walBytesPerRow,
      clientCpuUsPerTransaction: Math.round(window.result.client / window.rows),
      machineCpuUsPerTransaction: Math.round(window.result.machine / window.rows),
    };
  } finally {
    if (running()) child.kill('SIGTERM');
    await closed;
  }
}

/** A connection string to `schema` of the bench's database. */
function schemaUrl(databaseUrl: string, schema: string): string {
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

const ratio = (value: number, to: number) => round2(value / Math.max(to, 1));

/** A PostgreSQL server's medians over the rounds (rounds' rates kept). */
function pgServerRow(of: PgMeasurement[]) {
  const pick = (value: (m: PgMeasurement) => number) => median(of.map(value));
  return {
    withdrawalsPerSecond: pick((m) => m.rps),
    p99: pick((m) => m.p99),
    cpuUsPerWithdrawal: pick((m) => m.cpuUsPerRequest),
    databaseCpuUsPerWithdrawal: pick((m) => m.databaseCpuUsPerWithdrawal),
    /** The server's process and its database backends, summed per round. */
    cpuWithDatabaseUsPerWithdrawal: pick((m) => m.cpuUsPerRequest + m.databaseCpuUsPerWithdrawal),
    loadCpuUsPerWithdrawal: pick((m) => m.loadCpuUsPerRequest),
    machineCpuUsPerWithdrawal: pick((m) => m.machineCpuUsPerRequest),
    walBytesPerWithdrawal: pick((m) => m.walBytesPerWithdrawal),
    non200: Math.max(...of.map((m) => m.non200)),
    ratesByRound: of.map((m) => m.rps),
  };
}

function pgConnectionsRow(rounds: PgRound[], connections: number) {
  const ofServer = (name: PgServerName) => rounds.map((r) => r.servers[connections][name] as PgMeasurement);
  const servers = Object.fromEntries(PG_SERVERS.map((name) => [name, pgServerRow(ofServer(name))])) as Record<
    PgServerName,
    ReturnType<typeof pgServerRow>
  >;
  const { receiver, naive } = servers;
  const baseline = servers['receiver-baseline'] as ReturnType<typeof pgServerRow> | undefined;
  const pgbenchRuns = rounds.map((r) => r.pgbench[connections]);
  const tps = median(pgbenchRuns.map((p) => p.tps));
  const onMemoryRps = median(rounds.map((r) => r.onMemory[connections].rps));
  return {
    connections,
    servers,
    receiverBatchSizesByRound: ofServer('receiver').map((m) => m.batchSizes),
    pgbench: {
      tps,
      databaseCpuUsPerTransaction: median(pgbenchRuns.map((p) => p.databaseCpuUsPerTransaction)),
      clientCpuUsPerTransaction: median(pgbenchRuns.map((p) => p.clientCpuUsPerTransaction)),
      walBytesPerTransaction: median(pgbenchRuns.map((p) => p.walBytesPerTransaction)),
      machineCpuUsPerTransaction: median(pgbenchRuns.map((p) => p.machineCpuUsPerTransaction)),
      tpsByRound: pgbenchRuns.map((p) => p.tps),
    },
    onMemory: {
      withdrawalsPerSecond: onMemoryRps,
      cpuUsPerRequest: median(rounds.map((r) => r.onMemory[connections].cpuUsPerRequest)),
      non200: Math.max(...rounds.map((r) => r.onMemory[connections].non200)),
    },
    /** Of the medians; receiver/pgbench also each round's. CPU: per withdrawal, naive over receiver. */
    ratios: {
      receiverToBaseline: baseline ? ratio(receiver.withdrawalsPerSecond, baseline.withdrawalsPerSecond) : null,
      receiverToPgbench: ratio(receiver.withdrawalsPerSecond, tps),
      receiverToPgbenchByRound: rounds.map((r, i) => ratio(receiver.ratesByRound[i], r.pgbench[connections].tps)),
      receiverToNaive: ratio(receiver.withdrawalsPerSecond, naive.withdrawalsPerSecond),
      naiveCpuToReceiver: ratio(naive.cpuWithDatabaseUsPerWithdrawal, receiver.cpuWithDatabaseUsPerWithdrawal),
      naiveProcessCpuToReceiver: ratio(naive.cpuUsPerWithdrawal, receiver.cpuUsPerWithdrawal),
      onMemoryToPgbench: ratio(onMemoryRps, tps),
    },
  };
}

async function postgres(directory: string) {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) return undefined;
  const schema = `bench_${Date.now()}`;
  // The naive receiver shares the receiver's schema and tokens; the baseline's own migrations make its schema.
  const schemas: Record<PgServerName, string> = { receiver: schema, 'receiver-baseline': `${schema}_baseline`, naive: schema };
  const pgbenchSchema = `${schema}_pgbench`;
  const created = [schema, schemas['receiver-baseline'], pgbenchSchema, `${schema}_store`, `${schema}_unbatched`];
  const admin = new Client({ connectionString: databaseUrl });
  await admin.connect();
  for (const name of created) await admin.query(`CREATE SCHEMA ${name}`);
  try {
    const seedFile = path.join(directory, 'pg-seed.json');
    await writeBenchSeed(seedFile, SETTINGS.pgTokens);
    const target = new URL(databaseUrl);
    const pgbench: PgbenchTarget = {
      connection: [
        '-h',
        target.hostname,
        '-p',
        target.port || '5432',
        '-U',
        decodeURIComponent(target.username || 'postgres'),
        target.pathname.slice(1),
      ],
      env: { ...process.env, PGOPTIONS: `-c search_path=${pgbenchSchema}` },
      schema: pgbenchSchema,
    };
    const init = spawnSync('pgbench', ['-i', '-q', '-s', '10', ...pgbench.connection], { env: pgbench.env, encoding: 'utf8' });
    if (init.status !== 0) throw new Error(`pgbench -i failed: ${init.stderr}`);
    const serverEnv = (name: PgServerName) => ({
      SEED_FILE: seedFile,
      DATABASE_URL: schemaUrl(databaseUrl, schemas[name]),
      DATABASE_POOL_SIZE: '16',
    });
    // Each receiver makes its schema before the rounds (its migrations and the seed), so any server may run first.
    for (const name of PG_SERVERS.filter(isReceiver)) await stop(await startServer(name, serverEnv(name)));
    let runId = 7_000;
    // A fresh server on its schema, warmed up (pgWarmupSeconds), then measured. Each run's requests state balances from the
    // seed's, which it first restores: a request autocannon made as it stopped but never delivered would otherwise
    // leave its token one withdrawal out of step for every later run (one round of five answered 15 requests 409 so,
    // issue 22).
    const measureServer = async (name: PgServerName, connections: number): Promise<PgMeasurement> => {
      await admin.query(`UPDATE ${schemas[name]}.tokens SET balance = $1`, [START_BALANCE_CENTS]);
      const request = workload('withdraw', SETTINGS.pgTokens, (runId += 1));
      const server = await startServer(name, serverEnv(name));
      try {
        await load(server.port, request, { seconds: SETTINGS.pgWarmupSeconds, connections });
        const window = await databaseWindow(admin, `${schemas[name]}.ledger`, () =>
          measure(server, request, SETTINGS.pgSeconds, connections),
        );
        // Stopped before its batch sizes are read: the receiver's store logs them as it closes.
        await stop(server);
        return {
          ...window.result,
          databaseCpuUsPerWithdrawal: window.databaseCpuUsPerRow,
          walBytesPerWithdrawal: window.walBytesPerRow,
          batchSizes: batchSizesLogged(server.logFile),
        };
      } finally {
        await stop(server);
      }
    };
    // The store alone, in schemas of its own, with group commit and (for comparison) each unit alone.
    const batched = await openBenchStore(databaseUrl, `${schema}_store`, seedFile, true);
    const unbatched = await openBenchStore(databaseUrl, `${schema}_unbatched`, seedFile, false);
    const nextBatched = withdrawals(SETTINGS.pgTokens, 8_000);
    const nextUnbatched = withdrawals(SETTINGS.pgTokens, 9_000);
    const rounds: PgRound[] = [];
    try {
      for (let round = 0; round < SETTINGS.rounds; round += 1) {
        const storeAlone = await measureStoreAlone(batched.store, batched.account, nextBatched, SETTINGS.pgSeconds);
        const unitsAlone = await measureStoreAlone(unbatched.store, unbatched.account, nextUnbatched, SETTINGS.pgSeconds);
        const onMemory: PgRound['onMemory'] = {};
        for (const connections of PG_CONNECTIONS) {
          const request = workload('withdraw', SETTINGS.pgTokens, (runId += 1));
          const settings = { warmupSeconds: 1, seconds: SETTINGS.pgSeconds, connections };
          onMemory[connections] = await measureFresh('receiver', { SEED_FILE: seedFile }, request, settings);
        }
        const servers: PgRound['servers'] = {};
        const pgbenchRuns: PgRound['pgbench'] = {};
        for (const connections of PG_CONNECTIONS) {
          servers[connections] = {};
          // Interleaved: the order of the servers and pgbench turns every round, so drift spreads over all of them.
          const entrants = [...PG_SERVERS, 'pgbench' as const];
          for (const i of entrants.keys()) {
            const entrant = entrants[(i + round) % entrants.length];
            if (entrant === 'pgbench') pgbenchRuns[connections] = await measurePgbench(admin, pgbench, connections);
            else servers[connections][entrant] = await measureServer(entrant, connections);
          }
        }
        rounds.push({ servers, pgbench: pgbenchRuns, onMemory, storeAlone, unitsAlone });
        for (const connections of PG_CONNECTIONS) {
          for (const name of PG_SERVERS) {
            const r = servers[connections][name] as PgMeasurement;
            write(
              `  round ${round + 1} postgres ${connections} connections: ${name.padEnd(17)} ${r.rps} withdrawals/s  p99 ${r.p99} ms  ${r.cpuUsPerRequest} µs CPU/req,` +
                ` database ${r.databaseCpuUsPerWithdrawal} µs CPU and ${r.walBytesPerWithdrawal} B WAL per withdrawal,` +
                ` load generator ${r.loadCpuUsPerRequest} µs, machine ${r.machineCpuUsPerRequest} µs  ${r.non200} non-200`,
            );
          }
          const p = pgbenchRuns[connections];
          write(
            `  round ${round + 1} postgres ${connections} connections: pgbench -N ${p.tps} tps, pgbench ${p.clientCpuUsPerTransaction} µs CPU, database ${p.databaseCpuUsPerTransaction} µs CPU and` +
              ` ${p.walBytesPerTransaction} B WAL per transaction, machine ${p.machineCpuUsPerTransaction} µs;` +
              ` the receiver on the memory store ${onMemory[connections].rps} withdrawals/s at ${onMemory[connections].cpuUsPerRequest} µs CPU/req`,
          );
        }
        write(
          `  round ${round + 1} store alone ${storeAlone.transactionsPerSecond} tx/s (${storeAlone.cpuUsPerTransaction} µs CPU/tx)` +
            `  units alone ${unitsAlone.transactionsPerSecond} tx/s (${unitsAlone.cpuUsPerTransaction} µs CPU/tx)`,
        );
      }
    } finally {
      await Promise.all([batched.store.close(), unbatched.store.close()]);
    }
    const batchSizes = batched.store.batchSizes();
    write(`  store alone batch sizes ${JSON.stringify(batchSizes)}`);
    const tps16 = median(rounds.map((r) => r.pgbench[16].tps));
    const byConnections = PG_CONNECTIONS.map((connections) => pgConnectionsRow(rounds, connections));
    const row = {
      rounds: rounds.length,
      byConnections,
      non200: Math.max(...byConnections.flatMap((c) => [c.onMemory.non200, ...Object.values(c.servers).map((s) => s.non200)])),
      storeAlone: {
        transactionsPerSecond: median(rounds.map((r) => r.storeAlone.transactionsPerSecond)),
        cpuUsPerTransaction: median(rounds.map((r) => r.storeAlone.cpuUsPerTransaction)),
        failures: Math.max(...rounds.map((r) => r.storeAlone.failures)),
        ratioToPgbench: ratio(median(rounds.map((r) => r.storeAlone.transactionsPerSecond)), tps16),
        ratiosByRound: rounds.map((r) => ratio(r.storeAlone.transactionsPerSecond, r.pgbench[16].tps)),
        batchSizes,
      },
      unitsAlone: {
        transactionsPerSecond: median(rounds.map((r) => r.unitsAlone.transactionsPerSecond)),
        cpuUsPerTransaction: median(rounds.map((r) => r.unitsAlone.cpuUsPerTransaction)),
        failures: Math.max(...rounds.map((r) => r.unitsAlone.failures)),
        ratioToPgbench: ratio(median(rounds.map((r) => r.unitsAlone.transactionsPerSecond)), tps16),
      },
    };
    write(`  postgres ${JSON.stringify(row)}`);
    return row;
  } finally {
    for (const name of created) await admin.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
    await admin.end();
  }
}

/** The 401 oracle, once per round on a fresh receiver: a known account's wrong key against an unknown account. */
async function unauthorized(seedFile: string): Promise<UnauthorizedTiming[]> {
  const rounds: UnauthorizedTiming[] = [];
  for (let round = 0; round < SETTINGS.rounds; round += 1) {
    const server = await startServer('receiver', { SEED_FILE: seedFile });
    try {
      rounds.push(await measureUnauthorizedTiming(server.port, SETTINGS.unauthorizedPairs));
    } finally {
      await stop(server);
    }
    write(`  401 timing, round ${round + 1} ${JSON.stringify(rounds[round])}`);
  }
  return rounds;
}

function unauthorizedTable(rounds: UnauthorizedTiming[]): string {
  const lines = [
    '| 401 round | pairs | known account, wrong key: median µs | unknown account: median µs | medians apart % | P(known slower) % | non-401 |',
    '|---|---|---|---|---|---|---|',
  ];
  rounds.forEach((r, i) =>
    lines.push(
      `| ${i + 1} | ${r.pairs} | ${r.knownMedianUs} | ${r.unknownMedianUs} | ${r.mediansApartPercent} | ${r.knownSlowerPercent} | ${r.non401} |`,
    ),
  );
  return lines.join('\n');
}

function table(summary: Awaited<ReturnType<typeof compareServers>>): string {
  const lines = [
    '| workload | server | req/s | p50 ms | p99 ms | CPU µs/req | peak RSS MB | × Express | × node:http | × baseline | non-200 |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const [name, servers] of Object.entries(summary)) {
    for (const [server, m] of Object.entries(servers)) {
      lines.push(
        `| ${name} | ${server} | ${m.rps} | ${m.p50} | ${m.p99} | ${m.cpuUsPerRequest} | ${m.peakRssMb} | ${m.vsExpress} | ${m.vsNode} | ${m.vsBaseline} | ${m.non200} |`,
      );
    }
  }
  return lines.join('\n');
}

type Summary = Awaited<ReturnType<typeof compareServers>>;
type PostgresRow = NonNullable<Awaited<ReturnType<typeof postgres>>>;
type ConnectionsRatios = PostgresRow['byConnections'][number]['ratios'];

/** What issues 43 and 44 compare, side by side: the memory store's withdrawals, and PostgreSQL at 16 and 64 connections. */
function ratiosOf(summary: Summary, pg: PostgresRow | undefined) {
  const onPostgres = (pick: (ratios: ConnectionsRatios) => number | null) =>
    Object.fromEntries((pg?.byConnections ?? []).map((c) => [`postgres${c.connections}`, pick(c.ratios)]));
  const memory = summary.withdraw?.receiver?.vsBaseline;
  const withNats = summary.withdraw?.['receiver-nats'] && round2(summary.withdraw['receiver-nats'].rps / summary.withdraw.receiver.rps);
  return {
    receiverToBaseline: { memory: Number.isFinite(memory) ? memory : null, ...onPostgres((r) => r.receiverToBaseline) },
    natsToReceiver: { memory: withNats ?? null },
    receiverToPgbench: onPostgres((r) => r.receiverToPgbench),
    receiverToNaive: onPostgres((r) => r.receiverToNaive),
    naiveCpuToReceiver: onPostgres((r) => r.naiveCpuToReceiver),
    naiveProcessCpuToReceiver: onPostgres((r) => r.naiveProcessCpuToReceiver),
  };
}

const RATIO_LABELS: Record<keyof ReturnType<typeof ratiosOf>, string> = {
  receiverToBaseline: 'receiver / receiver-baseline, withdrawals/s',
  natsToReceiver: 'receiver-nats (NATS_URL set) / receiver, withdrawals/s',
  receiverToPgbench: 'receiver / pgbench -N, withdrawals/s to tps',
  receiverToNaive: 'receiver / naive, withdrawals/s',
  naiveCpuToReceiver: 'naive / receiver, CPU per withdrawal (process and database backends)',
  naiveProcessCpuToReceiver: 'naive / receiver, CPU per withdrawal (process)',
};

function ratiosTable(ratios: ReturnType<typeof ratiosOf>): string {
  const lines = ['| ratio of medians | memory store | PostgreSQL, 16 | PostgreSQL, 64 |', '|---|---|---|---|'];
  for (const [key, label] of Object.entries(RATIO_LABELS)) {
    const row: Record<string, number | null | undefined> = ratios[key as keyof typeof ratios];
    lines.push(`| ${label} | ${row.memory ?? '–'} | ${row.postgres16 ?? '–'} | ${row.postgres64 ?? '–'} |`);
  }
  return lines.join('\n');
}

function postgresTable(pg: PostgresRow | undefined): string {
  if (!pg) return 'PostgreSQL: not measured (no DATABASE_URL)';
  const lines = [
    '| connections | PostgreSQL | withdrawals/s (tps) | p99 ms | process CPU µs | database CPU µs | WAL B | non-200 |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const { connections, servers, pgbench } of pg.byConnections) {
    for (const [name, s] of Object.entries(servers)) {
      lines.push(
        `| ${connections} | ${name} | ${s.withdrawalsPerSecond} | ${s.p99} | ${s.cpuUsPerWithdrawal} | ${s.databaseCpuUsPerWithdrawal} | ${s.walBytesPerWithdrawal} | ${s.non200} |`,
      );
    }
    lines.push(
      `| ${connections} | pgbench -N | ${pgbench.tps} | – | ${pgbench.clientCpuUsPerTransaction} | ${pgbench.databaseCpuUsPerTransaction} | ${pgbench.walBytesPerTransaction} | – |`,
    );
  }
  return lines.join('\n');
}

async function main() {
  const directory = mkdtempSync(path.join(tmpdir(), 'receiver-bench-'));
  const seedFile = path.join(directory, 'seed.json');
  write(
    `bench${SMOKE ? ' (smoke)' : ''}: Node ${process.version}, ${SETTINGS.rounds} round(s) of ${SETTINGS.seconds} s, ${CONNECTIONS} connections, seed of ${SETTINGS.tokens} tokens`,
  );
  await writeBenchSeed(seedFile, SETTINGS.tokens);
  const summary = await compareServers(seedFile);
  const unauthorizedRounds = process.env.BENCH_SKIP_401 ? [] : await unauthorized(seedFile);
  const scaleRows = process.env.BENCH_SKIP_SCALE ? [] : await scale(directory);
  const pg = await postgres(directory);
  const ratios = ratiosOf(summary, pg);
  const result = {
    when: new Date().toISOString(),
    node: process.version,
    smoke: SMOKE,
    settings: SETTINGS,
    connections: CONNECTIONS,
    summary,
    unauthorizedTiming: unauthorizedRounds,
    scale: scaleRows,
    postgres: pg,
    ratios,
  };
  mkdirSync(path.join(ROOT, 'bench-results'), { recursive: true });
  const file = path.join(ROOT, 'bench-results', SMOKE ? 'smoke.json' : 'latest.json');
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  write(
    `\n${table(summary)}\n\n${unauthorizedTable(unauthorizedRounds)}\n\n${postgresTable(pg)}\n\n${ratiosTable(ratios)}\n\nwrote ${path.relative(ROOT, file)}`,
  );
  const failures = Object.values(summary)
    .flatMap((servers) => Object.values(servers))
    .filter((m) => m.non200 > 0 || m.rps === 0);
  if (
    failures.length > 0 ||
    scaleRows.some((row) => Number(row.non200) > 0) ||
    (pg?.non200 ?? 0) > 0 ||
    (pg?.storeAlone.failures ?? 0) > 0 ||
    (pg?.unitsAlone.failures ?? 0) > 0 ||
    unauthorizedRounds.some((r) => r.non401 > 0)
  ) {
    write('FAILED: some runs answered other than 200');
    process.exit(1);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
