/**
 * One batch of units of work as one transaction (see group-commit.ts): every
 * unit runs the services' own rules against a view of the batch, its reads
 * gathered into round trips the whole batch shares, its writes staged on the
 * unit and merged only when the unit succeeds, then every write of the batch
 * as one statement, with COMMIT, in the last round trip.
 */
import type { PoolClient } from 'pg';
import type { Booking } from '../../domain/bookings';
import type { LedgerEntry } from '../../domain/ledger';
import type { Token } from '../../domain/tokens';
import type { Delivery, Holdings, KeyedRequest, StoreTransaction } from '../store';
import { columnsOf, READ, rowsByKey, within, writeCalls, type BatchWrites, type ReadKind } from './batch-statements';
import { roundTrip, statement, type Call, type StatementResult } from './connection';
import { UNIT } from './statements';
import { combined } from './transaction';

const READ_KINDS = Object.keys(READ) as ReadKind[];

/**
 * The longest a batch waits for a row another transaction holds (an operator's session, a slow transaction,
 * a deadlock with another instance's batch, which PostgreSQL would find only after a second): past it the batch
 * fails and each unit runs alone (group-commit.ts), so one held row holds up its batch-mates for this long, not
 * for the statement timeout. Batches hold their rows for a few milliseconds.
 */
const LOCK_WAIT_MS = 250;
const BATCH_LOCK_TIMEOUT = statement('batch_lock_timeout', "SELECT set_config('lock_timeout', $1, true)");

/** A unit of the batch that waits for a row another unit holds, or for nothing the batch will ever fetch. */
class UnitDeferred extends Error {
  constructor() {
    super('the unit waited on its batch-mates; it runs alone');
  }
}

/** The batch failed as a whole: units still waiting on a read stop there. */
class BatchAborted extends Error {}

/** What a unit waiting on a read learns when its round trip comes back. */
interface Waiter {
  resolve: () => void;
  reject: (error: Error) => void;
}

/** Rows the batch has read or its units have written, by key; null: read, and there is no such row. */
class BatchRows {
  readonly tokens = new Map<string, Token | null>();
  /** True when a token holds the id; null (read, not found) when none does. */
  readonly takenTokenIds = new Map<string, boolean | null>();
  readonly ledgerEntries = new Map<string, LedgerEntry | null>();
  readonly holdings = new Map<string, Holdings | null>();
  readonly bookings = new Map<string, Booking | null>();
  readonly keyedRequests = new Map<string, KeyedRequest | null>();
  readonly deliveries = new Map<string, Delivery | null>();

  /** The table a kind of read fills. */
  of(kind: ReadKind): Map<string, unknown> {
    return this[kind] as Map<string, unknown>;
  }
}

/** What one unit wrote, applied to the batch only when the unit succeeds. */
class StagedWrites implements BatchWrites {
  readonly createdTokens = new Map<string, Token>();
  readonly savedTokens = new Map<string, Token>();
  readonly ledgerEntries: LedgerEntry[] = [];
  readonly holdings = new Map<string, Holdings>();
  readonly createdBookings = new Map<string, Booking>();
  readonly savedBookings = new Map<string, Booking>();
  readonly keyedRequests: KeyedRequest[] = [];
  readonly deliveries: Delivery[] = [];
}

/** The batch's writes, merged from its units in the order they succeeded. */

/** Counts held plus counts added; either may be missing (none). */
function plus(held: Holdings | null | undefined, added: Holdings | undefined): Holdings {
  return {
    tokens: (held?.tokens ?? 0) + (added?.tokens ?? 0),
    bookings: (held?.bookings ?? 0) + (added?.bookings ?? 0),
    keys: (held?.keys ?? 0) + (added?.keys ?? 0),
  };
}

/**
 * A record saved: a row created earlier in the same writes is created as it ends up, since an insert and an
 * update of one row cannot share a statement.
 */
function saveIn<Row>(created: Map<string, Row>, saved: Map<string, Row>, key: string, row: Row): void {
  if (created.has(key)) created.set(key, row);
  else saved.set(key, row);
}

function copyOf<Value extends object | null | undefined>(value: Value): Value {
  return value && ({ ...value } as Value);
}

/** The outcome of one unit: its result, its refusal, or deferred to run alone. */
export type UnitOutcome<T> = { ok: true; value: T } | { ok: false; error: unknown } | { deferred: true };

/** How many quiet turns with nothing to fetch the batch waits before it defers the units still waiting. */
const QUIET_TURNS = 3;

/**
 * One batch's run: the units, the rows, the in-batch locks (a unit holds every row it read for update, and
 * every key it looked up, until it ends, so units on the same row apply one after the other, each seeing the
 * ones before), and the reads waiting for the next round trip.
 */
