import type { Booking } from '../domain/bookings';
import type { Token } from '../domain/tokens';
import { ServiceUnavailableError } from '../errors';
import type { Logger } from '../process/logger';
import { addHoldings, forgetOlderThan } from './memory-records';
import { accountKey, copy } from './records';
import { heapLimitBytes, heapShareGauge, usedHeapBytes } from './memory-heap';
import { MemoryLedger } from './memory-ledger';
import { MemoryTokenTable } from './memory-tokens';
import { MemoryChanges } from './memory-changes';
import type { PackedChanges } from './memory-change-log';
import type {
  Account,
  ChangeListener,
  ChangeQuery,
  Delivery,
  Holdings,
  KeyedRequest,
  NewChange,
  SeedData,
  Store,
  StoreTransaction,
} from './store';
import type { ReadKind, ReadRecords, WrittenKind } from './unit/kinds';
import type { StagedWrites } from './unit/staged-writes';
import { UnitOfWork, type UnitRows } from './unit/unit-of-work';

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
  changes: MemoryChanges;
}

/** The tables that keep whole records in a Map by key. */
type RecordTable = 'bookings' | 'keyedRequests' | 'deliveries';

/**
 * The rows a unit of work reads (unit/unit-of-work.ts), straight from the tables: units run one at a time, so a
 * unit holds every row it reads until it ends. One a unit: it remembers the token it last looked up.
 */
class MemoryUnitRows implements UnitRows {
  /**
   * The row of the token this unit last looked up in the table. A unit works on one token and asks for it two to
   * four times, each a probe of the index of every token (as a Map, 2% of a withdrawal's CPU, docs/BENCHMARKS.md, issue 22).
   * Rows never move, and no other unit runs until this one is applied, so the answer holds for the whole unit.
   */
  private lookedUpTokenId: string | undefined = undefined;
  private lookedUpRow: number | undefined = undefined;
  /** That row's token as read: the unit reads it again to check its writes, and the tables do not change under it. */
  private lookedUpToken: Token | undefined = undefined;
  /** The ledger key this unit last looked up, and its row (-1: none): a money request reads it to replay, then to record. */
  private lookedUpLedgerKey: string | undefined = undefined;
  private lookedUpLedgerRow = -1;

  constructor(
    private readonly tables: MemoryTables,
    private readonly retentionMs: number,
    private readonly refuseWhenFull: (limit: number) => void,
  ) {}

  private tableRowOf(tokenId: string): number | undefined {
    if (tokenId !== this.lookedUpTokenId) {
      this.lookedUpTokenId = tokenId;
      this.lookedUpRow = this.tables.tokens.rowOf(tokenId);
      this.lookedUpToken = undefined;
    }
    return this.lookedUpRow;
  }

  /** The token in the table, whatever its account; read once while the unit keeps to one token. */
  private storedToken(tokenId: string): Token | undefined {
    const row = this.tableRowOf(tokenId);
    if (row !== undefined) this.lookedUpToken ??= this.tables.tokens.read(row);
    return this.lookedUpToken;
  }

  read<Kind extends ReadKind>(_unit: UnitOfWork, kind: Kind, key: string, keyParts: string[]): ReadRecords[Kind] | null {
    return (this.row(kind, key, keyParts) ?? null) as ReadRecords[Kind] | null;
  }

  private row(kind: ReadKind, key: string, [first, second]: string[]): ReadRecords[ReadKind] | undefined {
    const { tables } = this;
    switch (kind) {
      case 'tokens': {
        const token = this.storedToken(second);
        return token?.sourceId === first ? token : undefined;
      }
      case 'tokenIds':
        return this.tableRowOf(first) === undefined ? undefined : first;
      case 'ledger': {
        if (key !== this.lookedUpLedgerKey) {
          this.lookedUpLedgerKey = key;
          this.lookedUpLedgerRow = tables.ledger.find(first, second);
        }
        const row = this.lookedUpLedgerRow;
        return row < 0 ? undefined : tables.ledger.read(row, (tokenRow) => tables.tokens.idOf(tokenRow));
      }
      case 'holdings': {
        const held = tables.holdings.get(first);
        return held && { sourceId: first, ...held };
      }
      default:
        return tables[kind as RecordTable].get(key);
    }
  }

  /** Contract section 11: past 85% of the heap nothing new is created; a ledger row, small, until 95%. */
  admit(kind: WrittenKind): void {
    this.refuseWhenFull(kind === 'ledger' ? LEDGER_LIMIT : CREATE_LIMIT);
  }

  /** Forgets the request keys and deliveries past their retention at `now`: no unit runs beside this one. */
  forgetExpired(now: Date): void {
    const { keyedRequests, deliveries, holdings } = this.tables;
    const cutoffMs = now.getTime() - this.retentionMs;
    forgetOlderThan(keyedRequests, cutoffMs, (kept) => kept.createdAt, holdings);
    forgetOlderThan(deliveries, cutoffMs, (kept) => kept.receivedAt, holdings);
  }

