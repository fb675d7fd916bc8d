import { CuttableProxy } from '../helpers/cuttable-proxy';
import { Lanes } from '../helpers/lanes';
import { TEST_DATABASE_URL, warnIfNoDatabase } from '../helpers/postgres';
import { startServer, type ServerProcess } from '../helpers/server-process';
import { waitFor } from '../helpers/wait';
import { clusterUnavailable, ThrowawayCluster } from '../helpers/throwaway-cluster';

warnIfNoDatabase();
jest.setTimeout(300_000);

const streams = new Lanes(8, 'OUTAGE', 6000000);
const LANES = streams.count;
const START_BALANCE = Lanes.START_BALANCE;
/** Pause between a lane's requests: eight lanes make a steady stream of some 150 withdrawals a second. */
const PACE_MS = 40;
const RETRY_MS = 50;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const unavailable = TEST_DATABASE_URL ? clusterUnavailable() : undefined;
// One plain line, not console.warn: jest would print a stack trace with it for a skip that is expected.
if (unavailable) process.stderr.write(`no throwaway PostgreSQL cluster (${unavailable}): the database outage test is SKIPPED\n`);

(TEST_DATABASE_URL && !unavailable ? describe : describe.skip)('losing the database never ends the process', () => {
  let cluster: ThrowawayCluster | undefined;
  let proxy: CuttableProxy | undefined;
  let server: ServerProcess | undefined;
  let stopping = false;
  /** Set when the test gives up: the lanes stop at once, even in the middle of repeating a request. */
  let abandoned = false;
  afterAll(async () => {
    stopping = true;
    abandoned = true;
    server?.child.kill('SIGKILL');
    await proxy?.stop();
    await cluster?.stop();
  });

  it('under a steady stream of withdrawals: every backend terminated, a restart, a cut link; 503/504 during, 200 after, no acknowledged withdrawal lost or applied twice', async () => {
    cluster = await ThrowawayCluster.start();
    const started = await CuttableProxy.start(cluster.url);
    proxy = started.proxy;
    server = await startServer({
      DATABASE_URL: started.url,
      SEED_FILE: streams.writeSeed(),
      DATABASE_CONNECT_TIMEOUT_MS: '1000',
      DATABASE_STATEMENT_TIMEOUT_MS: '3000',
      RATE_LIMIT_PER_MINUTE: '0',
      RATE_LIMIT_PER_ADDRESS_PER_MINUTE: '0',
    });
    const port = server.port;

    let phase = 'steady';
    const answers: Record<string, Record<string, number>> = {};
    const unexpected: string[] = [];
    const acknowledged: string[] = [];
    const count = (status: string) => {
      answers[phase] ??= {};
      answers[phase][status] = (answers[phase][status] ?? 0) + 1;
    };
    // Each lane withdraws 1.00 at a time from its own token and, as a sender does, repeats a request that was
    // not answered 200 until it is (a repeat of one that did commit is answered as a replay).
    const lane = async (index: number) => {
      let balance = START_BALANCE;
      for (let i = 0; !stopping; i += 1) {
        const id = `${String(index).padStart(2, '0')}${String(i).padStart(18, '0')}`;
        const body = streams.withdrawalBody(index, id, balance - 100);
        for (;;) {
          if (abandoned) return;
          let status: string;
          try {
            const response = await fetch(`http://127.0.0.1:${port}/v1/tokens/withdraw`, {
              method: 'POST',
              headers: { 'Content-Type': 'application/json' },
              body,
              signal: AbortSignal.timeout(30_000),
            });
            status = String(response.status);
            await response.arrayBuffer();
          } catch (error) {
            status = `no answer (${(error as Error).message})`;
          }
          count(status);
          if (status === '200') break;
          if (status !== '503' && status !== '504') unexpected.push(`${phase}: ${status}`);
          await sleep(RETRY_MS);
        }
        acknowledged.push(id);
        balance -= 100;
        await sleep(PACE_MS);
      }
    };
    const lanes = Array.from({ length: LANES }, (_, index) => lane(index));

    /** Resolves once this many more withdrawals were acknowledged: the service is answering 200 again. */
    const recovered = async (more: number) => {
      const target = acknowledged.length + more;
      const deadline = Date.now() + 120_000;
      while (acknowledged.length < target) {
        const ended = server?.child.exitCode !== null;
        if (ended || Date.now() > deadline) {
          stopping = true;
          abandoned = true;
          throw new Error(`${ended ? 'the process ended' : 'no recovery'} after ${phase}: ${JSON.stringify(answers)}`);
        }
        await sleep(100);
      }
    };

    await recovered(100);
    phase = 'backends terminated';
    const terminated = await cluster.terminateBackends();
    await recovered(100);
    phase = 'cluster restarted';
    await cluster.restart();
    await recovered(100);
    phase = 'link cut';
    proxy.cut();
    // Cut until the service has answered 503 for it, however long a loaded machine takes to get there.
    await waitFor(async () => (answers['link cut']?.['503'] ?? 0) > 0);
    proxy.restore();
    await recovered(100);
    phase = 'after';
    await recovered(50);
    stopping = true;
    await Promise.all(lanes);

    expect(server.child.exitCode).toBeNull();
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);

    const database = cluster;
    const ledger = await streams.reconcile((text) => database.query(text), acknowledged);
    process.stdout.write(
      `outage test: ${terminated} backends terminated; answers by phase ${JSON.stringify(answers)}; ` +
        `${acknowledged.length} acknowledged, ${ledger.rows} in the ledger, ${ledger.missing.length} acknowledged but missing, ` +
        `${ledger.duplicates} duplicates, ${ledger.rows - acknowledged.length} applied but never acknowledged\n`,
    );
    expect(unexpected).toEqual([]);
    expect(answers['link cut']?.['503'] ?? 0).toBeGreaterThan(0);
    expect(ledger.missing).toEqual([]);
    // Every lane repeated its request until it was answered 200, so the ledger holds exactly what was acknowledged, each once.
    expect(ledger.rows).toBe(acknowledged.length);
    expect(ledger.duplicates).toBe(0);
    expect(ledger.unbalanced).toEqual([]);

    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
    server = undefined;
  });
});
