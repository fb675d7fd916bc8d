import { execFile, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { postgresBin, systemTool } from './system-tools';

const run = promisify(execFile);
const BIN = postgresBin();
const isRoot = process.getuid?.() === 0;

/** PostgreSQL refuses to run as root: as root, its tools run as the postgres user. */
function asPostgres(tool: string, args: string[]) {
  const binary = path.join(BIN, tool);
  return isRoot ? run(systemTool('runuser'), ['-u', 'postgres', '--', binary, ...args]) : run(binary, args);
}

/** Why a throwaway cluster cannot be made on this machine, or undefined when it can. */
export function clusterUnavailable(): string | undefined {
  if (!existsSync(path.join(BIN, 'initdb'))) return `initdb is not in ${BIN} (set PG_BIN)`;
  if (isRoot && spawnSync(systemTool('id'), ['-u', 'postgres']).status !== 0) return 'running as root and there is no postgres user';
  return undefined;
}

/** A port nothing listens on now (the operating system's choice). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * A PostgreSQL cluster of its own, in a temporary directory on a free port, for tests that restart or kill
 * the database: the machine's own server is never touched.
 */
export class ThrowawayCluster {
  private constructor(
    private readonly directory: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private get data(): string {
    return path.join(this.directory, 'data');
  }

  /** The server's output goes to a file: left on pg_ctl's stdout, it would keep the pipe open and pg_ctl's caller waiting. */
  private get log(): string {
    return path.join(this.directory, 'log');
  }

  static async start(): Promise<ThrowawayCluster> {
    const directory = mkdtempSync(path.join(tmpdir(), 'throwaway-pg-'));
    if (isRoot) {
      const uid = Number((await run(systemTool('id'), ['-u', 'postgres'])).stdout);
      const gid = Number((await run(systemTool('id'), ['-g', 'postgres'])).stdout);
      chownSync(directory, uid, gid);
    }
    const cluster = new ThrowawayCluster(directory, await freePort());
    await asPostgres('initdb', ['-D', cluster.data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync']);
    await asPostgres('pg_ctl', [
      'start',
      '-D',
      cluster.data,
      '-l',
      cluster.log,
      '-w',
      '-t',
      '120',
      '-o',
      `-p ${cluster.port} -k ${directory} -c listen_addresses=127.0.0.1`,
    ]);
    return cluster;
  }

  /** A fast restart: every session is ended, the server stops and starts again on the same port. */
  async restart(): Promise<void> {
    await asPostgres('pg_ctl', ['restart', '-D', this.data, '-l', this.log, '-m', 'fast', '-w', '-t', '120']);
  }

  /** Ends every client session but the one asking; returns how many it ended. */
  async terminateBackends(): Promise<number> {
    const admin = new Client({ connectionString: this.url });
    await admin.connect();
    try {
      const { rows } = await admin.query(
        "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
      );
      return rows[0].n as number;
    } finally {
      await admin.end();
    }
  }

  async query(text: string, values: unknown[] = []) {
    const client = new Client({ connectionString: this.url });
    await client.connect();
    try {
      return await client.query(text, values);
    } finally {
      await client.end();
    }
  }

  async stop(): Promise<void> {
    await asPostgres('pg_ctl', ['stop', '-D', this.data, '-m', 'immediate', '-w']).catch(() => undefined);
    rmSync(this.directory, { recursive: true, force: true });
  }
}
