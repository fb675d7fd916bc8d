/**
 * Idempotency of the operations keyed by `{randomkey}` (booking operations and Create Token): one key space
 * per account. The same key with the same request gets the first answer byte for byte; with another request, a
 * 422 that does not reveal the first. The answer is recorded, with the key, in the unit of the change.
 */
import { ForbiddenError, QuotaExceededError, UnprocessableError } from '../errors';
import type { Account, KeyedRequest, StoreTransaction } from '../store/store';

/** The path's partner must be the authenticated account (403). */
export function requirePartner(partnerId: string, account: Account): void {
  if (partnerId !== account.sourceId) throw new ForbiddenError('partnerid in the path does not match source_id');
}

export type RequestKey = Pick<KeyedRequest, 'sourceId' | 'key' | 'fingerprint'>;

/** A keyed request as a service takes it: the path's `{partnerid}` and `{randomkey}`, the validated body, the caller and the clock. */
export interface KeyedCall<Body> {
  partnerId: string;
  key: string;
  body: Body;
  account: Account;
  now: Date;
  quotas: Quotas;
}

/** MAX_TOKENS_PER_ACCOUNT and MAX_BOOKINGS_PER_ACCOUNT; 0 turns a quota off. */
export interface Quotas {
  tokensPerAccount: number;
  bookingsPerAccount: number;
}

/** Contract section 11: Create Token or Create Booking past the account's quota is a 403 and creates nothing. */
export async function requireRoomFor(tx: StoreTransaction, sourceId: string, what: 'tokens' | 'bookings', quotas: Quotas): Promise<void> {
  const [quota, setting] = what === 'tokens' ? [quotas.tokensPerAccount, 'MAX_TOKENS_PER_ACCOUNT'] : [quotas.bookingsPerAccount, 'MAX_BOOKINGS_PER_ACCOUNT'];
  if (quota > 0 && (await tx.holdingsForUpdate(sourceId))[what] >= quota) throw new QuotaExceededError(what, setting, quota);
}

/** What a keyed operation did: repeated its first answer, or applied and left its key to be recorded with the answer. */
export type KeyedOutcome<Result> = { replayed: true; response: string } | { replayed: false; result: Result; requestKey: RequestKey };

/** The request by value: its operation, then its fields, which the schemas hand over in the specification's order with values normalised. */
export function fingerprintOf(operation: string, ...fields: unknown[]): string {
  return JSON.stringify([operation, ...fields]);
}

export function isReplayOf(earlier: KeyedRequest | undefined, requestKey: RequestKey): earlier is KeyedRequest {
  return earlier !== undefined && earlier.fingerprint === requestKey.fingerprint;
}

export function keyReused(): UnprocessableError {
  return new UnprocessableError('randomkey was already used for a different request', 'key_reused');
}

/** The first answer when the request repeats one applied under its key; a 422 when the key was used for another request. */
export function earlierAnswer(earlier: KeyedRequest | undefined, requestKey: RequestKey): string | undefined {
  if (!earlier) return undefined;
  if (isReplayOf(earlier, requestKey)) return earlier.response;
  throw keyReused();
}
