/**
 * The store: what the services need from persistence, with no knowledge of
 * HTTP. Every implementation passes the same contract suite (test/store).
 */
import type { MinorUnits } from '../money';
import type { BookingFields } from '../schemas/booking';
import type { TokenStatus } from '../schemas/fields';

export interface Account {
  sourceId: string;
  /** SHA-256 of the public key; the store never holds a key in plain text. */
  publicKeyHash: Buffer;
  /** SHA-256 of the secret key. */
  secretKeyHash: Buffer;
  destinations: ReadonlySet<string>;
  /** Standard Webhooks secrets (whsec_…) the account signs with; when any, every request naming it must be signed with one. */
  signingSecrets: readonly string[];
}

export interface Token {
  tokenId: string;
  sourceId: string;
  destinationId: string;
  status: TokenStatus;
  balance: MinorUnits;
  /** UTC calendar days since 1970-01-01 (see dayNumber); unset: no such limit. */
  availableDay?: number;
  expiryDay?: number;
}

/** One applied withdrawal: the ledger row, keyed by its transaction id. */
export interface Withdrawal {
  transactionId: string;
  sourceId: string;
  destinationId: string;
  tokenId: string;
  amount: MinorUnits;
  /** The balance the sender stated after the withdrawal (equal to the ledger's when applied). */
  tokenBalance: MinorUnits;
  createdAt: Date;
}

export interface Booking {
  sourceId: string;
  bookingId: string;
  fields: BookingFields;
  updatedAt: Date;
}

/** An applied booking change, kept so a retry with the same key replays the same answer. */
export interface BookingChange {
  sourceId: string;
  key: string;
  /** Canonical form of the request, to tell a replay from a reused key. */
  fingerprint: string;
  /** The booking as the first answer showed it. */
  result: Booking;
  createdAt: Date;
}

/** A signed notification answered 200, kept so a repeated delivery gets the same answer and applies nothing. */
export interface Delivery {
  sourceId: string;
  webhookId: string;
  /** SHA-256 of the body: the same id with another body is another request. */
  bodyDigest: Buffer;
  /** The JSON body of the first answer, byte for byte. */
  response: string;
  receivedAt: Date;
}

export interface SeedData {
  accounts: Account[];
  tokens: Token[];
  bookings: Booking[];
}

/**
 * Reads and writes inside one atomic unit. Reads "for update" hold the row
 * until the unit ends, so concurrent units on the same token or booking run
 * one after the other. Writes become visible only when the unit commits.
 */
export interface StoreTransaction {
  tokenForUpdate(tokenId: string): Promise<Token | undefined>;
  /** Ledger rows are keyed by the account and its transaction id. */
  findWithdrawal(sourceId: string, transactionId: string): Promise<Withdrawal | undefined>;
  /** tokenForUpdate, then findWithdrawal once the lock is held: one step, so a store can save a round trip. */
  lockTokenAndFindWithdrawal(tokenId: string, sourceId: string, transactionId: string): Promise<[Token | undefined, Withdrawal | undefined]>;
  saveToken(token: Token): Promise<void>;
  recordWithdrawal(withdrawal: Withdrawal): Promise<void>;
  bookingForUpdate(sourceId: string, bookingId: string): Promise<Booking | undefined>;
  findBookingChange(sourceId: string, key: string): Promise<BookingChange | undefined>;
  saveBooking(booking: Booking): Promise<void>;
  recordBookingChange(change: BookingChange): Promise<void>;
  findDelivery(sourceId: string, webhookId: string): Promise<Delivery | undefined>;
  /** In the unit of the change the delivery applied, so neither is ever kept without the other. */
  recordDelivery(delivery: Delivery): Promise<void>;
}

export interface Store {
  findAccount(sourceId: string): Promise<Account | undefined>;
  /** Reads for inspection: no lock, outside any unit of work. */
  findToken(tokenId: string): Promise<Token | undefined>;
  /** The token's latest ledger rows, newest first. */
  recentWithdrawals(tokenId: string, limit: number): Promise<Withdrawal[]>;
  findWithdrawal(sourceId: string, transactionId: string): Promise<Withdrawal | undefined>;
  findBooking(sourceId: string, bookingId: string): Promise<Booking | undefined>;
  findDelivery(sourceId: string, webhookId: string): Promise<Delivery | undefined>;
  /** Runs `work` atomically: all its writes commit, or (when it throws) none do. */
  transaction<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<T>;
  /**
   * Accounts are set from the seed (keys, signing secrets, destinations: the file is authoritative, so a leaked
   * key is rotated by a restart); tokens and bookings are inserted when missing, never overwriting state that
   * operations changed. The store may keep the seed's records.
   */
  loadSeed(seed: SeedData): Promise<void>;
  /** Resolves when the store answers; rejects with a domain error otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
