import type { RequestHandler, Response } from 'express';
import { UnauthorizedError } from '../errors';
import { hashKey, keyMatches } from '../secrets';
import type { Account, Store } from '../store/store';

/** Which key the operation presents: token notifications the public key, booking operations the secret key. */
export type KeyField = 'share_public' | 'share_secret';

/** The caller's identity as the validated request states it. */
export type Credentials = { source_id: string } & Partial<Record<KeyField, string>>;

const STORED_HASH: Record<KeyField, 'publicKeyHash' | 'secretKeyHash'> = { share_public: 'publicKeyHash', share_secret: 'secretKeyHash' };

/** Compared against when the account is unknown, so both failures take the same time. */
const UNKNOWN_ACCOUNT_HASH = hashKey('\u0000unknown account\u0000');

/**
 * The share_public / share_secret + source_id check: loads the account,
 * compares the presented key with its stored hash in constant time and puts
 * the account on res.locals for the handler. An unknown account and a wrong
 * key fail alike (401), so callers cannot probe for accounts. With no key
 * presented (optional in Status Change) only the account must exist.
 */
export function authenticate(store: Store, field: KeyField, credentialsOf: (res: Response) => Credentials): RequestHandler {
  const storedHash = STORED_HASH[field];
  return async function authenticate(_req, res, next) {
    const credentials = credentialsOf(res);
    const key = credentials[field];
    const account = await store.findAccount(credentials.source_id);
    const matches = key === undefined || keyMatches(key, account ? account[storedHash] : UNKNOWN_ACCOUNT_HASH);
    if (!account || !matches) throw new UnauthorizedError();
    res.locals.account = account;
    next();
  };
}

/** The account authenticate() put on res.locals; a handler mounted without it is a programming error. */
export function authenticatedAccount(res: Response): Account {
  const { account } = res.locals;
  if (!account) throw new Error('authenticate() did not run before this handler');
  return account;
}
