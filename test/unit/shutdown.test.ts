import http from 'node:http';
import { once } from 'node:events';
import { connect, type AddressInfo } from 'node:net';
import { createHttpServer } from '../../src/process/http-server';
import { createLogger } from '../../src/process/logger';
import { createDrain } from '../../src/process/shutdown';
import { MemoryStore } from '../../src/store/memory-store';
import { waitFor } from '../helpers/wait';
import { buildTestApp } from '../helpers/app';
import { errorBody } from '../helpers/http';
import { withdrawal } from '../helpers/payloads';

/** A server as the service makes it, whose /slow requests answer only when the test says so. */
function startServer() {
  const pending: Array<() => void> = [];
  const server = createHttpServer((req, res) => {
    if (req.url === '/slow') pending.push(() => res.end('done'));
    else res.end('fast');
  });
  return new Promise<{ server: http.Server; port: number; release: () => void; slowArrived: () => Promise<void> }>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        server,
        port: (server.address() as AddressInfo).port,
        release: () => pending.splice(0).forEach((answer) => answer()),
        slowArrived: () => waitFor(async () => pending.length > 0),
      }),
    ),
  );
}

/** A GET on a keep-alive connection: the body and the Connection header of its answer. */
function answerOf(port: number, path: string) {
  return new Promise<{ body: string; connection: string | undefined }>((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: new http.Agent({ keepAlive: true }) }, (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ body, connection: res.headers.connection }));
      })
      .on('error', reject);
  });
}

const get = (port: number, path: string) => answerOf(port, path).then(({ body }) => body);

/** A raw keep-alive connection that has had one answer (GET /healthz) and sits idle, as a client's pool keeps it. */
async function idleKeepAliveConnection(port: number) {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (chunk) => (received += chunk));
  const ended = new Promise<string>((resolve) => {
    // What came before the connection ended, or the error that ended it (a reset).
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(`error ${error.code}`));
    socket.on('close', () => resolve(received));
  });
  await once(socket, 'connect');
  socket.write('GET /healthz HTTP/1.1\r\nHost: receiver\r\n\r\n');
  await waitFor(async () => received.endsWith('{"status":"ok"}'));
  received = '';
  return { socket, ended };
}

/** The status line, the Connection header and the body of a raw HTTP/1.1 answer. */
function parseAnswer(raw: string) {
  const [head, body] = raw.split('\r\n\r\n');
  const status = head.split('\r\n')[0];
  const connection = /^connection: (.*)$/im.exec(head)?.[1];
  return { status, connection, body: body === undefined ? raw : JSON.parse(body) };
}

