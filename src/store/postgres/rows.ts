/** The rows the PostgreSQL store reads, as the driver returns them, and the domain records made from them. */
import { BOOKING_FIELDS, type Booking, type BookingFields, type BookingStatus } from '../../domain/bookings';
import type { LedgerEntry, LedgerKind } from '../../domain/ledger';
import type { Token, TokenStatus } from '../../domain/tokens';
import type { Delivery, Holdings, KeyedRequest } from '../store';

export interface TokenRow {
  token_id: string;
  source_id: string;
  destination_id: string;
  status: TokenStatus;
  balance: string;
  refundable: string;
  /** Days since 1970-01-01, or null: the dates as the service compares them. */
  available_day: number | null;
  expiry_day: number | null;
  destination_currency: string | null;
  details: Record<string, string> | null;
}

/** A token's columns as TokenRow has them. */
export const TOKEN_COLUMNS = `token_id, source_id, destination_id, status, balance, refundable,
  available_date - DATE '1970-01-01' AS available_day, expiry_date - DATE '1970-01-01' AS expiry_day, destination_currency, details`;

export interface LedgerRow {
  kind: LedgerKind;
  transaction_id: string;
  source_id: string;
  destination_id: string;
  token_id: string;
  amount: string;
  fee: string;
  token_balance: string;
  created_at: Date;
}

export const LEDGER_COLUMNS = 'kind, transaction_id, source_id, destination_id, token_id, amount, fee, token_balance, created_at';

/** lock_token_and_find_ledger_entry's one row: the token's columns (null when it does not exist), then the ledger row's (l_, null when new). */
export type LockedTokenRow = Omit<TokenRow, 'token_id'> & { token_id: string | null } & { [Column in keyof LedgerRow as `l_${Column}`]: LedgerRow[Column] | null };

export interface BookingRow {
  source_id: string;
  booking_id: string;
  fields: Record<string, string>;
  status: BookingStatus;
  updated_at: Date;
}

export interface DeliveryRow {
  body_digest: Buffer;
  response: string;
  received_at: Date;
}

export function toToken(row: TokenRow): Token {
  const token: Token = { tokenId: row.token_id, sourceId: row.source_id, destinationId: row.destination_id, status: row.status, balance: Number(row.balance) };
  if (row.refundable !== '0') token.refundable = Number(row.refundable);
  if (row.available_day !== null) token.availableDay = row.available_day;
  if (row.expiry_day !== null) token.expiryDay = row.expiry_day;
  if (row.destination_currency !== null) token.currency = row.destination_currency;
  if (row.details !== null) token.details = row.details;
  return token;
}

export function toLedgerEntry(row: LedgerRow): LedgerEntry {
  return {
    kind: row.kind,
    transactionId: row.transaction_id,
    sourceId: row.source_id,
    destinationId: row.destination_id,
    tokenId: row.token_id,
    amount: Number(row.amount),
    fee: Number(row.fee),
    tokenBalance: Number(row.token_balance),
    createdAt: row.created_at,
  };
}

/** The token and the ledger row of lock_token_and_find_ledger_entry's answer, each undefined when absent. */
export function toLockedToken(row: LockedTokenRow): [Token | undefined, LedgerEntry | undefined] {
  const entry =
    row.l_transaction_id === null
      ? undefined
      : toLedgerEntry({
          kind: row.l_kind as LedgerKind,
          transaction_id: row.l_transaction_id,
          source_id: row.l_source_id as string,
          destination_id: row.l_destination_id as string,
          token_id: row.l_token_id as string,
          amount: row.l_amount as string,
          fee: row.l_fee as string,
          token_balance: row.l_token_balance as string,
          created_at: row.l_created_at as Date,
        });
  return [row.token_id === null ? undefined : toToken({ ...row, token_id: row.token_id }), entry];
}

/** JSON objects come back in any key order; the booking's fields are put back in the specification's. */
function bookingFields(stored: Record<string, string>): BookingFields {
  return Object.fromEntries(BOOKING_FIELDS.map((field) => [field, stored[field]])) as BookingFields;
}

/** An account's counts (bigint: pg gives them as strings); no row: nothing held. */
export interface HoldingsRow {
  tokens: string;
  bookings: string;
  keys: string;
}

export function toHoldings(row: HoldingsRow | undefined): Holdings {
  return { tokens: Number(row?.tokens ?? 0), bookings: Number(row?.bookings ?? 0), keys: Number(row?.keys ?? 0) };
}

export function toBooking(row: BookingRow): Booking {
  return { sourceId: row.source_id, bookingId: row.booking_id, fields: bookingFields(row.fields), status: row.status, updatedAt: row.updated_at };
}

export function toDelivery(sourceId: string, webhookId: string, row: DeliveryRow): Delivery {
  return { sourceId, webhookId, bodyDigest: row.body_digest, response: row.response, receivedAt: row.received_at };
}

/**
 * A record as a write's values, in the columns' order of the statements that write it: one unit's
 * (statements.ts) and a batch's, one array per column (batch-statements.ts).
 */
export const VALUES = {
  createdToken: (t: Token): unknown[] => [
    t.tokenId,
    t.sourceId,
    t.destinationId,
    t.status,
    t.balance,
    t.availableDay ?? null,
    t.expiryDay ?? null,
    t.currency ?? null,
    t.details === undefined ? null : JSON.stringify(t.details),
  ],
  savedToken: (t: Token): unknown[] => [
    t.tokenId,
    t.status,
    t.balance,
    t.availableDay ?? null,
    t.expiryDay ?? null,
    t.refundable ?? 0,
    t.details === undefined ? null : JSON.stringify(t.details),
  ],
  ledgerEntry: (e: LedgerEntry): unknown[] => [e.kind, e.transactionId, e.sourceId, e.destinationId, e.tokenId, e.amount, e.fee, e.tokenBalance, e.createdAt],
  booking: (b: Booking): unknown[] => [b.sourceId, b.bookingId, JSON.stringify(b.fields), b.status, b.updatedAt],
  keyedRequest: (r: KeyedRequest): unknown[] => [r.sourceId, r.key, r.fingerprint, r.response, r.createdAt],
  delivery: (d: Delivery): unknown[] => [d.sourceId, d.webhookId, d.bodyDigest, d.response, d.receivedAt],
};
