import type { RequestHandler, Router } from 'express';
import { loadedSchema } from '../schemas/token-ledger';
import { load } from '../services/token-ledger';
import { ROUTE_OF_EVENT, TOKEN_EVENTS } from '../schemas/token-event';
import type { OperationRouterDeps } from './operation-deps';
import { tokenNotificationChain, tokenNotificationRouter } from './token-notification';

/** Loaded: funds added to a token (contract 9.1). Also served by POST /v1/events. */
export function loadedChain(deps: OperationRouterDeps): RequestHandler[] {
  return tokenNotificationChain(deps, loadedSchema, load);
}

export function loadedRouter(deps: OperationRouterDeps): Router {
  return tokenNotificationRouter(ROUTE_OF_EVENT[TOKEN_EVENTS.loaded], 'loaded', deps, loadedChain(deps));
}
