import http from 'node:http';
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runServer, startServer } from '../helpers/server-process';
import { waitFor } from '../helpers/wait';

const DEMO_WITHDRAWAL = JSON.stringify({
  share_public: 'pk_demo_PDR28_7f3a9c2e',
  read_event: 'token.withdrawn_created',
  source_id: 'PDR28',
  destination_id: 'ID001',
  token_id: '2908926013012565',
  transaction_id: '20240121000000000001',
  withdrawn_amount: '100.00',
  token_balance: '900.00',
});

/** Opens a withdrawal and sends only the first half of its body; the rest goes when `finish` is called. */
function startSlowRequest(port: number) {
  const req = http.request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/v1/tokens/withdraw',
    headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(DEMO_WITHDRAWAL) },
  });
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
  const sent = new Promise<void>((resolve) => req.write(DEMO_WITHDRAWAL.slice(0, 40), () => resolve()));
  return { response, sent, finish: () => req.end(DEMO_WITHDRAWAL.slice(40)) };
}

/**
 * Resolves once the server has read the slow request's head, so that it is in flight there: its bytes were handed
 * to the kernel before a probe on a new connection was sent, and the server reads ready sockets in the order they
 * became ready, so the probe's answer comes after the slow request's head was read.
 */
async function inFlight(port: number, slow: ReturnType<typeof startSlowRequest>): Promise<void> {
  await slow.sent;
  expect(await get(port, '/healthz')).toBe(200);
}

/** Whether the port refuses connections. */
const refuses = (port: number) => get(port, '/readyz').then(() => false, () => true);

async function get(port: number, urlPath: string): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}${urlPath}`);
  return response.status;
}

describe('the server process', () => {
  it('serves the demo seed with no settings at all, saying that the demo keys are public and that memory is not kept', async () => {
    const server = await startServer();
    const warnings = server.stdout.map((line) => JSON.parse(line)).filter((entry) => entry.level === 40).map((entry) => entry.msg);
    expect(warnings).toEqual([
      'serving the demo seed: its keys are public, never use it for real accounts',
      'memory store: nothing survives a restart; set DATABASE_URL for durable state',
    ]);
    // The start-up line names the Node it runs on; npm scripts run the project's own Node 24 (node_modules/.bin).
    const listening = server.stdout.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'listening');
    expect(listening).toMatchObject({ store: 'memory', node: process.version });
    expect(listening.node).toMatch(/^v24\./);
    const response = await fetch(`http://127.0.0.1:${server.port}/v1/tokens/withdraw`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: DEMO_WITHDRAWAL,
    });
    expect({ status: response.status, body: await response.json() }).toEqual({ status: 200, body: { success: true, message: 'Success' } });
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
  });

  it('on SIGTERM turns readiness off, finishes the request in flight, refuses new connections and exits 0', async () => {
    const server = await startServer();
    const slow = startSlowRequest(server.port);
    await inFlight(server.port, slow);
    server.child.kill('SIGTERM');
    await waitFor(() => refuses(server.port));
    slow.finish();
    expect(await slow.response).toEqual({ status: 200, body: '{"success":true,"message":"Success"}' });
    const { code } = await server.exited;
    expect(code).toBe(0);
    const stopped = server.stdout.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'stopped');
    expect(stopped).toMatchObject({ cutOff: false });
  });

  it('exits non-zero when it has to cut a request off at SHUTDOWN_TIMEOUT_MS', async () => {
    const server = await startServer({ SHUTDOWN_TIMEOUT_MS: '500' });
    const slow = startSlowRequest(server.port);
    slow.response.catch(() => undefined);
    await inFlight(server.port, slow);
    server.child.kill('SIGTERM');
    // The request never finishes: only the shutdown limit ends it (jest's limit, far above, bounds the wait).
    const { code } = await server.exited;
    expect(code).toBe(1);
    const stopped = server.stdout.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'stopped');
    expect(stopped).toMatchObject({ cutOff: true });
  });

  it('stops at start on a bad setting, naming it', async () => {
    const { exited } = runServer({ PORT: 'eighty', RATE_LIMIT_PER_MINUTE: '-1' });
    const { code, stderr } = await exited;
    expect(code).toBe(1);
    expect(stderr.trim()).toBe('Invalid configuration: PORT must be a whole number; RATE_LIMIT_PER_MINUTE must be a whole number');
  });

  it('with NODE_ENV=production and no SEED_FILE, refuses to start, naming SEED_FILE', async () => {
    const { code, stderr } = await runServer({ NODE_ENV: 'production' }).exited;
    expect({ code, stderr: stderr.trim() }).toEqual({
      code: 1,
      stderr: 'NODE_ENV=production and SEED_FILE is not set: set SEED_FILE to your seed file (SEED_FILE=demo serves the demo seed, whose keys are public)',
    });
  });

  it('with NODE_ENV=production, SEED_FILE=demo serves the demo seed on purpose', async () => {
    const server = await startServer({ NODE_ENV: 'production', SEED_FILE: 'demo' });
    expect(await get(server.port, '/readyz')).toBe(200);
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
  });

  it('with NODE_ENV=production, refuses the demo seed under any other path, recognised by its public keys (contract section 11)', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'seed-')), 'partners.json');
    copyFileSync(path.resolve(__dirname, '..', '..', 'seed', 'demo.json'), file);
    const { code, stderr } = await runServer({ NODE_ENV: 'production', SEED_FILE: file }).exited;
    expect({ code, stderr: stderr.trim() }).toEqual({
      code: 1,
      stderr: `Seed file ${file} holds a key of the demo seed (account PDR28): NODE_ENV=production refuses the demo keys, which are public, under any file name; SEED_FILE=demo serves the demo seed on purpose`,
    });
  });

  it('stops at start on a bad seed file, naming the bad entry', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'seed-')), 'bad.json');
    writeFileSync(file, JSON.stringify({ accounts: [{ source_id: 'A', share_public: 'p', share_secret: 's', destinations: [] }], tokens: [{ token_id: '1', source_id: 'A', destination_id: 'Z', status: 'active', balance: '1.00' }] }));
    const { exited } = runServer({ SEED_FILE: file });
    const { code, stderr } = await exited;
    expect(code).toBe(1);
    expect(stderr.trim()).toBe(`Seed file ${file} is invalid: tokens.0.destination_id is not a destination of account A`);
  });
});
