import { sql, TEST_DATABASE_URL, warnIfNoDatabase } from '../helpers/postgres';
import { startServer } from '../helpers/server-process';
import { waitFor } from '../helpers/wait';

warnIfNoDatabase();
const SCHEMA = 'metrics_test';

/** The metrics page's lines of the store and the build. */
async function storeLines(metricsPort: number): Promise<string[]> {
  const page = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  return page.split('\n').filter((line) => /^receiver_(db_|build_info|group_commit_batch_units_count)/.test(line));
}

/** Contract section 12: the server started on PostgreSQL shows its pool, LISTEN connection, batches and build. */
(TEST_DATABASE_URL ? describe : describe.skip)('/metrics of a server on PostgreSQL', () => {
  it('shows the pool, the LISTEN connection, the batches of group commit and the build', async () => {
    await sql(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await sql(`CREATE SCHEMA ${SCHEMA}`);
    const url = new URL(TEST_DATABASE_URL as string);
    url.searchParams.set('options', `-c search_path=${SCHEMA}`);
    const server = await startServer({ SEED_FILE: '', DATABASE_URL: url.toString() });
    try {
      const withdrawal = await fetch(`http://127.0.0.1:${server.port}/v1/tokens/withdraw`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          share_public: 'pk_demo_PDR28_7f3a9c2e',
          read_event: 'token.withdrawn_created',
          source_id: 'PDR28',
          destination_id: 'ID001',
          token_id: '2908926013012565',
          transaction_id: '20240121000000000001',
          withdrawn_amount: '100.00',
          token_balance: '900.00',
        }),
      });
      expect(withdrawal.status).toBe(200);
      // The page renders at most once a second: asked again until it shows the LISTEN connection up and the batch.
      await waitFor(async () => {
        const lines = await storeLines(server.metricsPort);
        return (
          lines.includes('receiver_db_listen_up 1') && lines.some((line) => /^receiver_group_commit_batch_units_count [1-9]/.test(line))
        );
      });
      const lines = await storeLines(server.metricsPort);
      expect(lines).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^receiver_db_pool_connections\{state="in_use"\} \d+$/),
          expect.stringMatching(/^receiver_db_pool_connections\{state="idle"\} \d+$/),
          'receiver_db_pool_waiting 0',
          expect.stringMatching(/^receiver_build_info\{version="\d+\.\d+\.\d+",node="v24\.[\d.]+"\} 1$/),
        ]),
      );
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
      await sql(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    }
  });
});
