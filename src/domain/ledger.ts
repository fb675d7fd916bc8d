/** The ledger: one row per movement of money on a token, so a balance is always explained and no request applies twice. */
import type { MinorUnits } from './money';

/**
 * What moved money on a token: a withdrawal, a load (with its fee), an unload, a credited load schedule, a refund
 * of money withdrawn (the platform's notifications), and a load or unload the partner made itself (Load Token,
 * Unload Token, under a transaction_id the service drew). A key is one operation's: a Loaded notification reusing
 * a Load Token's id is another request (422), not its replay.
 */
export const LEDGER_KINDS = ['withdrawal', 'load', 'unload', 'schedule', 'refund', 'load_token', 'unload_token'] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];

/** One ledger row, keyed by its account and transaction id across every kind. */
export interface LedgerEntry {
  kind: LedgerKind;
  transactionId: string;
  sourceId: string;
  destinationId: string;
  tokenId: string;
  /** What moved, above zero; a credited schedule that found the balance already there moves zero. */
  amount: MinorUnits;
  /** A load's fee, charged to the sender and not taken from the token; zero for the other kinds. */
  fee: MinorUnits;
  /** The balance the sender stated after the row (equal to the ledger's when applied). */
  tokenBalance: MinorUnits;
  createdAt: Date;
}
