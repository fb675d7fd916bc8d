import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { DatabaseError, Pool } from 'pg';
import { ConfigError, loadConfig, loadEnvFile } from '../process/config';
import { DatabaseStartError, exitForStartFailure, startProblemsOf } from '../process/start-failure';
import { migrate } from '../store/postgres/migrate';

/** PostgreSQL's "the database system is starting up": it listens, but does not take connections yet. */
const CANNOT_CONNECT_NOW = '57P03';

/**
 * Whether a failed connection is one a database still starting gives: nothing listening or no such host yet
 * (a container's name before its network has it), a connection cut or timed out, or the server's own "starting up".
 * Any other answer from PostgreSQL (a wrong password, no such database) will not change by waiting.
 */
function notUpYet(error: unknown): boolean {
  return !(error instanceof DatabaseError) || error.code === CANNOT_CONNECT_NOW;
}

/**
 * Connects once the database takes connections, trying every second until the deadline: a one-shot migration
 * started beside its database (podman-compose 1.0.3 ignores depends_on's conditions) must not lose that race.
 */
async function waitForDatabase(pool: Pool, waitSeconds: number): Promise<void> {
  const deadline = Date.now() + waitSeconds * 1000;
  for (;;) {
    try {
      (await pool.connect()).release();
      return;
    } catch (error) {
      if (!notUpYet(error) || Date.now() >= deadline) throw error;
      process.stderr.write(`Waiting for the database: ${(error as Error).message}\n`);
      await sleep(1000);
    }
  }
}

/**
 * `npm run migrate`: applies pending migrations to DATABASE_URL (the service also does this at start).
 * `--wait SECONDS` first waits up to that long for the database to take connections.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({ options: { wait: { type: 'string', default: '0' } } });
  const waitSeconds = Number(values.wait);
  if (!Number.isInteger(waitSeconds) || waitSeconds < 0) throw new Error(`--wait takes a whole number of seconds, not "${values.wait}"`);
  loadEnvFile();
  const { database } = loadConfig(process.env);
  if (!database) throw new ConfigError(['DATABASE_URL is not set: there is no database to migrate']);
  const pool = new Pool({ connectionString: database.url, connectionTimeoutMillis: database.connectTimeoutMs });
  try {
    // A database that does not answer is the operator's to fix, said as the server says it; a migration's failure is not.
    await waitForDatabase(pool, waitSeconds).catch((error: unknown) => {
      throw new DatabaseStartError(error);
    });
    const applied = await migrate(pool);
    process.stdout.write(applied.length > 0 ? `Applied: ${applied.join(', ')}\n` : 'Nothing to apply: the schema is up to date\n');
  } finally {
    await pool.end();
  }
}

main().catch((error: unknown) => exitForStartFailure(error, startProblemsOf(error), 'the migrations could not be applied'));
