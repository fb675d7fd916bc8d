/** A payment token: its balance, status and dates, as every store keeps it and every operation reads it. */
import type { MinorUnits } from './money';

/** A token's free text, bounded in bytes together (text-bytes.ts). */
export const TOKEN_TEXT_FIELDS = ['token_name', 'token_reference', 'customer_name', 'booking_reference'] as const;

export const TOKEN_STATUSES = ['active', 'freezed', 'disputed', 'deleted'] as const;
export type TokenStatus = (typeof TOKEN_STATUSES)[number];

/** What a token may carry beyond its balance: set by Create Token, shown with the token. */
export interface TokenDetails {
  /** ISO 4217 code of the token's currency. */
  currency?: string;
  /** Create Token's optional text fields (token_name, customer_name, …), by field name, as sent. */
  details?: Readonly<Record<string, string>>;
}

export interface Token extends TokenDetails {
  tokenId: string;
  sourceId: string;
  destinationId: string;
  status: TokenStatus;
  balance: MinorUnits;
  /**
   * What Refund may still give back (contract section 9.10): what was withdrawn from the token less what was
   * refunded to it. Kept on the token, so the cap is read with the token's lock and written with its ledger row;
   * unset: zero.
   */
  refundable?: MinorUnits;
  /** UTC calendar days since 1970-01-01 (see dayNumber); unset: no such limit. */
  availableDay?: number;
  expiryDay?: number;
}

/** `deleted` is final; any other status may move to any status. */
export function canChangeStatus(from: TokenStatus, to: TokenStatus): boolean {
  return from === to || from !== 'deleted';
}
