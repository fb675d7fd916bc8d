import { once } from 'node:events';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { getPriority } from 'node:os';
import { Lanes } from '../helpers/lanes';
import { runServer, startServer, type ServerProcess } from '../helpers/server-process';
import { freePort } from '../helpers/throwaway-cluster';
import { waitFor } from '../helpers/wait';
import { WebhookReceiver } from '../helpers/webhook-receiver';

jest.setTimeout(120_000);

const SECRET = `whsec_${Buffer.from('thread-endpoint-secret-012345678').toString('base64')}`;
const ADMIN_TOKEN = 'admin-test-token-0123456789';
const lanes = new Lanes(3, 'THREAD', 8000000);
const WITHDRAWALS_PER_LANE = 10;

/** Linux's SCHED_IDLE. */
const SCHED_IDLE = 5;

/** Each thread of the process, by id, with its nice value and scheduling policy (fields 19 and 41 of its stat). */
function schedulingByThread(pid: number): Map<number, { nice: number; policy: number }> {
  const threads = new Map<number, { nice: number; policy: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    // The fields after the command's closing parenthesis start at field 3 (the state).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    threads.set(Number(tid), { nice: Number(fields[16]), policy: Number(fields[38]) });
  }
  return threads;
}

/** The threads whose priority differs from the serving thread's: the delivery thread, and only it. */
function lowered(threads: Map<number, { nice: number; policy: number }>) {
  return [...threads.values()].filter((thread) => thread.nice !== getPriority() || thread.policy !== 0);
}

/**
 * Contract 13.3, "delivery never delays the answers partners wait for": the server hands changes on from a thread of
 * its own at the lowest priority. On the memory store, whose changes that thread asks of the serving one by message.
 */
(process.platform === 'linux' ? describe : describe.skip)('delivery on its own thread (the server process, memory store)', () => {
  let server: ServerProcess | undefined;
  let receiver: WebhookReceiver;

  afterEach(async () => {
    server?.child.kill('SIGKILL');
    await receiver.stop();
  });

  it('sends every change once, in order per token, from a thread at nice 19 under SCHED_IDLE while the serving thread stays as it was started; counts them in the metrics; exits 0 on SIGTERM', async () => {
    receiver = await WebhookReceiver.start();
    const seedFile = lanes.writeSeed();
    const seed = JSON.parse(readFileSync(seedFile, 'utf8'));
    writeFileSync(seedFile, JSON.stringify({ ...seed, endpoints: [{ id: 'erp', url: receiver.url(), secrets: [SECRET] }] }));
    server = await startServer({ SEED_FILE: seedFile, DELIVERY_ALLOW_HTTP: 'true', ADMIN_TOKEN });
    const { port, metricsPort } = server;

    const pid = server.child.pid as number;
    const threads = schedulingByThread(pid);
    // The serving thread as the test runs (the server inherits its nice value), under the normal policy.
    expect(threads.get(pid)).toEqual({ nice: getPriority(), policy: 0 });
    expect(lowered(threads)).toEqual([{ nice: 19, policy: SCHED_IDLE }]);

    await Promise.all(
      Array.from({ length: lanes.count }, async (_, lane) => {
        let balance = Lanes.START_BALANCE;
        for (let i = 0; i < WITHDRAWALS_PER_LANE; i += 1) {
          balance -= 100;
          const response = await fetch(`http://127.0.0.1:${port}/v1/tokens/withdraw`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: lanes.withdrawalBody(lane, `${lane}${String(i).padStart(19, '0')}`, balance),
          });
          expect(response.status).toBe(200);
        }
      }),
    );
    const total = lanes.count * WITHDRAWALS_PER_LANE;
    await waitFor(async () => receiver.received.length >= total);
    const changes = receiver.received.map((received) => ({
      webhookId: received.headers['webhook-id'],
      ...(JSON.parse(received.body.toString('utf8')) as { id: string; seq: number; token: { token_id: string } }),
    }));
    expect(changes).toHaveLength(total);
    expect(new Set(changes.map((change) => change.id)).size).toBe(total);
    for (const change of changes) expect(change.webhookId).toBe(change.id);
    for (let lane = 0; lane < lanes.count; lane += 1) {
      const seqs = changes.filter((change) => change.token.token_id === lanes.tokenId(lane)).map((change) => change.seq);
      expect(seqs).toHaveLength(WITHDRAWALS_PER_LANE);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    }

    // What ops see is the thread's: the position past every change, and the attempts.
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    await waitFor(async () => {
      const { endpoints } = (await (await fetch(`http://127.0.0.1:${port}/admin/endpoints`, { headers: admin })).json()) as {
        endpoints: Array<{ positions: Array<{ position: number }> }>;
      };
      return endpoints[0].positions[0]?.position === total;
    });
    const attempts = (await (await fetch(`http://127.0.0.1:${port}/admin/endpoints/erp/attempts?limit=5`, { headers: admin })).json()) as {
      attempts: unknown[];
    };
    expect(attempts.attempts).toHaveLength(5);
    // The thread's outcomes reach the serving thread's metrics (a message every 250 ms at most).
    await waitFor(async () => {
      const page = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      return page.includes(`receiver_deliveries_total{endpoint="erp",result="delivered"} ${total}\n`);
    });
    const page = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(page).toContain('receiver_delivery_oldest_undelivered_seconds{endpoint="erp"} 0\n');
    expect(page).toContain('receiver_endpoint_disabled{endpoint="erp"} 0\n');

    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
  });

  it("leaves libuv's shared thread pool at the serving thread's priority, though delivery is first to need it", async () => {
    receiver = await WebhookReceiver.start();
    const seedFile = lanes.writeSeed();
    const seed = JSON.parse(readFileSync(seedFile, 'utf8'));
    // A host name, which the delivery thread resolves on the pool; LOG_LEVEL=error, so the serving thread writes no
    // log line (which would have made the pool) before delivery starts.
    const url = receiver.url().replace('127.0.0.1', 'localhost');
    writeFileSync(seedFile, JSON.stringify({ ...seed, endpoints: [{ id: 'erp', url, secrets: [SECRET] }] }));
    const [port, metricsPort] = [await freePort(), await freePort()];
    const started = runServer({
      SEED_FILE: seedFile,
      DELIVERY_ALLOW_HTTP: 'true',
      LOG_LEVEL: 'error',
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
    });
    server = { ...started, port, metricsPort };
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.status === 200);
    const response = await fetch(`http://127.0.0.1:${port}/v1/tokens/withdraw`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: lanes.withdrawalBody(0, '90000000000000000001', Lanes.START_BALANCE - 100),
    });
    expect(response.status).toBe(200);
    await waitFor(async () => receiver.received.length === 1);
    const pid = server.child.pid as number;
    const threads = schedulingByThread(pid);
    expect(lowered(threads)).toEqual([{ nice: 19, policy: SCHED_IDLE }]);
    // The pool is there, made by the serving thread.
    expect(
      readdirSync(`/proc/${pid}/task`).some((tid) => readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').startsWith('libuv-worker')),
    ).toBe(true);
  });
});

