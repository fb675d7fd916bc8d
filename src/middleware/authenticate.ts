import type { RequestHandler } from 'express';
import { UnauthorizedError } from '../errors';
import { hashKey, keyMatches } from '../domain/secrets';
import type { Store } from '../store/store';
import { requestContext, type RequestContext } from './request-context';

/** Which key the operation presents: token notifications the public key, booking operations the secret key. */
export type KeyField = 'share_public' | 'share_secret';

/** The caller's identity as the validated body states it: the catalogue's schemas all carry it. */
type Credentials = { source_id: string } & Partial<Record<KeyField, string>>;

const STORED_HASH: Record<KeyField, 'publicKeyHash' | 'secretKeyHash'> = { share_public: 'publicKeyHash', share_secret: 'secretKeyHash' };

/** Compared against when the account is unknown, so both failures take the same time. */
const UNKNOWN_ACCOUNT_HASH = hashKey('\u0000unknown account\u0000');

/**
 * The share_public / share_secret + source_id check: takes the account findAccount looked up for the validated
 * body's source_id, compares the presented key with its stored hash in constant time and puts the account into
 * the request's context for the steps after it. An unknown account, a wrong key and a missing one fail alike (401),
 * so callers cannot probe for accounts. A request may go without its key only where `keyless` allows it (a Status
 * Change signed with the account's own secret, or ALLOW_KEYLESS_STATUS_CHANGE); then the account must still exist.
 */
export function authenticate(field: KeyField, keyless: (context: RequestContext) => boolean = () => false): RequestHandler {
  const storedHash = STORED_HASH[field];
  return function authenticate(_req, res, next) {
    const context = requestContext(res);
    const credentials = context.input.body as Credentials;
    const key = credentials[field];
    const { sourceId, account } = context.namedAccount;
    if (sourceId !== credentials.source_id) throw new Error('the validated source_id is not the one findAccount looked up');
    // Hashed and compared whatever the outcome, so every failure takes the same time.
    const matches = keyMatches(key ?? '', account ? account[storedHash] : UNKNOWN_ACCOUNT_HASH);
    if (!account || (key === undefined ? !keyless(context) : !matches)) throw new UnauthorizedError();
    context.account = account;
    next();
  };
}

/** The bearer token of an Authorization header; the scheme's name is case-insensitive (RFC 9110). */
const BEARER = /^Bearer +(\S+) *$/i;

/** The token of `Authorization: Bearer <token>`, one rule for the feed and the admin routes; undefined for any other form. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return BEARER.exec(authorization ?? '')?.[1];
}

/**
 * The feed's `Authorization: Bearer <share_secret>` (contract section 13.2) for the account the validated path
 * names: looked up, then compared in constant time with its secret key's hash, as authenticate does. An unknown or
 * disabled account, a wrong secret and none at all fail alike (401, with the bearer challenge RFC 6750 asks for).
 */
export function authenticateBearer(store: Store): RequestHandler {
  return async function authenticateBearer(req, res, next) {
    const context = requestContext(res);
    const { source_id: sourceId } = context.input.path as { source_id: string };
    const account = await store.findAccount(sourceId);
    const secret = bearerToken(req.headers.authorization);
    // Hashed and compared whatever the outcome, so every failure takes the same time.
    const matches = keyMatches(secret ?? '', account ? account.secretKeyHash : UNKNOWN_ACCOUNT_HASH);
    if (!account || secret === undefined || !matches) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="changes"');
      throw new UnauthorizedError();
    }
    context.account = account;
    next();
  };
}
