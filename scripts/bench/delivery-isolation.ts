/**
 * Partners' answers beside webhooks out (contract section 13.3, "delivery never delays the answers partners wait
 * for"): the built receiver under the bench's withdraw load (autocannon, 10 connections), once with no endpoint and
 * once with three (one answering 500 at once, one never answering within DELIVERY_TIMEOUT_MS, one healthy), on the
 * memory store and, with DATABASE_URL, on PostgreSQL (a schema of its own, dropped after). The runs of a store go one
 * after the other, never at once, so they share the machine alike; prints a short table.
 *
 *   npm run bench:delivery                         # memory store
 *   DATABASE_URL=postgres://... npm run bench:delivery
 *   BENCH_BASELINE=../other-tree npm run bench:delivery   # that tree's build too, each configuration after this one's
 *
 * BENCH_SECONDS (default 10), BENCH_TOKENS (default 10,000) and BENCH_ROUNDS (default 1) change the run;
 * BENCH_RATE=N offers N withdrawals a second rather than as many as the receiver answers, for the latencies of a
 * receiver that is not saturated. With Debian's nats-server installed, a fourth configuration publishes to NATS
 * (contract 13.4) instead. Besides the rate and latencies it reads the CPU per withdrawal of the whole process and of
 * its main thread, which serves the requests: what delivery takes of that thread shows there. A last configuration,
 * `idle spinner`, is the control: no endpoint, and a process under SCHED_IDLE that only spins (no memory, no system
 * call) for the whole run, what any work the other core does, and nothing else, costs partners on this machine.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { writeBenchSeed } from './seed';
import {
  cpuMicros,
  listeningPort,
  mainThreadCpuMicros,
  natsServer,
  refuseUnanswered,
  SCHED_IDLE,
  schedulingOf,
  startReceiver,
  stopServer,
  storeEnvironment,
} from './servers';
import { withdrawalBodies } from './store-alone';

const ROOT = path.resolve(__dirname, '..', '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARM_UP_SECONDS = 2;
const TOKENS = Number(process.env.BENCH_TOKENS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const RATE = process.env.BENCH_RATE ? Number(process.env.BENCH_RATE) : undefined;
const BASELINE = process.env.BENCH_BASELINE && path.resolve(process.env.BENCH_BASELINE);
const CONNECTIONS = 10;
const DELIVERY_TIMEOUT_MS = 2_000;
const SECRET = `whsec_${Buffer.from('bench-delivery-endpoint-secret-01').toString('base64')}`;

/**
 * A process under SCHED_IDLE that spins until it is killed, or its parent (this bench) is gone: work on another core,
 * and nothing of the receiver's. It looks at its parent every 2^27 turns (a fraction of a second), so a bench that
 * dies leaves no spinner to slow the runs after it. Resolves once the kernel runs it under SCHED_IDLE.
 */
