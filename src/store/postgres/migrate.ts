import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Pool } from 'pg';

/** Versioned SQL files, applied in name order, each once. */
export const MIGRATIONS_DIRECTORY = path.resolve(__dirname, '..', '..', '..', 'migrations');

/** Any fixed number: instances that start together take turns on it. */
const MIGRATION_LOCK = 7_204_118_331;

export interface Migration {
  version: string;
  sql: string;
}

export function readMigrations(directory = MIGRATIONS_DIRECTORY): Migration[] {
  return readdirSync(directory)
    .filter((file) => /^\d+_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({ version: file.replace(/\.sql$/, ''), sql: readFileSync(path.join(directory, file), 'utf8') }));
}

/**
 * Applies the migrations not yet applied, each in its own transaction, under
 * a session advisory lock so that several instances starting at once apply
 * each migration exactly once. A schema to create is created under the same
 * lock: concurrent CREATE SCHEMA IF NOT EXISTS can collide in PostgreSQL.
 * Returns the versions it applied.
 */
export async function migrate(pool: Pool, options: { schema?: string; migrations?: Migration[] } = {}): Promise<string[]> {
  const migrations = options.migrations ?? readMigrations();
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    if (options.schema) await client.query(`CREATE SCHEMA IF NOT EXISTS "${options.schema.replaceAll('"', '""')}"`);
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set((await client.query<{ version: string }>('SELECT version FROM schema_migrations')).rows.map((row) => row.version));
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      try {
        await client.query('BEGIN');
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [migration.version]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw new Error(`Migration ${migration.version} failed: ${(error as Error).message}`, { cause: error });
      }
      applied.push(migration.version);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    client.release();
  }
  return applied;
}
