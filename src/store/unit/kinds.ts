/**
 * The kinds of record a unit of work reads and writes, for both stores: what each kind holds and how a record of
 * it is keyed within its account. A store reads rows by these kinds (UnitRows) and applies writes by them.
 */
import type { Booking } from '../../domain/bookings';
import type { LedgerEntry } from '../../domain/ledger';
import type { Token } from '../../domain/tokens';
import { accountKey } from '../records';
import type { Delivery, Holdings, KeyedRequest, NewChange } from '../store';

/** An account's counts, by the account. */
export type AccountHoldings = Holdings & { sourceId: string };

/** The records a unit creates and saves, by kind. */
export interface WrittenRecords {
  tokens: Token;
  ledger: LedgerEntry;
  bookings: Booking;
  keyedRequests: KeyedRequest;
  deliveries: Delivery;
  /** Never read in a unit: a change's id is drawn at random, and its seq is given as the unit applies. */
  changes: NewChange;
}

export type WrittenKind = keyof WrittenRecords;

/** What a unit reads, by kind: the written kinds, whether a token id is taken in any account, and holdings. */
export interface ReadRecords extends Omit<WrittenRecords, 'changes'> {
  tokenIds: string;
  holdings: AccountHoldings;
}
export type ReadKind = keyof ReadRecords;

/**
 * A record's key within its account (accountKey() of its key's parts), as units and stores file it; by kind, in
 * the order a store applies a unit's writes (a ledger row after the token it names).
 */
export const KEY_OF: { readonly [Kind in WrittenKind]: (record: WrittenRecords[Kind]) => string } = {
  tokens: (t) => accountKey(t.sourceId, t.tokenId),
  ledger: (e) => accountKey(e.sourceId, e.transactionId),
  bookings: (b) => accountKey(b.sourceId, b.bookingId),
  keyedRequests: (r) => accountKey(r.sourceId, r.key),
  deliveries: (d) => accountKey(d.sourceId, d.webhookId),
  // Last: on PostgreSQL the account's change counter is the last lock a batch takes (table-statements.ts).
  changes: (c) => accountKey(c.sourceId, c.id),
};

/** The kinds a unit writes, in the order a store applies them. */
export const WRITTEN = Object.keys(KEY_OF) as WrittenKind[];
