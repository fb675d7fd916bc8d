import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { schemaDatabaseUrl, sql, TEST_DATABASE_URL, warnIfNoDatabase } from '../helpers/postgres';
import { startServer } from '../helpers/server-process';
import { DEMO_WITHDRAWAL } from '../helpers/slow-request';
import { postgresBin } from '../helpers/system-tools';

warnIfNoDatabase();
const SCHEMA = 'backup_restore_test';
const PG_DUMP = path.join(postgresBin(), 'pg_dump');
const PG_RESTORE = path.join(postgresBin(), 'pg_restore');
const toolsInstalled = existsSync(PG_DUMP) && existsSync(PG_RESTORE);
if (TEST_DATABASE_URL && !toolsInstalled) process.stderr.write(`${PG_DUMP} or pg_restore not found: the backup test is SKIPPED\n`);

const databaseUrl = () => schemaDatabaseUrl(SCHEMA);

async function withdraw(port: number, body: string) {
  const response = await fetch(`http://127.0.0.1:${port}/v1/tokens/withdraw`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body,
  });
  return { status: response.status, body: await response.json() };
}

/** The ledger and the kept answers, as an operator would compare them: every row, in order. */
async function ledgerAndKeys() {
  const ledger = await sql('SELECT * FROM ledger ORDER BY ledger_seq', [], SCHEMA);
  const keys = await sql('SELECT count(*)::int AS kept FROM keyed_requests', [], SCHEMA);
  const tokens = await sql('SELECT token_id, balance FROM tokens ORDER BY token_id', [], SCHEMA);
  return { ledger: ledger.rows, keys: keys.rows, tokens: tokens.rows };
}

/** docs/OPERATIONS.md, "Backup and restore": pg_dump of the service's schema, dropped, restored with pg_restore. */
(TEST_DATABASE_URL && toolsInstalled ? describe : describe.skip)('backup and restore of the ledger', () => {
  const directory = mkdtempSync(path.join(tmpdir(), 'receiver-backup-'));
  beforeAll(async () => {
    await sql(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`, [], 'public');
    await sql(`CREATE SCHEMA ${SCHEMA}`, [], 'public');
  });
  afterAll(async () => {
    await sql(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`, [], 'public');
    rmSync(directory, { recursive: true, force: true });
  });

  it('a pg_dump restored with pg_restore serves on: the same ledger, a replay answered as before, the next withdrawal applied', async () => {
    const first = await startServer({ DATABASE_URL: databaseUrl() });
    expect(await withdraw(first.port, DEMO_WITHDRAWAL)).toEqual({ status: 200, body: { success: true, message: 'Success' } });
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);
    const before = await ledgerAndKeys();

    const dump = path.join(directory, 'receiver.dump');
    execFileSync(PG_DUMP, ['--format=custom', `--schema=${SCHEMA}`, `--file=${dump}`, TEST_DATABASE_URL as string]);
    await sql(`DROP SCHEMA ${SCHEMA} CASCADE`, [], 'public');
    execFileSync(PG_RESTORE, ['--exit-on-error', `--dbname=${TEST_DATABASE_URL}`, dump]);
    expect(await ledgerAndKeys()).toEqual(before);

    // MIGRATE_ON_START=false: the restored schema_migrations says the schema is this version's, checksums included.
    const restored = await startServer({ DATABASE_URL: databaseUrl(), MIGRATE_ON_START: 'false' });
    expect(await withdraw(restored.port, DEMO_WITHDRAWAL)).toEqual({ status: 200, body: { success: true, message: 'Success' } });
    const next = DEMO_WITHDRAWAL.replace('20240121000000000001', '20240121000000000002').replace('900.00', '800.00');
    expect(await withdraw(restored.port, next)).toEqual({ status: 200, body: { success: true, message: 'Success' } });
    restored.child.kill('SIGTERM');
    expect((await restored.exited).code).toBe(0);
    const after = await ledgerAndKeys();
    expect(after.ledger.slice(0, before.ledger.length)).toEqual(before.ledger);
    expect(after.ledger).toHaveLength(before.ledger.length + 1);
  });
});
