import type { Booking } from '../domain/bookings';
import type { LedgerEntry } from '../domain/ledger';
import type { Token } from '../domain/tokens';
import { ServiceUnavailableError } from '../errors';
import type { Logger } from '../process/logger';
import { addHoldings, forgetOlderThan } from './memory-records';
import { accountKey, copy } from './records';
import { heapLimitBytes, heapShareGauge, usedHeapBytes } from './memory-heap';
import { isLedgerTransactionId, ledgerKindCode, MemoryLedger } from './memory-ledger';
import { MemoryTokenTable, statusCode } from './memory-tokens';
import type { Account, Delivery, Holdings, KeyedRequest, SeedData, Store, StoreTransaction } from './store';

const DAY_MS = 24 * 60 * 60 * 1000;
/**
 * Contract section 11: past this share of the heap's limit in use, nothing new is created (503) rather than run
 * out of memory: no token, booking, request key or delivery record (a key keeps its answer's bytes for 24 hours).
 */
const CREATE_LIMIT = 0.85;
/** Past this share, not even a ledger row: the operations on existing tokens, a small row each, go on until here. */
const LEDGER_LIMIT = 0.95;
const HEAP_LIMIT_BYTES = heapLimitBytes();

/** The memory store's tables. Tokens sit in rows so that ledger rows can name them by number. */
interface MemoryTables {
  tokens: MemoryTokenTable;
  ledger: MemoryLedger;
  bookings: Map<string, Booking>;
  keyedRequests: Map<string, KeyedRequest>;
  deliveries: Map<string, Delivery>;
  /** Tokens, bookings and kept keys per account, for the quotas and the key limit. */
  holdings: Map<string, Holdings>;
}

interface StagedWrites {
  tokens: Map<string, Token>;
  ledger: Map<string, LedgerEntry>;
  bookings: Map<string, Booking>;
  keyedRequests: Map<string, KeyedRequest>;
  deliveries: Map<string, Delivery>;
  /** What the unit created, per account. */
  holdings: Map<string, Holdings>;
}

/** The tables that keep whole records in a Map by key. */
type RecordTable = 'bookings' | 'keyedRequests' | 'deliveries';
type RowOf<Table extends RecordTable> = MemoryTables[Table] extends Map<string, infer Row> ? Row : never;

/** An unlocked read of the ledger, as the store's tables hold it. */
function storedLedgerEntry(tables: MemoryTables, sourceId: string, transactionId: string): LedgerEntry | undefined {
  const row = tables.ledger.find(sourceId, transactionId);
  return row < 0 ? undefined : tables.ledger.read(row, (tokenRow) => tables.tokens.idOf(tokenRow));
}

/** Reads through staged writes; nothing reaches the tables until commit. */
class MemoryTransaction implements StoreTransaction {
  /** Made on a unit's first write to each table: most units write to one or two. */
  private readonly staged: Partial<StagedWrites> = {};

  constructor(
    private readonly tables: MemoryTables,
    private readonly retentionMs: number,
    private readonly refuseWhenFull: (limit: number) => void,
  ) {}

  async holdingsForUpdate(sourceId: string, now?: Date): Promise<Holdings> {
    if (now) this.forgetExpired(now);
    const stored = this.tables.holdings.get(sourceId);
    const created = this.staged.holdings?.get(sourceId);
    return {
      tokens: (stored?.tokens ?? 0) + (created?.tokens ?? 0),
      bookings: (stored?.bookings ?? 0) + (created?.bookings ?? 0),
      keys: (stored?.keys ?? 0) + (created?.keys ?? 0),
    };
  }

  /** Forgets the request keys and deliveries past their retention at `now`: no unit runs beside this one. */
  private forgetExpired(now: Date): void {
    const { keyedRequests, deliveries, holdings } = this.tables;
    const cutoffMs = now.getTime() - this.retentionMs;
    forgetOlderThan(keyedRequests, cutoffMs, (kept) => kept.createdAt, holdings);
    forgetOlderThan(deliveries, cutoffMs, (kept) => kept.receivedAt, holdings);
  }

  /**
   * The row of the token this unit last looked up in the table. A unit works on one token and asks for it two to
   * four times, each a probe of the index of every token (as a Map, 2% of a withdrawal's CPU, docs/BENCHMARKS.md, issue 22).
   * Rows never move, and no other unit runs until this one commits, so the answer holds for the whole unit.
   */
  private lookedUpTokenId: string | undefined = undefined;
  private lookedUpRow: number | undefined = undefined;

