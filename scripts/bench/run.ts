/**
 * npm run bench: the receiver against bare Express 5 (as usually written, and
 * on the receiver's server options) and raw node:http,
 * each server alone in its process and autocannon in this one, interleaved
 * over rounds; then the receiver at scale, and on PostgreSQL when
 * DATABASE_URL is set. `--smoke` runs a few seconds of it, to prove it works.
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
import { batchSizesLogged, CLOCK_TICK_US, cpuMicros, lastLines, listeningPort, serverEnvironment, stopServer } from './servers';
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
      pgTokens: 50_000,
      unauthorizedPairs: 5_000,
    };
/**
 * For quick iterations while profiling: BENCH_ROUNDS, BENCH_SECONDS, BENCH_WORKLOADS=withdraw,status (empty: none), BENCH_SERVERS=receiver,express,
 * BENCH_SKIP_SCALE=1, BENCH_SKIP_401=1, BENCH_SCALE_TOKENS=1000000; BENCH_LOG_LEVEL=warn to see what the per-request log line costs.
 * BENCH_BASELINE=DIR adds the receiver built in another tree (DIR/dist/server.js, with DIR's own node_modules), e.g.
 * a checkout of main, as `receiver-baseline`: a change's before and after, interleaved in one run.
 */
if (process.env.BENCH_ROUNDS) SETTINGS.rounds = Number(process.env.BENCH_ROUNDS);
if (process.env.BENCH_SECONDS) SETTINGS.seconds = Number(process.env.BENCH_SECONDS);
if (process.env.BENCH_SCALE_TOKENS) SETTINGS.scaleTokens = process.env.BENCH_SCALE_TOKENS.split(',').map(Number);
const CONNECTIONS = 10;

type ServerName = 'receiver' | 'receiver-baseline' | 'receiver-traced' | 'express' | 'express-prototypes' | 'node';
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

