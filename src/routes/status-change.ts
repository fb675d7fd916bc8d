import type { RequestHandler, Router } from 'express';
import { statusChangeSchema } from '../schemas/status-change';
import { changeTokenStatus } from '../services/token-notifications';
import { ROUTE_OF_EVENT, TOKEN_EVENTS } from '../schemas/token-event';
import type { OperationRouterDeps } from './operation-deps';
import { tokenNotificationChain, tokenNotificationRouter } from './token-notification';

/**
 * Status Change after the intake. A keyless Status Change would let anyone who knows an account, a destination
 * and a token delete it for good: it is accepted only signed with the account's own secret, or where the
 * operator allows it.
 */
export function statusChangeChain(deps: OperationRouterDeps): RequestHandler[] {
  return tokenNotificationChain(deps, statusChangeSchema, changeTokenStatus, (res) => deps.allowKeylessStatusChange || res.locals.signedByAccount === true);
}

export function statusChangeRouter(deps: OperationRouterDeps): Router {
  return tokenNotificationRouter(ROUTE_OF_EVENT[TOKEN_EVENTS.statusChanged], 'status_change', deps, statusChangeChain(deps));
}
