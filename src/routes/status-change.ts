import { Router, type RequestHandler } from 'express';
import { authenticate, authenticatedAccount } from '../middleware/authenticate';
import { methodNotAllowed } from '../middleware/errors';
import { validate } from '../middleware/validate';
import { statusChangeSchema } from '../schemas/status-change';
import { changeTokenStatus } from '../services/token-notifications';
import type { OperationRouterDeps } from './operation-deps';
import { operation, respond } from './respond';

const STATUS_CHANGE_PATH = '/v1/tokens/status-change';

/**
 * Status Change after the intake: schema, account and key, then the service. Also served by POST /v1/events.
 * A keyless Status Change would let anyone who knows an account, a destination and a token delete it for good:
 * it is accepted only signed with the account's own secret, or where the operator allows it.
 */
export function statusChangeChain({ store, now, afterAuthentication, allowKeylessStatusChange }: OperationRouterDeps): RequestHandler[] {
  const statusChange = validate(statusChangeSchema);
  return [
    statusChange,
    authenticate(store, 'share_public', statusChange.input, (res) => allowKeylessStatusChange || res.locals.signedByAccount === true),
    ...afterAuthentication,
    respond(store, now, (tx, res) => changeTokenStatus(tx, statusChange.input(res), authenticatedAccount(res))),
  ];
}

export function statusChangeRouter(deps: OperationRouterDeps): Router {
  const router = Router();
  router
    .route(STATUS_CHANGE_PATH)
    .post(operation('status_change'), ...deps.intake, ...statusChangeChain(deps))
    .all(methodNotAllowed(['POST']));
  return router;
}
