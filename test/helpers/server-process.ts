import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { hostname } from 'node:os';
import path from 'node:path';
import { captured } from './capture';

const ROOT = path.resolve(__dirname, '..', '..');

export interface ServerProcess {
  child: ChildProcessWithoutNullStreams;
  port: number;
  /** The metrics listener's port (METRICS_PORT). */
  metricsPort: number;
  stdout: string[];
  exited: Promise<{ code: number | null; stderr: string }>;
}

/** Every server process a test file started that has not exited yet. */
const running = new Set<ChildProcessWithoutNullStreams>();

// A test that fails before it stops its server would leave it running, and its pipes would keep the jest
// worker from exiting ("A worker process has failed to exit gracefully"): whatever is left is killed after
// the file, with the processes it started (npm start runs the server as its grandchild).
afterAll(async () => {
  await Promise.all(
    [...running].map((child) => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      try {
        process.kill(-(child.pid as number), 'SIGKILL');
      } catch {
        // The group is gone already; its exit event is on its way.
      }
      return exited;
    }),
  );
});

/** src/server.ts run by tsx, on the Node running the tests. */
const SERVER_FROM_SOURCE = [process.execPath, '--import', 'tsx', 'src/server.ts'];

/** Runs the server as a real process (by default src/server.ts, run by tsx), with only the environment given. */
export function runServer(
  env: Record<string, string>,
  [command, ...args] = SERVER_FROM_SOURCE,
): { child: ChildProcessWithoutNullStreams; exited: ServerProcess['exited']; stdout: string[] } {
  captured.capturing = true;
  const child = spawn(command, args, {
    cwd: ROOT,
    // Ports the kernel picks, the metrics listener's too: servers of parallel tests must not meet on 3000 or 9464.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', METRICS_PORT: '0', HOST: '127.0.0.1', ...env },
    // A process group of its own, which the clean-up above kills whole.
    detached: true,
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  const stdout: string[] = [];
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    const lines = String(chunk).split('\n').filter(Boolean);
    stdout.push(...lines);
    captured.logLines.push(...lines);
  });
  child.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) => child.on('exit', (code) => resolve({ code, stderr })));
  return { child, exited, stdout };
}

/** Starts the server and resolves once it logs the ports it listens on, the partners' and the metrics listener's. */
export async function startServer(env: Record<string, string> = {}, command = SERVER_FROM_SOURCE): Promise<ServerProcess> {
  const started = runServer(env, command);
  const [port, metricsPort] = await new Promise<[number, number]>((resolve, reject) => {
    const timer = setInterval(() => {
      // Log lines only: npm, when it runs the server, prints lines of its own.
      const entries = started.stdout.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
      const listening = entries.find((entry) => entry.msg === 'listening');
      const metrics = entries.find((entry) => entry.msg === 'metrics listening');
      if (listening && metrics) {
        clearInterval(timer);
        resolve([listening.port, metrics.port]);
      }
    }, 50);
    void started.exited.then(({ code, stderr }) => {
      clearInterval(timer);
      reject(new Error(`server exited with ${code} before listening: ${stderr}`));
    });
  });
  return { ...started, port, metricsPort };
}

/** A failed start's problems: stderr holds JSON lines only, each at level fatal (60), one per problem. */
export function startProblems(stderr: string): string[] {
  const lines = stderr
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  for (const line of lines) expect(line).toEqual({ level: 60, time: expect.any(String), instance: hostname(), msg: expect.any(String) });
  return lines.map((line) => line.msg);
}
