/**
 * The PostgreSQL store alone, without HTTP: callers that each apply withdrawals one after the other through
 * Store.transaction and the project's own withdraw() service, as the receiver's requests do. Run next to
 * `pgbench -N` in the same rounds (run.ts), it tells what the store makes of the database.
 */
import type autocannon from 'autocannon';
import { readSeedFile } from '../../src/seed/file';
import { withdraw } from '../../src/services/token-ledger';
import { PgStore } from '../../src/store/postgres/pg-store';
import type { Account, StoreTransaction } from '../../src/store/store';
import { BENCH_ACCOUNT, START_BALANCE_CENTS, tokenIdOf } from './seed';

export interface StoreAloneMeasurement {
  transactionsPerSecond: number;
  /** CPU of this process per committed withdrawal: the store's and the service's work, the driver's included. */
  cpuUsPerTransaction: number;
  failures: number;
}

/**
 * Withdrawals of 0.01 on `tokens` tokens in turn (from the seed's token `firstToken` on), each stating the balance
 * after it: one generator for every round.
 */
export function withdrawals(tokens: number, runId: number, firstToken = 0) {
  let counter = 0;
  const uses = new Uint32Array(tokens);
  const prefix = String(runId).padStart(8, '0');
  return () => {
    counter += 1;
    const index = counter % tokens;
    uses[index] += 1;
    return {
      share_public: '',
      read_event: 'token.withdrawn_created' as const,
      source_id: 'BENCH',
      destination_id: 'D1',
      token_id: tokenIdOf(firstToken + index),
      transaction_id: `${prefix}${String(counter).padStart(12, '0')}`,
      withdrawn_amount: 1,
      token_balance: START_BALANCE_CENTS - uses[index],
    };
  };
}

const cents = (value: number) => (value / 100).toFixed(2);

/**
 * The same withdrawals as the bodies partners send over HTTP (amounts as decimal strings, the account's key): the
 * bench's withdraw workload and the receivers bench:instructions, bench:perf and bench:gc load. `runId` keeps one run's
 * transaction ids apart from another's on the same tokens.
 */
export function withdrawalBodies(tokens: number, runId = Date.now() % 1e8, firstToken = 0): () => string {
  const next = withdrawals(tokens, runId, firstToken);
  return () => {
    const withdrawal = next();
    return JSON.stringify({
      ...withdrawal,
      share_public: BENCH_ACCOUNT.share_public,
      withdrawn_amount: cents(withdrawal.withdrawn_amount),
      token_balance: cents(withdrawal.token_balance),
    });
  };
}

/** autocannon's requests for POST /v1/tokens/withdraw, each with the next of withdrawalBodies. */
function withdrawalRequests(tokens: number, runId: number, firstToken: number): autocannon.Request[] {
  const next = withdrawalBodies(tokens, runId, firstToken);
  return [
    {
      method: 'POST',
      path: '/v1/tokens/withdraw',
      headers: { 'content-type': 'application/json' },
      setupRequest: (request) => ({ ...request, body: next() }),
    },
  ];
}

/**
 * bench:perf's and bench:gc's load on a seed of `tokens` tokens: a warm-up and the counted seconds, each on its own
 * half of the tokens with transaction ids of its own (from `runId`). autocannon stops a run with requests in flight,
 * and one it made but the receiver never applied would leave its token's next stated balance wrong (409
 * balance_mismatch) if the counted seconds used that token again.
 */
export function warmUpAndCountedLoads(tokens: number, runId: number): { warmUp: autocannon.Request[]; counted: autocannon.Request[] } {
  const half = Math.floor(tokens / 2);
  return { warmUp: withdrawalRequests(half, 2 * runId, 0), counted: withdrawalRequests(half, 2 * runId + 1, half) };
}

/** A store of its own schema, seeded from the bench seed. */
export async function openBenchStore(
  connectionString: string,
  schema: string,
  seedFile: string,
  groupCommit: boolean,
): Promise<{ store: PgStore; account: Account }> {
  const store = await PgStore.open({ connectionString, schema, statementTimeoutMs: 5_000, poolSize: 16, sweepIntervalMs: 0, groupCommit });
  await store.loadSeed(readSeedFile(seedFile));
  return { store, account: (await store.findAccount('BENCH')) as Account };
}

/** What one caller's unit of work does with a withdrawal: by default the withdraw service alone. */
export type StoreAloneUnit = (
  tx: StoreTransaction,
  request: ReturnType<ReturnType<typeof withdrawals>>,
  account: Account,
) => Promise<unknown>;

const withdrawOnly: StoreAloneUnit = (tx, request, account) => withdraw(tx, request, account, new Date());

export async function measureStoreAlone(
  store: PgStore,
  account: Account,
  next: ReturnType<typeof withdrawals>,
  seconds: number,
  unit: StoreAloneUnit = withdrawOnly,
  callers = 16,
): Promise<StoreAloneMeasurement> {
  const end = performance.now() + seconds * 1000;
  const cpuBefore = process.cpuUsage();
  let committed = 0;
  let failures = 0;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < end) {
        const request = next();
        try {
          await store.transaction((tx) => unit(tx, request, account));
          committed += 1;
        } catch {
          failures += 1;
        }
      }
    }),
  );
  const cpu = process.cpuUsage(cpuBefore);
  return {
    transactionsPerSecond: Math.round(committed / seconds),
    cpuUsPerTransaction: Math.round((cpu.user + cpu.system) / Math.max(committed, 1)),
    failures,
  };
}
