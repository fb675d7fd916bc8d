import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../../src/logger';
import { createDrain } from '../../src/shutdown';
import { MemoryStore } from '../../src/store/memory-store';
import { waitFor } from '../helpers/wait';

/** A server whose /slow requests answer only when the test says so. */
function startServer() {
  const pending: Array<() => void> = [];
  const server = http.createServer((req, res) => {
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

function get(port: number, path: string) {
  return new Promise<string>((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path, agent: new http.Agent({ keepAlive: true }) }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve(body));
    }).on('error', reject);
  });
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
