/**
 * What clients that do not read cost everyone else (contract section 11; issue 42, "slow readers"). Measured
 * here, not in the test suite: the figures are samples of a shared machine as much as of the code.
 *
 *   npm run bench:slow-readers -- stall     one address's bursts of pipelined GET /openapi.json, past the documents
 *                                           budget: the latency of another caller's /healthz, the server's CPU time
 *   npm run bench:slow-readers -- orphans   50 clients pipelining /healthz, never reading: what the kernel still holds
 *                                           for them once the server has ended their connections (ss, Linux)
 *
 * The server is the build (dist/server.js) run as `npm start` runs it, in a process of its own, with the defaults
 * (memory store, demo seed), its log in a file.
 */
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = path.resolve(__dirname, '..', '..');

interface RunningServer {
  port: number;
  /** The CPU time the process has used so far, user and system, in ms (/proc/<pid>/stat). */
  cpuMs: () => number;
  /** The requests the app answered, by path (its log's lines for them, "request completed" or "request failed"). */
  answered: (requestPath: string) => number;
  stop: () => void;
}

async function startServer(env: Record<string, string>): Promise<RunningServer> {
  const log = path.join(mkdtempSync(path.join(tmpdir(), 'slow-readers-')), 'server.log');
  const out = openSync(log, 'w');
  const child = spawn(process.execPath, ['--max-semi-space-size=16', 'dist/server.js'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=1048576',
      PORT: '0',
      METRICS_PORT: '0',
      HOST: '127.0.0.1',
      ...env,
    },
    stdio: ['ignore', out, out],
  });
  const entries = () =>
    readFileSync(log, 'utf8')
      .split('\n')
      // The last line may be half written.
      .slice(0, -1)
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg?: string; port?: number; req?: { url?: string } });
  // Fields 14 and 15 of /proc/<pid>/stat, after the command's name in parentheses: utime and stime, in clock ticks (1/100 s).
  const cpuMs = () => {
    const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  };
  for (let i = 0; i < 600; i += 1) {
    const listening = entries().find((entry) => entry.msg === 'listening');
    if (listening?.port) {
      return {
        port: listening.port,
        cpuMs,
        answered: (requestPath) => entries().filter((entry) => entry.msg?.startsWith('request ') && entry.req?.url === requestPath).length,
        stop: () => child.kill('SIGKILL'),
      };
    }
    await sleep(100);
  }
  child.kill('SIGKILL');
  throw new Error(`the server did not start; its log: ${log}`);
}

