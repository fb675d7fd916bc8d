/**
 * The rules every write of a unit of work is checked against before it is staged, the same for both stores, so a
 * store never meets a write it would refuse halfway through applying a unit (the memory store), nor answers a
 * broken rule with a database error of its own (PostgreSQL, whose constraints stay as a second line:
 * migrations 001, 005-007, 011-015). Breaking one is a bug in a service, never a caller's bad input: the unit
 * fails with RefusedWrite (500) and nothing of it is applied.
 */
import { BOOKING_STATUSES, type Booking } from '../../domain/bookings';
import { LEDGER_KINDS, type LedgerEntry } from '../../domain/ledger';
import { TOKEN_STATUSES, type Token } from '../../domain/tokens';
import type { Delivery } from '../store';

/** Every rule by name: what a test tries on both stores, and what a refusal names. */
export const RULES = [
  'created_once',
  'saved_exists',
  'ledger_token_held',
  'token_id',
  'token_status',
  'balance',
  'refundable',
  'dates',
  'transaction_id',
  'ledger_kind',
  'amount',
  'fee',
  'token_balance',
  'booking_status',
  'webhook_id',
  'body_digest',
] as const;
export type Rule = (typeof RULES)[number];

/** A write that breaks a rule of the unit of work. */
export class RefusedWrite extends Error {
  constructor(
    readonly rule: Rule,
    message: string,
  ) {
    super(message);
    this.name = 'RefusedWrite';
  }
}

function refuseUnless(holds: boolean, rule: Rule, message: () => string): void {
  if (!holds) throw new RefusedWrite(rule, message());
}

/** The largest balance a token holds (migration 007: 999,999,999,999 minor units). */
export const MAX_BALANCE = 999_999_999_999;
/** As the database's checks: a token id of up to 32 digits, no leading zero; a transaction id of 20 digits. */
const TOKEN_ID = /^[1-9][0-9]{0,31}$/;
const TRANSACTION_ID = /^[0-9]{20}$/;
const MAX_WEBHOOK_ID = 256;
const DIGEST_BYTES = 32;

function isMinorUnits(value: number, max = Number.MAX_SAFE_INTEGER): boolean {
  return Number.isSafeInteger(value) && value >= 0 && value <= max;
}

export function checkToken(token: Token): void {
  refuseUnless(TOKEN_ID.test(token.tokenId), 'token_id', () => `token id ${token.tokenId} is not 1 to 32 digits`);
  refuseUnless(
    (TOKEN_STATUSES as readonly string[]).includes(token.status),
    'token_status',
    () => `token status ${token.status} is not one of ${TOKEN_STATUSES.join(', ')}`,
  );
  refuseUnless(
    isMinorUnits(token.balance, MAX_BALANCE),
    'balance',
    () => `token ${token.tokenId} balance ${token.balance} is not 0 to ${MAX_BALANCE} minor units`,
  );
  refuseUnless(
    token.refundable === undefined || isMinorUnits(token.refundable),
    'refundable',
    () => `token ${token.tokenId} refundable ${token.refundable} is not 0 or more minor units`,
  );
  refuseUnless(
    token.availableDay === undefined || token.expiryDay === undefined || token.expiryDay >= token.availableDay,
    'dates',
    () => `token ${token.tokenId} would expire before it is available`,
  );
}

export function checkLedgerEntry(entry: LedgerEntry): void {
  refuseUnless(TRANSACTION_ID.test(entry.transactionId), 'transaction_id', () => `transaction_id ${entry.transactionId} is not 20 digits`);
  refuseUnless(
    (LEDGER_KINDS as readonly string[]).includes(entry.kind),
    'ledger_kind',
    () => `ledger kind ${entry.kind} is not one of ${LEDGER_KINDS.join(', ')}`,
  );
  refuseUnless(
    isMinorUnits(entry.amount) && (entry.amount > 0 || entry.kind === 'schedule'),
    'amount',
    () => `ledger ${entry.kind} ${entry.transactionId} moves ${entry.amount}: above zero, or zero on a schedule`,
  );
  refuseUnless(
    isMinorUnits(entry.fee) && (entry.fee === 0 || entry.kind === 'load'),
    'fee',
    () => `ledger ${entry.kind} ${entry.transactionId} has fee ${entry.fee}: only a load has one`,
  );
  refuseUnless(
    isMinorUnits(entry.tokenBalance, MAX_BALANCE),
    'token_balance',
    () => `ledger ${entry.transactionId} token_balance ${entry.tokenBalance} is not 0 to ${MAX_BALANCE}`,
  );
}

export function checkBooking(booking: Booking): void {
  refuseUnless(
    (BOOKING_STATUSES as readonly string[]).includes(booking.status),
    'booking_status',
    () => `booking status ${booking.status} is not one of ${BOOKING_STATUSES.join(', ')}`,
  );
}

export function checkDelivery(delivery: Delivery): void {
  const { length } = delivery.webhookId;
  refuseUnless(
    length >= 1 && length <= MAX_WEBHOOK_ID,
    'webhook_id',
    () => `webhook id of ${length} characters is not 1 to ${MAX_WEBHOOK_ID}`,
  );
  refuseUnless(
    delivery.bodyDigest.length === DIGEST_BYTES,
    'body_digest',
    () => `body digest of ${delivery.bodyDigest.length} bytes is not ${DIGEST_BYTES}`,
  );
}
