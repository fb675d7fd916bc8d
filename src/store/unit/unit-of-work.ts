/**
 * A unit's view of its batch (batch.ts), the StoreTransaction the services run against: reads see the unit's own
 * writes, then the batch's (its units that succeeded before), then the database, fetched with the batch's next
 * round trip; writes are staged on the unit until it ends.
 */
import type { Booking } from '../../domain/bookings';
import type { LedgerEntry } from '../../domain/ledger';
import type { Token } from '../../domain/tokens';
import { accountKey, copy } from '../records';
import type { Delivery, Holdings, KeyedRequest, StoreTransaction } from '../store';
import { plus, StagedWrites } from './staged-writes';
import type { ItemOf, ReadKind, WrittenKind } from '../postgres/table-statements';
import { BOOKINGS, DELIVERIES, KEYED_REQUESTS, LEDGER, TOKENS } from '../postgres/tables';

/** What a unit asks of its batch. */
export interface UnitsBatch {
  /**
   * The row of `kind` under `key` (accountKey() of `keyParts`, the key columns' values), once `unit` holds its in-batch
   * lock and the batch has read it; null when there is none.
   */
  read<Kind extends ReadKind>(unit: UnitView, kind: Kind, key: string, keyParts: string[]): Promise<ItemOf<Kind> | null>;
}

export class UnitView implements StoreTransaction {
  readonly staged = new StagedWrites();

  constructor(private readonly batch: UnitsBatch) {}

  /** The row as the unit sees it: its own write of it, else the batch's copy of it. */
  private async find<Kind extends WrittenKind>(kind: Kind, sourceId: string, id: string): Promise<ItemOf<Kind> | undefined> {
    const key = accountKey(sourceId, id);
    const own = this.staged.own(kind, key) ?? (await this.batch.read(this, kind, key, [sourceId, id]));
    return own ? copy(own) : undefined;
  }

  tokenForUpdate(sourceId: string, tokenId: string): Promise<Token | undefined> {
    // Locked within the caller's account, as the database locks only the account's own row (contract section 11).
    return this.find('tokens', sourceId, tokenId);
  }

  async isTokenIdTaken(tokenId: string): Promise<boolean> {
    if ([...this.staged.created.tokens.values()].some((token) => token.tokenId === tokenId)) return true;
    return (await this.batch.read(this, 'tokenIds', tokenId, [tokenId])) !== null;
  }

  async lockTokenAndFindLedgerEntry(
    tokenId: string,
    sourceId: string,
    transactionId: string,
  ): Promise<[Token | undefined, LedgerEntry | undefined]> {
    // Both in one round trip: the token's lock and the ledger key's, then both reads asked for together.
    return Promise.all([this.tokenForUpdate(sourceId, tokenId), this.find('ledger', sourceId, transactionId)]);
  }

  async holdingsForUpdate(sourceId: string): Promise<Holdings> {
    const held = await this.batch.read(this, 'holdings', sourceId, [sourceId]);
    return plus(held, this.staged.holdings.get(sourceId));
  }

  private count(sourceId: string, what: keyof Holdings): void {
    this.staged.add(sourceId, { tokens: 0, bookings: 0, keys: 0, [what]: 1 });
  }

  async createToken(token: Token): Promise<void> {
    this.staged.create('tokens', TOKENS.keyOf(token), copy(token));
    this.count(token.sourceId, 'tokens');
  }

  async saveToken(token: Token): Promise<void> {
    this.staged.save('tokens', TOKENS.keyOf(token), copy(token));
  }

  async recordLedgerEntry(entry: LedgerEntry): Promise<void> {
    this.staged.create('ledger', LEDGER.keyOf(entry), copy(entry));
  }

  bookingForUpdate(sourceId: string, bookingId: string): Promise<Booking | undefined> {
    return this.find('bookings', sourceId, bookingId);
  }

  async createBooking(booking: Booking): Promise<void> {
    this.staged.create('bookings', BOOKINGS.keyOf(booking), copy(booking));
    this.count(booking.sourceId, 'bookings');
  }

  async saveBooking(booking: Booking): Promise<void> {
    this.staged.save('bookings', BOOKINGS.keyOf(booking), copy(booking));
  }

  findKeyedRequest(sourceId: string, key: string): Promise<KeyedRequest | undefined> {
    return this.find('keyedRequests', sourceId, key);
  }

  async recordKeyedRequest(request: KeyedRequest): Promise<void> {
    this.staged.create('keyedRequests', KEYED_REQUESTS.keyOf(request), request);
    this.count(request.sourceId, 'keys');
  }

  findDelivery(sourceId: string, webhookId: string): Promise<Delivery | undefined> {
    return this.find('deliveries', sourceId, webhookId);
  }

  async recordDelivery(delivery: Delivery): Promise<void> {
    this.staged.create('deliveries', DELIVERIES.keyOf(delivery), delivery);
    this.count(delivery.sourceId, 'keys');
  }
}
