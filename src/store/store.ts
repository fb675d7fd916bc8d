/**
 * The store: what the services need from persistence, with no knowledge of
 * HTTP. Every implementation passes the same contract suite (test/store).
 */
import type { Booking } from '../domain/bookings';
import type { ChangeType } from '../domain/changes';
import type { LedgerEntry } from '../domain/ledger';
import type { Token } from '../domain/tokens';

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

/**
 * A request applied under an idempotency key of its account (a booking operation's or Create Token's
 * `{randomkey}`), kept so a retry with the same key gets the first answer byte for byte.
 */
export interface KeyedRequest {
  sourceId: string;
  key: string;
  /** Canonical form of the request (operation and fields by value), to tell a replay from a reused key. */
  fingerprint: string;
  /** The JSON body of the first answer. */
  response: string;
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

export { CHANGE_TYPES, type ChangeType } from '../domain/changes';

/**
 * A change as a unit records it (contract section 13.1): the store numbers it (`seq`) when the unit applies, in
 * commit order within its account. `body` is what the change shows besides its id, account, seq, type and time
 * (the token, ledger entry or booking, and the request), with no key or secret.
 */
export interface NewChange {
  sourceId: string;
  /** Unique across the service and never reused: drawn at random (chg_ and a UUID). */
  id: string;
  type: ChangeType;
  createdAt: Date;
  body: Record<string, unknown>;
}

/** A change as the store keeps it: numbered 1, 2, 3 ... per account, without gaps, in commit order. */
export interface Change extends NewChange {
  seq: number;
}

/** Which of an account's changes a read wants (contract section 13.2). */
export interface ChangeQuery {
  /** Changes with `seq` above this. */
  after: number;
  /** At most this many. */
  limit: number;
  /** Only these types; unset: every type. */
  types?: readonly ChangeType[];
}

/** A read of an account's changes, with where its numbering stands, as one snapshot (so a sweep between them cannot tell a lie). */
export interface ChangesRead {
  /** The kept changes the query matches, oldest first. */
  changes: Change[];
  /** The account's last seq ever numbered, its changes kept or not; 0 when it has recorded none. */
  lastSeq: number;
  /** The oldest seq still kept, of any type; undefined when none is (none recorded, or every one forgotten). */
  oldestSeq: number | undefined;
}

/**
 * Told when an account's changes move on (contract section 13.2's wait; what hands changes on may listen too).
 * A store calls `changed` after the unit that recorded the change committed, on any instance sharing the store,
 * within a second; and calls it also when it may have missed one (a listening connection that came back), so a
 * listener reads again to learn what happened, and may find nothing new.
 */
export interface ChangeListener {
  /**
   * The accounts listened for, each with the last seq the listener has read of it: a store that cannot be told of
   * commits (PostgreSQL behind a pooler without a direct connection) asks the database for these accounts' last seqs
   * instead, and calls `changed` for those past it.
   */
  watched(): ReadonlyMap<string, number>;
  changed(sourceId: string): void;
}

/** What an account holds, as the quotas and the key limit count it (contract section 11). */
export interface Holdings {
  tokens: number;
  bookings: number;
  /** Request keys ({randomkey}) and signed deliveries kept: recorded, and not yet forgotten after their retention. */
  keys: number;
}

export interface SeedData {
  accounts: Account[];
  /** Any iterable, read once per loadSeed: a large seed's tokens are made one at a time (seed/transfer.ts). */
  tokens: Iterable<Token>;
  bookings: Booking[];
}

/**
 * Reads and writes inside one atomic unit. Reads "for update" hold the row
 * until the unit ends, so concurrent units on the same token or booking run
 * one after the other. Writes become visible only when the unit commits.
 */
export interface StoreTransaction {
  /**
   * The account's token, locked; undefined when it does not exist or is another account's, which is looked up
   * within the account before anything is locked or read (contract section 11: no probing of other accounts).
   */
  tokenForUpdate(sourceId: string, tokenId: string): Promise<Token | undefined>;
  /** Whether any account holds a token with this id: for drawing a new one, never for a caller's lookup. */
  isTokenIdTaken(tokenId: string): Promise<boolean>;
  /**
   * tokenForUpdate within sourceId (the account first, as every call here), then, once the lock is held, the ledger row keyed by the account and its
   * transaction id (across every kind): one step, so a store can save a round trip.
   */
  lockTokenAndFindLedgerEntry(
    sourceId: string,
    tokenId: string,
    transactionId: string,
  ): Promise<[Token | undefined, LedgerEntry | undefined]>;
  /**
   * How many tokens and bookings the account holds, seeded ones included, and how many request keys and
   * deliveries it has kept; concurrent units that ask for the same account run one after the other from here, so
   * a quota checked against it holds. Keys stop counting once the store forgets them after their retention (the
   * memory store as of `now`, on the services' clock; PostgreSQL at its retention sweep).
   */
  holdingsForUpdate(sourceId: string, now?: Date): Promise<Holdings>;
  /**
   * A token the store does not hold yet; its id taken meanwhile fails the unit (a database's unique key). A store
   * with no room left refuses it (ServiceUnavailableError storage_full) rather than run out of memory.
   */
  createToken(token: Token): Promise<void>;
  /** Status, balance and dates of a token the store holds. */
  saveToken(token: Token): Promise<void>;
  recordLedgerEntry(entry: LedgerEntry): Promise<void>;
  bookingForUpdate(sourceId: string, bookingId: string): Promise<Booking | undefined>;
  /** A booking the account does not hold yet; one created meanwhile fails the unit. Refused as createToken when there is no room. */
  createBooking(booking: Booking): Promise<void>;
  saveBooking(booking: Booking): Promise<void>;
  findKeyedRequest(sourceId: string, key: string): Promise<KeyedRequest | undefined>;
  /** In the unit of the change the request applied, like recordDelivery. */
  recordKeyedRequest(request: KeyedRequest): Promise<void>;
  findDelivery(sourceId: string, webhookId: string): Promise<Delivery | undefined>;
  /** In the unit of the change the delivery applied, so neither is ever kept without the other. */
  recordDelivery(delivery: Delivery): Promise<void>;
  /**
   * The token, ledger row and booking this unit last created or saved, as it leaves them; each absent when the unit
   * wrote none. The unit's own rows, not copies, to be read (a change's view) and never changed.
   */
  lastWritten(): LastWritten;
  /** The one change of the request this unit applies, numbered by the store when the unit applies (never before). */
  recordChange(change: NewChange): Promise<void>;
}

/** What a unit of work last wrote of each kind a change shows (StoreTransaction.lastWritten). */
export interface LastWritten {
  token?: Readonly<Token>;
  ledgerEntry?: Readonly<LedgerEntry>;
  booking?: Readonly<Booking>;
}

export interface Store {
  /** An enabled account; a store shared by several instances reads it at most 10 s before (contract section 11). */
  findAccount(sourceId: string): Promise<Account | undefined>;
  /** Reads for inspection: no lock, outside any unit of work. */
  findToken(tokenId: string): Promise<Token | undefined>;
  /** The token's latest ledger rows, newest first. */
  recentLedgerEntries(tokenId: string, limit: number): Promise<LedgerEntry[]>;
  findBooking(sourceId: string, bookingId: string): Promise<Booking | undefined>;
  /** The account's kept changes with `seq` above `after`, oldest first, at most `limit`. */
  changesAfter(sourceId: string, after: number, limit: number): Promise<Change[]>;
  /** The account's kept changes the query matches, and its first and last seq, in one snapshot (the feed's read). */
  readChanges(sourceId: string, query: ChangeQuery): Promise<ChangesRead>;
  /** Tells `listener` of the accounts' committed changes until the returned function is called. */
  watchChanges(listener: ChangeListener): () => void;
  /** Runs `work` atomically: all its writes commit, or (when it throws) none do. */
  transaction<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<T>;
  /**
   * Accounts are set from the seed (keys, signing secrets, destinations: the file is authoritative, so a leaked
   * key is rotated by a restart), and an account the seed no longer lists is disabled: findAccount no longer
   * finds it, its tokens, bookings and ledger stay. Tokens and bookings are inserted when missing, never
   * overwriting state that operations changed. The store may keep the seed's records.
   */
  loadSeed(seed: SeedData): Promise<void>;
  /** Resolves when the store answers; rejects with a domain error otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
