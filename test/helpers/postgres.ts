import { Client } from 'pg';
import { PgStore, type PgStoreOptions } from '../../src/store/postgres/pg-store';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;

let warned = false;
/** Says once per test file that the PostgreSQL runs are skipped, so a green run without them is not mistaken for a full one. */
export function warnIfNoDatabase(): void {
  if (TEST_DATABASE_URL || warned) return;
  warned = true;
  // One plain line, not console.warn: jest would print a stack trace with it for a skip that is expected.
  process.stderr.write(
    `${expect.getState().testPath ?? 'a suite'}: PostgreSQL runs SKIPPED, TEST_DATABASE_URL is not set (.ci/run sets it)\n`,
  );
}

/** Jest workers run in parallel; each gets a schema of its own in the test database. */
export function workerSchema(): string {
  return `test_worker_${process.env.JEST_WORKER_ID ?? '1'}`;
}

const TABLES =
  'accounts, account_holdings, destinations, tokens, ledger, bookings, keyed_requests, deliveries, changes, change_counters, change_listeners, sink_states, sink_positions, sink_window, sink_attempts';

/** Runs SQL in the worker's schema (or another) on a connection of its own. */
export async function sql(text: string, values: unknown[] = [], schema = workerSchema()) {
  const client = new Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

/** A migrated store on the worker's schema, emptied of every row. */
export async function openEmptyPgStore(options: Partial<PgStoreOptions> = {}): Promise<PgStore> {
  const store = await PgStore.open({
    connectionString: TEST_DATABASE_URL as string,
    statementTimeoutMs: 5_000,
    poolSize: 10,
    schema: workerSchema(),
    ...options,
  });
  await emptyTables(options.schema);
  return store;
}

/** Empties every table of the worker's schema (or another), for a test that keeps its store open. */
export async function emptyTables(schema = workerSchema()): Promise<void> {
  await sql(`TRUNCATE ${TABLES}`, [], schema);
}

/** TEST_DATABASE_URL with `schema` as the search path: a server process started on it keeps its tables there. */
export function schemaDatabaseUrl(schema: string): string {
  const url = new URL(TEST_DATABASE_URL as string);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}
