import { hostname } from 'node:os';
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runServer, startServer } from '../helpers/server-process';
import { DEMO_WITHDRAWAL, get, inFlight, refuses, startSlowRequest } from '../helpers/slow-request';
import { waitFor } from '../helpers/wait';

/** A failed start's problems: stderr holds JSON lines only, each at level fatal (60), one per problem. */
function startProblems(stderr: string): string[] {
  const lines = stderr
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  for (const line of lines) expect(line).toEqual({ level: 60, time: expect.any(String), instance: hostname(), msg: expect.any(String) });
  return lines.map((line) => line.msg);
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
});
