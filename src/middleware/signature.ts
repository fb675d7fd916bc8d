import type { RequestHandler } from 'express';
import type { Account, Store } from '../store/store';
import { Webhook } from 'standardwebhooks';
import { createSignatureCheck, type SignatureCheck } from '../webhooks';
import { requestContext } from './request-context';

/** The source_id a parsed body names, when it names one as text. */
function namedSourceId(body: unknown): string | undefined {
  const sourceId: unknown = (body as { source_id?: unknown } | null)?.source_id;
  return typeof sourceId === 'string' ? sourceId : undefined;
}

/**
 * Contract section 10. An account with signing secrets must sign every request
 * that names it, with one of them; its secrets sign for it alone. The upstream
 * sender's secret (WEBHOOK_SECRET) signs for every account without secrets of
 * its own. Otherwise no signature is needed. Verified over the raw bytes (401
 * when it does not verify). The account looked up goes into the request's
 * context with the outcome, and authenticate makes no second lookup.
 */
export function verifySignature(store: Store, toleranceSeconds: number, upstream: SignatureCheck | undefined): RequestHandler {
  const checks = new WeakMap<Account, SignatureCheck>();
  const ownCheck = (account: Account): SignatureCheck | undefined => {
    if (account.signingSecrets.length === 0) return undefined;
    let check = checks.get(account);
    if (!check) checks.set(account, (check = createSignatureCheck(account.signingSecrets.map((secret) => new Webhook(secret)), toleranceSeconds)));
    return check;
  };
  return async function verifySignature(req, res, next) {
    const context = requestContext(res);
    const body = context.body;
    const sourceId = namedSourceId(body.parsed);
    const account = sourceId === undefined ? undefined : await store.findAccount(sourceId);
    const own = account && ownCheck(account);
    const check = own ?? upstream;
    context.signature = {
      webhookId: check ? check.verify(body.raw, req.headers) : undefined,
      signedByAccount: check !== undefined && own !== undefined,
      namedAccount: sourceId === undefined ? undefined : { sourceId, account },
    };
    next();
  };
}
