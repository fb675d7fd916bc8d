/**
 * Partners' answers beside webhooks out (contract section 13.3, "delivery never delays the answers partners wait
 * for"): the built receiver under the bench's withdraw load (autocannon, 10 connections), once with no endpoint and
 * once with three (one answering 500 at once, one never answering within DELIVERY_TIMEOUT_MS, one healthy), on the
 * memory store and, with DATABASE_URL, on PostgreSQL (a schema of its own, dropped after). The runs of a store go one
 * after the other, never at once, so they share the machine alike; prints a short table.
 *
 *   npm run bench:delivery                         # memory store
 *   DATABASE_URL=postgres://... npm run bench:delivery
 *
 * BENCH_SECONDS (default 10) and BENCH_TOKENS (default 10,000) change the run.
 */
import http from 'node:http';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { writeBenchSeed } from './seed';
import { listeningPort, refuseUnanswered, startReceiver, stopServer, storeEnvironment } from './servers';
import { withdrawalBodies } from './store-alone';

const ROOT = path.resolve(__dirname, '..', '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARM_UP_SECONDS = 2;
const TOKENS = Number(process.env.BENCH_TOKENS ?? 10_000);
const CONNECTIONS = 10;
const DELIVERY_TIMEOUT_MS = 2_000;
const SECRET = `whsec_${Buffer.from('bench-delivery-endpoint-secret-01').toString('base64')}`;

/** An endpoint in this process: answers with `status`, or never; counts what it received. */
async function endpoint(status: number | 'never') {
  let received = 0;
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received += 1;
      if (status !== 'never') response.writeHead(status).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received: () => received,
    stop: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

interface Run {
  rate: number;
  p50: number;
  p99: number;
  delivered: number;
}

async function run(seedFile: string, storeEnv: Record<string, string>, logFile: string, healthyReceived: () => number): Promise<Run> {
  const child = startReceiver({
    tree: ROOT,
    seedFile,
    logFile,
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
      autocannon({ url: `http://127.0.0.1:${port}`, connections: CONNECTIONS, duration: seconds, requests: [request] });
    refuseUnanswered(await load(WARM_UP_SECONDS), logFile);
    const before = healthyReceived();
    const result = await load(SECONDS);
    refuseUnanswered(result, logFile);
    return {
      rate: Math.round(result.requests.total / SECONDS),
      p50: result.latency.p50,
      p99: result.latency.p99,
      delivered: healthyReceived() - before,
    };
  } finally {
    await stopServer(child);
  }
}

async function main(): Promise<void> {
  const directory = mkdtempSync(path.join(tmpdir(), 'bench-delivery-'));
  const plainSeed = path.join(directory, 'seed.json');
  await writeBenchSeed(plainSeed, TOKENS);
  const failing = await endpoint(500);
  const hanging = await endpoint('never');
  const healthy = await endpoint(204);
  const seedWith = (name: string, endpoints: Array<{ id: string; url: string }>) => {
    const file = path.join(directory, `seed-${name}.json`);
    const withSecrets = endpoints.map((one) => ({ ...one, secrets: [SECRET] }));
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(plainSeed, 'utf8')), endpoints: withSecrets }));
    return file;
  };
  // The healthy one alone too: what delivering costs at all, apart from what the failing and the slow one add.
  const configurations = [
    ['no endpoint', plainSeed],
    ['healthy only', seedWith('healthy', [{ id: 'healthy', url: healthy.url }])],
    [
      '3 endpoints',
      seedWith('three', [
        { id: 'failing', url: failing.url },
        { id: 'hanging', url: hanging.url },
        { id: 'healthy', url: healthy.url },
      ]),
    ],
  ] as const;

  const rows: string[] = [];
  const stores: Array<[string, string | undefined]> = [['memory', undefined]];
  if (process.env.DATABASE_URL) stores.push(['postgres', process.env.DATABASE_URL]);
  try {
    for (const [name, databaseUrl] of stores) {
      for (const [label, seedFile] of configurations) {
        const store = await storeEnvironment(databaseUrl);
        try {
          const logFile = path.join(directory, `${name}-${label.replace(' ', '-')}.log`);
          const result = await run(seedFile, store.env, logFile, healthy.received);
          const delivered = seedFile === plainSeed ? '-' : String(result.delivered);
          rows.push(
            `${name.padEnd(9)}${label.padEnd(13)}${String(result.rate).padStart(8)}${String(result.p50).padStart(8)}${String(result.p99).padStart(8)}${delivered.padStart(11)}`,
          );
        } finally {
          await store.drop();
        }
      }
    }
  } finally {
    await Promise.all([failing.stop(), hanging.stop(), healthy.stop()]);
    rmSync(directory, { recursive: true, force: true });
  }
  process.stdout.write(
    `withdrawals, ${CONNECTIONS} connections, ${SECONDS} s after ${WARM_UP_SECONDS} s of warm-up; endpoints: one 500 at once, one never answering (DELIVERY_TIMEOUT_MS ${DELIVERY_TIMEOUT_MS}), one healthy\n`,
  );
  process.stdout.write(`store    endpoints       req/s  p50 ms  p99 ms  delivered\n${rows.join('\n')}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