export class BatchRun {
  readonly rows = new BatchRows();
  private readonly writes = new StagedWrites();
  /** Who holds each in-batch lock, and who waits for it, in the order they asked. */
  private readonly locks = new Map<string, { holder: UnitView; waiting: Array<{ unit: UnitView; grant: () => void }> }>();
  /** Reads asked for since the last round trip: kind, then key, then its values. */
  private readonly wanted = new Map<ReadKind, Map<string, unknown[]>>();
  private readonly waiters: Waiter[] = [];
  private begun = false;
  private readonly deferred = new Set<UnitView>();

  constructor(private readonly client: PoolClient) {}

  /** Runs every unit against the batch, then COMMIT with every write; the outcomes in the units' order. */
  async run<T>(works: ReadonlyArray<(tx: StoreTransaction) => Promise<T>>): Promise<Array<UnitOutcome<T>>> {
    let unsettled = works.length;
    const outcomes = works.map((work) => {
      const unit = new UnitView(this);
      return this.runUnit(unit, work).finally(() => {
        unsettled -= 1;
      });
    });
    let quietTurns = 0;
    while (unsettled > 0) {
      // Every unit runs until it ends or waits on a read or a lock: after one turn of the event loop, all have.
      await new Promise((resolve) => setImmediate(resolve));
      if (unsettled === 0) break;
      if (this.wanted.size > 0) {
        quietTurns = 0;
        await this.fetch();
      } else if ((quietTurns += 1) >= QUIET_TURNS) {
        this.deferWaitingUnits();
        quietTurns = 0;
      }
    }
    const settled = await Promise.all(outcomes);
    await this.commit();
    return settled;
  }

  private async runUnit<T>(unit: UnitView, work: (tx: StoreTransaction) => Promise<T>): Promise<UnitOutcome<T>> {
    try {
      const value = await work(unit);
      if (this.deferred.has(unit)) return { deferred: true };
      this.merge(unit.staged);
      return { ok: true, value };
    } catch (error) {
      if (this.deferred.has(unit) || error instanceof UnitDeferred) return { deferred: true };
      return { ok: false, error };
    } finally {
      this.releaseLocks(unit);
    }
  }

  /** Units waiting on locks that no running unit will release (two units each holding what the other wants): each runs alone later. */
  private deferWaitingUnits(): void {
    for (const lock of this.locks.values()) {
      for (const { unit } of lock.waiting) this.deferred.add(unit);
    }
    for (const lock of this.locks.values()) {
      const waiting = lock.waiting.splice(0);
      for (const { grant } of waiting) grant();
    }
  }

  /** The in-batch lock on `key` for `unit`: at once when free or already its own, else when the holders before it end. */
  lock(unit: UnitView, key: string): Promise<void> | undefined {
    if (this.deferred.has(unit)) throw new UnitDeferred();
    const lock = this.locks.get(key);
    if (!lock) {
      this.locks.set(key, { holder: unit, waiting: [] });
      unit.held.push(key);
      return undefined;
    }
    if (lock.holder === unit) return undefined;
    return new Promise<void>((resolve) => {
      lock.waiting.push({
        unit,
        grant: () => {
          if (!this.deferred.has(unit)) unit.held.push(key);
          resolve();
        },
      });
    }).then(() => {
      if (this.deferred.has(unit)) throw new UnitDeferred();
    });
  }

  private releaseLocks(unit: UnitView): void {
    for (const key of unit.held) {
      const lock = this.locks.get(key);
      if (!lock || lock.holder !== unit) continue;
      const next = lock.waiting.shift();
      if (next) {
        lock.holder = next.unit;
        next.grant();
      } else {
        this.locks.delete(key);
      }
    }
    unit.held.length = 0;
  }

