/**
 * What the operations keyed by `{randomkey}` (booking operations and Create Token) share: the call, the partner,
 * the quotas, the request by value. Their key is one key space per account, applied once by apply-once.ts.
 */
import { ForbiddenError, QuotaExceededError } from '../errors';
import type { Account, StoreTransaction } from '../store/store';
import type { KeysOfUnit } from './apply-once';

/** The path's partner must be the authenticated account (403). */
export function requirePartner(partnerId: string, account: Account): void {
  if (partnerId !== account.sourceId) throw new ForbiddenError('partnerid in the path does not match source_id');
}

/** A keyed request as a service takes it: the path's `{partnerid}` and `{randomkey}`, the validated body, the caller and the clock. */
export interface KeyedCall<Body> {
  partnerId: string;
  key: string;
  body: Body;
  account: Account;
  now: Date;
  quotas: Quotas;
  /** Where the request's `{randomkey}` is declared, to be replayed, refused or kept with the answer. */
  keys: KeysOfUnit;
}

/** MAX_TOKENS_PER_ACCOUNT, MAX_BOOKINGS_PER_ACCOUNT and MAX_KEYS_PER_ACCOUNT; 0 turns a quota off. */
export interface Quotas {
  tokensPerAccount: number;
  bookingsPerAccount: number;
  /** Request keys ({randomkey}) and signed deliveries an account keeps at once: each keeps its answer 24 hours. */
  keysPerAccount: number;
}

/** Contract section 11: Create Token or Create Booking past the account's quota is a 403 and creates nothing. */
export async function requireRoomFor(tx: StoreTransaction, sourceId: string, what: 'tokens' | 'bookings', quotas: Quotas): Promise<void> {
  const [quota, setting] =
    what === 'tokens' ? [quotas.tokensPerAccount, 'MAX_TOKENS_PER_ACCOUNT'] : [quotas.bookingsPerAccount, 'MAX_BOOKINGS_PER_ACCOUNT'];
  if (quota > 0 && (await tx.holdingsForUpdate(sourceId))[what] >= quota) throw new QuotaExceededError(what, setting, quota);
}

/** The request by value: its operation, then its fields, which the schemas hand over in the specification's order with values normalised. */
export function fingerprintOf(operation: string, ...fields: unknown[]): string {
  return JSON.stringify([operation, ...fields]);
}
