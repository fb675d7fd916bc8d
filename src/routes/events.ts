import { Router, type RequestHandler } from 'express';
import { methodNotAllowed } from '../middleware/errors';
import { STATUS_CHANGED_EVENT } from '../schemas/status-change';
import { tokenEventSchema } from '../schemas/token-event';
import { parsePayload } from '../schemas/validate';
import { WITHDRAWN_EVENT } from '../schemas/withdraw';
import type { OperationRouterDeps } from './operation-deps';
import { operation } from './respond';
import { statusChangeChain } from './status-change';
import { withdrawChain } from './withdraw';

/** Each read_event's operation: its name for metrics, and its chain after the intake, as a router of its own. */
function operationsByEvent(deps: OperationRouterDeps): Record<string, { name: string; chain: Router }> {
  return {
    [STATUS_CHANGED_EVENT]: { name: 'status_change', chain: Router().use(statusChangeChain(deps)) },
    [WITHDRAWN_EVENT]: { name: 'withdraw', chain: Router().use(withdrawChain(deps)) },
  };
}

/** Hands the request to the chain of the operation its read_event names; an unknown read_event is a 400 that lists the known ones. */
function dispatchOnReadEvent(deps: OperationRouterDeps): RequestHandler {
  const operations = operationsByEvent(deps);
  return function dispatchOnReadEvent(req, res, next) {
    const { name, chain } = operations[parsePayload(tokenEventSchema, res.locals.body).read_event];
    res.locals.operation = name;
    chain(req, res, next);
  };
}

/** One URL for every token notification. */
export function eventsRouter(deps: OperationRouterDeps): Router {
  const router = Router();
  router
    .route('/v1/events')
    .post(operation('token_event'), ...deps.intake, dispatchOnReadEvent(deps))
    .all(methodNotAllowed(['POST']));
  return router;
}
