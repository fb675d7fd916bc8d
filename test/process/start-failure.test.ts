import { HAS_PGBOUNCER, startPooler, warnIfNoPgBouncer, type Pooler } from '../helpers/pgbouncer';
import { runServer, startProblems } from '../helpers/server-process';
import { freePort } from '../helpers/throwaway-cluster';

warnIfNoPgBouncer();

const MIGRATE_FROM_SOURCE = [process.execPath, '--import', 'tsx', 'src/cli/migrate.ts'];

describe('a start that fails for want of its database', () => {
  it('the migrate CLI says so as the server does: a JSON line naming DATABASE_URL and what the connection met', async () => {
    const port = await freePort();
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