  private tableRowOf(tokenId: string): number | undefined {
    if (tokenId !== this.lookedUpTokenId) {
      this.lookedUpTokenId = tokenId;
      this.lookedUpRow = this.tables.tokens.rowOf(tokenId);
    }
    return this.lookedUpRow;
  }

  private storedToken(tokenId: string): Token | undefined {
    const row = this.tableRowOf(tokenId);
    return row === undefined ? undefined : this.tables.tokens.read(row);
  }

  async tokenForUpdate(sourceId: string, tokenId: string) {
    const staged = this.staged.tokens?.get(tokenId);
    const token = staged ? copy(staged) : this.storedToken(tokenId);
    return token?.sourceId === sourceId ? token : undefined;
  }

  async isTokenIdTaken(tokenId: string) {
    return this.holdsToken(tokenId);
  }

  private ledgerEntry(sourceId: string, transactionId: string): LedgerEntry | undefined {
    const staged = this.staged.ledger?.get(accountKey(sourceId, transactionId));
    return staged ? copy(staged) : storedLedgerEntry(this.tables, sourceId, transactionId);
  }

  async lockTokenAndFindLedgerEntry(
    tokenId: string,
    sourceId: string,
    transactionId: string,
  ): Promise<[Token | undefined, LedgerEntry | undefined]> {
    return [await this.tokenForUpdate(sourceId, tokenId), this.ledgerEntry(sourceId, transactionId)];
  }

  private holdsToken(tokenId: string): boolean {
    return this.staged.tokens?.has(tokenId) === true || this.tableRowOf(tokenId) !== undefined;
  }

  async createToken(token: Token) {
    // As the database's primary key.
    if (this.holdsToken(token.tokenId)) throw new Error(`token ${token.tokenId} is already in the store`);
    this.refuseWhenFull(CREATE_LIMIT);
    await this.stageToken(token);
    addHoldings((this.staged.holdings ??= new Map()), token.sourceId, 'tokens');
  }

  async saveToken(token: Token) {
    if (!this.holdsToken(token.tokenId)) throw new Error(`token ${token.tokenId} is not in the store`);
    await this.stageToken(token);
  }

  private async stageToken(token: Token) {
    // Checked here, so that commit cannot fail halfway through a unit's writes.
    statusCode(token.status);
    if (token.availableDay !== undefined && token.expiryDay !== undefined && token.expiryDay < token.availableDay) {
      throw new Error(`token ${token.tokenId} would expire before it is available`);
    }
    (this.staged.tokens ??= new Map()).set(token.tokenId, copy(token));
  }

  async recordLedgerEntry(entry: LedgerEntry) {
    // Checked here, like the ones below, so that commit cannot fail after it applied the unit's token writes.
    if (!isLedgerTransactionId(entry.transactionId)) throw new Error(`transaction_id ${entry.transactionId} is not 20 digits`);
    ledgerKindCode(entry.kind);
    const key = accountKey(entry.sourceId, entry.transactionId);
    if (this.staged.ledger?.has(key) || this.tables.ledger.find(entry.sourceId, entry.transactionId) >= 0) {
      throw new Error(`transaction_id ${entry.transactionId} of ${entry.sourceId} is already in the ledger`);
    }
    // As the database's foreign key: a ledger row belongs to a token the store holds.
    if (!this.holdsToken(entry.tokenId)) throw new Error(`token ${entry.tokenId} is not in the store`);
    this.refuseWhenFull(LEDGER_LIMIT);
    (this.staged.ledger ??= new Map()).set(key, copy(entry));
  }

  async bookingForUpdate(sourceId: string, bookingId: string) {
    return this.readRow('bookings', accountKey(sourceId, bookingId));
  }

  async createBooking(booking: Booking) {
    const key = accountKey(booking.sourceId, booking.bookingId);
    // As the database's primary key.
    if (this.holds('bookings', key)) throw new Error(`booking ${booking.bookingId} of ${booking.sourceId} is already in the store`);
    this.refuseWhenFull(CREATE_LIMIT);
    this.stageRow('bookings', key, booking);
    addHoldings((this.staged.holdings ??= new Map()), booking.sourceId, 'bookings');
  }

