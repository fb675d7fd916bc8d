import { hostname } from 'node:os';
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runServer, startProblems, startServer } from '../helpers/server-process';
import { DEMO_WITHDRAWAL, get, inFlight, refuses, startSlowRequest } from '../helpers/slow-request';
import { waitFor } from '../helpers/wait';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/** A GET on a connection of its own, as a load balancer's new connection: its status, or 'refused'. */
function onNewConnection(port: number, urlPath: string): Promise<number | 'refused'> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: urlPath, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
      .on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNREFUSED' ? resolve('refused') : reject(error)));
  });
}

describe('the server process', () => {
  it('names its instance on every log line: INSTANCE_ID, else the host name', async () => {
    const named = await startServer({ INSTANCE_ID: 'receiver-a' });
    await fetch(`http://127.0.0.1:${named.port}/healthz`);
    named.child.kill('SIGTERM');
    await named.exited;
    const lines = named.stdout.map((line) => JSON.parse(line));
    expect(lines.map((line) => line.msg)).toEqual(expect.arrayContaining(['listening', 'request completed', 'shutting down', 'stopped']));
    for (const line of lines) expect(line.instance).toBe('receiver-a');
    const unnamed = await startServer();
    unnamed.child.kill('SIGTERM');
    await unnamed.exited;
    for (const line of unnamed.stdout.map((text) => JSON.parse(text))) expect(line.instance).toBe(hostname());
  });

  it('serves the demo seed with no settings at all, saying that the demo keys are public and that memory is not kept', async () => {
    const server = await startServer();
    const warnings = server.stdout
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.level === 40)
      .map((entry) => entry.msg);
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

  it('on SIGTERM a feed request waiting for changes answers its empty page (200) at once, and the process exits 0 without cutting it', async () => {
    const server = await startServer({ MAX_WAITING_FEEDS_PER_ACCOUNT: '1' });
    const feed = (wait: string) =>
      fetch(`http://127.0.0.1:${server.port}/v1/accounts/PDR28/changes?wait=${wait}`, {
        headers: { Authorization: 'Bearer sk_demo_PDR28_d41b8e60' },
      });
    const wait30 = () => {
      const sent = { status: 0, answer: feed('30').then(async (answer) => ({ status: answer.status, body: await answer.json() })) };
      void sent.answer.then(({ status }) => (sent.status = status));
      return sent;
    };
    let waiting = wait30();
    // The account's one waiting slot is taken once that request waits: a probe is refused then. A probe that took
    // the slot first may have had the waiting request refused: it is sent again.
    await waitFor(async () => {
      if ((await feed('1')).status === 429) return true;
      if (waiting.status === 429) waiting = wait30();
      return false;
    });
    server.child.kill('SIGTERM');
    expect(await waiting.answer).toEqual({ status: 200, body: { changes: [], next_after: 0, has_more: false } });
    expect((await server.exited).code).toBe(0);
    const stopped = server.stdout.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'stopped');
    expect(stopped).toMatchObject({ cutOff: false });
  });

  it('with SHUTDOWN_DELAY_MS, a client connecting every 100 ms after SIGTERM is served (readiness 503) for the delay, then refused', async () => {
    // As the manifests set it: room for the withdrawal and the probes below on a busy machine.
    const delayMs = 5_000;
    const server = await startServer({ SHUTDOWN_DELAY_MS: String(delayMs) });
    const signalled = Date.now();
    server.child.kill('SIGTERM');
    // The signal takes its own time to arrive: until readiness turns (or the port closes), the stop has not begun.
    await waitFor(async () => (await onNewConnection(server.port, '/readyz')) !== 200);
    const withdrawal = await fetch(`http://127.0.0.1:${server.port}/v1/tokens/withdraw`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Connection: 'close' },
      body: DEMO_WITHDRAWAL,
    }).then(async (response) => ({ status: response.status, body: await response.json() }), String);
    const probes: Array<{ readiness: number | 'refused'; liveness: number | 'refused' }> = [];
    let refusedAfterMs = 0;
    // A load balancer that has not yet heard of the stop: a new connection every 100 ms until one is refused.
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(100)) {
      const probe = { readiness: await onNewConnection(server.port, '/readyz'), liveness: await onNewConnection(server.port, '/healthz') };
      if (probe.readiness === 'refused') {
        refusedAfterMs = Date.now() - signalled;
        break;
      }
      probes.push(probe);
    }
    expect(withdrawal).toEqual({ status: 200, body: { success: true, message: 'Success' } });
    expect(probes.length).toBeGreaterThan(0);
    expect(probes.map((probe) => probe.readiness)).toEqual(probes.map(() => 503));
    // The last liveness probe may meet the drain's first instant, where the port closes between the two probes.
    expect(probes.slice(0, -1).map((probe) => probe.liveness)).toEqual(probes.slice(0, -1).map(() => 200));
    // The delay counts from the signal's arrival, after `signalled`: a busy machine only makes this longer.
    expect(refusedAfterMs).toBeGreaterThanOrEqual(delayMs);
    expect((await server.exited).code).toBe(0);
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
    expect({ code, problems: startProblems(stderr) }).toEqual({
      code: 1,
      problems: [
        'Invalid configuration: PORT must be a whole number from 0 to 65535',
        'Invalid configuration: RATE_LIMIT_PER_MINUTE must be a whole number, 0 or more',
      ],
    });
  });

  it('with NODE_ENV=production and no SEED_FILE, refuses to start, naming SEED_FILE', async () => {
    const { code, stderr } = await runServer({ NODE_ENV: 'production' }).exited;
    expect({ code, problems: startProblems(stderr) }).toEqual({
      code: 1,
      problems: [
        'NODE_ENV=production and SEED_FILE is not set: set SEED_FILE to your seed file (SEED_FILE=demo serves the demo seed, whose keys are public)',
      ],
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
    expect({ code, problems: startProblems(stderr) }).toEqual({
      code: 1,
      problems: [
        `Seed file ${file} holds a key of the demo seed (account PDR28): NODE_ENV=production refuses the demo keys, which are public, under any file name; SEED_FILE=demo serves the demo seed on purpose`,
      ],
    });
  });

  it('stops at start on a bad seed file, naming each bad entry on a line of its own', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'seed-')), 'bad.json');
    const tokens = ['Z', 'Y'].map((destination, i) => ({
      token_id: String(i + 1),
      source_id: 'A',
      destination_id: destination,
      status: 'active',
      balance: '1.00',
    }));
    writeFileSync(file, JSON.stringify({ accounts: [{ source_id: 'A', share_public: 'p', share_secret: 's', destinations: [] }], tokens }));
    const { exited } = runServer({ SEED_FILE: file });
    const { code, stderr } = await exited;
    expect({ code, problems: startProblems(stderr) }).toEqual({
      code: 1,
      problems: [
        `Seed file ${file} is invalid: tokens.0.destination_id is not a destination of account A`,
        `Seed file ${file} is invalid: tokens.1.destination_id is not a destination of account A`,
      ],
    });
  });

  it('stops at start on endpoints the settings refuse: an http:// URL without DELIVERY_ALLOW_HTTP, a published secret in production', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'seed-')), 'endpoints.json');
    const account = { source_id: 'REAL1', share_public: 'pk_real_0001', share_secret: 'sk_real_0001', destinations: ['D1'] };
    const endpoints = [
      { id: 'erp', url: 'http://127.0.0.1:9000/hooks', secrets: ['whsec_ZXJwLXNlY3JldC1vZi1vdXItb3duLW9mLTMyLWJ5dGVz'] },
      { id: 'copied', url: 'https://erp.example/hooks', secrets: ['whsec_ZGVtby1zaWduaW5nLXNlY3JldC0wMDAwMDAwMDAx'] },
    ];
    writeFileSync(file, JSON.stringify({ accounts: [account], endpoints }));
    const { code, stderr } = await runServer({ NODE_ENV: 'production', SEED_FILE: file }).exited;
    expect({ code, problems: startProblems(stderr) }).toEqual({
      code: 1,
      problems: [
        `Seed file ${file} is invalid: endpoints.0.url must be an https:// URL (endpoint erp); DELIVERY_ALLOW_HTTP=true allows http://`,
        `Seed file ${file} is invalid: endpoints.1.secrets holds a value published in this repository's documentation (endpoint copied); NODE_ENV=production needs secrets of your own`,
      ],
    });
  });
});
