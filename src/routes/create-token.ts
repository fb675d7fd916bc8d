import { Router } from 'express';
import { methodNotAllowed } from '../middleware/errors';
import { createTokenSchema } from '../schemas/token-creation';
import { createToken } from '../services/token-creation';
import { keyedOperationChain, TOKEN_PATH } from './keyed-operation';
import type { OperationRouterDeps } from './operation-deps';
import { tokenView } from './token-view';

/** POST: a new token with a token_id the service assigns; a retry under the same {randomkey} gets the same token. */
export function createTokenRouter(deps: OperationRouterDeps): Router {
  const router = Router();
  router
    .route(TOKEN_PATH)
    .post(...keyedOperationChain(deps, { name: 'create_token', schema: createTokenSchema, service: createToken, view: (token) => ({ token: tokenView(token) }) }))
    .all(methodNotAllowed(['POST']));
  return router;
}
