import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { Client } from 'pg';
import { cpuMicros, listeningPort, refuseUnanswered, startReceiver, stopServer, storeEnvironment } from './servers';
import { writeBenchSeed } from './seed';
import { withdrawalBodies } from './store-alone';

const ROOT = path.resolve(__dirname, '..', '..');
const TOKENS = 40_000;
const SECONDS = Number(process.env.SECONDS ?? 8);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const WITH = `CREATE OR REPLACE FUNCTION number_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO change_counters AS c (source_id, last_seq) VALUES (NEW.source_id, 1)
  ON CONFLICT (source_id) DO UPDATE SET last_seq = c.last_seq + 1
  RETURNING c.last_seq INTO NEW.seq;
  PERFORM pg_notify('receiver_changes', NEW.source_id);
  RETURN NEW;
END $$`;
const WITHOUT = WITH.replace("  PERFORM pg_notify('receiver_changes', NEW.source_id);\n", '');
const VARIANTS: Record<string, string[]> = {
  'notify + index (branch)': [WITH, 'CREATE INDEX IF NOT EXISTS changes_by_type ON changes (source_id, type, seq)'],
  'index, no notify': [WITHOUT, 'CREATE INDEX IF NOT EXISTS changes_by_type ON changes (source_id, type, seq)'],
  'neither (as main)': [WITHOUT, 'DROP INDEX IF EXISTS changes_by_type'],
};

async function main() {
  const dir = mkdtempSync(path.join(tmpdir(), 'notify-ab-'));
  const seedFile = path.join(dir, 'seed.json');
  await writeBenchSeed(seedFile, TOKENS);
  const store = await storeEnvironment(process.env.DATABASE_URL);
  const logFile = path.join(dir, 'receiver.log');
  const child = startReceiver({ tree: ROOT, seedFile, storeEnv: store.env, logFile });
  const url = `http://127.0.0.1:${await listeningPort(child, logFile, 120)}`;
  const admin = new Client({ connectionString: store.env.DATABASE_URL });
  await admin.connect();
  let first = 0;
  const per = Math.floor(TOKENS / (ROUNDS * 3 + 1));
  const run = async (seconds: number) => {
    const next = withdrawalBodies(per, Date.now() % 1e8, first);
    first += per;
    const cpu = cpuMicros(child.pid as number);
    const result = await autocannon({ url, connections: 16, duration: seconds, requests: [{ method: 'POST', path: '/v1/tokens/withdraw', headers: { 'content-type': 'application/json' }, setupRequest: (r) => ({ ...r, body: next() }) }] });
    refuseUnanswered(result, logFile);
    return { perSecond: Math.round(result.requests.total / seconds), cpuUs: Math.round((cpuMicros(child.pid as number) - cpu) / result.requests.total), p99: result.latency.p99 };
  };
  await run(4);
  process.stdout.write('| round | variant | withdrawals/s | receiver CPU µs/withdrawal | p99 ms |\n|---|---|---|---|---|\n');
  for (let round = 1; round <= ROUNDS; round += 1) {
    for (const [name, statements] of Object.entries(VARIANTS)) {
      for (const statement of statements) await admin.query(statement);
      const m = await run(SECONDS);
      process.stdout.write(`| ${round} | ${name} | ${m.perSecond} | ${m.cpuUs} | ${m.p99} |\n`);
    }
  }
  await admin.end();
  await stopServer(child);
  await store.drop();
}
main().catch((e) => { console.error(e); process.exit(1); });
