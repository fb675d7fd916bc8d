import type { RequestHandler } from 'express';
import type { Account } from '../store/store';
import { Webhook } from 'standardwebhooks';
import { createSignatureCheck, type SignatureCheck } from './webhooks';
import { requestContext } from './request-context';

/**
 * Contract section 10. An account with signing secrets must sign every request
 * that names it, with one of them; its secrets sign for it alone. The upstream
 * sender's secret (WEBHOOK_SECRET) signs for every account without secrets of
 * its own. Otherwise no signature is needed. Verified over the raw bytes (401
 * when it does not verify). The account is the one findAccount looked up.
 */
export function verifySignature(toleranceSeconds: number, upstream: SignatureCheck | undefined): RequestHandler {
  const checks = new WeakMap<Account, SignatureCheck>();
  const ownCheck = (account: Account): SignatureCheck | undefined => {
    if (account.signingSecrets.length === 0) return undefined;
    let check = checks.get(account);
    if (!check)
      checks.set(
        account,
        (check = createSignatureCheck(
          account.signingSecrets.map((secret) => new Webhook(secret)),
          toleranceSeconds,
        )),
      );
    return check;
  };
  return function verifySignature(req, res, next) {
    const context = requestContext(res);
    const body = context.body;
    const { account } = context.namedAccount;
    const own = account && ownCheck(account);
    const check = own ?? upstream;
    context.signature = {
      webhookId: check ? check.verify(body.raw, req.headers) : undefined,
      signedByAccount: check !== undefined && own !== undefined,
    };
    next();
  };
}
