import { readFileSync, writeFileSync } from 'node:fs';
import { Lanes } from '../helpers/lanes';
import { schemaDatabaseUrl, sql, TEST_DATABASE_URL, warnIfNoDatabase } from '../helpers/postgres';
import { startServer, type ServerProcess } from '../helpers/server-process';
import { waitFor } from '../helpers/wait';
import { WebhookReceiver } from '../helpers/webhook-receiver';

warnIfNoDatabase();
jest.setTimeout(180_000);

const SCHEMA = 'delivery_takeover_test';
const SECRET = `whsec_${Buffer.from('takeover-endpoint-secret-0123456').toString('base64')}`;
const lanes = new Lanes(4, 'TAKEOVER', 7000000);
/** Short, so the test sees the takeover soon; the bound below is the lease plus room for a loaded machine. */
const LEASE_MS = 2_000;
const WITHDRAWALS_PER_LANE = 15;

const databaseUrl = () => schemaDatabaseUrl(SCHEMA);

(TEST_DATABASE_URL ? describe : describe.skip)('webhooks out on two instances sharing PostgreSQL', () => {
  it('the sending instance killed mid-delivery: the other takes over, every change arrives at least once, in order per token', async () => {
    await sql(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await sql(`CREATE SCHEMA ${SCHEMA}`);
    const receiver = await WebhookReceiver.start();
    // Slow answers, so that attempts are in flight when the kill comes.
    receiver.answer = (_request, response) => void setTimeout(() => response.writeHead(204).end(), 200);
    const seedFile = lanes.writeSeed();
    const seed = JSON.parse(readFileSync(seedFile, 'utf8'));
    writeFileSync(seedFile, JSON.stringify({ ...seed, endpoints: [{ id: 'erp', url: receiver.url(), secrets: [SECRET] }] }));
    const env = {
      DATABASE_URL: databaseUrl(),
      SEED_FILE: seedFile,
      DELIVERY_ALLOW_HTTP: 'true',
      DELIVERY_LEASE_MS: String(LEASE_MS),
      DELIVERY_RETRY_SCHEDULE: '100,100,100,100,100',
    };
    const servers: ServerProcess[] = [await startServer({ ...env, INSTANCE_ID: 'a' }), await startServer({ ...env, INSTANCE_ID: 'b' })];
    try {
      // Each lane withdraws from its own token through both instances in turn.
      await Promise.all(
        Array.from({ length: lanes.count }, async (_, lane) => {
          let balance = Lanes.START_BALANCE;
          for (let i = 0; i < WITHDRAWALS_PER_LANE; i += 1) {
            balance -= 100;
            const id = `${String(lane).padStart(2, '0')}${String(i).padStart(18, '0')}`;
            const response = await fetch(`http://127.0.0.1:${servers[i % 2].port}/v1/tokens/withdraw`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: lanes.withdrawalBody(lane, id, balance),
            });
            expect(response.status).toBe(200);
          }
        }),
      );
      const total = lanes.count * WITHDRAWALS_PER_LANE;
      await waitFor(async () => receiver.received.length >= 5);
      const holder = (await sql(`SELECT lease_owner FROM ${SCHEMA}.sink_states WHERE sink_id = 'erp'`)).rows[0].lease_owner as string;
      const killed = servers[holder.startsWith('a/') ? 0 : 1];
      const receivedBeforeKill = receiver.received.length;
      killed.child.kill('SIGKILL');
      const killedAt = Date.now();
      await waitFor(async () => new Set(receiver.received.map((received) => received.headers['webhook-id'])).size === total);
      const takeoverMs = Date.now() - killedAt;
      const changes = receiver.received.map(
        (received) => JSON.parse(received.body.toString('utf8')) as { seq: number; token: { token_id: string } },
      );
      for (let lane = 0; lane < lanes.count; lane += 1) {
        const seqs = changes.filter((change) => change.token.token_id === lanes.tokenId(lane)).map((change) => change.seq);
        // In order per token: each first arrival comes after the previous change of the token arrived.
        const firstArrivals = seqs.filter((seq, index) => seqs.indexOf(seq) === index);
        expect(firstArrivals).toEqual([...firstArrivals].sort((a, b) => a - b));
      }
      process.stdout.write(
        `takeover: ${receivedBeforeKill} of ${total} received before SIGKILL, all ${total} within ${takeoverMs} ms after it (lease ${LEASE_MS} ms), ${receiver.received.length - total} sent twice\n`,
      );
    } finally {
      for (const server of servers) server.child.kill('SIGKILL');
      await receiver.stop();
    }
  });
});