  async saveBooking(booking: Booking) {
    const key = accountKey(booking.sourceId, booking.bookingId);
    if (!this.holds('bookings', key)) throw new Error(`booking ${booking.bookingId} of ${booking.sourceId} is not in the store`);
    this.stageRow('bookings', key, booking);
  }

  async findKeyedRequest(sourceId: string, key: string) {
    return this.readRow('keyedRequests', accountKey(sourceId, key));
  }

  async recordKeyedRequest(request: KeyedRequest) {
    const key = accountKey(request.sourceId, request.key);
    if (this.holds('keyedRequests', key)) throw new Error(`key ${request.key} of ${request.sourceId} is already recorded`);
    this.refuseWhenFull(CREATE_LIMIT);
    this.stageRow('keyedRequests', key, request);
    addHoldings((this.staged.holdings ??= new Map()), request.sourceId, 'keys');
  }

  async findDelivery(sourceId: string, webhookId: string) {
    return this.readRow('deliveries', accountKey(sourceId, webhookId));
  }

  async recordDelivery(delivery: Delivery) {
    const key = accountKey(delivery.sourceId, delivery.webhookId);
    if (this.holds('deliveries', key)) throw new Error(`delivery ${delivery.webhookId} is already recorded`);
    this.refuseWhenFull(CREATE_LIMIT);
    this.stageRow('deliveries', key, delivery);
    addHoldings((this.staged.holdings ??= new Map()), delivery.sourceId, 'keys');
  }

  /** Whether the unit or the table holds the key: what a database's primary key would refuse to insert again. */
  private holds(table: RecordTable, key: string): boolean {
    return this.staged[table]?.has(key) === true || this.tables[table].has(key);
  }

  /** A copy of the row as the unit sees it: its own writes first, then the table. */
  private readRow<Table extends RecordTable>(table: Table, key: string): RowOf<Table> | undefined {
    const row = (this.staged[table]?.get(key) ?? this.tables[table].get(key)) as RowOf<Table> | undefined;
    return row && copy(row);
  }

  private stageRow<Table extends RecordTable>(table: Table, key: string, row: RowOf<Table>): void {
    ((this.staged[table] ??= new Map()) as Map<string, RowOf<Table>>).set(key, copy(row));
  }

  /**
   * Applies every staged write in one synchronous step, so no other unit sees half of them. Every write was
   * checked when it was staged (saveToken, recordLedgerEntry), so applying cannot stop halfway.
   */
  commit(): void {
    const { tokens, ledger, bookings, keyedRequests, deliveries, holdings } = this.tables;
    const {
      tokens: stagedTokens = [],
      ledger: entries = [],
      bookings: stagedBookings = [],
      keyedRequests: requests = [],
      deliveries: stagedDeliveries = [],
      holdings: created = [],
    } = this.staged;
    for (const [, token] of stagedTokens) tokens.put(token);
    for (const [, entry] of entries) {
      // A token this unit created had no row when it was looked up: it has one now.
      ledger.append({ ...entry, tokenRow: (this.tableRowOf(entry.tokenId) ?? tokens.rowOf(entry.tokenId)) as number });
    }
    for (const [key, booking] of stagedBookings) bookings.set(key, booking);
    for (const [sourceId, made] of created) {
      addHoldings(holdings, sourceId, 'tokens', made.tokens);
      addHoldings(holdings, sourceId, 'bookings', made.bookings);
      addHoldings(holdings, sourceId, 'keys', made.keys);
    }
    for (const [key, request] of requests) {
      keyedRequests.set(key, request);
      forgetOlderThan(keyedRequests, request.createdAt.getTime() - this.retentionMs, (kept) => kept.createdAt, holdings);
    }
    for (const [key, delivery] of stagedDeliveries) {
      deliveries.set(key, delivery);
      forgetOlderThan(deliveries, delivery.receivedAt.getTime() - this.retentionMs, (kept) => kept.receivedAt, holdings);
    }
  }
}

export interface MemoryStoreOptions {
  /** How long request keys ({randomkey}) and webhook ids are kept; the contract asks for at least 24 hours. */
  retentionMs?: number;
  /** The share of memory in use, against which creations (85%) and ledger rows (95%) are refused. Default: the heap's. */
  heapShareInUse?: () => number;
  logger?: Logger;
}

