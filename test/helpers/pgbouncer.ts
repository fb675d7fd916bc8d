import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { PgStore, type PgStoreOptions } from '../../src/store/postgres/pg-store';
import type { StoreKind } from './app';
import { TEST_DATABASE_URL } from './postgres';
import { systemTool } from './system-tools';
import { freePort } from './throwaway-cluster';

/**
 * PgBouncer in transaction mode as a process of the test (its own configuration, a free port), in front of a
 * database of the test's own: contract section 12's pooler. Debian's package, which .ci/run installs; never the
 * system service. It will not run as root, so it drops to the postgres user.
 */
export const PGBOUNCER = systemTool('pgbouncer');
export const HAS_PGBOUNCER = existsSync(PGBOUNCER) && TEST_DATABASE_URL !== undefined;

let warned = false;
/** Says once per test file that the pooler runs are skipped. */
export function warnIfNoPgBouncer(): void {
  if (HAS_PGBOUNCER || warned) return;
  warned = true;
  process.stderr.write(
    `${expect.getState().testPath ?? 'a suite'}: PgBouncer runs SKIPPED, ${TEST_DATABASE_URL ? 'pgbouncer is not installed (apt-get install pgbouncer; .ci/run does)' : 'TEST_DATABASE_URL is not set'}\n`,
  );
}

/** Runs SQL on the test database's server, in `database` (default: the test database itself). */
async function onServer(text: string, database?: string): Promise<void> {
  const url = new URL(TEST_DATABASE_URL as string);
  if (database) url.pathname = `/${database}`;
  const client = new Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

export interface Pooler {
  /** DATABASE_URL through the pooler. */
  url: string;
  /** DATABASE_DIRECT_URL: the same database, past the pooler. */
  directUrl: string;
  stop(): Promise<void>;
}

/** A fresh database and a PgBouncer in transaction mode in front of it. */
export async function startPooler(name: string): Promise<Pooler> {
  const database = `${name}_${process.env.JEST_WORKER_ID ?? '1'}_${process.pid}`;
  await onServer(`DROP DATABASE IF EXISTS ${database}`);
  await onServer(`CREATE DATABASE ${database}`);
  const server = new URL(TEST_DATABASE_URL as string);
  const directory = mkdtempSync(path.join(tmpdir(), 'pgbouncer-'));
  // The postgres user writes its log and pid file here.
  chmodSync(directory, 0o777);
  const port = await freePort();
  const config = path.join(directory, 'pgbouncer.ini');
  writeFileSync(
    config,
    [
      '[databases]',
      `${database} = host=${server.hostname} port=${server.port || 5432} dbname=${database} user=${server.username || 'postgres'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = any',
      'pool_mode = transaction',
      'max_client_conn = 500',
      'default_pool_size = 20',
      `logfile = ${path.join(directory, 'pgbouncer.log')}`,
      `pidfile = ${path.join(directory, 'pgbouncer.pid')}`,
    ].join('\n'),
  );
  const child: ChildProcess = spawn(PGBOUNCER, ['-u', 'postgres', config], { stdio: 'ignore' });
  const exited = once(child, 'exit');
  // Serving once it accepts a connection: waited for, with a generous bound, not slept.
  const deadline = Date.now() + 30_000;
  for (;;) {
    const accepted = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      }).on('error', () => resolve(false));
    });
    if (accepted) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      const log = path.join(directory, 'pgbouncer.log');
      throw new Error(`pgbouncer did not start: ${existsSync(log) ? readFileSync(log, 'utf8').slice(-2000) : 'no log'}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const url = new URL(TEST_DATABASE_URL as string);
  url.port = String(port);
  url.pathname = `/${database}`;
  const directUrl = new URL(TEST_DATABASE_URL as string);
  directUrl.pathname = `/${database}`;
  return {
    url: url.toString(),
    directUrl: directUrl.toString(),
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(directory, { recursive: true, force: true });
      await onServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    },
  };
}

const TABLES = 'accounts, account_holdings, destinations, tokens, ledger, bookings, keyed_requests, deliveries, changes, change_counters';

/** A store through the pooler, as DATABASE_POOLER=transaction opens it. */
export function openPooledStore(pooler: Pooler, options: Partial<PgStoreOptions> = {}): Promise<PgStore> {
  return PgStore.open({ connectionString: pooler.url, statementTimeoutMs: 5_000, poolSize: 10, pooler: 'transaction', ...options });
}

/** The store kind of the contract suite through the pooler: each store migrated and emptied. */
export function pooledStoreKind(pooler: () => Pooler): StoreKind {
  return {
    name: 'postgres through pgbouncer',
    create: async () => {
      const store = await openPooledStore(pooler());
      await onServer(`TRUNCATE ${TABLES}`, new URL(pooler().directUrl).pathname.slice(1));
      return store;
    },
  };
}
