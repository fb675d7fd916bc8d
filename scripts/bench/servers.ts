import { spawn, type ChildProcess } from 'node:child_process';
import type autocannon from 'autocannon';
import { once } from 'node:events';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { startCommand } from '../start-command';

/**
 * The environment the bench's servers run with: production, on loopback, on the ports given (0: the kernel's
 * choice), without rate limits (a load from one address would hit them), logging at `logLevel`. run.ts and
 * startReceiver start receivers with it, npm start's own defaults added.
 */
export function serverEnvironment(port: number, metricsPort: number, logLevel: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'production',
    PORT: String(port),
    METRICS_PORT: String(metricsPort),
    HOST: '127.0.0.1',
    RATE_LIMIT_PER_MINUTE: '0',
    RATE_LIMIT_PER_ADDRESS_PER_MINUTE: '0',
    LOG_LEVEL: logLevel,
  };
}

/** A receiver's batch sizes on PostgreSQL, from the line its store logs when it closes; undefined on the memory store. */
export function batchSizesLogged(logFile: string): unknown {
  const line = readFileSync(logFile, 'utf8')
    .split('\n')
    .find((text) => text.includes('"msg":"group commit: units per batch"'));
  return line ? (JSON.parse(line) as { batches: unknown }).batches : undefined;
}

/** /proc's clock ticks (USER_HZ, 100 on Linux) in microseconds. */
export const CLOCK_TICK_US = 1_000_000 / 100;

/** A process's CPU time (user + system, every thread) in microseconds, from /proc. */
export function cpuMicros(pid: number): number {
  return statCpuMicros(`/proc/${pid}/stat`);
}

/** The CPU of the process's first thread alone (its main thread: the one that serves requests), in microseconds. */
export function mainThreadCpuMicros(pid: number): number {
  return statCpuMicros(`/proc/${pid}/task/${pid}/stat`);
}

/** Linux's SCHED_IDLE, as /proc gives a process's scheduling policy. */
export const SCHED_IDLE = 5;

/** A process's (or thread's) stat in /proc: its command, and its fields after it, from field 3 (the state) on. */
function statOf(file: string): { command: string; fields: string[] } {
  const stat = readFileSync(file, 'utf8');
  // The command is in parentheses and may hold any character, a closing parenthesis too.
  const close = stat.lastIndexOf(')');
  return { command: stat.slice(stat.indexOf('(') + 1, close), fields: stat.slice(close + 2).split(' ') };
}

function statCpuMicros(file: string): number {
  const { fields } = statOf(file);
  return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_US;
}

/** A process's command and scheduling policy (field 41 of its stat); undefined once it is gone. */
export function schedulingOf(pid: number): { command: string; policy: number } | undefined {
  try {
    const { command, fields } = statOf(`/proc/${pid}/stat`);
    return { command, policy: Number(fields[38]) };
  } catch {
    return undefined;
  }
}

/** The last lines a server wrote to its log file, for the error when it did not start. */
export const lastLines = (file: string, count = 20) =>
  existsSync(file) ? readFileSync(file, 'utf8').trimEnd().split('\n').slice(-count).join('\n') : '';

/**
 * Servers listen on port 0 and log {"msg":"listening","port":…}: no fixed port that a client socket could hold.
 * Fails as soon as the server exits, or after `limitSeconds`.
 */