/**
 * Keeps everything in process memory. Units of work run one at a time, which
 * makes each operation atomic and makes concurrent duplicates apply once.
 */
export class MemoryStore implements Store {
  private readonly tables: MemoryTables = {
    tokens: new MemoryTokenTable(),
    ledger: new MemoryLedger(),
    bookings: new Map(),
    keyedRequests: new Map(),
    deliveries: new Map(),
    holdings: new Map(),
  };
  private readonly accounts = new Map<string, Account>();
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  private readonly retentionMs: number;
  private readonly heapShareInUse: () => number;
  private readonly logger: Logger | undefined;
  /** Refusing creations since the last check found memory full; logged once each way. */
  private full = false;

  constructor(options: MemoryStoreOptions = {}) {
    this.retentionMs = options.retentionMs ?? DAY_MS;
    this.heapShareInUse = options.heapShareInUse ?? heapShareGauge(usedHeapBytes, HEAP_LIMIT_BYTES, CREATE_LIMIT);
    this.logger = options.logger;
  }

  /**
   * Contract section 11: past `limit` of the heap in use, the write is refused (503, counted as storage_full)
   * instead of running out of memory. Past 85% nothing new is created, while the operations on existing
   * tokens, which add a small ledger row each, go on to 95%; status and date changes never grow memory.
   */
  private readonly refuseWhenFull = (limit: number): void => {
    const share = this.heapShareInUse();
    const full = share > CREATE_LIMIT;
    if (full !== this.full) {
      this.full = full;
      if (full)
        this.logger?.error(
          'memory store full: the heap in use is past 85% of its limit; creating tokens, bookings, request keys and deliveries answers 503, ledger rows too past 95%',
        );
      else this.logger?.info('memory store has room again: tokens, bookings, request keys and deliveries can be created');
    }
    if (share > limit) throw new ServiceUnavailableError('storage_full');
  };

  private assertOpen(): void {
    if (this.closed) throw new ServiceUnavailableError();
  }

  async findAccount(sourceId: string) {
    this.assertOpen();
    return this.accounts.get(sourceId);
  }

  async findToken(tokenId: string) {
    this.assertOpen();
    const row = this.tables.tokens.rowOf(tokenId);
    return row === undefined ? undefined : this.tables.tokens.read(row);
  }

  async recentLedgerEntries(tokenId: string, limit: number) {
    this.assertOpen();
    const { tokens, ledger } = this.tables;
    const row = tokens.rowOf(tokenId);
    if (row === undefined) return [];
    return ledger.latestRows(row, limit).map((ledgerRow) => ledger.read(ledgerRow, (tokenRow) => tokens.idOf(tokenRow)));
  }

  async findBooking(sourceId: string, bookingId: string) {
    this.assertOpen();
    const booking = this.tables.bookings.get(accountKey(sourceId, bookingId));
    return booking && copy(booking);
  }

  transaction<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    const run = this.queue.then(async () => {
      this.assertOpen();
      const tx = new MemoryTransaction(this.tables, this.retentionMs, this.refuseWhenFull);
      const result = await work(tx);
      tx.commit();
      return result;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  async loadSeed(seed: SeedData) {
    this.assertOpen();
    // The seed's accounts are authoritative: keys, signing secrets and destinations as the file says, and an
    // account it no longer lists is disabled (unknown to lookups) while its tokens, bookings and ledger stay.
    this.accounts.clear();
    for (const account of seed.accounts) this.accounts.set(account.sourceId, account);
    // Tokens go into the columns; bookings are kept as the seed's records (built for the store by toSeedData).
    // Seeded objects count toward the quotas; they are never refused.
    const { tokens, bookings, holdings } = this.tables;
    for (const token of seed.tokens) {
      if (tokens.rowOf(token.tokenId) !== undefined) continue;
      tokens.put(token);
      addHoldings(holdings, token.sourceId, 'tokens');
    }
    for (const booking of seed.bookings) {
      const key = accountKey(booking.sourceId, booking.bookingId);
      if (bookings.has(key)) continue;
      bookings.set(key, booking);
      addHoldings(holdings, booking.sourceId, 'bookings');
    }
  }

  async ping() {
    this.assertOpen();
  }

  async close() {
    this.closed = true;
  }
}
