/**
 * DATABASE_URL=… npm run bench:change-cost: what recording a change (contract section 13.1) costs the PostgreSQL
 * store alone, without HTTP: the bench's store-alone leg (16 callers of Store.transaction with the withdraw
 * service, measureStoreAlone), each unit recording or not a change shaped as the receiver's (the token's and the
 * ledger row's views, the request); the two interleaved over BENCH_ROUNDS (default 4) of BENCH_SECONDS (default
 * 5), with this process's CPU and the WAL written per withdrawal. In a schema of its own, dropped at the end.
 * BENCH_SETUP runs SQL on that schema first (`SCHEMA` stands for its name), to try a variant: say, dropping an index.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { ledgerEntryView, tokenView } from '../../src/routes/token-view';
import { withdraw } from '../../src/services/token-ledger';
import { writeBenchSeed } from './seed';
import { measureStoreAlone, openBenchStore, withdrawals, type StoreAloneUnit } from './store-alone';

const TOKENS = 50_000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);

/** The withdrawal and its change, shaped as the receiver records it (routes/apply-in-one-unit.ts). */
const withdrawAndRecord: StoreAloneUnit = async (tx, request, account) => {
  const outcome = await withdraw(tx, request, account, new Date());
  const { token, ledgerEntry } = tx.lastWritten();
  if (token && ledgerEntry) {
    await tx.recordChange({
      sourceId: account.sourceId,
      id: `chg_${randomUUID()}`,
      type: 'token.withdrawn',
      createdAt: new Date(),
      body: {
        token: tokenView(token),
        ledger_entry: ledgerEntryView(ledgerEntry),
        request: { operation: 'withdraw', request_id: randomUUID(), transaction_id: request.transaction_id },
      },
    });
  }
  return outcome;
};

async function main() {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('DATABASE_URL is not set: this bench measures the PostgreSQL store');
  const seedFile = path.join(mkdtempSync(path.join(tmpdir(), 'change-cost-')), 'seed.json');
  await writeBenchSeed(seedFile, TOKENS);
  const admin = new Client({ connectionString: databaseUrl });
  await admin.connect();
  const schema = `change_cost_${Date.now()}`;
  await admin.query(`CREATE SCHEMA ${schema}`);
  const { store, account } = await openBenchStore(databaseUrl, schema, seedFile, true);
  try {
    for (const sql of (process.env.BENCH_SETUP ?? '').split(';').filter((part) => part.trim() !== '')) {
      await admin.query(sql.replaceAll('SCHEMA', schema));
    }
    const next = withdrawals(TOKENS, Date.now() % 1e8);
    const wal = async () => (await admin.query<{ lsn: string }>('SELECT pg_current_wal_lsn() AS lsn')).rows[0].lsn;
    for (let round = 1; round <= ROUNDS; round += 1) {
      for (const recorded of round % 2 === 1 ? [true, false] : [false, true]) {
        const walBefore = await wal();
        const measured = await measureStoreAlone(store, account, next, SECONDS, recorded ? withdrawAndRecord : undefined);
        const { rows } = await admin.query<{ bytes: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS bytes', [walBefore]);
        const committed = Math.max(measured.transactionsPerSecond * SECONDS, 1);
        process.stdout.write(
          `round ${round} ${recorded ? 'a change each' : 'no change   '} ${measured.transactionsPerSecond} withdrawals/s, ` +
            `${measured.cpuUsPerTransaction} µs of this process's CPU and ${Math.round(Number(rows[0].bytes) / committed)} B of WAL each, ` +
            `${measured.failures} failed\n`,
        );
      }
    }
  } finally {
    await store.close();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