const pipelined = (requestPath: string, n: number) => `GET ${requestPath} HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(n);

/** A client that sends its requests and never reads: paused, its kernel's receive buffer fills, then the server's send buffer. */
function silentClient(port: number, bytes: string, localAddress = '127.0.0.1'): Promise<net.Socket> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress }, () => {
      socket.pause();
      socket.write(bytes, () => resolve(socket));
    });
    socket.on('error', () => undefined);
  });
}

const print = (line: string) => process.stdout.write(`${line}\n`);

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/**
 * Bursts like the attack's: 250 connections from 127.0.0.1, 50 pipelined GET /openapi.json each, read by nobody,
 * a burst every 5 s. Another caller (127.0.0.2) sends GET /healthz every 50 ms on a keep-alive connection; its
 * latencies during the bursts are the figure.
 */
async function measureStall(): Promise<void> {
  const { port, cpuMs, answered, stop } = await startServer({});
  const agent = new Agent({ keepAlive: true, maxSockets: 1, localAddress: '127.0.0.2' });
  /** Each burst's probe latencies, in ms. */
  const latencies: number[][] = [];
  let probing = true;
  const probe = async () => {
    while (probing) {
      const started = performance.now();
      await new Promise<void>((resolve, reject) => {
        request({ port, host: '127.0.0.1', path: '/healthz', agent }, (res) => {
          res.resume();
          res.on('end', resolve);
        })
          .on('error', reject)
          .end();
      });
      latencies.at(-1)?.push(performance.now() - started);
      await sleep(50);
    }
  };
  const probing$ = probe();
  const bursts = 6;
  const cpuMsPerBurst: number[] = [];
  for (let burst = 0; burst < bursts; burst += 1) {
    latencies.push([]);
    const cpuBefore = cpuMs();
    const sockets = await Promise.all(Array.from({ length: 250 }, () => silentClient(port, pipelined('/openapi.json', 50))));
    await sleep(5_000);
    cpuMsPerBurst.push(cpuMs() - cpuBefore);
    sockets.forEach((socket) => socket.destroy());
  }
  probing = false;
  await probing$;
  const documentsAnswered = answered('/openapi.json');
  stop();
  // The first burst also warms the server up (its code compiled, the documents' 200s within the budget): apart.
  const sorted = latencies
    .slice(1)
    .flat()
    .sort((a, b) => a - b);
  print(
    JSON.stringify({
      bursts,
      probes: sorted.length,
      p50Ms: Math.round(percentile(sorted, 50)),
      p99Ms: Math.round(percentile(sorted, 99)),
      maxMs: Math.round(sorted[sorted.length - 1]),
      maxMsPerBurst: latencies.map((burst) => Math.round(Math.max(...burst))),
      serverCpuMsPerBurst: cpuMsPerBurst,
      documentsAnswered,
    }),
  );
}

interface SocketCount {
  count: number;
  /** What their kernel send queues hold, in bytes: answers the clients have not taken. */
  sendQueueBytes: number;
}

/**
 * The server's sockets on `port`, from ss: those open (ESTAB), those it has ended and still holds (in their closing
 * grace), and the orphans: closed by the process (inode 0) and kept by the kernel until it has sent what they hold,
 * or gives up.
 */
function serverSockets(port: number): { open: SocketCount; ending: SocketCount; orphans: SocketCount } {
  const counts = {
    open: { count: 0, sendQueueBytes: 0 },
    ending: { count: 0, sendQueueBytes: 0 },
    orphans: { count: 0, sendQueueBytes: 0 },
  };
  const lines = execFileSync('ss', ['-tnHe', `( sport = :${port} )`], { encoding: 'utf8' }).split('\n');
  // TIME-WAIT: what is left of a connection closed on both sides; it holds nothing.
  for (const line of lines.filter((text) => text !== '' && !text.startsWith('TIME-WAIT'))) {
    const [state, , sendQueue] = line.trim().split(/\s+/);
    // Inode 0: no process holds the socket; an open one (ESTAB) is still waiting in the listener's accept queue.
    const kind = state === 'ESTAB' ? counts.open : / ino:0 /.test(line) ? counts.orphans : counts.ending;
    kind.count += 1;
    kind.sendQueueBytes += Number(sendQueue);
  }
  return counts;
}

/**
 * 50 clients pipeline 4,600 GET /healthz each (about 2.4 MB of answers, which the kernels absorb without the server
 * ever waiting to write) and never read. Sampled every second for up to 5 minutes: the server's connections, open,
 * ending and orphaned, and what their send queues hold. Then the clients read: a reset, or every answer and the end.
 */
async function measureOrphans(): Promise<void> {
  const { port, stop } = await startServer({});
  const clients = await Promise.all(Array.from({ length: 50 }, () => silentClient(port, pipelined('/healthz', 4_600))));
  const started = performance.now();
  let mostOrphans = { count: 0, sendQueueBytes: 0 };
  let lastOrphanSeenS = 0;
  for (let second = 0; second < 300; second += 1) {
    const { open, ending, orphans } = serverSockets(port);
    if (orphans.count > 0) lastOrphanSeenS = Math.round((performance.now() - started) / 1000);
    if (orphans.sendQueueBytes > mostOrphans.sendQueueBytes) mostOrphans = orphans;
    if (second % 10 === 0) print(JSON.stringify({ second, open, ending, orphans }));
    if (second > 20 && open.count + ending.count + orphans.count === 0) break;
    await sleep(1_000);
  }
  const endings = await Promise.all(
    clients.map(
      (socket) =>
        new Promise<string>((resolve) => {
          socket.removeAllListeners('error');
          socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
          socket.on('end', () => resolve('end'));
          socket.on('data', () => undefined);
          socket.resume();
        }),
    ),
  );
  stop();
  const clientsSaw = endings.reduce<Record<string, number>>((counts, how) => ({ ...counts, [how]: (counts[how] ?? 0) + 1 }), {});
  print(JSON.stringify({ mostOrphans, lastOrphanSeenS, clientsSaw }));
}

const mode = process.argv[2];
if (mode === 'stall') void measureStall();
else if (mode === 'orphans') void measureOrphans();
else process.stderr.write('usage: slow-readers.ts stall|orphans\n');
