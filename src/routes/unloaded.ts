import type { RequestHandler, Router } from 'express';
import { unloadedSchema } from '../schemas/token-ledger';
import { unload } from '../services/token-ledger';
import { ROUTE_OF_EVENT, TOKEN_EVENTS } from '../schemas/token-event';
import type { OperationRouterDeps } from './operation-deps';
import { tokenNotificationChain, tokenNotificationRouter } from './token-notification';

/** Unloaded: funds taken back by the sender (contract 9.2). Also served by POST /v1/events. */
export function unloadedChain(deps: OperationRouterDeps): RequestHandler[] {
  return tokenNotificationChain(deps, unloadedSchema, unload);
}

export function unloadedRouter(deps: OperationRouterDeps): Router {
  return tokenNotificationRouter(ROUTE_OF_EVENT[TOKEN_EVENTS.unloaded], 'unloaded', deps, unloadedChain(deps));
}
