import type { Server } from 'node:http';
import type { Logger } from './logger';
import type { Store } from './store/store';

export interface Drain {
  isShuttingDown: () => boolean;
  /** Starts draining; resolves with the exit code once the server and store are closed or time ran out. */
  shutdown: (signal: string) => Promise<number>;
}

/**
 * Graceful stop: readiness turns 503 at once, the listener stops taking new
 * connections, requests in flight finish, idle keep-alive connections are
 * closed as they become idle, then the store closes. Past the time limit the
 * remaining connections are cut and the exit code says so.
 */
export function createDrain(getServer: () => Server | undefined, store: Store, logger: Logger, timeoutMs: number): Drain {
  let draining: Promise<number> | undefined;
  const isShuttingDown = () => draining !== undefined;

  async function drain(signal: string): Promise<number> {
    logger.info({ signal, timeoutMs }, 'shutting down');
    const server = getServer();
    let cutOff = false;
    if (server) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const idleSweep = setInterval(() => server.closeIdleConnections(), 100);
      const timer = new Promise<void>((resolve) =>
        setTimeout(() => {
          cutOff = true;
          resolve();
        }, timeoutMs).unref(),
      );
      server.closeIdleConnections();
      await Promise.race([closed, timer]);
      clearInterval(idleSweep);
      if (cutOff) {
        logger.error('requests still in flight at the shutdown time limit; cutting them off');
        server.closeAllConnections();
      }
    }
    await store.close();
    logger.info({ cutOff }, 'stopped');
    return cutOff ? 1 : 0;
  }

  return {
    isShuttingDown,
    shutdown: (signal) => (draining ??= drain(signal)),
  };
}
