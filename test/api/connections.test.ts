import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import type { RequestListener, Server } from 'node:http';
import { createApp } from '../../src/app';
import type { Config } from '../../src/process/config';
import { createHttpServer, type ConnectionLimits, type ServerTimeLimits } from '../../src/process/http-server';
import { MemoryStore } from '../../src/store/memory-store';
import { testConfig } from '../helpers/app';
import { capturingLogger } from '../helpers/capture';
import { waitFor } from '../helpers/wait';

/** A connection either closed by the server before any answer, or open and answering /healthz. */
function connect(port: number): Promise<{ socket: net.Socket; answered: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'));
    socket.on('error', () => undefined);
    socket.once('data', () => resolve({ socket, answered: true }));
    socket.once('close', () => resolve({ socket, answered: false }));
  });
}

async function serving(
  limits: Omit<ConnectionLimits, 'writeTimeout'>,
  timeLimits: Partial<ServerTimeLimits> = {},
): Promise<{ server: Server; port: number }> {
  const app = createApp({ store: new MemoryStore(), logger: capturingLogger(), config: testConfig({ bodyLimitBytes: 1024 }) });
  const server = createHttpServer(app, timeLimits, { writeTimeout: 30_000, ...limits });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** Contract section 11: MAX_CONNECTIONS per instance and MAX_CONNECTIONS_PER_ADDRESS per client address. */
describe('connection limits', () => {
  const opened: net.Socket[] = [];
  let server: Server | undefined;
  afterEach(async () => {
    opened.splice(0).forEach((socket) => socket.destroy());
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  const holdOpen = async (port: number, n: number) => {
    const results = [];
    for (let i = 0; i < n; i += 1) {
      const result = await connect(port);
      opened.push(result.socket);
      results.push(result.answered);
    }
    return results;
  };

  it('a connection past MAX_CONNECTIONS_PER_ADDRESS is closed at once; one closed makes room again', async () => {
    const started = await serving({ maxConnections: 0, maxConnectionsPerAddress: 3 });
    server = started.server;
    expect(await holdOpen(started.port, 4)).toEqual([true, true, true, false]);
    opened[0].destroy();
    // The server counts the connection as closed once it sees it close: asked again until then.
    await waitFor(async () => (await holdOpen(started.port, 1))[0]);
  });

  it('a connection past MAX_CONNECTIONS is closed at once, whatever its address; 0 turns the per-address limit off', async () => {
    const started = await serving({ maxConnections: 5, maxConnectionsPerAddress: 0 });
    server = started.server;
    expect(await holdOpen(started.port, 6)).toEqual([true, true, true, true, true, false]);
  });
});

/**
 * A client that sends its bytes, then never reads and never closes: paused, it neither takes the answer nor sees
 * the server's FIN, so it never sends its own.
 */
function silentClient(port: number, bytes: string): Promise<net.Socket> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.pause();
      socket.write(bytes, () => resolve(socket));
    });
    socket.on('error', () => undefined);
  });
}

const openConnections = (server: Server) =>
  new Promise<number>((resolve, reject) => server.getConnections((error, count) => (error ? reject(error) : resolve(count))));

/**
 * Reads everything the server sends until the connection closes: what arrived, and how it ended: 'end' for the
 * server's FIN after its last byte, else the error's code (ECONNRESET for a reset, which drops what the kernel held).
 */
function readToClose(socket: net.Socket): Promise<{ received: string; ending: string }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let ending = 'closed without end';
    socket.removeAllListeners('error');
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => (ending = 'end'));
    socket.on('error', (error: NodeJS.ErrnoException) => (ending = error.code ?? 'error'));
    socket.on('close', () => resolve({ received: Buffer.concat(chunks).toString('latin1'), ending }));
    socket.resume();
  });
}

const statusLines = (received: string) => received.match(/HTTP\/1\.1 \d{3}/g) ?? [];

