import { createHash } from 'node:crypto';
import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Pool } from 'pg';
import { migrate, readMigrations, refuseSchemaBehind } from '../../src/store/postgres/migrate';
import { sql, TEST_DATABASE_URL, warnIfNoDatabase, workerSchema } from '../helpers/postgres';

warnIfNoDatabase();

const SCHEMA = `${workerSchema()}_migrations`;

(TEST_DATABASE_URL ? describe : describe.skip)('migrations record a checksum of each applied file', () => {
  let pool: Pool;
  let directory: string;
  beforeEach(async () => {
    await sql(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    pool = new Pool({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${SCHEMA}`, max: 2 });
    directory = mkdtempSync(path.join(tmpdir(), 'migrations-'));
    writeFileSync(path.join(directory, '001_first.sql'), 'CREATE TABLE first (id int);\n');
    writeFileSync(path.join(directory, '002_second.sql'), 'CREATE TABLE second (id int);\n');
  });
  afterEach(async () => {
    await pool.end();
    await sql(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  });

  const recorded = async () => (await sql('SELECT version, checksum FROM schema_migrations ORDER BY version', [], SCHEMA)).rows;
  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

  it('records the sha256 of each file it applies, and applies nothing twice', async () => {
    expect(await migrate(pool, { schema: SCHEMA, migrations: readMigrations(directory) })).toEqual(['001_first', '002_second']);
    expect(await recorded()).toEqual([
      { version: '001_first', checksum: sha256('CREATE TABLE first (id int);\n') },
      { version: '002_second', checksum: sha256('CREATE TABLE second (id int);\n') },
    ]);
    expect(await migrate(pool, { schema: SCHEMA, migrations: readMigrations(directory) })).toEqual([]);
  });

  it('an applied file that was edited stops the migration with a message naming it, and nothing after it is applied', async () => {
    await migrate(pool, { schema: SCHEMA, migrations: readMigrations(directory) });
    appendFileSync(path.join(directory, '001_first.sql'), '-- an afterthought\n');
    writeFileSync(path.join(directory, '003_third.sql'), 'CREATE TABLE third (id int);\n');
    await expect(migrate(pool, { schema: SCHEMA, migrations: readMigrations(directory) })).rejects.toThrow(
      /^Migration 001_first\.sql was edited after it was applied/,
    );
    expect((await recorded()).map((row) => row.version)).toEqual(['001_first', '002_second']);
    // The lock was released with the discarded connection: a corrected start goes ahead.
    writeFileSync(path.join(directory, '001_first.sql'), 'CREATE TABLE first (id int);\n');
    expect(await migrate(pool, { schema: SCHEMA, migrations: readMigrations(directory) })).toEqual(['003_third']);
  });

  it('a migration applied before checksums were recorded gets the file checksum as it is now', async () => {
    await sql(`CREATE SCHEMA ${SCHEMA}`);
    await sql('CREATE TABLE schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())', [], SCHEMA);
    await sql('CREATE TABLE first (id int)', [], SCHEMA);
    await sql(`INSERT INTO schema_migrations (version) VALUES ('001_first')`, [], SCHEMA);
    expect(await migrate(pool, { schema: SCHEMA, migrations: readMigrations(directory) })).toEqual(['002_second']);
    expect((await recorded())[0]).toEqual({ version: '001_first', checksum: sha256('CREATE TABLE first (id int);\n') });
  });

  it('MIGRATE_ON_START=false: a schema lacking migrations, or none at all, is refused naming them; a newer one is accepted; nothing is applied', async () => {
    const behind = /^The database schema is older than this version needs: migration 001_first, 002_second not applied/;
    await sql(`CREATE SCHEMA ${SCHEMA}`);
    await expect(refuseSchemaBehind(pool, readMigrations(directory))).rejects.toThrow(behind);
    await migrate(pool, { schema: SCHEMA, migrations: readMigrations(directory).slice(0, 1) });
    await expect(refuseSchemaBehind(pool, readMigrations(directory))).rejects.toThrow(/migration 002_second not applied/);
    expect((await recorded()).map((row) => row.version)).toEqual(['001_first']);
    // A newer version's migration, applied beside this one during a rolling deploy.
    writeFileSync(path.join(directory, '003_third.sql'), 'CREATE TABLE third (id int);\n');
    await migrate(pool, { schema: SCHEMA, migrations: readMigrations(directory) });
    await expect(refuseSchemaBehind(pool, readMigrations(directory).slice(0, 2))).resolves.toBeUndefined();
  });

  it('MIGRATE_ON_START=false: an applied file that was edited is refused, naming it', async () => {
    await migrate(pool, { schema: SCHEMA, migrations: readMigrations(directory) });
    appendFileSync(path.join(directory, '002_second.sql'), '-- an afterthought\n');
    await expect(refuseSchemaBehind(pool, readMigrations(directory))).rejects.toThrow(
      'Migration 002_second.sql was edited after it was applied; restore the file',
    );
  });
});