const BASELINE = process.env.BENCH_BASELINE;
const SCRIPTS: Record<ServerName, string> = {
  receiver: 'dist/server.js',
  'receiver-baseline': BASELINE ? path.join(path.resolve(BASELINE), 'dist', 'server.js') : '',
  // The receiver with traces on, exported to traceSink(): what OpenTelemetry costs a request.
  'receiver-traced': 'dist/server.js',
  express: 'scripts/bench/bare-express.js',
  'express-prototypes': 'scripts/bench/bare-express-prototypes.js',
  node: 'scripts/bench/raw-node.js',
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

/** A port the kernel just handed out and took back: for a receiver that will not log its port (BENCH_LOG_LEVEL above info). */
async function provenFreePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
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
  const nodeFlags = isReceiver(name) ? RECEIVER_NODE_FLAGS : [];
  const startEnvironment = isReceiver(name) ? RECEIVER_ENVIRONMENT : {};
  const child = spawn(process.execPath, [...nodeFlags, ...profile, SCRIPTS[name]], {
    cwd: ROOT,
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
  const [cpuBefore, machineBefore, loadBefore] = [cpuMicros(pid), machineCpuMicros(), loadCpuMicros()];
  const result = await load(server.port, request, { seconds, connections });
  const [cpuUsed, machineUsed, loadUsed] = [cpuMicros(pid) - cpuBefore, machineCpuMicros() - machineBefore, loadCpuMicros() - loadBefore];
  const completed = Math.max(result.requests.total, 1);
  return {
    rps: Math.round(result.requests.total / seconds),
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuUsPerRequest: Math.round(cpuUsed / completed),
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
        const env = isReceiver(serverName) ? { SEED_FILE: seedFile, ...traces } : {};
        const request = workload(name, SETTINGS.tokens, runId++);
        const result = await measureFresh(serverName, env, request, { warmupSeconds: SETTINGS.warmupSeconds, seconds: SETTINGS.seconds });
        (samples[`${serverName}/${name}`] ??= []).push(result);
        write(
          `  round ${round + 1} ${name.padEnd(8)} ${serverName.padEnd(8)} ${String(result.rps).padStart(6)} req/s  p99 ${result.p99} ms  ${result.cpuUsPerRequest} µs CPU/req  ${result.non200} non-200`,
        );
      }
    }
  }
  const summary: Record<string, Record<string, Measurement & { vsExpress: number; vsNode: number }>> = {};
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
  const results: Array<Record<string, number>> = [];
  let runId = 900;
  for (const tokens of SETTINGS.scaleTokens) {
    const seedFile = path.join(directory, `scale-${tokens}.json`);
    await writeBenchSeed(seedFile, tokens);
    const server = await startServer('receiver', { SEED_FILE: seedFile });
    const startRssMb = memoryMb(server.child.pid as number, 'VmRSS');
    const request = workload('withdraw', tokens, runId++);
    await load(server.port, request, { seconds: SETTINGS.warmupSeconds });
    const result = await measure(server, request, SETTINGS.seconds);
    const row: Record<string, number> = {
      tokens,
      startSeconds: round2(server.startMs / 1000),
      startRssMb,
      rps: result.rps,
      p99: result.p99,
      cpuUsPerRequest: result.cpuUsPerRequest,
      non200: result.non200,
    };
    if (tokens === SETTINGS.scaleTokens[SETTINGS.scaleTokens.length - 1]) {
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

/** The connections of the PostgreSQL runs: the receiver's pool stays at 16 whatever its callers' count. */
const PG_CONNECTIONS = [16, 64] as const;

interface PgRound {
  receiver: Record<number, Measurement & { databaseCpuUsPerWithdrawal: number; walBytesPerWithdrawal: number; batchSizes: unknown }>;
  /** The same receiver and requests on the memory store: what the HTTP path does with no database behind it. */
  onMemory: Record<number, Measurement>;
  storeAlone: StoreAloneMeasurement;
  unitsAlone: StoreAloneMeasurement;
  /** pgbench -N at each connection count, and what a transaction cost the machine (pgbench, its backends, the WAL writer). */
  pgbench: Record<number, { tps: number; machineCpuUsPerTransaction: number }>;
}

/**
 * What the database did so far for the bench's database: the CPU of its client backends (the receiver's
 * connections, open through the measurement: an ended backend's CPU is no longer in /proc, which is why pgbench's is
 * not reported), the WAL written, and the bench schema's ledger rows.
 */
async function databaseCounters(admin: Client, schema: string) {
  const { rows } = await admin.query(
    `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint AS wal, (SELECT count(*) FROM ${schema}.ledger) AS ledger,
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
  return { cpu, walBytes: Number(rows[0].wal), ledgerRows: Number(rows[0].ledger) };
}

/** CPU the backends open at both readings used between them. */
function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let used = 0;
  for (const [pid, cpu] of after) if (before.has(pid)) used += cpu - (before.get(pid) as number);
  return used;
}

async function postgres(directory: string) {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) return undefined;
  const schema = `bench_${Date.now()}`;
  const admin = new Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query(`CREATE SCHEMA ${schema}_pgbench`);
  try {
    const seedFile = path.join(directory, 'pg-seed.json');
    await writeBenchSeed(seedFile, SETTINGS.pgTokens);
    const url = new URL(databaseUrl);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const pgEnv = { ...process.env, PGOPTIONS: `-c search_path=${schema}_pgbench` };
    const target = new URL(databaseUrl);
    const connection = [
      '-h',
      target.hostname,
      '-p',
      target.port || '5432',
      '-U',
      decodeURIComponent(target.username || 'postgres'),
      target.pathname.slice(1),
    ];
    spawnSync('pgbench', ['-i', '-q', '-s', '10', ...connection], { env: pgEnv, encoding: 'utf8' });
    // Interleaved rounds, as for the HTTP comparison: the receiver (a fresh process on the same schema), the same
    // receiver on the memory store (the HTTP path's own ceiling on this machine), then pgbench. Each round's
    // requests state balances from the seed's, which the round first restores: a request autocannon made as it
    // stopped but never delivered would otherwise leave its token one withdrawal out of step for every later
    // round (one round of five answered 15 requests 409 so, issue 22).
    // The store alone, in schemas of its own, with group commit and (for comparison) each unit alone.
    await admin.query(`CREATE SCHEMA ${schema}_store`);
    await admin.query(`CREATE SCHEMA ${schema}_unbatched`);
    const batched = await openBenchStore(databaseUrl, `${schema}_store`, seedFile, true);
    const unbatched = await openBenchStore(databaseUrl, `${schema}_unbatched`, seedFile, false);
    const nextBatched = withdrawals(SETTINGS.pgTokens, 8_000);
    const nextUnbatched = withdrawals(SETTINGS.pgTokens, 9_000);
    const rounds: PgRound[] = [];
    // The first receiver makes the schema (its migrations and seed); each later one starts from the seed's balances.
    let seeded = false;
    const restoreBalances = async () => {
      if (seeded) await admin.query(`UPDATE ${schema}.tokens SET balance = $1`, [START_BALANCE_CENTS]);
      seeded = true;
    };
    try {
      for (let round = 0; round < SETTINGS.rounds; round += 1) {
        const receiver: PgRound['receiver'] = {};
        for (const connections of PG_CONNECTIONS) {
          await restoreBalances();
          const request = workload('withdraw', SETTINGS.pgTokens, 7_000 + round * 10 + connections);
          const server = await startServer('receiver', { SEED_FILE: seedFile, DATABASE_URL: url.toString(), DATABASE_POOL_SIZE: '16' });
          await load(server.port, request, { seconds: 1, connections });
          const before = await databaseCounters(admin, schema);
          const measured = await measure(server, request, SETTINGS.pgSeconds, connections);
          const after = await databaseCounters(admin, schema);
          await stop(server);
          const committed = Math.max(after.ledgerRows - before.ledgerRows, 1);
          receiver[connections] = {
            ...measured,
            databaseCpuUsPerWithdrawal: Math.round(cpuBetween(before.cpu, after.cpu) / committed),
            walBytesPerWithdrawal: Math.round((after.walBytes - before.walBytes) / committed),
            batchSizes: batchSizesLogged(server.logFile),
          };
        }
        const onMemory: PgRound['onMemory'] = {};
        for (const connections of PG_CONNECTIONS) {
          const request = workload('withdraw', SETTINGS.pgTokens, 7_500 + round * 10 + connections);
          const settings = { warmupSeconds: 1, seconds: SETTINGS.pgSeconds, connections };
          onMemory[connections] = await measureFresh('receiver', { SEED_FILE: seedFile }, request, settings);
        }
        const storeAlone = await measureStoreAlone(batched.store, batched.account, nextBatched, SETTINGS.pgSeconds);
        const unitsAlone = await measureStoreAlone(unbatched.store, unbatched.account, nextUnbatched, SETTINGS.pgSeconds);
        const pgbench: PgRound['pgbench'] = {};
        for (const connections of PG_CONNECTIONS) {
          const machineBefore = machineCpuMicros();
          const bench = spawnSync(
            'pgbench',
            ['-N', '-n', '-c', String(connections), '-j', '2', '-T', String(SETTINGS.pgSeconds), ...connection],
            { env: pgEnv, encoding: 'utf8' },
          );
          const machineUsed = machineCpuMicros() - machineBefore;
          const transactions = Number(/number of transactions actually processed: (\d+)/.exec(bench.stdout)?.[1] ?? 0);
          const tps = Math.round(Number(/tps = ([\d.]+)/.exec(bench.stdout)?.[1] ?? 0));
          pgbench[connections] = { tps, machineCpuUsPerTransaction: Math.round(machineUsed / Math.max(transactions, 1)) };
        }
        rounds.push({ receiver, onMemory, storeAlone, unitsAlone, pgbench });
        for (const connections of PG_CONNECTIONS) {
          const r = receiver[connections];
          write(
            `  round ${round + 1} postgres ${connections} connections: receiver ${r.rps} withdrawals/s  p99 ${r.p99} ms  ${r.cpuUsPerRequest} µs CPU/req,` +
              ` database ${r.databaseCpuUsPerWithdrawal} µs CPU and ${r.walBytesPerWithdrawal} B WAL per withdrawal,` +
              ` load generator ${r.loadCpuUsPerRequest} µs, machine ${r.machineCpuUsPerRequest} µs;` +
              ` pgbench -N ${pgbench[connections].tps} tps at ${pgbench[connections].machineCpuUsPerTransaction} µs of the machine each; on the memory store ${onMemory[connections].rps} withdrawals/s at ${onMemory[connections].cpuUsPerRequest} µs CPU/req`,
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
    const ledger = Number((await admin.query(`SELECT count(*) FROM ${schema}.ledger`)).rows[0].count);
    const tps16 = median(rounds.map((r) => r.pgbench[16].tps));
    const byConnections = (connections: number) => {
      const of = rounds.map((r) => ({
        receiver: r.receiver[connections],
        onMemory: r.onMemory[connections],
        pgbench: r.pgbench[connections],
      }));
      const rps = median(of.map((r) => r.receiver.rps));
      const tps = median(of.map((r) => r.pgbench.tps));
      const onMemoryRps = median(of.map((r) => r.onMemory.rps));
      return {
        connections,
        withdrawalsPerSecond: rps,
        p99: median(of.map((r) => r.receiver.p99)),
        cpuUsPerRequest: median(of.map((r) => r.receiver.cpuUsPerRequest)),
        databaseCpuUsPerWithdrawal: median(of.map((r) => r.receiver.databaseCpuUsPerWithdrawal)),
        loadCpuUsPerWithdrawal: median(of.map((r) => r.receiver.loadCpuUsPerRequest)),
        machineCpuUsPerWithdrawal: median(of.map((r) => r.receiver.machineCpuUsPerRequest)),
        walBytesPerWithdrawal: median(of.map((r) => r.receiver.walBytesPerWithdrawal)),
        non200: Math.max(...of.map((r) => Math.max(r.receiver.non200, r.onMemory.non200))),
        pgbenchNTps: tps,
        pgbenchMachineCpuUsPerTransaction: median(of.map((r) => r.pgbench.machineCpuUsPerTransaction)),
        ratioToPgbench: round2(rps / Math.max(tps, 1)),
        ratiosByRound: of.map((r) => round2(r.receiver.rps / Math.max(r.pgbench.tps, 1))),
        batchSizesByRound: of.map((r) => r.receiver.batchSizes),
        onMemory: {
          withdrawalsPerSecond: onMemoryRps,
          cpuUsPerRequest: median(of.map((r) => r.onMemory.cpuUsPerRequest)),
          ratioToPgbench: round2(onMemoryRps / Math.max(tps, 1)),
        },
      };
    };
    const receivers = PG_CONNECTIONS.map(byConnections);
    const row = {
      rounds: rounds.length,
      receivers,
      non200: Math.max(...receivers.map((r) => r.non200)),
      ledgerRows: ledger,
      storeAlone: {
        transactionsPerSecond: median(rounds.map((r) => r.storeAlone.transactionsPerSecond)),
        cpuUsPerTransaction: median(rounds.map((r) => r.storeAlone.cpuUsPerTransaction)),
        failures: Math.max(...rounds.map((r) => r.storeAlone.failures)),
        ratioToPgbench: round2(median(rounds.map((r) => r.storeAlone.transactionsPerSecond)) / Math.max(tps16, 1)),
        ratiosByRound: rounds.map((r) => round2(r.storeAlone.transactionsPerSecond / Math.max(r.pgbench[16].tps, 1))),
        batchSizes,
      },
      unitsAlone: {
        transactionsPerSecond: median(rounds.map((r) => r.unitsAlone.transactionsPerSecond)),
        cpuUsPerTransaction: median(rounds.map((r) => r.unitsAlone.cpuUsPerTransaction)),
        failures: Math.max(...rounds.map((r) => r.unitsAlone.failures)),
        ratioToPgbench: round2(median(rounds.map((r) => r.unitsAlone.transactionsPerSecond)) / Math.max(tps16, 1)),
      },
    };
    write(`  postgres ${JSON.stringify(row)}`);
    return row;
  } finally {
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.query(`DROP SCHEMA ${schema}_pgbench CASCADE`);
    await admin.query(`DROP SCHEMA IF EXISTS ${schema}_store CASCADE`);
    await admin.query(`DROP SCHEMA IF EXISTS ${schema}_unbatched CASCADE`);
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
    '| workload | server | req/s | p50 ms | p99 ms | CPU µs/req | peak RSS MB | × Express | × node:http | non-200 |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const [name, servers] of Object.entries(summary)) {
    for (const [server, m] of Object.entries(servers)) {
      lines.push(
        `| ${name} | ${server} | ${m.rps} | ${m.p50} | ${m.p99} | ${m.cpuUsPerRequest} | ${m.peakRssMb} | ${m.vsExpress} | ${m.vsNode} | ${m.non200} |`,
      );
    }
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
  };
  mkdirSync(path.join(ROOT, 'bench-results'), { recursive: true });
  const file = path.join(ROOT, 'bench-results', SMOKE ? 'smoke.json' : 'latest.json');
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  write(`\n${table(summary)}\n\n${unauthorizedTable(unauthorizedRounds)}\n\nwrote ${path.relative(ROOT, file)}`);
  const failures = Object.values(summary)
    .flatMap((servers) => Object.values(servers))
    .filter((m) => m.non200 > 0 || m.rps === 0);
  if (
    failures.length > 0 ||
    scaleRows.some((row) => row.non200 > 0) ||
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
