import { Lanes } from '../helpers/lanes';
import { schemaDatabaseUrl, sql, TEST_DATABASE_URL, warnIfNoDatabase } from '../helpers/postgres';
import { startServer, type ServerProcess } from '../helpers/server-process';

warnIfNoDatabase();
/** The kill comes once this many withdrawals were acknowledged: enough to be mid-stream, however slow the machine. */
const ACKNOWLEDGED_BEFORE_KILL = 200;
/** A bound for reaching them, far above what a loaded machine needs (seconds), so that only a stalled server fails it. */
const ACKNOWLEDGEMENTS_BOUND_MS = 120_000;
jest.setTimeout(ACKNOWLEDGEMENTS_BOUND_MS + 60_000);

const SCHEMA = 'crash_test';
const streams = new Lanes(8, 'CRASH', 5000000);
const LANES = streams.count;
const START_BALANCE = Lanes.START_BALANCE;

const databaseUrl = () => schemaDatabaseUrl(SCHEMA);

(TEST_DATABASE_URL ? describe : describe.skip)('crash: SIGKILL while withdrawals stream in', () => {
  it('every withdrawal that got a 200 is in the ledger after restart, none twice', async () => {
    await sql(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await sql(`CREATE SCHEMA ${SCHEMA}`);
    const env = { DATABASE_URL: databaseUrl(), SEED_FILE: streams.writeSeed() };
    let server: ServerProcess = await startServer(env);

    const acknowledged: string[] = [];
    let sent = 0;
    let killed = false;
    let enoughAcknowledged: () => void = () => {};
    const acknowledgedEnough = new Promise<void>((resolve) => (enoughAcknowledged = resolve));
    // Each lane withdraws 1.00 at a time from its own token, stating the balance after; the process is killed mid-stream.
    const sender = async (lane: number) => {
      let balance = START_BALANCE;
      for (let i = 0; !killed; i += 1) {
        const id = `${String(lane).padStart(2, '0')}${String(i).padStart(18, '0')}`;
        sent += 1;
        try {
          const response = await fetch(`http://127.0.0.1:${server.port}/v1/tokens/withdraw`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: streams.withdrawalBody(lane, id, balance - 100),
          });
          if (response.status === 200) {
            acknowledged.push(id);
            balance -= 100;
            if (acknowledged.length === ACKNOWLEDGED_BEFORE_KILL) enoughAcknowledged();
          }
        } catch {
          // The process is gone; whether this one committed is for the ledger to say.
        }
      }
    };
    const senders = Array.from({ length: LANES }, (_, lane) => sender(lane));
    let bound: NodeJS.Timeout | undefined;
    const reached = await Promise.race([
      acknowledgedEnough.then(() => true),
      new Promise<false>((resolve) => (bound = setTimeout(() => resolve(false), ACKNOWLEDGEMENTS_BOUND_MS))),
    ]);
    clearTimeout(bound);
    server.child.kill('SIGKILL');
    killed = true;
    await Promise.all(senders);
    expect(reached).toBe(true);
    expect((await server.exited).code).toBeNull();

    server = await startServer(env);
    const ledger = await streams.reconcile((text) => sql(text, [], SCHEMA), acknowledged);
    process.stdout.write(
      `crash test: ${sent} sent, ${acknowledged.length} acknowledged, ${ledger.rows} in the ledger after restart, ${ledger.missing.length} acknowledged but missing, ${ledger.duplicates} duplicates\n`,
    );
    expect(acknowledged.length).toBeGreaterThanOrEqual(ACKNOWLEDGED_BEFORE_KILL);
    expect(ledger.missing).toEqual([]);
    expect(ledger.duplicates).toBe(0);
    // At most one request per lane was in flight at the kill: committed but never acknowledged.
    expect(ledger.rows - acknowledged.length).toBeLessThanOrEqual(LANES);
    // Every balance is the seed's less exactly what its ledger holds: the seed reload at restart overwrote nothing.
    expect(ledger.unbalanced).toEqual([]);

    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
    await sql(`DROP SCHEMA ${SCHEMA} CASCADE`);
  });
});
