/**
 * npm run bench:perf [-- CONNECTIONS]: where the receiver's CPU goes per withdrawal, by thread, system call and
 * module, on the memory store and, with DATABASE_URL set, on PostgreSQL beside it: the table of docs/BENCHMARKS.md
 * ("Where it goes"). Each receiver runs natively with node's --perf-basic-prof (so perf can name JIT code) under
 * autocannon at CONNECTIONS (default 16, the bench's), WARM seconds (default 12) of load, then 8 more while
 * `perf record -e cpu-clock -g` samples it. Every sample is given to its thread (V8's helpers, libuv's worker),
 * the system call it was in, garbage collection, or the module of the first JavaScript frame on its stack. Sampling:
 * a few µs between runs is noise; compare categories, not totals. Needs perf (Debian's linux-perf) and a kernel
 * that lets it sample (perf_event_paranoid at most 2).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { batchSizesLogged, listeningPort, refuseUnanswered, startReceiver, stopServer, storeEnvironment } from './servers';
import { writeBenchSeed } from './seed';
import { warmUpAndCountedLoads } from './store-alone';

const ROOT = path.resolve(__dirname, '..', '..');
const TOKENS = 50_000;
const CONNECTIONS = Number(process.argv[2] ?? 16);
const WARM = Number(process.env.WARM ?? 12);
const SECONDS = 8;
const FREQUENCY = 1999;

/** The categories of the table, in its order, by name; a sample's is the first that claims it (categoryOf). */
const CATEGORY = {
  postgresStore: 'the store on PostgreSQL (dist/store/postgres)',
  driver: 'node-postgres (pg, pg-protocol, pg-pool, pg-types)',
  memoryStore: 'the memory store (dist/store/memory-*)',
  v8Helpers: "V8's helper threads (parallel scavenges, concurrent marking, compilers)",
  garbageCollection: 'garbage collection on the main thread',
  log: "the log: libuv's worker thread, waking it, node:fs, sonic-boom",
  socketWrites: 'kernel: socket writes (answers; round trips to the database)',
  epoll: 'kernel: epoll (turns of the event loop, waking up)',
  socketReads: 'kernel: socket reads',
  kernel: 'kernel: the rest',
  nodeRuntime: "Node's streams, sockets, timers and promise jobs",
  nodeHttp: "Node's HTTP (node:_http_*, llhttp)",
  rest: 'the rest: Express and its router, zod, pino, metrics, services, V8 builtins',
} as const;
type Category = (typeof CATEGORY)[keyof typeof CATEGORY];
const CATEGORIES = Object.values(CATEGORY);

const GARBAGE_COLLECTION = /Scavenger|Heap::|MarkCompact|IncrementalMarking|GCTracer|MinorMark|Sweeper/;

