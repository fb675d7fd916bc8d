import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

/**
 * Where the tests look for the machine's own tools (runuser, mount, id…), whatever the PATH of the shell that
 * started them: a login shell of a user other than root often leaves /usr/sbin out (`spawn runuser ENOENT`).
 */
const SYSTEM_DIRECTORIES = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/** The absolute path of a system tool, or the bare name (the spawn then fails naming it) when none is installed. */
export function systemTool(name: string): string {
  return SYSTEM_DIRECTORIES.map((directory) => path.join(directory, name)).find((file) => existsSync(file)) ?? name;
}

/** PostgreSQL's server tools (initdb, pg_ctl): PG_BIN, else Debian's /usr/lib/postgresql/<newest version>/bin. */
export function postgresBin(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((name) => /^\d+$/.test(name))
        .map(Number)
    : [];
  return versions.length > 0 ? path.join(root, String(Math.max(...versions)), 'bin') : path.join(root, 'bin');
}
