import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { captured } from './capture';

const ROOT = path.resolve(__dirname, '..', '..');

export interface ServerProcess {
  child: ChildProcessWithoutNullStreams;
  port: number;
  stdout: string[];
  exited: Promise<{ code: number | null; stderr: string }>;
}

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
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', HOST: '127.0.0.1', ...env },
  });
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

/** Starts the server and resolves once it logs the port it listens on. */
export async function startServer(env: Record<string, string> = {}, command = SERVER_FROM_SOURCE): Promise<ServerProcess> {
  const started = runServer(env, command);
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setInterval(() => {
      // Log lines only: npm, when it runs the server, prints lines of its own.
      const listening = started.stdout.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line)).find((entry) => entry.msg === 'listening');
      if (listening) {
        clearInterval(timer);
        resolve(listening.port);
      }
    }, 50);
    void started.exited.then(({ code, stderr }) => {
      clearInterval(timer);
      reject(new Error(`server exited with ${code} before listening: ${stderr}`));
    });
  });
  return { ...started, port };
}
