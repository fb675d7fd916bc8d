import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { errorBody, readinessWithin } from '../helpers/http';
import { tokenCreation } from '../helpers/payloads';
import { TEST_DATABASE_URL, warnIfNoDatabase } from '../helpers/postgres';
import { startServer, type ServerProcess } from '../helpers/server-process';
import { systemTool } from '../helpers/system-tools';
import { clusterUnavailable, ThrowawayCluster } from '../helpers/throwaway-cluster';

warnIfNoDatabase();
jest.setTimeout(180_000);

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A small disk of its own needs a tmpfs mount, which needs root. */
const unavailable = TEST_DATABASE_URL
  ? (clusterUnavailable() ?? (process.getuid?.() === 0 ? undefined : 'mounting a small tmpfs needs root'))
  : undefined;
// One plain line, not console.warn: jest would print a stack trace with it for a skip that is expected.
if (unavailable) process.stderr.write(`no throwaway PostgreSQL cluster on a small disk (${unavailable}): the disk-full test is SKIPPED\n`);

const createToken = (port: number, key: string) =>
  fetch(`http://127.0.0.1:${port}/v1/token/PDR28/${key}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(tokenCreation({ share_secret: 'sk_demo_PDR28_d41b8e60', source_id: 'PDR28', destination_id: 'ID001' })),
  });

async function statusOf(response: Promise<Response>): Promise<{ status: number; body: unknown }> {
  const answer = await response;
  return { status: answer.status, body: await answer.json() };
}

(TEST_DATABASE_URL && !unavailable ? describe : describe.skip)('a database whose disk is full (contract section 11)', () => {
  let cluster: ThrowawayCluster | undefined;
  let server: ServerProcess | undefined;
  let disk: string | undefined;
  afterAll(async () => {
    server?.child.kill('SIGKILL');
    await cluster?.stop();
    if (disk) {
      await run(systemTool('umount'), [disk]).catch(() => undefined);
      rmSync(disk, { recursive: true, force: true });
    }
  });

  it('answers 503 to what needs a new page and 503 on /readyz while it lasts, never ends the process, and recovers once space is back', async () => {
    cluster = await ThrowawayCluster.start();
    disk = mkdtempSync(path.join(tmpdir(), 'small-disk-'));
    await run(systemTool('mount'), ['-t', 'tmpfs', '-o', 'size=32m', 'tmpfs', disk]);
    await run(systemTool('chown'), ['postgres:postgres', disk]);
    await cluster.query(`CREATE TABLESPACE small_disk LOCATION '${disk}'`);
    await cluster.query('CREATE DATABASE receiver TABLESPACE small_disk');
    server = await startServer({
      DATABASE_URL: cluster.url.replace(/\/postgres$/, '/receiver'),
      RATE_LIMIT_PER_MINUTE: '0',
      RATE_LIMIT_PER_ADDRESS_PER_MINUTE: '0',
    });
    const { port } = server;
    expect((await statusOf(createToken(port, 'before-full-0001'))).status).toBe(200);

    // Everything left on the small disk goes to one file: the next page the database needs is refused.
    const filler = path.join(disk, 'filler');
    const { bavail, bsize } = statfsSync(disk);
    await run(systemTool('fallocate'), ['-l', String(bavail * bsize), filler]);
    // Not ready before any request has met the full disk: readiness tries a write of its own.
    expect(await readinessWithin(() => fetch(`http://127.0.0.1:${port}/readyz`), 503)).toBe(503);
    let refused: { status: number; body: unknown } | undefined;
    for (let i = 0; i < 2_000 && !refused; i += 1) {
      const answer = await statusOf(createToken(port, `while-full-${String(i).padStart(5, '0')}`));
      if (answer.status !== 200) refused = answer;
    }
    expect(refused).toEqual({ status: 503, body: errorBody(503, 'Service Unavailable') });
    expect(await readinessWithin(() => fetch(`http://127.0.0.1:${port}/readyz`), 503)).toBe(503);
    await sleep(1_500);
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(503);
    expect(server.child.exitCode).toBeNull();

    rmSync(filler);
    expect(await readinessWithin(() => fetch(`http://127.0.0.1:${port}/readyz`), 200)).toBe(200);
    expect((await statusOf(createToken(port, 'after-full-00001'))).status).toBe(200);
    expect(server.child.exitCode).toBeNull();
  });
});
