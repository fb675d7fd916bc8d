import { Pool } from 'pg';
import { migrate, readMigrations } from '../../src/store/postgres/migrate';
import { sql, TEST_DATABASE_URL, warnIfNoDatabase } from '../helpers/postgres';
import { runServer, startServer } from '../helpers/server-process';
import { DEMO_WITHDRAWAL } from '../helpers/slow-request';

warnIfNoDatabase();
const SCHEMA = 'migrate_on_start_test';
/** A role of this test's own (roles are the cluster's, shared by every database): rows only, no DDL. */
const ROLE = `receiver_rows_${SCHEMA}`;

/** The test database as ROLE (or its owner), on SCHEMA. */
function databaseUrl(user?: string): string {
  const url = new URL(TEST_DATABASE_URL as string);
  if (user) url.username = user;
  url.searchParams.set('options', `-c search_path=${SCHEMA}`);
  return url.toString();
}

async function migrateTo(migrations = readMigrations()): Promise<void> {
  const pool = new Pool({ connectionString: databaseUrl() });
  try {
    await migrate(pool, { schema: SCHEMA, migrations });
  } finally {
    await pool.end();
  }
}

/** What the role of a service that does not migrate needs: rows, never the schema's objects. */
async function grantRowsOnly(): Promise<void> {
  await sql(`GRANT USAGE ON SCHEMA ${SCHEMA} TO ${ROLE}`, [], SCHEMA);
  await sql(`GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA ${SCHEMA} TO ${ROLE}`, [], SCHEMA);
  await sql(`GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA ${SCHEMA} TO ${ROLE}`, [], SCHEMA);
}

(TEST_DATABASE_URL ? describe : describe.skip)('MIGRATE_ON_START', () => {
  beforeEach(async () => {
    await sql(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`, [], 'public');
    await sql(`DROP ROLE IF EXISTS ${ROLE}`, [], 'public');
    await sql(`CREATE ROLE ${ROLE} LOGIN`, [], 'public');
  });
  afterAll(async () => {
    await sql(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`, [], 'public');
    await sql(`DROP ROLE IF EXISTS ${ROLE}`, [], 'public');
  });

  it('false: on a schema one migration behind, the service refuses to start, naming the migration and npm run migrate', async () => {
    const migrations = readMigrations();
    const last = migrations[migrations.length - 1].version;
    await migrateTo(migrations.slice(0, -1));
    // The rejection quotes stderr: one fatal line, ending with the message.
    await expect(startServer({ DATABASE_URL: databaseUrl(), MIGRATE_ON_START: 'false' })).rejects.toThrow(
      `"msg":"Cannot open the database named by DATABASE_URL: The database schema is older than this version needs: migration ${last} not applied. ` +
        'MIGRATE_ON_START=false leaves migrations to npm run migrate (or the migration Job): run it first"}\n',
    );
    // Nothing was applied behind the operator's back.
    const { rows } = await sql('SELECT version FROM schema_migrations WHERE version = $1', [last], SCHEMA);
    expect(rows).toEqual([]);
  });

  it('false: once migrated, the service starts and serves as a role with no DDL right, which true could not', async () => {
    await migrateTo();
    await grantRowsOnly();
    const migrating = runServer({ DATABASE_URL: databaseUrl(ROLE) });
    const refused = await migrating.exited;
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('permission denied');
    const server = await startServer({ DATABASE_URL: databaseUrl(ROLE), MIGRATE_ON_START: 'false' });
    const withdrawal = await fetch(`http://127.0.0.1:${server.port}/v1/tokens/withdraw`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: DEMO_WITHDRAWAL,
    });
    expect({ status: withdrawal.status, body: await withdrawal.json() }).toEqual({
      status: 200,
      body: { success: true, message: 'Success' },
    });
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
  });
});
