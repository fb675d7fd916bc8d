import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect as connectSocket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { JetStreamApiCodes, JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { systemTool } from './system-tools';
import { freePort } from './throwaway-cluster';
import { waitFor } from './wait';

/**
 * nats-server with JetStream as a process of the test (contract section 13.4): Debian's package, which .ci/run
 * installs, on a free port with a store directory of its own; never a server of the machine's (4222).
 */
export const NATS_SERVER = systemTool('nats-server');
export const HAS_NATS_SERVER = existsSync(NATS_SERVER);

/** Says once per file that the NATS runs are skipped, so a green run without them is not mistaken for a full one. */
export function noteIfNoNatsServer(): void {
  if (!HAS_NATS_SERVER)
    process.stderr.write(
      `${expect.getState().testPath ?? 'a suite'}: NATS runs SKIPPED, nats-server is not installed (apt-get install nats-server; .ci/run does)\n`,
    );
}

/** A nats-server -js of the test: stopped, killed and started again on the same port and store directory. */
export class TestNatsServer {
  private child: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    readonly storeDirectory: string,
  ) {}

  static async start(): Promise<TestNatsServer> {
    const server = new TestNatsServer(await freePort(), mkdtempSync(path.join(tmpdir(), 'nats-js-')));
    await server.restart();
    return server;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** Starts the server again (after stop or kill), with what its store directory kept. */
  async restart(): Promise<void> {
    const child = spawn(NATS_SERVER, ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.storeDirectory], { stdio: 'ignore' });
    this.child = child;
    // Serving once it accepts a connection: waited for, with a generous bound, not slept.
    const deadline = Date.now() + 30_000;
    while (!(await this.accepts())) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`nats-server did not start on port ${this.port}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** A clean stop (SIGTERM): JetStream writes its state out. */
  stop(): Promise<void> {
    return this.end('SIGTERM');
  }

  /** A crash (SIGKILL): what JetStream had not synced is for its recovery to find. */
  kill(): Promise<void> {
    return this.end('SIGKILL');
  }

  /** A server that hangs (SIGSTOP): connections stay open, nothing is answered, until thaw. Resolves once it is stopped. */
  async freeze(): Promise<void> {
    const child = this.child;
    if (!child?.pid) throw new Error('nats-server is not running');
    child.kill('SIGSTOP');
    // The signal takes effect when the kernel next schedules it: on a busy machine, only then is it surely frozen.
    const stopped = () => readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]?.startsWith('T') ?? false;
    await waitFor(async () => stopped());
  }

  thaw(): void {
    this.child?.kill('SIGCONT');
  }

  /** Stops it for good and removes its store. */
  async remove(): Promise<void> {
    await this.stop();
    rmSync(this.storeDirectory, { recursive: true, force: true });
  }

  private async end(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill(signal);
    await exited;
  }

  private accepts(): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = connectSocket(this.port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      }).on('error', () => resolve(false));
    });
  }
}

/** A message as a consumer reads it: its stream sequence, subject, Nats-Msg-Id and JSON body. */
export interface ReadMessage {
  streamSeq: number;
  subject: string;
  msgId: string | undefined;
  body: Record<string, unknown>;
}

/** Every message of the stream, oldest first, read on a connection of its own; none while the stream does not exist. */
export async function readStream(server: TestNatsServer, stream = 'RECEIVER_CHANGES'): Promise<ReadMessage[]> {
  const client = await connect({ servers: server.url });
  try {
    const manager = await jetstreamManager(client);
    const info = await manager.streams.info(stream).catch((error: unknown) => {
      if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound) return undefined;
      throw error;
    });
    const messages: ReadMessage[] = [];
    if (!info || info.state.messages === 0) return messages;
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq += 1) {
      const message = await manager.streams.getMessage(stream, { seq });
      if (message)
        messages.push({ streamSeq: seq, subject: message.subject, msgId: message.header.get('Nats-Msg-Id'), body: message.json() });
    }
    return messages;
  } finally {
    await client.close();
  }
}