/** Contract section 11: a connection the service answered and is closing cannot hold a slot of the limits. */
describe('a connection the service answered and closes, from a client that never reads nor closes', () => {
  const opened: net.Socket[] = [];
  let server: Server | undefined;
  afterEach(async () => {
    opened.splice(0).forEach((socket) => socket.destroy());
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  const cases: Array<[string, string]> = [
    ['a malformed request (400)', 'NOT-A-METHOD / HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['headers not complete in time (408)', 'POST /v1/tokens/withdraw HTTP/1.1\r\nHost: x\r\n'],
    [
      'a body over the limit (413)',
      'POST /v1/tokens/withdraw HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
    ],
  ];

  it.each(cases)('%s: the server destroys it, and its slot of MAX_CONNECTIONS_PER_ADDRESS is free again', async (_case, bytes) => {
    const started = await serving(
      { maxConnections: 0, maxConnectionsPerAddress: 1 },
      { headersTimeout: 300, connectionsCheckingInterval: 100 },
    );
    server = started.server;
    opened.push(await silentClient(started.port, bytes));
    // Asked again until the server has let the silent connection go: a new one from the address is then served.
    await waitFor(async () => {
      const next = await connect(started.port);
      opened.push(next.socket);
      return next.answered;
    });
    expect(await openConnections(started.server)).toBe(1);
  });
});

/**
 * Contract section 11: an answer the client does not take within the write timeout closes its connection, and
 * requests pipelined behind answers not yet taken are not read (issue 42: 50 pipelined GET /openapi.json per
 * connection, never read, held every connection open and each answer in memory).
 */
describe('a client that pipelines requests', () => {
  let server: Server | undefined;
  const opened: net.Socket[] = [];
  afterEach(async () => {
    opened.splice(0).forEach((socket) => socket.destroy());
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  /** The app, counting the requests handed to it and the answers the kernel took ('finish'): the rest is held in the process. */
  async function countingServer(
    writeTimeout: number,
    { config, timeLimits }: { config?: Partial<Config>; timeLimits?: Partial<ServerTimeLimits> } = {},
  ) {
    const app = createApp({ store: new MemoryStore(), logger: capturingLogger(), config: testConfig(config) });
    const counts = { handed: 0, taken: 0, mostHeld: 0 };
    const counting: RequestListener = (req, res) => {
      counts.handed += 1;
      counts.mostHeld = Math.max(counts.mostHeld, counts.handed - counts.taken);
      res.once('finish', () => (counts.taken += 1));
      app(req, res);
    };
    const limits: ConnectionLimits = { maxConnections: 0, maxConnectionsPerAddress: 0, writeTimeout };
    server = createHttpServer(counting, { connectionsCheckingInterval: 100, ...timeLimits }, limits);
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    return { counts, port: (server.address() as AddressInfo).port };
  }

  const pipelined = (path: string, n: number, last = 'keep-alive') =>
    Array.from({ length: n }, (_, i) => `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: ${i === n - 1 ? last : 'keep-alive'}\r\n\r\n`).join(
      '',
    );

  it('and never reads is closed once an answer has waited past WRITE_TIMEOUT_MS', async () => {
    const { counts, port } = await countingServer(500);
    // Raw bytes: no client pipelines 400 requests and never reads.
    opened.push(await silentClient(port, pipelined('/openapi.json', 400)));
    await waitFor(async () => (await openConnections(server as Server)) === 0);
    expect(counts.mostHeld).toBe(1);
  });

  it('and never reads is closed by a reset, so the kernel drops the answers it still held for the client', async () => {
    const { port } = await countingServer(500);
    // Raw bytes: 100 answers of the document are far more than the two kernels' buffers hold.
    const socket = await silentClient(port, pipelined('/openapi.json', 100));
    opened.push(socket);
    await waitFor(async () => (await openConnections(server as Server)) === 0);
    // Read only now: after a graceful close the kernel would still deliver the buffered answers, then 'end'.
    expect((await readToClose(socket)).ending).toBe('ECONNRESET');
  });

  it('and reads only later has at most 1 answer held in the process at any time, then gets every answer in order', async () => {
    const { counts, port } = await countingServer(30_000);
    // Raw bytes: a client that pipelines 100 requests, takes nothing until the server has answers waiting, then reads all.
    const socket = await silentClient(port, pipelined('/openapi.json', 100, 'close'));
    opened.push(socket);
    await waitFor(async () => counts.handed - counts.taken >= 1);
    const { received, ending } = await readToClose(socket);
    expect(ending).toBe('end');
    expect(statusLines(received)).toEqual(Array(100).fill('HTTP/1.1 200'));
    expect(counts).toEqual({ handed: 100, taken: 100, mostHeld: 1 });
  });

  it('and reads at once gets every answer, in order', async () => {
    const { counts, port } = await countingServer(30_000);
    // Raw bytes: a pipelining client, reading everything until the server closes after the last answer.
    const socket = net.connect(port, '127.0.0.1', () => socket.write(pipelined('/openapi.json', 20) + pipelined('/healthz', 30, 'close')));
    opened.push(socket);
    const { received, ending } = await readToClose(socket);
    expect(ending).toBe('end');
    expect(statusLines(received)).toEqual(Array(50).fill('HTTP/1.1 200'));
    expect(received.endsWith('{"status":"ok"}')).toBe(true);
    expect(counts.handed).toBe(50);
  });

  // The keep-alive timeout, short so that the server ends an idle connection soon after its last answer.
  const idleEndsSoon = { timeLimits: { keepAliveTimeout: 100 } };

  const serverEnds: Array<[string, string]> = [
    ['idle (the keep-alive timeout)', 'keep-alive'],
    ['after its last answer, which says Connection: close', 'close'],
  ];

  it.each(serverEnds)(
    'and never reads, though the kernels took every answer, is reset when the server ends it %s: the kernel drops what it held',
    async (_how, last) => {
      const { counts, port } = await countingServer(30_000, idleEndsSoon);
      // Raw bytes: about 520 KB of answers, which the two kernels' buffers take whole, so no answer waits in the process.
      const socket = await silentClient(port, pipelined('/healthz', 1_000, last));
      opened.push(socket);
      await waitFor(async () => (await openConnections(server as Server)) === 0);
      expect(counts.taken).toBe(1_000);
      // Read only now: closed gracefully, the kernel kept sending the answers (an orphan, in FIN-WAIT-1), then 'end'.
      expect((await readToClose(socket)).ending).toBe('ECONNRESET');
    },
  );

  it('and never reads, then sends bytes that are no request once the server ended it idle, is still reset', async () => {
    const { port } = await countingServer(30_000, idleEndsSoon);
    const socket = await silentClient(port, pipelined('/healthz', 1_000));
    opened.push(socket);
    // The keep-alive timeout: the server ends the connection as it emits this.
    await once(server as Server, 'timeout');
    socket.write('NOT-A-METHOD / HTTP/1.1\r\n\r\n');
    await waitFor(async () => (await openConnections(server as Server)) === 0);
    expect((await readToClose(socket)).ending).toBe('ECONNRESET');
  });

  it('and reads everything is ended gracefully when idle: its client gets every answer, then the end, not a reset', async () => {
    const { port } = await countingServer(30_000, idleEndsSoon);
    const socket = net.connect(port, '127.0.0.1', () => socket.write(pipelined('/healthz', 100)));
    opened.push(socket);
    const { received, ending } = await readToClose(socket);
    expect({ ending, answers: statusLines(received) }).toEqual({ ending: 'end', answers: Array(100).fill('HTTP/1.1 200') });
  });

  it('sending a request after the server ended its idle connection: the request is never worked on, nor answered', async () => {
    const { counts, port } = await countingServer(30_000, idleEndsSoon);
    // Half-open allowed, so that it can still send once it has seen the server's end (the race of a keep-alive client).
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => socket.write(pipelined('/healthz', 1)));
    opened.push(socket);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    await once(socket, 'end');
    socket.write(pipelined('/healthz', 1));
    await waitFor(async () => (await openConnections(server as Server)) === 0);
    expect(statusLines(Buffer.concat(chunks).toString('latin1'))).toEqual(['HTTP/1.1 200']);
    expect(counts.handed).toBe(1);
  });

  const pipelinedPosts = (n: number) => 'POST /v1/tokens/withdraw HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n'.repeat(n);
  const refusals: Array<[string, Partial<Config>, string, string]> = [
    ['the documents budget per address', { rateLimitDocumentsPerAddressPerMinute: 1 }, pipelined('/openapi.json', 2_000), '200'],
    ['the failures limit per address', { rateLimitPerAddressPerMinute: 1 }, pipelinedPosts(2_000), '400'],
  ];

  it.each(refusals)(
    'past %s, its 429 closes the connection: the requests pipelined behind it are never worked on, and other requests are answered',
    async (_limit, config, requests, firstStatus) => {
      const { counts, port } = await countingServer(30_000, { config });
      // Raw bytes: 2,000 requests, more than the server reads at once (64 KB), so most wait unread in its kernel.
      const socket = net.connect(port, '127.0.0.1', () => socket.write(requests));
      opened.push(socket);
      const { received, ending } = await readToClose(socket);
      expect({ ending, answers: statusLines(received) }).toEqual({ ending: 'end', answers: [`HTTP/1.1 ${firstStatus}`, 'HTTP/1.1 429'] });
      expect(received).toMatch(/^Connection: close$/im);
      expect(counts.handed).toBe(2);
      const next = await connect(port);
      opened.push(next.socket);
      expect(next.answered).toBe(true);
      expect(counts.handed).toBe(3);
    },
  );
});
