import { Router, type RequestHandler } from 'express';
import { methodNotAllowed } from '../middleware/errors';
import { TOKEN_EVENTS, tokenEventSchema, type TokenEvent } from '../schemas/token-event';
import { parsePayload } from '../schemas/validate';
import { availableDateChain } from './available-date';
import { expiryDateChain } from './expiry-date';
import { loadScheduleChain } from './load-schedule';
import { loadedChain } from './loaded';
import type { OperationRouterDeps } from './operation-deps';
import { operation } from './respond';
import { statusChangeChain } from './status-change';
import { unloadedChain } from './unloaded';
import { withdrawChain } from './withdraw';

/**
 * Each read_event's operation: its name for metrics, and its chain after the intake, as a router of its own.
 * token.loaded_created here is Loaded; only the Unloaded route also takes it for Unloaded, as the published page names it.
 */
function operationsByEvent(deps: OperationRouterDeps): Record<TokenEvent, { name: string; chain: Router }> {
  return {
    [TOKEN_EVENTS.statusChanged]: { name: 'status_change', chain: Router().use(statusChangeChain(deps)) },
    [TOKEN_EVENTS.withdrawn]: { name: 'withdraw', chain: Router().use(withdrawChain(deps)) },
    [TOKEN_EVENTS.loaded]: { name: 'loaded', chain: Router().use(loadedChain(deps)) },
    [TOKEN_EVENTS.unloaded]: { name: 'unloaded', chain: Router().use(unloadedChain(deps)) },
    [TOKEN_EVENTS.loadSchedule]: { name: 'load_schedule', chain: Router().use(loadScheduleChain(deps)) },
    [TOKEN_EVENTS.expiryUpdated]: { name: 'expiry_date', chain: Router().use(expiryDateChain(deps)) },
    [TOKEN_EVENTS.availableUpdated]: { name: 'available_date', chain: Router().use(availableDateChain(deps)) },
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
