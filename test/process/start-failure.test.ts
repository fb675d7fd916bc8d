import { once } from 'node:events';
import { createServer } from 'node:net';
import { hostname } from 'node:os';
import { HAS_PGBOUNCER, startPooler, warnIfNoPgBouncer, type Pooler } from '../helpers/pgbouncer';
import { runServer } from '../helpers/server-process';

warnIfNoPgBouncer();

const MIGRATE_FROM_SOURCE = [process.execPath, '--import', 'tsx', 'src/cli/migrate.ts'];

/** A failed start's problems: stderr holds JSON lines only, each at level fatal (60), one per problem. */
function startProblems(stderr: string): string[] {
  const lines = stderr
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  for (const line of lines) expect(line).toEqual({ level: 60, time: expect.any(String), instance: hostname(), msg: expect.any(String) });
  return lines.map((line) => line.msg);
}

/** A port nothing listens on: one the kernel gave and took back. */
async function refusingPort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe('a start that fails for want of its database', () => {
  it('the migrate CLI says so as the server does: a JSON line naming DATABASE_URL and what the connection met', async () => {
    const port = await refusingPort();
    const { code, stderr } = await runServer({ DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/receiver` }, MIGRATE_FROM_SOURCE)
      .exited;
    expect({ code, problems: startProblems(stderr) }).toEqual({
      code: 1,
      problems: [`Cannot open the database named by DATABASE_URL: connect ECONNREFUSED 127.0.0.1:${port}`],
    });
  });

  (HAS_PGBOUNCER ? describe : describe.skip)('behind PgBouncer in transaction mode', () => {
    let pooler: Pooler;
    beforeAll(async () => {
      pooler = await startPooler('start_failure');
    });
    afterAll(async () => {
      await pooler?.stop();
    });

    it('without DATABASE_POOLER=transaction, the server stops at start naming the setting to use', async () => {
      const { code, stderr } = await runServer({ DATABASE_URL: pooler.url, SEED_FILE: '' }).exited;
      expect({ code, problems: startProblems(stderr) }).toEqual({
        code: 1,
        problems: [
          'Cannot open the database named by DATABASE_URL: unsupported startup parameter: statement_timeout; DATABASE_URL names a pooler (PgBouncer) that refuses session start-up parameters: set DATABASE_POOLER=transaction',
        ],
      });
    });
  });
});
