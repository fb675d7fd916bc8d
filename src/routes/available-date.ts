import type { RequestHandler, Router } from 'express';
import { availableDateSchema } from '../schemas/token-dates';
import { changeAvailableDate } from '../services/token-notifications';
import { ROUTE_OF_EVENT, TOKEN_EVENTS } from '../schemas/token-event';
import type { OperationRouterDeps } from './operation-deps';
import { tokenNotificationChain, tokenNotificationRouter } from './token-notification';

/** Available Date: the token's first usable day (contract 9.4). Also served by POST /v1/events. */
export function availableDateChain(deps: OperationRouterDeps): RequestHandler[] {
  return tokenNotificationChain(deps, availableDateSchema, changeAvailableDate);
}

export function availableDateRouter(deps: OperationRouterDeps): Router {
  return tokenNotificationRouter(ROUTE_OF_EVENT[TOKEN_EVENTS.availableUpdated], 'available_date', deps, availableDateChain(deps));
}
