import { Router, type RequestHandler } from 'express';
import { methodNotAllowed } from '../middleware/errors';
import { tokenChangesByEvent, type KeyedOperation, type Operation, type OperationRoute } from '../operations';
import { bookingView } from './booking-view';
import { dispatchOnReadEvent } from './events';
import { dispatchOnTokenEvent, keyedOperationChain, receivedKeyedChain, type KeyedOperation as KeyedChainEntry } from './keyed-operation';
import type { OperationRouterDeps } from './operation-deps';
import { operation } from './apply-in-one-unit';
import { tokenNotificationChain } from './token-notification';
import { tokenMovementView, tokenView } from './token-view';

/**
 * An operation's whole chain: a token notification is named for metrics before anything can refuse it, then
 * received (deps.receive), then its own chain (tokenNotificationChain); POST /v1/events, after the same, hands the
 * request to the chain of the notification its read_event names (dispatchOnReadEvent); a keyed operation's chain
 * (keyedOperationChain) names it, checks the version, then receives it.
 */
function chainOf(entry: Operation, deps: OperationRouterDeps): RequestHandler[] {
  switch (entry.kind) {
    case 'token notification':
      return [operation(entry.name), ...deps.receive, ...tokenNotificationChain(deps, entry)];
    case 'dispatch':
      return [operation(entry.name), ...deps.receive, dispatchOnReadEvent(deps)];
    case 'keyed':
      return keyedOperationChain(deps, withView(entry));
    case 'token change dispatch': {
      const chains = [...tokenChangesByEvent()].map(([event, change]) => [event, { name: change.name, chain: receivedKeyedChain(deps, withView(change)) }] as const);
      return [operation(entry.name), ...dispatchOnTokenEvent(deps, new Map(chains))];
    }
  }
}

/** A keyed entry with the view of its kind of answer: what the answer carries besides success and message. */
function withView(entry: KeyedOperation): KeyedChainEntry<KeyedOperation['schema'], never> {
  switch (entry.answer) {
    case 'token':
      return { ...entry, view: (token) => ({ token: tokenView(token) }) } as KeyedChainEntry<KeyedOperation['schema'], never>;
    case 'booking':
      return { ...entry, view: (booking) => ({ booking: bookingView(booking) }) } as KeyedChainEntry<KeyedOperation['schema'], never>;
    case 'movement':
      return { ...entry, view: tokenMovementView } as KeyedChainEntry<KeyedOperation['schema'], never>;
  }
}

/**
 * The router of one path of the catalogue: each operation's chain on its methods, and a 405 (or OPTIONS' 204) for any
 * other method, naming them all. HEAD is refused before Express would run a GET's chain for it: only the listed
 * methods ever move money.
 */
export function operationRouter({ path, operations }: OperationRoute, deps: OperationRouterDeps): Router {
  const allowed = operations.flatMap((entry) => entry.methods.map((method) => method.toUpperCase()));
  const router = Router();
  const route = router.route(path);
  if (allowed.includes('GET')) route.head(methodNotAllowed(allowed));
  for (const entry of operations) {
    const chain = chainOf(entry, deps);
    for (const method of entry.methods) route[method](...chain);
  }
  route.all(methodNotAllowed(allowed));
  return router;
}
