import { Router, type RequestHandler } from 'express';
import { statusChangeSchema, STATUS_CHANGED_EVENT } from '../schemas/status-change';
import { tokenEventSchema } from '../schemas/token-event';
import { parsePayload } from '../schemas/validate';
import { withdrawSchema } from '../schemas/withdraw';
import { changeTokenStatus, withdraw } from '../services/token-notifications';
import type { Store } from '../store/store';
import { methodNotAllowed } from '../middleware/errors';
import { operation } from '../middleware/observe';
import { answer } from './respond';

export interface TokenRouteDeps {
  store: Store;
  intake: RequestHandler[];
  now: () => Date;
}

/** Status Change, Withdraw (POST, and GET with a body as in the published samples) and the one-URL dispatcher. */
export function tokenRouter({ store, intake, now }: TokenRouteDeps): Router {
  const statusChange: RequestHandler = async (req, res) => {
    const outcome = await changeTokenStatus(store, parsePayload(statusChangeSchema, req.body));
    await answer(res, store, outcome.replayed);
  };
  const withdrawal: RequestHandler = async (req, res) => {
    const outcome = await withdraw(store, parsePayload(withdrawSchema, req.body), now());
    await answer(res, store, outcome.replayed);
  };
  const tokenEvent: RequestHandler = async (req, res, next) => {
    const { read_event } = parsePayload(tokenEventSchema, req.body);
    const isStatusChange = read_event === STATUS_CHANGED_EVENT;
    res.locals.operation = isStatusChange ? 'status_change' : 'withdraw';
    return (isStatusChange ? statusChange : withdrawal)(req, res, next);
  };

  const router = Router();
  router.route('/v1/tokens/status-change').post(operation('status_change'), intake, statusChange).all(methodNotAllowed(['POST']));
  router
    .route('/v1/tokens/withdraw')
    .get(operation('withdraw'), intake, withdrawal)
    .post(operation('withdraw'), intake, withdrawal)
    .all(methodNotAllowed(['GET', 'HEAD', 'POST']));
  router.route('/v1/events').post(operation('token_event'), intake, tokenEvent).all(methodNotAllowed(['POST']));
  return router;
}