/**
 * A NATS server that completes the client's handshake, then sends `garbage` (what nats.js cannot parse) on every
 * connection; the lines clients sent, for the test to see that one connected.
 */
async function unparsableNatsServer(garbage: string): Promise<{ url: string; clientLines: string[]; close: () => Promise<void> }> {
  const clientLines: string[] = [];
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.write('INFO {"server_id":"fake","version":"2.9.10","proto":1,"headers":true,"max_payload":1048576}\r\n');
    let text = '';
    socket.on('data', (chunk) => {
      text += String(chunk);
      const lines = text.split('\r\n');
      text = lines.pop() as string;
      clientLines.push(...lines);
      if (lines.some((line) => line === 'PING')) socket.write(`PONG\r\n${garbage}\r\n`);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `nats://127.0.0.1:${(server.address() as AddressInfo).port}`,
    clientLines,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe("the delivery thread's console (the server process, memory store)", () => {
  it('logs what nats.js writes to the console as a JSON line of its own, cut to 1,000 characters, and goes on serving', async () => {
    // nats.js console.logs "reader closed" with the parser's error when a server sends what it cannot parse.
    const nats = await unparsableNatsServer(`BOGUS ${'x'.repeat(5_000)}`);
    try {
      const seedFile = lanes.writeSeed();
      const started = await startServer({ SEED_FILE: seedFile, NATS_URL: nats.url });
      // Whatever form it takes: then every line is checked, so that a bare one fails the test at once, showing itself.
      await waitFor(async () => started.stdout.some((line) => line.includes('reader closed')));
      const response = await fetch(`http://127.0.0.1:${started.port}/v1/tokens/withdraw`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: lanes.withdrawalBody(1, '91000000000000000001', Lanes.START_BALANCE - 100),
      });
      expect(response.status).toBe(200);
      expect(nats.clientLines.some((line) => line.startsWith('CONNECT '))).toBe(true);
      // Every line the server wrote is JSON; the console's are warnings of the thread, the library's words kept.
      const entries = started.stdout.map((line) => JSON.parse(line) as { level: number; msg: string; console?: string });
      const consoleEntries = entries.filter((entry) => entry.msg === 'the delivery thread wrote to the console');
      expect(consoleEntries.length).toBeGreaterThan(0);
      for (const entry of consoleEntries) {
        expect(entry.level).toBe(40);
        expect(entry.console?.length).toBeLessThanOrEqual(1_000);
      }
      expect(consoleEntries.some((entry) => entry.console?.startsWith('reader closed'))).toBe(true);
      started.child.kill('SIGTERM');
      expect((await started.exited).code).toBe(0);
    } finally {
      await nats.close();
    }
  });
});
