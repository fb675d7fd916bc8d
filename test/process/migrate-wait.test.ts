import { spawn } from 'node:child_process';
import path from 'node:path';
import { CuttableProxy } from '../helpers/cuttable-proxy';
import { sql, TEST_DATABASE_URL, warnIfNoDatabase } from '../helpers/postgres';
import { waitFor } from '../helpers/wait';

const ROOT = path.resolve(__dirname, '..', '..');
const SCHEMA = `migrate_wait_${process.pid}`;

warnIfNoDatabase();

/** Issue 42 section 4: the compose file's one-shot migration, started beside its database, waits for it. */
(TEST_DATABASE_URL ? describe : describe.skip)('npm run migrate -- --wait SECONDS', () => {
  beforeAll(() => sql(`CREATE SCHEMA ${SCHEMA}`, [], 'public'));
  afterAll(() => sql(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`, [], 'public'));

  it('when the database takes no connections yet, it waits, and migrates once it does', async () => {
    const { proxy, url } = await CuttableProxy.start(TEST_DATABASE_URL as string);
    try {
      proxy.cut();
      const databaseUrl = new URL(url);
      databaseUrl.searchParams.set('options', `-c search_path=${SCHEMA}`);
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/migrate.ts', '--wait', '120'], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: databaseUrl.toString() },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += String(chunk)));
      child.stderr.on('data', (chunk) => (stderr += String(chunk)));
      let exitCode: number | null | undefined;
      const exited = new Promise<void>((resolve) =>
        child.on('exit', (code) => {
          exitCode = code;
          resolve();
        }),
      );

      await waitFor(async () => stderr.includes('Waiting for the database') || exitCode !== undefined);
      proxy.restore();
      await exited;

      expect({ exitCode, stderr: stderr.split('\n').find((line) => !line.startsWith('Waiting for the database')) }).toEqual({
        exitCode: 0,
        stderr: '',
      });
      expect(stdout).toMatch(/^Applied: 001_initial, /);
      const { rows } = await sql('SELECT count(*)::int AS applied FROM schema_migrations', [], SCHEMA);
      expect(rows[0].applied).toBeGreaterThan(0);
    } finally {
      await proxy.stop();
    }
  }, 180_000);

  it('when PostgreSQL refuses the login, it does not wait: it exits 1 at once, naming the refusal', async () => {
    const wrongPassword = new URL(TEST_DATABASE_URL as string);
    wrongPassword.username = 'no_such_role_for_migrate';
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/migrate.ts', '--wait', '120'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: wrongPassword.toString() },
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect({ code, stderr: stderr.trim() }).toEqual({ code: 1, stderr: expect.stringContaining('no_such_role_for_migrate') });
  }, 60_000);
});
