import { Router, type RequestHandler } from 'express';
import { methodNotAllowed } from '../middleware/errors';
import { ROUTE_OF_EVENT, TOKEN_EVENTS } from '../schemas/token-event';
import { withdrawSchema } from '../schemas/withdraw';
import { withdraw } from '../services/token-ledger';
import type { OperationRouterDeps } from './operation-deps';
import { operation } from './respond';
import { tokenNotificationChain } from './token-notification';

const ALLOWED = ['GET', 'POST'];

export function withdrawChain(deps: OperationRouterDeps): RequestHandler[] {
  return tokenNotificationChain(deps, withdrawSchema, withdraw);
}

/**
 * POST, and GET with a JSON body as the published code samples send it.
 * HEAD is refused before Express would run the GET handlers for it: only the
 * listed methods ever move money.
 */
export function withdrawRouter(deps: OperationRouterDeps): Router {
  const chain = withdrawChain(deps);
  const router = Router();
  router
    .route(ROUTE_OF_EVENT[TOKEN_EVENTS.withdrawn])
    .head(methodNotAllowed(ALLOWED))
    .get(operation('withdraw'), ...deps.intake, ...chain)
    .post(operation('withdraw'), ...deps.intake, ...chain)
    .all(methodNotAllowed(ALLOWED));
  return router;
}