async function idleSpinner() {
  const spin = 'const parent = process.ppid; for (let i = 1; ; i++) if ((i & 0x7ffffff) === 0 && process.ppid !== parent) process.exit();';
  const child = spawn('chrt', ['--idle', '0', process.execPath, '-e', spin], { stdio: 'ignore' });
  child.on('error', () => undefined);
  const stop = () => child.kill('SIGKILL');
  for (let attempt = 0; attempt < 100; attempt += 1) {
    // Past chrt's exec (Node names its main thread MainThread), under the policy chrt gave it.
    const scheduling = child.pid === undefined ? undefined : schedulingOf(child.pid);
    if (scheduling?.policy === SCHED_IDLE && scheduling.command !== 'chrt') return { stop };
    if (child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  stop();
  throw new Error('the idle spinner did not start under SCHED_IDLE (is chrt there, and SCHED_IDLE allowed?)');
}

/**
 * The three endpoints, in a process of their own under SCHED_IDLE (webhook-endpoints.js): on a host of their own in
 * use, here they take only the CPU the receiver and the load generator leave, and never the load generator's thread,
 * so partners' rate shows what delivery costs the receiver.
 */
async function endpoints(statuses: Array<number | 'never'>) {
  const child = spawn('chrt', ['--idle', '0', process.execPath, path.join(__dirname, 'webhook-endpoints.js'), ...statuses.map(String)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  const { ports } = JSON.parse(line) as { ports: number[] };
  const urls = ports.map((port) => `http://127.0.0.1:${port}/hooks`);
  return {
    urls,
    received: async (index: number) => Number(await (await fetch(urls[index])).text()),
    stop: () => child.kill('SIGKILL'),
  };
}

interface Run {
  rate: number;
  p50: number;
  p99: number;
  delivered: number;
  /** µs of CPU per withdrawal: the process's, and its main thread's alone. */
  processCpu: number;
  mainThreadCpu: number;
}

async function run(
  tree: string,
  seedFile: string,
  storeEnv: Record<string, string>,
  logFile: string,
  healthyReceived: () => Promise<number>,
): Promise<Run> {
  const child = startReceiver({
    tree,
    seedFile,
    logFile,
    // BENCH_PROFILE=1: each thread of the receiver writes a CPU profile to bench-results/profile when it stops.
    nodeFlags: process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${path.join(ROOT, 'bench-results', 'profile')}`] : undefined,
    storeEnv: {
      ...storeEnv,
      DELIVERY_ALLOW_HTTP: 'true',
      // The default retry schedule (5 s, then minutes): the failing endpoint is tried again within the run.
      DELIVERY_TIMEOUT_MS: String(DELIVERY_TIMEOUT_MS),
    },
  });
  try {
    const port = await listeningPort(child, logFile);
    const next = withdrawalBodies(TOKENS);
    const request: autocannon.Request = {
      method: 'POST',
      path: '/v1/tokens/withdraw',
      headers: { 'content-type': 'application/json' },
      setupRequest: (base) => ({ ...base, body: next() }),
    };
    const load = (seconds: number) =>
      autocannon({ url: `http://127.0.0.1:${port}`, connections: CONNECTIONS, duration: seconds, requests: [request], overallRate: RATE });
    refuseUnanswered(await load(WARM_UP_SECONDS), logFile);
    const pid = child.pid as number;
    const [before, processBefore, threadBefore] = [await healthyReceived(), cpuMicros(pid), mainThreadCpuMicros(pid)];
    const result = await load(SECONDS);
    const [processUsed, threadUsed] = [cpuMicros(pid) - processBefore, mainThreadCpuMicros(pid) - threadBefore];
    refuseUnanswered(result, logFile);
    return {
      rate: Math.round(result.requests.total / SECONDS),
      p50: result.latency.p50,
      p99: result.latency.p99,
      delivered: (await healthyReceived()) - before,
      processCpu: Math.round(processUsed / result.requests.total),
      mainThreadCpu: Math.round(threadUsed / result.requests.total),
    };
  } finally {
    await stopServer(child);
  }
}

async function main(): Promise<void> {
  const directory = mkdtempSync(path.join(tmpdir(), 'bench-delivery-'));
  const plainSeed = path.join(directory, 'seed.json');
  await writeBenchSeed(plainSeed, TOKENS);
  const endpointsProcess = await endpoints([500, 'never', 204]);
  const [failingUrl, hangingUrl, healthyUrl] = endpointsProcess.urls;
  const healthyReceived = () => endpointsProcess.received(2);
  const seedWith = (name: string, endpoints: Array<{ id: string; url: string }>) => {
    const file = path.join(directory, `seed-${name}.json`);
    const withSecrets = endpoints.map((one) => ({ ...one, secrets: [SECRET] }));
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(plainSeed, 'utf8')), endpoints: withSecrets }));
    return file;
  };
  // The healthy one alone too: what delivering costs at all, apart from what the failing and the slow one add.
  const configurations = [
    ['no endpoint', plainSeed],
    ['healthy only', seedWith('healthy', [{ id: 'healthy', url: healthyUrl }])],
    [
      '3 endpoints',
      seedWith('three', [
        { id: 'failing', url: failingUrl },
        { id: 'hanging', url: hangingUrl },
        { id: 'healthy', url: healthyUrl },
      ]),
    ],
  ] as const;
  const withNats = spawnSync('nats-server', ['--version']).status === 0;

  const rows: string[] = [];
  const stores: Array<[string, string | undefined]> = [['memory', undefined]];
  if (process.env.DATABASE_URL) stores.push(['postgres', process.env.DATABASE_URL]);
  const trees: Array<[string, string]> = [['this', ROOT]];
  if (BASELINE) trees.push(['baseline', BASELINE]);
  try {
    for (let round = 1; round <= ROUNDS; round += 1) {
      for (const [name, databaseUrl] of stores) {
        const last = [...(withNats ? [['NATS', plainSeed] as const] : []), ['idle spinner', plainSeed] as const];
        for (const [label, seedFile] of [...configurations, ...last]) {
          for (const [build, tree] of trees) {
            const store = await storeEnvironment(databaseUrl);
            try {
              const logFile = path.join(directory, `${name}-${label.replace(' ', '-')}-${build}.log`);
              const nats: Record<string, string> = label === 'NATS' ? { NATS_URL: await natsServer() } : {};
              const spinner = label === 'idle spinner' ? await idleSpinner() : undefined;
              const result = await run(tree, seedFile, { ...store.env, ...nats }, logFile, healthyReceived).finally(() => spinner?.stop());
              const delivered = seedFile === plainSeed ? '-' : String(result.delivered);
              const row =
                `${String(round).padEnd(6)}${build.padEnd(9)}${name.padEnd(9)}${label.padEnd(13)}${String(result.rate).padStart(8)}` +
                `${String(result.p50).padStart(8)}${String(result.p99).padStart(8)}${delivered.padStart(11)}` +
                `${String(result.processCpu).padStart(12)}${String(result.mainThreadCpu).padStart(13)}`;
              rows.push(row);
              process.stdout.write(`${row}\n`);
            } finally {
              await store.drop();
            }
          }
        }
      }
    }
  } finally {
    endpointsProcess.stop();
    rmSync(directory, { recursive: true, force: true });
  }
  process.stdout.write(
    `withdrawals, ${CONNECTIONS} connections${RATE ? `, ${RATE} a second offered` : ''}, ${SECONDS} s after ${WARM_UP_SECONDS} s of warm-up; endpoints: one 500 at once, one never answering (DELIVERY_TIMEOUT_MS ${DELIVERY_TIMEOUT_MS}), one healthy, in a process under SCHED_IDLE\n`,
  );
  process.stdout.write(
    `round build    store    endpoints       req/s  p50 ms  p99 ms  delivered  process µs  main thread µs (CPU per withdrawal)\n${rows.join('\n')}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
