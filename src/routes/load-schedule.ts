import type { RequestHandler, Router } from 'express';
import { loadScheduleSchema } from '../schemas/token-ledger';
import { settleLoadSchedule } from '../services/token-ledger';
import { ROUTE_OF_EVENT, TOKEN_EVENTS } from '../schemas/token-event';
import type { OperationRouterDeps } from './operation-deps';
import { tokenNotificationChain, tokenNotificationRouter } from './token-notification';

/** Load Schedule: a scheduled load settled (contract 9.3). Also served by POST /v1/events. */
export function loadScheduleChain(deps: OperationRouterDeps): RequestHandler[] {
  return tokenNotificationChain(deps, loadScheduleSchema, settleLoadSchedule);
}

export function loadScheduleRouter(deps: OperationRouterDeps): Router {
  return tokenNotificationRouter(ROUTE_OF_EVENT[TOKEN_EVENTS.loadSchedule], 'load_schedule', deps, loadScheduleChain(deps));
}