export async function listeningPort(child: ChildProcess, logFile: string, limitSeconds = 30): Promise<number> {
  for (let attempt = 0; attempt < limitSeconds * 40; attempt += 1) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}; its last lines:\n${lastLines(logFile)}`);
    const line = readFileSync(logFile, 'utf8')
      .split('\n')
      .find((text) => text.includes('"msg":"listening"'));
    if (line) return (JSON.parse(line) as { port: number }).port;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`server did not start within ${limitSeconds} s; its last lines:\n${lastLines(logFile)}`);
}

/** How a tool starts one receiver (startReceiver). */
export interface ReceiverStart {
  /** The checkout whose build (dist/server.js) and npm start it runs. */
  tree: string;
  seedFile: string;
  /** The store's environment, storeEnvironment's `env`. */
  storeEnv: Record<string, string>;
  /** Where its output goes. */
  logFile: string;
  /** Node flags of the tool's own, before npm start's (--trace-gc-nvp, say). */
  nodeFlags?: string[];
  /** A program, with its arguments, the receiver runs under (valgrind's callgrind, say). */
  runUnder?: string[];
  /** Its working directory; default: the tree. */
  cwd?: string;
}

/**
 * The receiver built in `start.tree`, started as its npm start starts it (node flags and environment defaults), in
 * the bench's environment (serverEnvironment: ports the kernel picks, logging at info), its output in the log file.
 */
export function startReceiver(start: ReceiverStart): ChildProcess {
  const { nodeFlags, environmentDefaults } = startCommand(start.tree);
  const [program, ...args] = [
    ...(start.runUnder ?? []),
    process.execPath,
    ...(start.nodeFlags ?? []),
    ...nodeFlags,
    path.join(start.tree, 'dist', 'server.js'),
  ];
  const output = openSync(start.logFile, 'w');
  try {
    return spawn(program, args, {
      cwd: start.cwd ?? start.tree,
      stdio: ['ignore', output, output],
      env: { ...environmentDefaults, ...serverEnvironment(0, 0, 'info'), SEED_FILE: start.seedFile, ...start.storeEnv },
    });
  } finally {
    // The child holds its own copy of the descriptor.
    closeSync(output);
  }
}

/**
 * Throws unless autocannon's every withdrawal was answered 200, naming the statuses and the first refusal the
 * receiver logged in `logFile` (its reason code says which rule refused it).
 */
export function refuseUnanswered(result: autocannon.Result, logFile: string): void {
  const failed = result.non2xx + result.errors + result.timeouts;
  if (failed === 0) return;
  const statuses = JSON.stringify((result as { statusCodeStats?: unknown }).statusCodeStats);
  const refused = readFileSync(logFile, 'utf8')
    .split('\n')
    .find((line) => line.includes('"msg":"request failed"'));
  throw new Error(`${failed} of ${result.requests.total} withdrawals were not answered 200 (${statuses}); the first refusal: ${refused}`);
}

/** Stops a server a tool started (SIGTERM) and resolves once it has exited; at once if it already has. */
export async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

/**
 * The store of one receiver a tool starts: the memory store without `databaseUrl`, else PostgreSQL in a schema of its
 * own (a pool of 16, as in the bench), which `drop` removes.
 */
export async function storeEnvironment(
  databaseUrl: string | undefined,
): Promise<{ env: Record<string, string>; drop: () => Promise<void> }> {
  if (!databaseUrl) return { env: {}, drop: async () => undefined };
  const schema = `receiver_${process.pid}_${Date.now()}`;
  const admin = new Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const drop = async () => {
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  };
  return { env: { DATABASE_URL: url.toString(), DATABASE_POOL_SIZE: '16' }, drop };
}

/** A port the kernel just handed out and took back: for a receiver that will not log its port (BENCH_LOG_LEVEL above info). */
export async function provenFreePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

let natsEndpoint: Promise<string> | undefined;
/**
 * A JetStream server of the bench's own for receiver-nats (Debian's nats-server, on a free port, a throwaway store
 * folder), stopped when the bench ends: the relay publishes every change the withdrawals make while they are measured (run.ts, delivery-isolation.ts).
 */
export function natsServer(): Promise<string> {
  natsEndpoint ??= (async () => {
    const port = await provenFreePort();
    const storeDirectory = mkdtempSync(path.join(tmpdir(), 'receiver-bench-nats-'));
    // Under SCHED_IDLE, as if on a host of its own: it takes only the CPU the receiver and the load generator leave,
    // so receiver-nats' rate shows what publishing costs the receiver, not what nats-server costs the machine.
    const server = spawn('chrt', ['--idle', '0', 'nats-server', '-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDirectory], {
      stdio: 'ignore',
    });
    // Unreferenced, so that it does not keep the bench alive once its work is done; killed as the bench exits.
    server.unref();
    process.on('exit', () => server.kill('SIGKILL'));
    for (let attempt = 0; attempt < 300 && server.exitCode === null; attempt += 1) {
      const up = await fetch(`http://127.0.0.1:${port}`).then(
        () => true,
        (error: Error & { cause?: { code?: string } }) => error.cause?.code !== 'ECONNREFUSED',
      );
      if (up) return `nats://127.0.0.1:${port}`;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('nats-server did not start (is it installed? apt-get install nats-server)');
  })();
  return natsEndpoint;
}
