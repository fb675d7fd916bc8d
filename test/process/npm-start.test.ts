import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { startServer } from '../helpers/server-process';

const ROOT = path.resolve(__dirname, '..', '..');

describe('npm start under a supervisor', () => {
  beforeAll(() => {
    execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' });
  });

  it('SIGTERM to the npm process drains and stops the service: npm exits 0 and nothing serves on the port any more', async () => {
    const server = await startServer({}, ['npm', 'start']);
    const served = await fetch(`http://127.0.0.1:${server.port}/healthz`);
    expect(served.status).toBe(200);
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
    const logLines = server.stdout.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line).msg);
    expect(logLines).toEqual(expect.arrayContaining(['shutting down', 'stopped']));
    await expect(fetch(`http://127.0.0.1:${server.port}/healthz`)).rejects.toThrow();
  });
});
