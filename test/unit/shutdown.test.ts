import http from 'node:http';
import { once } from 'node:events';
import { connect, type AddressInfo } from 'node:net';
import { createHttpServer } from '../../src/process/http-server';
import { createLogger } from '../../src/process/logger';
import { createDrain } from '../../src/process/shutdown';
import { MemoryStore } from '../../src/store/memory-store';
import { waitFor } from '../helpers/wait';

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