/** The category of a JavaScript frame, by the module its code is in. */
function moduleCategory(frame: string): Category {
  if (frame.includes('/dist/store/postgres/')) return CATEGORY.postgresStore;
  if (/node_modules\/pg(-[a-z]+)?\//.test(frame)) return CATEGORY.driver;
  if (frame.includes('/dist/store/memory')) return CATEGORY.memoryStore;
  if (/node:fs|sonic-boom/.test(frame)) return CATEGORY.log;
  if (/node:_http|llhttp/.test(frame)) return CATEGORY.nodeHttp;
  if (/node:(internal|net|timers|events)/.test(frame)) return CATEGORY.nodeRuntime;
  return CATEGORY.rest;
}

/** A sample's category: `thread` its thread's name, `frames` its stack as perf names them, innermost first. */
function categoryOf(thread: string, frames: string[]): Category {
  if (thread === 'libuv-worker') return CATEGORY.log;
  if (thread !== 'MainThread') return CATEGORY.v8Helpers;
  if (frames[0].includes('[kernel.kallsyms]')) {
    // In the kernel: by the C library call that entered it.
    const caller = frames.find((frame) => !frame.includes('[kernel.kallsyms]')) ?? '';
    if (/writev|libc_write/.test(caller)) return CATEGORY.socketWrites;
    if (caller.includes('epoll')) return CATEGORY.epoll;
    // Waking libuv's worker for a log write; V8 wakes its helpers the same way.
    if (/pthread_cond_signal|lll_lock/.test(caller) && frames.some((frame) => frame.includes('uv_fs_write'))) return CATEGORY.log;
    if (/\bread\b/.test(caller)) return CATEGORY.socketReads;
    return CATEGORY.kernel;
  }
  for (const frame of frames) {
    if (GARBAGE_COLLECTION.test(frame)) return CATEGORY.garbageCollection;
    if (frame.startsWith('JS:')) return moduleCategory(frame);
  }
  return frames[0].includes('llhttp') ? CATEGORY.nodeHttp : CATEGORY.rest;
}

/** The samples of a `perf record` file by category. */
function samplesByCategory(dataFile: string): Map<Category, number> {
  const script = spawnSync('perf', ['script', '-i', dataFile, '-F', 'comm,ip,sym,dso'], { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (script.status !== 0) throw new Error(`perf script failed: ${script.stderr}`);
  const counts = new Map<Category, number>(CATEGORIES.map((category) => [category, 0]));
  for (const sample of script.stdout.split('\n\n')) {
    const [header, ...lines] = sample.split('\n').filter((line) => line.trim() !== '');
    if (!header || lines.length === 0) continue;
    // "ffffffff813a4413 finish_task_switch.isra.0 ([kernel.kallsyms])": the address, then the symbol and its object.
    const frames = lines.map((line) => line.trim().replace(/^\S+ /, ''));
    const category = categoryOf(header.trim().split(/\s+/)[0], frames);
    counts.set(category, (counts.get(category) as number) + 1);
  }
  return counts;
}

interface Profile {
  store: string;
  withdrawalsPerSecond: number;
  /** µs of the receiver's CPU per withdrawal, by category. */
  micros: Map<Category, number>;
  batches: unknown;
}

/** One receiver on `databaseUrl`'s PostgreSQL (or the memory store), loaded, sampled, stopped. */
async function profile(seedFile: string, databaseUrl: string | undefined): Promise<Profile> {
  const store = await storeEnvironment(databaseUrl);
  const directory = mkdtempSync(path.join(tmpdir(), 'receiver-perf-'));
  const logFile = path.join(directory, 'receiver.log');
  const dataFile = path.join(directory, 'perf.data');
  let child: ChildProcess | undefined;
  try {
    child = startReceiver({
      tree: ROOT,
      seedFile,
      storeEnv: store.env,
      logFile,
      nodeFlags: ['--perf-basic-prof'],
      // V8 writes a log file per isolate into the working directory under --perf-basic-prof: this run's, removed after.
      cwd: directory,
    });
    const port = await listeningPort(child, logFile, 120);
    const url = `http://127.0.0.1:${port}`;
    const { warmUp, counted } = warmUpAndCountedLoads(TOKENS, 1);
    await autocannon({ url, connections: CONNECTIONS, duration: WARM, requests: warmUp });
    const perf = spawn(
      'perf',
      ['record', '-e', 'cpu-clock', '-F', String(FREQUENCY), '-g', '-p', String(child.pid), '-o', dataFile, '--', 'sleep', String(SECONDS)],
      {
        stdio: 'ignore',
      },
    );
    const result = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, requests: counted });
    const [code] = (await once(perf, 'exit')) as [number | null];
    if (code !== 0)
      throw new Error(`perf record exited with ${code}: is linux-perf installed, and may it sample (perf_event_paranoid <= 2)?`);
    refuseUnanswered(result, logFile);
    await stopServer(child);
    const withdrawals = Math.max(result.requests.total, 1);
    const micros = new Map<Category, number>();
    for (const [category, samples] of samplesByCategory(dataFile)) micros.set(category, ((samples / FREQUENCY) * 1e6) / withdrawals);
    return {
      store: databaseUrl ? 'PostgreSQL' : 'memory store',
      withdrawalsPerSecond: Math.round(result.requests.total / SECONDS),
      micros,
      batches: batchSizesLogged(logFile),
    };
  } finally {
    if (child) {
      await stopServer(child);
      // The map --perf-basic-prof wrote for perf to name the JIT code.
      rmSync(`/tmp/perf-${child.pid}.map`, { force: true });
    }
    rmSync(directory, { recursive: true, force: true });
    await store.drop();
  }
}

async function main(): Promise<void> {
  if (spawnSync('perf', ['--version']).error) {
    process.stderr.write('bench:perf needs perf: apt-get install -y linux-perf\n');
    process.exit(2);
  }
  const seedDirectory = mkdtempSync(path.join(tmpdir(), 'receiver-perf-seed-'));
  const seedFile = path.join(seedDirectory, 'seed.json');
  await writeBenchSeed(seedFile, TOKENS);
  const profiles = [await profile(seedFile, undefined)];
  if (process.env.DATABASE_URL) profiles.push(await profile(seedFile, process.env.DATABASE_URL));
  rmSync(seedDirectory, { recursive: true, force: true });
  const format = (value: number) => value.toFixed(1);
  const total = (p: Profile) => [...p.micros.values()].reduce((sum, value) => sum + value, 0);
  const withDifference = profiles.length === 2;
  const row = (name: string, values: number[]) =>
    `| ${name} | ${values.map(format).join(' | ')}${withDifference ? ` | ${values[1] - values[0] >= 0 ? '+' : ''}${format(values[1] - values[0])}` : ''} |\n`;
  process.stdout.write(
    `µs of the receiver's CPU per withdrawal, ${CONNECTIONS} connections, ${SECONDS} s sampled after ${WARM} s of load:\n\n` +
      `| | ${profiles.map((p) => `${p.store} (${p.withdrawalsPerSecond.toLocaleString('en')}/s)`).join(' | ')}${withDifference ? ' | difference' : ''} |\n` +
      `|---|${profiles.map(() => '---|').join('')}${withDifference ? '---|' : ''}\n`,
  );
  for (const category of CATEGORIES) {
    process.stdout.write(
      row(
        category,
        profiles.map((p) => p.micros.get(category) as number),
      ),
    );
  }
  process.stdout.write(row('**total**', profiles.map(total)));
  for (const p of profiles) if (p.batches) process.stdout.write(`\nunits per batch on ${p.store}: ${JSON.stringify(p.batches)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