describe('createDrain', () => {
  it('marks shutting down at once, lets the request in flight finish, closes the store and resolves 0', async () => {
    const { server, port, release, slowArrived } = await startServer();
    const store = new MemoryStore();
    const drain = createDrain(store, createLogger('silent'), 5_000);
    await get(port, '/fast');
    const inFlight = get(port, '/slow');
    await slowArrived();
    expect(drain.isShuttingDown()).toBe(false);
    const stopped = drain.shutdown(server, 'SIGTERM');
    expect(drain.isShuttingDown()).toBe(true);
    await expect(get(port, '/fast')).rejects.toThrow();
    release();
    expect(await inFlight).toBe('done');
    expect(await stopped).toBe(0);
    await expect(store.ping()).rejects.toThrow('Service Unavailable');
  });

  it('the answer to a request in flight says Connection: close, so its client never sends on a connection being closed', async () => {
    const { server, port, release, slowArrived } = await startServer();
    // A limit no drain here reaches: only the connections closing with their answers end this one.
    const drain = createDrain(new MemoryStore(), createLogger('silent'), 600_000);
    const inFlight = answerOf(port, '/slow');
    await slowArrived();
    const stopped = drain.shutdown(server, 'SIGTERM');
    release();
    expect(await inFlight).toEqual({ body: 'done', connection: 'close' });
    expect(await stopped).toBe(0);
  });

  it('closes connections that are answering no request (silent, or half a request sent) and resolves 0 well within the limit', async () => {
    const { server, port, release, slowArrived } = await startServer();
    const drain = createDrain(new MemoryStore(), createLogger('silent'), 60_000);
    const silent = connect(port, '127.0.0.1');
    const halfSent = connect(port, '127.0.0.1', () => halfSent.write('POST /v1/tokens/withdraw HTTP/1.1\r\nHost: x\r\n'));
    await Promise.all([once(silent, 'connect'), once(halfSent, 'connect')]);
    const inFlight = get(port, '/slow');
    await slowArrived();
    const stopped = drain.shutdown(server, 'SIGTERM');
    // Both are closed by the server, while the request in flight still runs; neither got an answer.
    await Promise.all([once(silent, 'close'), once(halfSent, 'close')]);
    release();
    expect(await inFlight).toBe('done');
    // Before the change, the drain waited the whole time limit (here 60 s, past jest's own) and resolved 1.
    expect(await stopped).toBe(0);
  });

  it('idle keep-alive connections whose next request arrives as the drain starts get the 503 with Connection: close, not a reset', async () => {
    let isShuttingDown = () => false;
    const { server, store } = await buildTestApp(undefined, { isShuttingDown: () => isShuttingDown() });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const connections = await Promise.all(Array.from({ length: 16 }, () => idleKeepAliveConnection(port)));
    const drain = createDrain(store, createLogger('silent'), 60_000);
    isShuttingDown = drain.isShuttingDown;
    const stopped = drain.shutdown(server, 'SIGTERM');
    for (const { socket } of connections) {
      const body = JSON.stringify(withdrawal());
      socket.write(
        `POST /v1/tokens/withdraw HTTP/1.1\r\nHost: receiver\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
    }
    const answers = await Promise.all(connections.map(({ ended }) => ended));
    expect(answers.map(parseAnswer)).toEqual(
      answers.map(() => ({ status: 'HTTP/1.1 503 Service Unavailable', connection: 'close', body: errorBody(503, 'Service Unavailable') })),
    );
    expect(await stopped).toBe(0);
  });

  it('with a delay, readiness turns off at once while operations and the listener go on until the delay has passed', async () => {
    const { server, port } = await startServer();
    const drain = createDrain(new MemoryStore(), createLogger('silent'), 5_000, 200);
    const stopped = drain.shutdown(server, 'SIGTERM');
    expect({ stopping: drain.isStopping(), shuttingDown: drain.isShuttingDown(), listening: server.listening }).toEqual({
      stopping: true,
      shuttingDown: false,
      listening: true,
    });
    expect(await stopped).toBe(0);
    expect({ stopping: drain.isStopping(), shuttingDown: drain.isShuttingDown(), listening: server.listening }).toEqual({
      stopping: true,
      shuttingDown: true,
      listening: false,
    });
    await expect(get(port, '/fast')).rejects.toThrow();
  });

  it('a second signal joins the first drain', async () => {
    const { server } = await startServer();
    const drain = createDrain(new MemoryStore(), createLogger('silent'), 5_000);
    const first = drain.shutdown(server, 'SIGTERM');
    expect(drain.shutdown(server, 'SIGINT')).toBe(first);
    expect(await first).toBe(0);
  });

  it('cuts requests off at the time limit and resolves 1', async () => {
    const { server, port, slowArrived } = await startServer();
    const drain = createDrain(new MemoryStore(), createLogger('silent'), 200);
    const inFlight = get(port, '/slow');
    await slowArrived();
    expect(await drain.shutdown(server, 'SIGTERM')).toBe(1);
    await expect(inFlight).rejects.toThrow();
  });

  it('a store that never finishes closing (a frozen database) does not hold the exit past the time limit, and resolves 1', async () => {
    const { server } = await startServer();
    const store = new MemoryStore();
    store.close = () => new Promise<void>(() => undefined);
    const drain = createDrain(store, createLogger('silent'), 300);
    // That it resolves at all is the point: the store's close never does, so only the time limit can end the wait.
    expect(await drain.shutdown(server, 'SIGTERM')).toBe(1);
  });
});
