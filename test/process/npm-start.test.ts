import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startServer } from '../helpers/server-process';
import { DEMO_WITHDRAWAL, inFlight, refuses, startSlowRequest } from '../helpers/slow-request';
import { waitFor } from '../helpers/wait';

const ROOT = path.resolve(__dirname, '..', '..');

/** The environment of the process npm started (its shell execs node, so node has the shell's pid). */
function environmentOfChild(npmPid: number): string[] {
  const child = Number(execFileSync('/usr/bin/ps', ['-o', 'pid=', '--ppid', String(npmPid)], { encoding: 'utf8' }).trim());
  return readFileSync(`/proc/${child}/environ`, 'utf8').split('\0');
}

describe('npm start under a supervisor', () => {
  beforeAll(() => {
    execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' });
  });

  it("node runs with npm start's glibc tunable, and SIGTERM to the npm process drains and stops the service: npm exits 0 and nothing serves on the port any more", async () => {
    const server = await startServer({}, ['npm', 'start']);
    const served = await fetch(`http://127.0.0.1:${server.port}/healthz`);
    expect(served.status).toBe(200);
    // glibc reads its tunables from node's own environment: the shell's assignment before exec must reach it.
    expect(environmentOfChild(server.child.pid as number)).toContain('GLIBC_TUNABLES=glibc.malloc.mmap_threshold=1048576');
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
    const logLines = server.stdout.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line).msg);
    expect(logLines).toEqual(expect.arrayContaining(['shutting down', 'stopped']));
    await expect(fetch(`http://127.0.0.1:${server.port}/healthz`)).rejects.toThrow();
  });

  it('a signal to the whole process group, twice, with requests in flight: the drain finishes them and npm exits 0', async () => {
    const server = await startServer({}, ['npm', 'start']);
    const second = DEMO_WITHDRAWAL.replace('20240121000000000001', '20240121000000000002').replace('900.00', '800.00');
    const slow = [startSlowRequest(server.port), startSlowRequest(server.port, second)];
    for (const request of slow) await inFlight(server.port, request);
    const logLines = () => server.stdout.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line).msg as string);
    const group = -(server.child.pid as number);
    // As systemd does by default: the group gets the signal, so node has it from the kernel and again from npm.
    process.kill(group, 'SIGTERM');
    await waitFor(() => refuses(server.port));
    process.kill(group, 'SIGTERM');
    await waitFor(async () => logLines().some((msg) => msg.startsWith('signal during the stop')));
    for (const request of slow) request.finish();
    expect(await Promise.all(slow.map((request) => request.response))).toEqual([
      { status: 200, body: '{"success":true,"message":"Success"}' },
      { status: 200, body: '{"success":true,"message":"Success"}' },
    ]);
    expect((await server.exited).code).toBe(0);
    expect(logLines()).toEqual(expect.arrayContaining(['shutting down', 'stopped']));
  });
});
