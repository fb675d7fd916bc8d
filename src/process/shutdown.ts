import type { Server } from 'node:http';
import { Server as NetServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { closeConnectionsAfterAnswers, closeConnectionsWithoutRequests } from './http-server';
import type { Logger } from './logger';
import type { Store } from '../store/store';

/** How long a drain waits for requests already sent on open connections before closing those that have none. */
const REQUEST_GRACE_MS = 1_000;

export interface Drain {
  /** True from the signal on: readiness answers 503. */
  isStopping: () => boolean;
  /** True once the drain proper began, the delay after the signal: operations answer 503. */
  isShuttingDown: () => boolean;
  /** Stops: resolves with the exit code once the server and store are closed or time ran out. */
  shutdown: (server: Server, signal: string) => Promise<number>;
}

/**
 * Stops taking new connections and keeps the open ones, idle keep-alive connections included: http.Server's own
 * close() (Node 19 on) also closes those at once, and a client whose next request was already on its way got a
 * reset instead of the drain's 503 with Connection: close. They close with that answer, or after the grace below.
 */
function stopListening(server: Server): Promise<void> {
  return new Promise((resolve) => NetServer.prototype.close.call(server, () => resolve()));
}

/**
 * Graceful stop: readiness turns 503 at once; for delayMs (SHUTDOWN_DELAY_MS)
 * the service accepts and serves as before, so that a load balancer that
 * learns of the stop after the signal has routed elsewhere by then; then the
 * drain: delivery stops (attempts aborted, leases released), the listener
 * stops taking new connections, requests in flight finish, each connection closes with its next answer (those answering no
 * request after a second), then the store closes. Past the time limit, counted
 * from the end of the delay, the remaining connections are cut and the exit
 * code says so. The limit covers closing the store too: a database that
 * stopped answering must not hold the exit past it.
 */
/** Whatever hands changes on (src/delivery/engine.ts): stopped with the drain, before the store it reads closes. */
export interface Stoppable {
  stop(boundMs: number): Promise<void>;
}

/** The longest the drain gives delivery to abort its attempts in flight and release its leases. */
const DELIVERY_STOP_MS = 5_000;

export function createDrain(store: Store, logger: Logger, timeoutMs: number, delayMs = 0, delivery?: Stoppable): Drain {
  let stopping: Promise<number> | undefined;
  let draining = false;

  async function stop(server: Server, signal: string): Promise<number> {
    logger.info({ signal, delayMs, timeoutMs }, 'shutting down');
    if (delayMs > 0) await sleep(delayMs);
    draining = true;
    return drain(server);
  }

  async function drain(server: Server): Promise<number> {
    if (delayMs > 0) logger.info('draining');
    const deadline = Date.now() + timeoutMs;
    // Attempts in flight are aborted at once (a re-send keeps its id and body) and the leases released, so another
    // instance takes the endpoints over now rather than after DELIVERY_LEASE_MS; alongside the requests' drain.
    const deliveryStopped = delivery?.stop(Math.min(DELIVERY_STOP_MS, timeoutMs / 2)).catch((error: unknown) => {
      logger.error({ err: error }, 'stopping delivery failed');
    });
    closeConnectionsAfterAnswers(server);
    const closed = stopListening(server).then(() => 'closed' as const);
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
    // Bounded: the release and the close of its pool wait for a database that may not answer.
    let deliveryTimer: NodeJS.Timeout | undefined;
    await Promise.race([
      deliveryStopped,
      new Promise((resolve) => (deliveryTimer = setTimeout(resolve, Math.max(0, deadline - Date.now())))),
    ]);
    clearTimeout(deliveryTimer);
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
    isStopping: () => stopping !== undefined,
    isShuttingDown: () => draining,
    shutdown: (server, signal) => (stopping ??= stop(server, signal)),
  };
}
