import { Router, type RequestHandler } from 'express';
import { tokenNotificationsByEvent } from '../operations';
import { TOKEN_EVENTS, tokenEventSchema, type TokenEvent } from '../schemas/token-event';
import { requestContext } from '../middleware/request-context';
import { parsePayload } from '../schemas/validate';
import type { OperationRouterDeps } from './operation-deps';
import { tokenNotificationChain } from './token-notification';

/**
 * POST /v1/events, once named and received (routes/operation.ts): hands the request to the chain of the token
 * notification its read_event names in the catalogue, as a router of its own, named for metrics; an unknown
 * read_event is a 400 that lists the known ones. token.loaded_created is Loaded's event, so it is Loaded here; only
 * the Unloaded route also takes it for Unloaded, as the published page names it.
 */
export function dispatchOnReadEvent(deps: OperationRouterDeps): RequestHandler {
  const byEvent = tokenNotificationsByEvent();
  const chains = Object.fromEntries(
    Object.values(TOKEN_EVENTS).map((event) => {
      const entry = byEvent.get(event);
      if (!entry) throw new Error(`read_event ${event} has no token notification in the catalogue`);
      return [event, { name: entry.name, chain: Router().use(tokenNotificationChain(deps, entry)) }];
    }),
  ) as Record<TokenEvent, { name: string; chain: Router }>;
  return function dispatchOnReadEvent(req, res, next) {
    const context = requestContext(res);
    const { name, chain } = chains[parsePayload(tokenEventSchema, context.body.parsed).read_event];
    context.operation = name;
    chain(req, res, next);
  };
}
