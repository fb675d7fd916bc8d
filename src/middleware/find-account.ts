import type { RequestHandler } from 'express';
import type { Store } from '../store/store';
import { requestContext } from './request-context';

/** The source_id a parsed body names, when it names one as text. */
function namedSourceId(body: unknown): string | undefined {
  const sourceId: unknown = (body as { source_id?: unknown } | null)?.source_id;
  return typeof sourceId === 'string' ? sourceId : undefined;
}

/**
 * Looks up the account the body names, once: the signature check needs its secrets before the schema runs, and
 * authentication its key hashes after. The schema takes source_id as sent, so the account found here is the one
 * the validated body names.
 */
export function findAccount(store: Store): RequestHandler {
  return async function findAccount(_req, res, next) {
    const context = requestContext(res);
    const sourceId = namedSourceId(context.body.parsed);
    context.namedAccount = { sourceId, account: sourceId === undefined ? undefined : await store.findAccount(sourceId) };
    next();
  };
}
