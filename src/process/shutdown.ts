import type { Server } from 'node:http';
import { closeConnectionsAfterAnswers, closeConnectionsWithoutRequests } from './http-server';
import type { Logger } from './logger';
import type { Store } from '../store/store';

/** How long a drain waits for requests already sent on open connections before closing those that have none. */
const REQUEST_GRACE_MS = 1_000;

export interface Drain {
  isShuttingDown: () => boolean;
  /** Starts draining; resolves with the exit code once the server and store are closed or time ran out. */
  shutdown: (server: Server, signal: string) => Promise<number>;
}

/**
 * Graceful stop: readiness turns 503 at once, the listener stops taking new
 * connections, requests in flight finish, each connection closes with its
 * last answer (idle ones at once, those answering no request after a second),
 * then the store closes. Past the time limit the
 * remaining connections are cut and the exit code says so. The limit covers
 * closing the store too: a database that stopped answering must not hold the
 * exit past it.
 */
export function createDrain(store: Store, logger: Logger, timeoutMs: number): Drain {
  let draining: Promise<number> | undefined;
  const isShuttingDown = () => draining !== undefined;

  async function drain(server: Server, signal: string): Promise<number> {
    logger.info({ signal, timeoutMs }, 'shutting down');
    const deadline = Date.now() + timeoutMs;
    closeConnectionsAfterAnswers(server);
    const closed = new Promise<'closed'>((resolve) => server.close(() => resolve('closed')));
    // A moment for requests already on their way to arrive and be answered 503; then connections with none close.
    const withoutRequests = setTimeout(() => closeConnectionsWithoutRequests(server), Math.min(REQUEST_GRACE_MS, timeoutMs / 2));
    withoutRequests.unref();
    const timedOut = new Promise<'timed out'>((resolve) => setTimeout(() => resolve('timed out'), timeoutMs).unref());
    const cutOff = (await Promise.race([closed, timedOut])) === 'timed out';
    clearTimeout(withoutRequests);
    if (cutOff) {
      logger.error('requests still in flight at the shutdown time limit; cutting them off');
      server.closeAllConnections();
    }
    let timer: NodeJS.Timeout | undefined;
    const storeClosed = await Promise.race([
      store.close().then(
        () => true,
        (error: unknown) => {
          logger.error({ err: error }, 'closing the store failed');
          return false;
        },
      ),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now())))),
    ]);
    clearTimeout(timer);
    if (!storeClosed) logger.error('the store did not close within the shutdown time limit (or failed to); exiting without waiting for it');
    logger.info({ cutOff, storeClosed }, 'stopped');
    return cutOff || !storeClosed ? 1 : 0;
  }

  return {
    isShuttingDown,
    shutdown: (server, signal) => (draining ??= drain(server, signal)),
  };
}
