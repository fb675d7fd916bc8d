/**
 * npm run bench:instructions [-- TREE …]: the instructions a withdrawal costs the receiver on the memory store,
 * counted by valgrind's callgrind, for this checkout's build and for each TREE (another checkout with its own
 * dist/ and node_modules, e.g. a worktree of main). Timed runs on this shared machine moved by ±15% between rounds;
 * callgrind counts instructions, not seconds, whatever else the machine is doing: most rounds of one build fall
 * within 3% of each other, and a round that counts more has caught extra work in its window, so each build's
 * lowest count is the one to compare. A change of a few per cent shows here, where the timed bench cannot tell it
 * from the noise; what it does to throughput is still the timed bench's to say (docs/BENCHMARKS.md, "Counting
 * instructions").
 *
 * Each receiver runs under callgrind with instrumentation off while WARM withdrawals (default 40,000) bring its
 * code to the optimised steady state (V8 was still compiling after 4,000), then counts COUNT more (default 2,000,
 * over 10 keep-alive connections, as the bench's load). Kernel time is not counted: the system calls are the
 * same for two builds of one path. Needs valgrind (Debian's package).
 *
 * With DATABASE_URL set, each receiver runs on PostgreSQL instead (a fresh schema per run, a pool of 16 as in the
 * bench). The count is the receiver's own share of a durable withdrawal: the batch's per-unit cost and its
 * per-batch cost spread over the batch's units, which moves with the batch sizes it prints (8 to 9.5 units of 10
 * on average in the runs of 11-27), and a major collection in the window can add a fifth: compare more rounds.
 */
import { execFileSync, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { batchSizesLogged, listeningPort, startReceiver, stopServer, storeEnvironment } from './servers';
import { writeBenchSeed } from './seed';
import { withdrawalBodies } from './store-alone';

const ROOT = path.resolve(__dirname, '..', '..');
const TOKENS = 1_000;
const CONNECTIONS = 10;
const WARM = Number(process.env.WARM ?? 40_000);
const COUNT = Number(process.env.COUNT ?? 2_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
// The receiver's listen address (serverEnvironment), and $HOST to callgrind_control, which finds the process by a
// file named after the $HOST the process was started with.
const HOST = '127.0.0.1';
const DATABASE_URL = process.env.DATABASE_URL;

/** Sends `total` withdrawals over CONNECTIONS connections; the answers by status. */
async function load(port: number, total: number, next: () => string): Promise<Record<number, number>> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const statuses: Record<number, number> = {};
  const post = (body: string) =>
    new Promise<number>((resolve, reject) => {
      const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
      const req = request({ host: HOST, port, path: '/v1/tokens/withdraw', method: 'POST', agent, headers }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(body);
    });
  let sent = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (sent < total) {
        sent += 1;
        const status = await post(next());
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  agent.destroy();
  return statuses;
}

/** The instructions per withdrawal of the receiver built in `tree`, and what its store said of its batches. */
async function instructionsPerWithdrawal(tree: string, seedFile: string): Promise<{ count: number; batches: string }> {
  const store = await storeEnvironment(DATABASE_URL);
  const directory = mkdtempSync(path.join(tmpdir(), 'receiver-instructions-'));
  const logFile = path.join(directory, 'receiver.log');
  let child: ChildProcess | undefined;
  try {
    const callgrind = ['valgrind', '--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${directory}/callgrind.%p`];
    child = startReceiver({ tree, seedFile, storeEnv: store.env, logFile, runUnder: callgrind });
    const pid = String(child.pid);
    const control = (...args: string[]) =>
      execFileSync('callgrind_control', [...args, pid], { env: { ...process.env, HOST }, stdio: 'ignore' });
    // Under callgrind the receiver starts far slower than natively.
    const port = await listeningPort(child, logFile, 600);
    const next = withdrawalBodies(TOKENS);
    await load(port, WARM, next);
    // Switching instrumentation on translates the code anew: counted from a second warm-up on.
    control('--instr=on');
    await load(port, COUNT, next);
    control('--zero');
    const statuses = await load(port, COUNT, next);
    control('--dump');
    if (statuses[200] !== COUNT) throw new Error(`not every withdrawal was answered 200: ${JSON.stringify(statuses)}`);
    const dump = readdirSync(directory).find((name) => /^callgrind\.\d+\.1$/.test(name));
    const summary = dump && /^summary: (\d+)/m.exec(readFileSync(path.join(directory, dump), 'utf8'));
    if (!summary) throw new Error(`callgrind wrote no dump in ${directory}`);
    const count = Math.round(Number(summary[1]) / COUNT);
    await stopServer(child);
    // Over the whole run, warm-up included.
    const batches = batchSizesLogged(logFile);
    return { count, batches: batches ? ` (units per batch: ${JSON.stringify(batches)})` : '' };
  } finally {
    if (child) await stopServer(child);
    rmSync(directory, { recursive: true, force: true });
    await store.drop();
  }
}

async function main(): Promise<void> {
  if (spawnSync('valgrind', ['--version']).error) {
    process.stderr.write('bench:instructions needs valgrind: apt-get install -y valgrind\n');
    process.exit(2);
  }
  const trees = [ROOT, ...process.argv.slice(2).map((tree) => path.resolve(tree))];
  const seedDirectory = mkdtempSync(path.join(tmpdir(), 'receiver-instructions-seed-'));
  const seedFile = path.join(seedDirectory, 'seed.json');
  await writeBenchSeed(seedFile, TOKENS);
  const storeName = DATABASE_URL ? 'PostgreSQL' : 'the memory store';
  process.stdout.write(`instructions per withdrawal on ${storeName}, ${WARM} to warm up, ${COUNT} counted, ${ROUNDS} rounds:\n`);
  const counts = new Map<string, number[]>(trees.map((tree) => [tree, []]));
  for (let round = 1; round <= ROUNDS; round += 1) {
    // Interleaved, each round in the other order.
    for (const tree of round % 2 === 1 ? trees : [...trees].reverse()) {
      const { count, batches } = await instructionsPerWithdrawal(tree, seedFile);
      (counts.get(tree) as number[]).push(count);
      process.stdout.write(`  round ${round} ${tree}: ${count.toLocaleString('en')}${batches}\n`);
    }
  }
  // A count only gains from what happens to fall into its window (a collection or a recompilation, say): the lowest
  // of a build's rounds is the one to compare, the median beside it.
  for (const [tree, values] of counts) {
    const sorted = [...values].sort((a, b) => a - b);
    const [lowest, median] = [sorted[0], sorted[Math.floor(sorted.length / 2)]];
    const all = sorted.map((value) => value.toLocaleString('en')).join(', ');
    process.stdout.write(`${tree}: lowest ${lowest.toLocaleString('en')}, median ${median.toLocaleString('en')} (${all})\n`);
  }
  rmSync(seedDirectory, { recursive: true, force: true });
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