  /**
   * Applies a unit's writes in one synchronous step, so no other unit sees half of them. Every write passed the
   * unit's rules when it was staged, so applying cannot stop halfway.
   */
  apply(staged: StagedWrites): void {
    const { tokens, ledger, bookings, keyedRequests, deliveries, holdings, changes } = this.tables;
    const { created, saved } = staged;
    for (const token of created.tokens.values()) tokens.put(token);
    // A saved token is most often the one the unit last looked up, whose row it knows.
    for (const token of saved.tokens.values()) tokens.put(token, this.tableRowOf(token.tokenId));
    for (const entry of created.ledger.values()) {
      // A token this unit created had no row when it was looked up: it has one now.
      ledger.append({ ...entry, tokenRow: (this.tableRowOf(entry.tokenId) ?? tokens.rowOf(entry.tokenId)) as number });
    }
    for (const [key, booking] of created.bookings) bookings.set(key, booking);
    for (const [key, booking] of saved.bookings) bookings.set(key, booking);
    for (const [sourceId, made] of staged.holdings) {
      addHoldings(holdings, sourceId, 'tokens', made.tokens);
      addHoldings(holdings, sourceId, 'bookings', made.bookings);
      addHoldings(holdings, sourceId, 'keys', made.keys);
    }
    for (const [key, request] of created.keyedRequests) {
      keyedRequests.set(key, request);
      forgetOlderThan(keyedRequests, request.createdAt.getTime() - this.retentionMs, (kept) => kept.createdAt, holdings);
    }
    for (const [key, delivery] of created.deliveries) {
      deliveries.set(key, delivery);
      forgetOlderThan(deliveries, delivery.receivedAt.getTime() - this.retentionMs, (kept) => kept.receivedAt, holdings);
    }
    for (const change of created.changes.values()) changes.append(change);
  }
}

export interface MemoryStoreOptions {
  /** How long request keys ({randomkey}) and webhook ids are kept; the contract asks for at least 24 hours. */
  retentionMs?: number;
  /** The share of memory in use, against which creations (85%) and ledger rows (95%) are refused. Default: the heap's. */
  heapShareInUse?: () => number;
  /** How long changes are kept (CHANGE_RETENTION_DAYS; default 30 days). */
  changeRetentionMs?: number;
  /** The most changes kept per account, the newest (MEMORY_CHANGES_PER_ACCOUNT; default 100000). */
  changesPerAccount?: number;
  logger?: Logger;
}

/**
 * Keeps everything in process memory. Units of work run one at a time, which
 * makes each operation atomic and makes concurrent duplicates apply once.
 */
export class MemoryStore implements Store {
  private readonly tables: MemoryTables;
  private readonly accounts = new Map<string, Account>();
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  private readonly retentionMs: number;
  private readonly heapShareInUse: () => number;
  private readonly logger: Logger | undefined;
  /** Refusing creations since the last check found memory full; logged once each way. */
  private full = false;
  /** Told of each unit's changes once it applied (watchChanges). */
  private readonly changeListeners = new Set<ChangeListener>();

  constructor(options: MemoryStoreOptions = {}) {
    this.retentionMs = options.retentionMs ?? DAY_MS;
    this.heapShareInUse = options.heapShareInUse ?? heapShareGauge(usedHeapBytes, HEAP_LIMIT_BYTES, CREATE_LIMIT);
    this.logger = options.logger;
    this.tables = {
      tokens: new MemoryTokenTable(),
      ledger: new MemoryLedger(),
      bookings: new Map(),
      keyedRequests: new Map(),
      deliveries: new Map(),
      holdings: new Map(),
      changes: new MemoryChanges(options.changeRetentionMs ?? 30 * DAY_MS, options.changesPerAccount ?? 100_000, options.logger),
    };
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

  async changesAfter(sourceId: string, after: number, limit: number) {
    this.assertOpen();
    return this.tables.changes.after(sourceId, after, limit);
  }

  /** changesAfter's changes copied out for the delivery thread, which decodes them (delivery/delivery-thread.ts). */
  packedChangesAfter(sourceId: string, after: number, limit: number): PackedChanges {
    this.assertOpen();
    return this.tables.changes.packedAfter(sourceId, after, limit);
  }

  async readChanges(sourceId: string, query: ChangeQuery) {
    this.assertOpen();
    return this.tables.changes.read(sourceId, query);
  }

  /** Units apply in this process, so listeners are told as each one applies: nothing to poll. */
  watchChanges(listener: ChangeListener): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Each account that a unit's changes moved on, once, after the unit applied. */
  private tellListeners(changes: Iterable<NewChange>): void {
    if (this.changeListeners.size === 0) return;
    const accounts = new Set<string>();
    for (const change of changes) accounts.add(change.sourceId);
    for (const sourceId of accounts) for (const listener of this.changeListeners) listener.changed(sourceId);
  }

  /** Every account with changes, and its last seq: where a new sink starts (delivery/memory-positions.ts). */
  changeHeads(): Map<string, number> {
    return this.tables.changes.heads();
  }

  transaction<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    const run = this.queue.then(async () => {
      this.assertOpen();
      const rows = new MemoryUnitRows(this.tables, this.retentionMs, this.refuseWhenFull);
      const unit = new UnitOfWork(rows);
      const result = await work(unit);
      rows.apply(unit.staged);
      this.tellListeners(unit.staged.created.changes.values());
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
