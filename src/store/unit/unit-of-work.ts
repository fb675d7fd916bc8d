/**
 * The one unit of work, the StoreTransaction the services run against on either store. Reads see the unit's own
 * writes, then the rows its store supplies (UnitRows: the memory store's tables; PostgreSQL's batch, which sees
 * its units that succeeded before and fetches the rest with its next round trip). Writes are checked against
 * every rule (rules.ts) and staged on the unit; the store applies them only once the unit succeeds, and they
 * cannot fail there for a rule.
 */
import type { Booking } from '../../domain/bookings';
import type { LedgerEntry } from '../../domain/ledger';
import type { Token } from '../../domain/tokens';
import { accountKey, copy } from '../records';
import type { Delivery, Holdings, KeyedRequest, LastWritten, NewChange, StoreTransaction } from '../store';
import { KEY_OF, type ReadKind, type ReadRecords, type WrittenKind, type WrittenRecords } from './kinds';
import { checkBooking, checkDelivery, checkLedgerEntry, checkToken, RefusedWrite } from './rules';
import { plus, StagedWrites } from './staged-writes';

/**
 * A read's row, at once when the store holds it in memory, else once it has been fetched: a read answered at once
 * costs no promise, and the memory store answers every read at once (a withdrawal reads five times).
 */
export type Read<Row> = Row | Promise<Row>;

/** What a unit asks of its store. */
export interface UnitRows {
  /**
   * The row of `kind` under `key` (accountKey() of `keyParts`, the key columns' values), held for `unit` until it
   * ends; null when there is none.
   */
  read<Kind extends ReadKind>(unit: UnitOfWork, kind: Kind, key: string, keyParts: string[]): Read<ReadRecords[Kind] | null>;
  /** Refuses a new row of `kind` when the store has no room for it (ServiceUnavailableError storage_full). */
  admit?(kind: WrittenKind): void;
  /** Forgets the request keys and deliveries past their retention at `now`, before holdings are read (the memory store). */
  forgetExpired?(now: Date): void;
}

/** The last value of a map (its newest entry); undefined when it is empty. */
function last<Value>(map: Map<string, Value>): Value | undefined {
  // Most of the maps asked are empty: no iterator for them.
  if (map.size === 0) return undefined;
  let newest: Value | undefined;
  for (const value of map.values()) newest = value;
  return newest;
}

export class UnitOfWork implements StoreTransaction {
  readonly staged = new StagedWrites();

  constructor(private readonly rows: UnitRows) {}

  /** The row as the unit sees it (its own write of it, else its store's), not copied; null when there is none. */
  private seen<Kind extends WrittenKind & ReadKind>(kind: Kind, sourceId: string, id: string): Read<WrittenRecords[Kind] | null> {
    const key = accountKey(sourceId, id);
    return this.staged.own(kind, key) ?? (this.rows.read(this, kind, key, [sourceId, id]) as Read<WrittenRecords[Kind] | null>);
  }

  /** A copy of the row as the unit sees it, for the caller to change. */
  private async find<Kind extends WrittenKind & ReadKind>(
    kind: Kind,
    sourceId: string,
    id: string,
  ): Promise<WrittenRecords[Kind] | undefined> {
    const row = await this.seen(kind, sourceId, id);
    return row ? copy(row) : undefined;
  }

  /** Rule created_once: as a database's primary key, a row is created only where the unit sees none. */
  private async refuseIfHeld(kind: WrittenKind & ReadKind, sourceId: string, id: string): Promise<void> {
    if ((await this.seen(kind, sourceId, id)) !== null)
      throw new RefusedWrite('created_once', `${kind} ${id} of ${sourceId} is already in the store`);
  }

  /** Rule saved_exists: a save changes a row the unit sees, never creates one. */
  private async refuseUnlessHeld(kind: WrittenKind & ReadKind, sourceId: string, id: string): Promise<void> {
    if ((await this.seen(kind, sourceId, id)) === null)
      throw new RefusedWrite('saved_exists', `${kind} ${id} of ${sourceId} is not in the store`);
  }

  tokenForUpdate(sourceId: string, tokenId: string): Promise<Token | undefined> {
    // Locked within the caller's account, as the database locks only the account's own row (contract section 11).
    return this.find('tokens', sourceId, tokenId);
  }

  async isTokenIdTaken(tokenId: string): Promise<boolean> {
    for (const token of this.staged.created.tokens.values()) if (token.tokenId === tokenId) return true;
    return (await this.rows.read(this, 'tokenIds', tokenId, [tokenId])) !== null;
  }

