/**
 * npm run bench:gc [-- CONNECTIONS] [TREE …]: what a withdrawal leaves to V8's garbage collector, on the memory store
 * and, with DATABASE_URL set, on PostgreSQL, for this checkout's build and each TREE (another checkout with its own
 * dist/ and node_modules), interleaved over BENCH_ROUNDS (default 3). Each receiver runs with `--trace-gc-nvp` under
 * autocannon at CONNECTIONS (default 16): BENCH_WARM_SECONDS (default 5) of load, then BENCH_SECONDS (default 8) counted. Per
 * scavenge (V8's collection of the young generation, 16 MB here), the medians of the bytes it copied within the
 * young generation and promoted to the old one, and of its pause; per withdrawal, the bytes promoted and the time
 * paused in all collections. A request's objects should die young: what a scavenge promotes that is not kept for
 * good (the ledger on the memory store, the event log's ring) is work for a full collection later, and a
 * promotion per scavenge near its copy says that something keeps the young objects alive past their request
 * (docs/BENCHMARKS.md, "What survives a scavenge"). Counts of bytes, unlike the timed bench, barely move with
 * the machine's load. With them, the receiver's CPU per withdrawal (every thread, from /proc), for a change's A/B.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { cpuMicros, listeningPort, refuseUnanswered, startReceiver, stopServer, storeEnvironment } from './servers';
import { writeBenchSeed } from './seed';
import { warmUpAndCountedLoads } from './store-alone';
import { median } from './median';

const ROOT = path.resolve(__dirname, '..', '..');
const TOKENS = 50_000;
const given = process.argv.slice(2);
// A leading number is the connection count; every other argument is a tree.
const CONNECTIONS = /^\d+$/.test(given[0] ?? '') ? Number(given.shift()) : 16;
const TREES = [ROOT, ...given.map((tree) => path.resolve(tree))];
const WARM = Number(process.env.BENCH_WARM_SECONDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/** One collection as --trace-gc-nvp prints it: `gc=s` a scavenge, `gc=mc` a full (mark-compact) collection. */
interface Collection {
  scavenge: boolean;
  pauseMs: number;
  copied: number;
  promoted: number;
}

function collections(log: string): Collection[] {
  return log
    .split('\n')
    .filter((line) => / gc=\w+ /.test(line))
    .map((line) => {
      const field = (name: string) => {
        const value = new RegExp(`\\b${name}=([\\d.]+)`).exec(line)?.[1];
        if (value === undefined) throw new Error(`a collection's line without ${name}=: ${line.slice(0, 120)}`);
        return Number(value);
      };
      return { scavenge: / gc=s /.test(line), pauseMs: field('pause'), copied: field('new_space_survived'), promoted: field('promoted') };
    });
}

interface Measurement {
  withdrawalsPerSecond: number;
  cpuUsPerWithdrawal: number;
  scavengesPer1000: number;
  copiedKbPerScavenge: number;
  promotedKbPerScavenge: number;
  scavengePauseMs: number;
  promotedBytesPerWithdrawal: number;
  pausedUsPerWithdrawal: number;
  fullCollections: number;
}