  /** Asks for a row in the next round trip; resolves once it is in `rows`. */
  want(kind: ReadKind, key: string, values: unknown[]): Promise<void> {
    let ofKind = this.wanted.get(kind);
    if (!ofKind) this.wanted.set(kind, (ofKind = new Map()));
    ofKind.set(key, values);
    return new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /**
   * One round trip with every read asked for (BEGIN before the first), then wakes the units that asked. The
   * statements go in READ's order whatever order the units asked in: two batches (of this instance or another)
   * that both lock tokens and holdings, say, then lock them in the same order and cannot deadlock on them.
   */
  private async fetch(): Promise<void> {
    const wanted = READ_KINDS.flatMap((kind) => {
      const keys = this.wanted.get(kind);
      return keys ? [[kind, keys] as const] : [];
    });
    this.wanted.clear();
    const waiters = this.waiters.splice(0);
    const calls: Call[] = wanted.map(([kind, keys]) => ({ statement: READ[kind], values: columnsOf([...keys.values()]) }));
    let results: StatementResult[];
    try {
      results = await this.send(calls);
    } catch (error) {
      for (const waiter of waiters) waiter.reject(new BatchAborted());
      throw error;
    }
    wanted.forEach(([kind, keys], i) => this.keep(kind, [...keys.keys()], results[i].rows));
    for (const waiter of waiters) waiter.resolve();
  }

  private async send(calls: Call[]): Promise<StatementResult[]> {
    const all = this.begun ? calls : [{ statement: UNIT.begin }, { statement: BATCH_LOCK_TIMEOUT, values: [`${LOCK_WAIT_MS}ms`] }, ...calls];
    this.begun = true;
    const results = await roundTrip(this.client, all);
    return results.slice(results.length - calls.length);
  }

  /** Files a round trip's rows under their keys, and every key asked for that found none as null. */
  private keep(kind: ReadKind, keys: string[], rows: Array<Record<string, unknown>>): void {
    const table = this.rows.of(kind);
    const found = rowsByKey(kind, rows);
    for (const key of keys) if (!table.has(key)) table.set(key, found.get(key) ?? null);
  }

  /** A succeeded unit's writes become the batch's: its later units read them, and COMMIT writes them. */
  private merge(staged: StagedWrites): void {
    const { rows, writes } = this;
    for (const [key, token] of staged.createdTokens) {
      rows.tokens.set(key, token);
      rows.takenTokenIds.set(token.tokenId, true);
      writes.createdTokens.set(key, token);
    }
    for (const [key, token] of staged.savedTokens) {
      rows.tokens.set(key, token);
      saveIn(writes.createdTokens, writes.savedTokens, key, token);
    }
    for (const entry of staged.ledgerEntries) {
      rows.ledgerEntries.set(within(entry.sourceId, entry.transactionId), entry);
      writes.ledgerEntries.push(entry);
    }
    for (const [sourceId, added] of staged.holdings) {
      rows.holdings.set(sourceId, plus(rows.holdings.get(sourceId), added));
      writes.holdings.set(sourceId, plus(writes.holdings.get(sourceId), added));
    }
    for (const [key, booking] of staged.createdBookings) {
      rows.bookings.set(key, booking);
      writes.createdBookings.set(key, booking);
    }
    for (const [key, booking] of staged.savedBookings) {
      rows.bookings.set(key, booking);
      saveIn(writes.createdBookings, writes.savedBookings, key, booking);
    }
    for (const request of staged.keyedRequests) {
      rows.keyedRequests.set(within(request.sourceId, request.key), request);
      writes.keyedRequests.push(request);
    }
    for (const delivery of staged.deliveries) {
      rows.deliveries.set(within(delivery.sourceId, delivery.webhookId), delivery);
      writes.deliveries.push(delivery);
    }
  }

  /** Every write of the batch as one statement, and COMMIT, in one round trip; nothing when the batch neither read nor wrote. */
  private async commit(): Promise<void> {
    const writes = writeCalls(this.writes);
    if (!this.begun && writes.length === 0) return;
    await this.send([...(writes.length > 0 ? [combined(writes)] : []), { statement: UNIT.commit }]);
  }

  /** True when the database holds a transaction for this batch that must be rolled back. */
  get started(): boolean {
    return this.begun;
  }
}

/**
 * A unit's view of its batch: reads see the unit's own writes, then the batch's (its units that succeeded
 * before), then the database, fetched with the batch's next round trip.
 */
class UnitView implements StoreTransaction {
  readonly staged = new StagedWrites();
  /** The in-batch locks this unit holds. */
  readonly held: string[] = [];

  constructor(private readonly batch: BatchRun) {}

  /** The row under `key` once the unit holds its lock and the batch has read it. */
  private async read<Value>(lockKey: string, table: Map<string, Value | null>, kind: ReadKind, key: string, values: unknown[]): Promise<Value | null> {
    const waiting = this.batch.lock(this, lockKey);
    if (waiting) await waiting;
    if (!table.has(key)) await this.batch.want(kind, key, values);
    return table.get(key) as Value | null;
  }

  async tokenForUpdate(sourceId: string, tokenId: string): Promise<Token | undefined> {
    const key = within(sourceId, tokenId);
    const own = this.staged.savedTokens.get(key) ?? this.staged.createdTokens.get(key);
    if (own) return copyOf(own);
    // Locked within the caller's account, as the database locks only the account's own row (contract section 11).
    return copyOf(await this.read(`token ${key}`, this.batch.rows.tokens, 'tokens', key, [tokenId, sourceId])) ?? undefined;
  }

