import { Router, type RequestHandler } from 'express';
import { requestContext } from '../middleware/request-context';

/** Names the operation a route serves, for metrics and the event log, before anything can refuse it. */
export function nameOperation(name: string): RequestHandler {
  return function nameOperation(_req, res, next) {
    requestContext(res).operation = name;
    next();
  };
}

/** An operation a dispatch hands a request to: its name and its chain once the request is received. */
export interface DispatchTarget {
  name: string;
  chain: RequestHandler[];
}

/**
 * One URL for several operations: the event the received body names (`eventOf`, a 400 listing the known events
 * when it names none of them) picks the operation, which names the request and runs its chain, as a router of its
 * own. POST /v1/events dispatches on read_event, PATCH on the token path on token_event.
 */
export function dispatchOnEvent<Event>(eventOf: (body: unknown) => Event, targets: ReadonlyMap<Event, DispatchTarget>): RequestHandler {
  // mergeParams: the chosen chain reads the path's parameters (the token path's partner and key), which this route matched.
  const routers = new Map(
    [...targets].map(([event, { name, chain }]) => [event, { name, router: Router({ mergeParams: true }).use(chain) }]),
  );
  return function dispatchOnEvent(req, res, next) {
    const context = requestContext(res);
    const event = eventOf(context.body.parsed);
    const chosen = routers.get(event);
    if (!chosen) throw new Error(`the event ${String(event)} of the schema has no operation in the catalogue`);
    context.operation = chosen.name;
    chosen.router(req, res, next);
  };
}