async function measure(tree: string, seedFile: string, databaseUrl: string | undefined, runId: number): Promise<Measurement> {
  const store = await storeEnvironment(databaseUrl);
  const directory = mkdtempSync(path.join(tmpdir(), 'receiver-gc-'));
  const logFile = path.join(directory, 'receiver.log');
  let child: ChildProcess | undefined;
  try {
    child = startReceiver({ tree, seedFile, storeEnv: store.env, logFile, nodeFlags: ['--trace-gc-nvp'] });
    const port = await listeningPort(child, logFile, 120);
    const url = `http://127.0.0.1:${port}`;
    const loads = warmUpAndCountedLoads(TOKENS, runId);
    await autocannon({ url, connections: CONNECTIONS, duration: WARM, requests: loads.warmUp });
    const start = readFileSync(logFile, 'utf8').length;
    const cpuBefore = cpuMicros(child.pid as number);
    const result = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, requests: loads.counted });
    const cpuUsed = cpuMicros(child.pid as number) - cpuBefore;
    refuseUnanswered(result, logFile);
    const counted = collections(readFileSync(logFile, 'utf8').slice(start));
    const scavenges = counted.filter((collection) => collection.scavenge);
    if (scavenges.length === 0) throw new Error('no scavenge while counting: count longer (BENCH_SECONDS)');
    const withdrawals = Math.max(result.requests.total, 1);
    return {
      withdrawalsPerSecond: Math.round(withdrawals / SECONDS),
      cpuUsPerWithdrawal: Math.round(cpuUsed / withdrawals),
      scavengesPer1000: Math.round((scavenges.length / withdrawals) * 1000 * 10) / 10,
      copiedKbPerScavenge: Math.round(median(scavenges.map((s) => s.copied)) / 1024),
      promotedKbPerScavenge: Math.round(median(scavenges.map((s) => s.promoted)) / 1024),
      scavengePauseMs: median(scavenges.map((s) => s.pauseMs)),
      promotedBytesPerWithdrawal: Math.round(scavenges.reduce((sum, s) => sum + s.promoted, 0) / withdrawals),
      pausedUsPerWithdrawal: Math.round((counted.reduce((sum, c) => sum + c.pauseMs, 0) * 1000) / withdrawals),
      fullCollections: counted.length - scavenges.length,
    };
  } finally {
    if (child) await stopServer(child);
    rmSync(directory, { recursive: true, force: true });
    await store.drop();
  }
}

async function main(): Promise<void> {
  const unbuilt = TREES.filter((tree) => !existsSync(path.join(tree, 'dist', 'server.js')));
  if (unbuilt.length > 0) throw new Error(`no dist/server.js in ${unbuilt.join(', ')}: build each tree first (npm run build)`);
  if (CONNECTIONS < 1) throw new Error('CONNECTIONS must be at least 1');
  const seedDirectory = mkdtempSync(path.join(tmpdir(), 'receiver-gc-seed-'));
  const seedFile = path.join(seedDirectory, 'seed.json');
  await writeBenchSeed(seedFile, TOKENS);
  const stores: Array<[string, string | undefined]> = [['memory store', undefined]];
  if (process.env.DATABASE_URL) stores.push(['PostgreSQL', process.env.DATABASE_URL]);
  process.stdout.write(
    `what a withdrawal leaves to the garbage collector, ${CONNECTIONS} connections, ${SECONDS} s counted after ${WARM} s, ${ROUNDS} round(s):\n\n` +
      '| round | store | build | withdrawals/s | receiver CPU µs per withdrawal | scavenges per 1,000 | KB copied / promoted per scavenge (median) | scavenge pause ms (median) | bytes promoted per withdrawal | µs paused per withdrawal | full collections |\n' +
      '|---|---|---|---|---|---|---|---|---|---|---|\n',
  );
  let runId = 1;
  try {
    for (let round = 1; round <= ROUNDS; round += 1) {
      for (const [storeName, databaseUrl] of stores) {
        for (const tree of TREES) {
          const m = await measure(tree, seedFile, databaseUrl, (runId += 1));
          process.stdout.write(
            `| ${round} | ${storeName} | ${path.relative(process.cwd(), tree) || '.'} | ${m.withdrawalsPerSecond.toLocaleString('en')} | ${m.cpuUsPerWithdrawal} | ${m.scavengesPer1000} | ` +
              `${m.copiedKbPerScavenge} / ${m.promotedKbPerScavenge} | ${m.scavengePauseMs} | ${m.promotedBytesPerWithdrawal.toLocaleString('en')} | ${m.pausedUsPerWithdrawal} | ${m.fullCollections} |\n`,
          );
        }
      }
    }
  } finally {
    rmSync(seedDirectory, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
