import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Pool, PoolClient } from 'pg';
import { inTransaction } from './connection';

/** Versioned SQL files, applied in name order, each once. */
export const MIGRATIONS_DIRECTORY = path.resolve(__dirname, '..', '..', '..', 'migrations');

/** Any fixed number: instances that start together take turns on it. */
const MIGRATION_LOCK = 7_204_118_331;

export interface Migration {
  version: string;
  sql: string;
  /** SHA-256 of the file, hex: recorded when applied, so an applied file that was edited afterwards is noticed. */
  checksum: string;
}

export function readMigrations(directory = MIGRATIONS_DIRECTORY): Migration[] {
  return readdirSync(directory)
    .filter((file) => /^\d+_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => {
      const bytes = readFileSync(path.join(directory, file));
      return {
        version: file.replace(/\.sql$/, ''),
        sql: bytes.toString('utf8'),
        checksum: createHash('sha256').update(bytes).digest('hex'),
      };
    });
}

/**
 * The applied migrations' checksums must match the files: a file edited after it was applied no longer
 * says what the database holds, and applying the others on top of it would hide that. Migrations applied
 * before checksums were recorded get the file's as it is now.
 */
async function checkApplied(client: PoolClient, migrations: Migration[]): Promise<Set<string>> {
  const { rows } = await client.query<{ version: string; checksum: string | null }>('SELECT version, checksum FROM schema_migrations');
  const files = new Map(migrations.map((migration) => [migration.version, migration]));
  for (const { version, checksum } of rows) {
    const file = files.get(version);
    if (!file) continue;
    if (checksum === null) {
      await client.query('UPDATE schema_migrations SET checksum = $2 WHERE version = $1', [version, file.checksum]);
    } else if (checksum !== file.checksum) {
      throw new Error(
        `Migration ${version}.sql was edited after it was applied (sha256 recorded ${checksum}, file now ${file.checksum}); ` +
          'restore the file and put the change in a new migration',
      );
    }
  }
  return new Set(rows.map((row) => row.version));
}

/**
 * Applies the migrations not yet applied, all in one transaction under a
 * transaction advisory lock, so that several instances starting at once apply
 * each migration exactly once, directly or through a transaction-mode pooler
 * (a session lock did not hold there: two instances raced their migrations).
 * A schema to create is created under the same lock: concurrent CREATE SCHEMA
 * IF NOT EXISTS can collide in PostgreSQL. The first failure undoes them all.
 * Returns the versions it applied.
 */
export async function migrate(pool: Pool, options: { schema?: string; migrations?: Migration[] } = {}): Promise<string[]> {
  const migrations = options.migrations ?? readMigrations();
  const applied: string[] = [];
  await inTransaction(pool, async (client) => {
    // A transaction's lock, not a session's: it holds through a transaction-mode pooler (contract section 12).
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    if (options.schema) await client.query(`CREATE SCHEMA IF NOT EXISTS "${options.schema.replaceAll('"', '""')}"`);
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    await client.query('ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS checksum text');
    const done = await checkApplied(client, migrations);
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, checksum) VALUES ($1, $2)', [migration.version, migration.checksum]);
      } catch (error) {
        throw new Error(`Migration ${migration.version} failed: ${(error as Error).message}`, { cause: error });
      }
      applied.push(migration.version);
    }
  });
  return applied;
}

/**
 * MIGRATE_ON_START=false: migrations are `npm run migrate`'s (a Kubernetes Job), so the service's role needs no DDL
 * right; it only reads schema_migrations and refuses a schema older than it needs, naming what is missing. Applied
 * migrations it does not know are a newer version's, which a rolling deploy runs beside this one.
 */
export async function refuseSchemaBehind(pool: Pool, migrations: Migration[] = readMigrations()): Promise<void> {
  const { rows: table } = await pool.query<{ present: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS present");
  const { rows } = table[0].present
    ? await pool.query<{ version: string; checksum: string | null }>('SELECT version, checksum FROM schema_migrations')
    : { rows: [] };
  const applied = new Map(rows.map((row) => [row.version, row.checksum]));
  const edited = migrations.find((migration) => {
    const checksum = applied.get(migration.version);
    return checksum !== undefined && checksum !== null && checksum !== migration.checksum;
  });
  if (edited) throw new Error(`Migration ${edited.version}.sql was edited after it was applied; restore the file`);
  const missing = migrations.filter((migration) => !applied.has(migration.version)).map((migration) => migration.version);
  if (missing.length > 0)
    throw new Error(
      `The database schema is older than this version needs: migration ${missing.join(', ')} not applied. ` +
        'MIGRATE_ON_START=false leaves migrations to npm run migrate (or the migration Job): run it first',
    );
}
