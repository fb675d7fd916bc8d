import type { RequestHandler, Response } from 'express';
import type { EventLog, OperationEvent } from '../process/event-log';
import { isoTimeNow } from '../process/logger';
import type { Metrics, Verdict } from '../process/metrics';
import type { Account } from '../store/store';
import { requestContext, type RequestContext } from './request-context';
import { routePattern } from './request-logger';

const MAX_FIELD_LENGTH = 128;

/**
 * Identifying fields of the raw body, only when they are short strings or numbers: never keys, never whole
 * bodies. The account is the one the request authenticated as, never what its body claims (contract section
 * 11), so a request that failed authentication is listed without one and cannot be filed under a stranger;
 * nor does it carry what its body names, which a stranger chose.
 */
function identifiers(body: unknown, account: Account | undefined): Partial<OperationEvent> {
  if (!account) return {};
  const fields: Partial<Record<'source_id' | 'token_id' | 'booking_id' | 'transaction_id', string>> = { source_id: account.sourceId };
  if (typeof body !== 'object' || body === null) return fields;
  for (const field of ['token_id', 'booking_id', 'transaction_id'] as const) {
    const value: unknown = (body as Record<string, unknown>)[field];
    if (typeof value === 'string' || typeof value === 'number') fields[field] = String(value).slice(0, MAX_FIELD_LENGTH);
  }
  return fields;
}

/** The methods the service serves; any other is counted as `other`, so callers cannot add metric series (contract section 11). */
const SERVED_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'OPTIONS']);

function outcomeOf(res: Response, context: RequestContext): Verdict {
  if (res.statusCode !== 200) return 'rejected';
  return context.replayed ? 'replayed' : 'accepted';
}

/** When a response is finished: request metrics for every route, and for operations a count and an event. */
export function observeRequests(metrics: Metrics, events: EventLog): RequestHandler {
  return function observeRequest(req, res, next) {
    const context = requestContext(res);
    const { method } = req;
    const methodLabel = SERVED_METHODS.has(method) ? method : 'other';
    res.on('finish', () => {
      const route = routePattern(req) ?? 'unmatched';
      // The route is a pattern of the app's own and the status one the app set: both bounded, like the method here.
      metrics.observeRequest(methodLabel, route, res.statusCode, (performance.now() - context.startedAt) / 1000);
      const reason = context.errorReason;
      if (reason === 'store_unavailable') metrics.countStoreError('unavailable');
      if (reason === 'store_timeout') metrics.countStoreError('timeout');
      if (reason === 'storage_full') metrics.countStoreError('full');
      const name = context.operation;
      if (!name) return;
      const outcome = outcomeOf(res, context);
      metrics.countOperation(name, outcome, outcome === 'rejected' ? reason : '');
      events.record({
        time: isoTimeNow(),
        request_id: context.requestId,
        method,
        route,
        operation: name,
        ...identifiers(context.bodyIfRead?.parsed, context.accountIfAuthenticated),
        status: res.statusCode,
        outcome,
        ...(outcome === 'rejected' && reason ? { reason } : {}),
      });
    });
    next();
  };
}