  async lockTokenAndFindLedgerEntry(
    sourceId: string,
    tokenId: string,
    transactionId: string,
  ): Promise<[Token | undefined, LedgerEntry | undefined]> {
    // Both in one round trip on PostgreSQL: the token's lock and the ledger key's, then both reads asked for together.
    return Promise.all([this.tokenForUpdate(sourceId, tokenId), this.find('ledger', sourceId, transactionId)]);
  }

  async holdingsForUpdate(sourceId: string, now?: Date): Promise<Holdings> {
    if (now) this.rows.forgetExpired?.(now);
    const held = await this.rows.read(this, 'holdings', sourceId, [sourceId]);
    return plus(held, this.staged.holdings.get(sourceId));
  }

  private count(sourceId: string, what: keyof Holdings): void {
    this.staged.add(sourceId, { tokens: 0, bookings: 0, keys: 0, [what]: 1 });
  }

  async createToken(token: Token): Promise<void> {
    checkToken(token);
    // A token id is unique across accounts (migration 015), which is what isTokenIdTaken asks.
    if (await this.isTokenIdTaken(token.tokenId)) throw new RefusedWrite('created_once', `token ${token.tokenId} is already in the store`);
    this.rows.admit?.('tokens');
    this.staged.create('tokens', KEY_OF.tokens(token), copy(token));
    this.count(token.sourceId, 'tokens');
  }

  async saveToken(token: Token): Promise<void> {
    checkToken(token);
    await this.refuseUnlessHeld('tokens', token.sourceId, token.tokenId);
    this.staged.save('tokens', KEY_OF.tokens(token), copy(token));
  }

  async recordLedgerEntry(entry: LedgerEntry): Promise<void> {
    checkLedgerEntry(entry);
    await this.refuseIfHeld('ledger', entry.sourceId, entry.transactionId);
    // As the database's foreign key: a ledger row names a token its account holds.
    if ((await this.seen('tokens', entry.sourceId, entry.tokenId)) === null) {
      throw new RefusedWrite('ledger_token_held', `token ${entry.tokenId} of ${entry.sourceId} is not in the store`);
    }
    this.rows.admit?.('ledger');
    this.staged.create('ledger', KEY_OF.ledger(entry), copy(entry));
  }

  bookingForUpdate(sourceId: string, bookingId: string): Promise<Booking | undefined> {
    return this.find('bookings', sourceId, bookingId);
  }

  async createBooking(booking: Booking): Promise<void> {
    checkBooking(booking);
    await this.refuseIfHeld('bookings', booking.sourceId, booking.bookingId);
    this.rows.admit?.('bookings');
    this.staged.create('bookings', KEY_OF.bookings(booking), copy(booking));
    this.count(booking.sourceId, 'bookings');
  }

  async saveBooking(booking: Booking): Promise<void> {
    checkBooking(booking);
    await this.refuseUnlessHeld('bookings', booking.sourceId, booking.bookingId);
    this.staged.save('bookings', KEY_OF.bookings(booking), copy(booking));
  }

  findKeyedRequest(sourceId: string, key: string): Promise<KeyedRequest | undefined> {
    return this.find('keyedRequests', sourceId, key);
  }

  async recordKeyedRequest(request: KeyedRequest): Promise<void> {
    await this.refuseIfHeld('keyedRequests', request.sourceId, request.key);
    this.rows.admit?.('keyedRequests');
    this.staged.create('keyedRequests', KEY_OF.keyedRequests(request), copy(request));
    this.count(request.sourceId, 'keys');
  }

  findDelivery(sourceId: string, webhookId: string): Promise<Delivery | undefined> {
    return this.find('deliveries', sourceId, webhookId);
  }

  async recordDelivery(delivery: Delivery): Promise<void> {
    checkDelivery(delivery);
    await this.refuseIfHeld('deliveries', delivery.sourceId, delivery.webhookId);
    this.rows.admit?.('deliveries');
    this.staged.create('deliveries', KEY_OF.deliveries(delivery), copy(delivery));
    this.count(delivery.sourceId, 'keys');
  }

  lastWritten(): LastWritten {
    const { created, saved } = this.staged;
    return {
      token: last(saved.tokens) ?? last(created.tokens),
      ledgerEntry: last(created.ledger),
      booking: last(saved.bookings) ?? last(created.bookings),
    };
  }

  async recordChange(change: NewChange): Promise<void> {
    // Never refused for room: what the store admits applies with its change, and the memory store bounds an
    // account's changes by MEMORY_CHANGES_PER_ACCOUNT instead (a status change goes on past 95% of the heap).
    // Not copied: the caller builds each change for this call alone.
    this.staged.create('changes', KEY_OF.changes(change), change);
  }
}