  async isTokenIdTaken(tokenId: string): Promise<boolean> {
    if ([...this.staged.createdTokens.values()].some((token) => token.tokenId === tokenId)) return true;
    const waiting = this.batch.lock(this, `token id ${tokenId}`);
    if (waiting) await waiting;
    const { takenTokenIds } = this.batch.rows;
    if (!takenTokenIds.has(tokenId)) await this.batch.want('takenTokenIds', tokenId, [tokenId]);
    return takenTokenIds.get(tokenId) === true;
  }

  async lockTokenAndFindLedgerEntry(tokenId: string, sourceId: string, transactionId: string): Promise<[Token | undefined, LedgerEntry | undefined]> {
    const ledgerKey = within(sourceId, transactionId);
    // Both in one round trip: the token's lock and the ledger key's, then both reads asked for together.
    const [token, entry] = await Promise.all([
      this.tokenForUpdate(sourceId, tokenId),
      this.read(`ledger ${ledgerKey}`, this.batch.rows.ledgerEntries, 'ledgerEntries', ledgerKey, [sourceId, transactionId]),
    ]);
    const own = this.staged.ledgerEntries.find((e) => e.sourceId === sourceId && e.transactionId === transactionId);
    return [token, copyOf(own ?? entry ?? undefined)];
  }

  async holdingsForUpdate(sourceId: string): Promise<Holdings> {
    const held = await this.read(`holdings ${sourceId}`, this.batch.rows.holdings, 'holdings', sourceId, [sourceId]);
    return plus(held, this.staged.holdings.get(sourceId));
  }

  private count(sourceId: string, what: keyof Holdings): void {
    this.staged.holdings.set(sourceId, plus(this.staged.holdings.get(sourceId), { tokens: 0, bookings: 0, keys: 0, [what]: 1 }));
  }

  async createToken(token: Token): Promise<void> {
    this.staged.createdTokens.set(within(token.sourceId, token.tokenId), copyOf(token));
    this.count(token.sourceId, 'tokens');
  }

  async saveToken(token: Token): Promise<void> {
    const key = within(token.sourceId, token.tokenId);
    saveIn(this.staged.createdTokens, this.staged.savedTokens, key, copyOf(token));
  }

  async recordLedgerEntry(entry: LedgerEntry): Promise<void> {
    this.staged.ledgerEntries.push(copyOf(entry));
  }

  async bookingForUpdate(sourceId: string, bookingId: string): Promise<Booking | undefined> {
    const key = within(sourceId, bookingId);
    const own = this.staged.savedBookings.get(key) ?? this.staged.createdBookings.get(key);
    if (own) return copyBooking(own);
    const booking = await this.read(`booking ${key}`, this.batch.rows.bookings, 'bookings', key, [sourceId, bookingId]);
    return booking ? copyBooking(booking) : undefined;
  }

  async createBooking(booking: Booking): Promise<void> {
    this.staged.createdBookings.set(within(booking.sourceId, booking.bookingId), copyBooking(booking));
    this.count(booking.sourceId, 'bookings');
  }

  async saveBooking(booking: Booking): Promise<void> {
    const key = within(booking.sourceId, booking.bookingId);
    saveIn(this.staged.createdBookings, this.staged.savedBookings, key, copyBooking(booking));
  }

  async findKeyedRequest(sourceId: string, key: string): Promise<KeyedRequest | undefined> {
    const rowKey = within(sourceId, key);
    const own = this.staged.keyedRequests.find((r) => r.sourceId === sourceId && r.key === key);
    if (own) return own;
    return (await this.read(`keyed ${rowKey}`, this.batch.rows.keyedRequests, 'keyedRequests', rowKey, [sourceId, key])) ?? undefined;
  }

  async recordKeyedRequest(request: KeyedRequest): Promise<void> {
    this.count(request.sourceId, 'keys');
    this.staged.keyedRequests.push(request);
  }

  async findDelivery(sourceId: string, webhookId: string): Promise<Delivery | undefined> {
    const rowKey = within(sourceId, webhookId);
    const own = this.staged.deliveries.find((d) => d.sourceId === sourceId && d.webhookId === webhookId);
    if (own) return own;
    return (await this.read(`delivery ${rowKey}`, this.batch.rows.deliveries, 'deliveries', rowKey, [sourceId, webhookId])) ?? undefined;
  }

  async recordDelivery(delivery: Delivery): Promise<void> {
    this.count(delivery.sourceId, 'keys');
    this.staged.deliveries.push(delivery);
  }
}

function copyBooking(booking: Booking): Booking {
  return { ...booking, fields: { ...booking.fields } };
}
