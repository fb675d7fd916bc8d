import type { RequestHandler, Router } from 'express';
import { expiryDateSchema } from '../schemas/token-dates';
import { changeExpiryDate } from '../services/token-notifications';
import { ROUTE_OF_EVENT, TOKEN_EVENTS } from '../schemas/token-event';
import type { OperationRouterDeps } from './operation-deps';
import { tokenNotificationChain, tokenNotificationRouter } from './token-notification';

/** Expiry Date: the token's last usable day (contract 9.4). Also served by POST /v1/events. */
export function expiryDateChain(deps: OperationRouterDeps): RequestHandler[] {
  return tokenNotificationChain(deps, expiryDateSchema, changeExpiryDate);
}

export function expiryDateRouter(deps: OperationRouterDeps): Router {
  return tokenNotificationRouter(ROUTE_OF_EVENT[TOKEN_EVENTS.expiryUpdated], 'expiry_date', deps, expiryDateChain(deps));
}
