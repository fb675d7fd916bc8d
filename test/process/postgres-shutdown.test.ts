import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CuttableProxy } from '../helpers/cuttable-proxy';
import { sql, TEST_DATABASE_URL, warnIfNoDatabase } from '../helpers/postgres';
import { startServer, type ServerProcess } from '../helpers/server-process';
import { waitFor } from '../helpers/wait';

warnIfNoDatabase();
const SCHEMA = 'shutdown_test';
const SHUTDOWN_TIMEOUT_MS = 3_000;
/**
 * Room for the process itself to exit on a busy machine (ten times slower than a quiet one), still far below the
 * database's own time limits (60 s statements): past those, the wait would have ended without the drain's limit.
 */
const SLACK_MS = 20_000;

function writeSeed(): string {
  const seed = {
    accounts: [{ source_id: 'STOP', share_public: 'pk_stop', share_secret: 'sk_stop', destinations: ['D1'] }],
    tokens: [{ token_id: '7000000', source_id: 'STOP', destination_id: 'D1', status: 'active', balance: '1000000.00' }],
  };
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'shutdown-')), 'seed.json');
  writeFileSync(file, JSON.stringify(seed));
  return file;
}

let balance = 100_000_000;
let counter = 0;
/** The next withdrawal of 1.00; resolves with its status, or 0 when no answer came. */
function withdraw(port: number): Promise<number> {
  counter += 1;
  balance -= 100;
  const body = JSON.stringify({
    share_public: 'pk_stop',
    read_event: 'token.withdrawn_created',
    source_id: 'STOP',
    destination_id: 'D1',
    token_id: '7000000',
    transaction_id: String(counter).padStart(20, '0'),
    withdrawn_amount: '1.00',
    token_balance: (balance / 100).toFixed(2),
  });
  return fetch(`http://127.0.0.1:${port}/v1/tokens/withdraw`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body,
  }).then(
    (response) => response.status,
    () => 0,
  );
}

(TEST_DATABASE_URL ? describe : describe.skip)('SIGTERM while the database is frozen', () => {
  let proxy: CuttableProxy;
  let server: ServerProcess | undefined;
  beforeEach(async () => {
    await sql(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await sql(`CREATE SCHEMA ${SCHEMA}`);
    const started = await CuttableProxy.start(TEST_DATABASE_URL as string);
    proxy = started.proxy;
    const url = new URL(started.url);
    url.searchParams.set('options', `-c search_path=${SCHEMA}`);
    balance = 100_000_000;
    counter = 0;
    server = await startServer({
      DATABASE_URL: url.toString(),
      SEED_FILE: writeSeed(),
      SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
      // Far past the shutdown limit: only the drain's own limit can end the wait.
      DATABASE_STATEMENT_TIMEOUT_MS: '60000',
    });
    // Connections in the pool, as in a service that has been serving.
    for (let i = 0; i < 5; i += 1) expect(await withdraw(server.port)).toBe(200);
  });
  afterEach(async () => {
    server?.child.kill('SIGKILL');
    await proxy.stop();
    await sql(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  });

  async function stopAndTime(running: ServerProcess) {
    const started = Date.now();
    running.child.kill('SIGTERM');
    const { code } = await running.exited;
    return { code, ms: Date.now() - started };
  }

  it('with withdrawals waiting on it: exits within SHUTDOWN_TIMEOUT_MS, 1 as it cut them off', async () => {
    const running = server as ServerProcess;
    proxy.freeze();
    const waiting = [withdraw(running.port), withdraw(running.port), withdraw(running.port)];
    // In flight once one of them reached the database (a statement sent, or a connection asked for).
    await waitFor(async () => proxy.reachedWhileFrozen());
    const { code, ms } = await stopAndTime(running);
    server = undefined;
    process.stdout.write(
      `shutdown with a frozen database and 3 requests waiting: exit ${code} after ${ms} ms (limit ${SHUTDOWN_TIMEOUT_MS})\n`,
    );
    expect(code).toBe(1);
    expect(ms).toBeLessThan(SHUTDOWN_TIMEOUT_MS + SLACK_MS);
    // The one on a pooled connection waits for the database and is cut off; the others wait for a new
    // connection and answer 503 when DATABASE_CONNECT_TIMEOUT_MS (2 s) passes first.
    const statuses = await Promise.all(waiting);
    expect(statuses.every((status) => status === 0 || status === 503)).toBe(true);
    expect(statuses).toContain(0);
  });

  it('with nothing in flight: exits 0 within SHUTDOWN_TIMEOUT_MS, though idle connections get no goodbye', async () => {
    const running = server as ServerProcess;
    proxy.freeze();
    const { code, ms } = await stopAndTime(running);
    server = undefined;
    process.stdout.write(
      `shutdown with a frozen database and nothing in flight: exit ${code} after ${ms} ms (limit ${SHUTDOWN_TIMEOUT_MS})\n`,
    );
    expect(code).toBe(0);
    expect(ms).toBeLessThan(SHUTDOWN_TIMEOUT_MS + SLACK_MS);
  });
});
