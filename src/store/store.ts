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
}

export interface Token {
  tokenId: string;
  sourceId: string;
  destinationId: string;
  status: TokenStatus;
  balance: MinorUnits;
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

/** A signed notification answered 200, kept so a repeated delivery gets the same answer. */
export interface WebhookDelivery {
  webhookId: string;
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
  findWithdrawal(transactionId: string): Promise<Withdrawal | undefined>;
  /** tokenForUpdate, then findWithdrawal once the lock is held: one step, so a store can save a round trip. */
  lockTokenAndFindWithdrawal(tokenId: string, transactionId: string): Promise<[Token | undefined, Withdrawal | undefined]>;
  saveToken(token: Token): Promise<void>;
  recordWithdrawal(withdrawal: Withdrawal): Promise<void>;
  bookingForUpdate(sourceId: string, bookingId: string): Promise<Booking | undefined>;
  findBookingChange(sourceId: string, key: string): Promise<BookingChange | undefined>;
  saveBooking(booking: Booking): Promise<void>;
  recordBookingChange(change: BookingChange): Promise<void>;
}

export interface Store {
  findAccount(sourceId: string): Promise<Account | undefined>;
  /** Reads for inspection: no lock, outside any unit of work. */
  findToken(tokenId: string): Promise<Token | undefined>;
  /** The token's latest ledger rows, newest first. */
  recentWithdrawals(tokenId: string, limit: number): Promise<Withdrawal[]>;
  findBooking(sourceId: string, bookingId: string): Promise<Booking | undefined>;
  findWebhookDelivery(webhookId: string): Promise<WebhookDelivery | undefined>;
  /** Records a delivery (a concurrent copy that recorded first wins). Deliveries past retention are forgotten by each store's own sweep. */
  recordWebhookDelivery(delivery: WebhookDelivery): Promise<void>;
  /** Runs `work` atomically: all its writes commit, or (when it throws) none do. */
  transaction<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<T>;
  /** Inserts what is missing; never overwrites state that operations changed. The store may keep the seed's records. */
  loadSeed(seed: SeedData): Promise<void>;
  /** Resolves when the store answers; rejects with a domain error otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
