import { Router, type RequestHandler } from 'express';
import { authenticate, authenticatedAccount } from '../middleware/authenticate';
import { methodNotAllowed } from '../middleware/errors';
import { validate } from '../middleware/validate';
import { withdrawSchema } from '../schemas/withdraw';
import { withdraw } from '../services/token-notifications';
import type { OperationRouterDeps } from './operation-deps';
import { operation, respond } from './respond';

const WITHDRAW_PATH = '/v1/tokens/withdraw';
const ALLOWED = ['GET', 'POST'];

/** Withdraw after the intake: schema, account and key, then the service. Also served by POST /v1/events. */
export function withdrawChain({ store, now, afterAuthentication }: OperationRouterDeps): RequestHandler[] {
  const withdrawal = validate(withdrawSchema);
  return [
    withdrawal,
    authenticate(store, 'share_public', withdrawal.input),
    ...afterAuthentication,
    respond(store, now, (tx, res) => withdraw(tx, withdrawal.input(res), authenticatedAccount(res), now())),
  ];
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
    .route(WITHDRAW_PATH)
    .head(methodNotAllowed(ALLOWED))
    .get(operation('withdraw'), ...deps.intake, ...chain)
    .post(operation('withdraw'), ...deps.intake, ...chain)
    .all(methodNotAllowed(ALLOWED));
  return router;
}
