import { ServiceUnavailableError } from '../errors';
import type { Account, Booking, BookingChange, SeedData, Store, StoreTransaction, Token, WebhookDelivery, Withdrawal } from './store';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Entries are inserted in time order, so the expired ones are at the front of the map. */
function forgetOlderThan<Value>(entries: Map<string, Value>, cutoffMs: number, stampOf: (value: Value) => Date): void {
  for (const [key, value] of entries) {
    if (stampOf(value).getTime() >= cutoffMs) break;
    entries.delete(key);
  }
}

/**
 * A copy that callers may change freely. Records are flat but for a booking's
 * fields and a change's result; Dates are never mutated, so they are shared.
 * Far cheaper than structuredClone on every read and write.
 */
function copy<Value>(value: Value): Value {
  const record: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  if (record.fields) record.fields = { ...(record.fields as Record<string, unknown>) };
  if (record.result) record.result = copy(record.result);
  return record as Value;
}

function bookingKey(sourceId: string, bookingId: string): string {
  return `${sourceId}\u0000${bookingId}`;
}

/** How many ledger rows per token the memory store keeps at hand for inspection. */
const RECENT_WITHDRAWALS_KEPT = 20;

interface MemoryState {
  tokens: Map<string, Token>;
  withdrawals: Map<string, Withdrawal>;
  bookings: Map<string, Booking>;
  bookingChanges: Map<string, BookingChange>;
}

/** Reads through staged writes; nothing reaches the shared state until commit. */
class MemoryTransaction implements StoreTransaction {
  private readonly staged: MemoryState = {
    tokens: new Map(),
    withdrawals: new Map(),
    bookings: new Map(),
    bookingChanges: new Map(),
  };

  constructor(
    private readonly state: MemoryState,
    private readonly recentByToken: Map<string, string[]>,
    private readonly bookingKeyRetentionMs: number,
  ) {}

  private read<Value>(table: keyof MemoryState, key: string): Value | undefined {
    const value = (this.staged[table].get(key) ?? this.state[table].get(key)) as Value | undefined;
    return value === undefined ? undefined : copy(value);
  }

  private stage<Value>(table: keyof MemoryState, key: string, value: Value): void {
    (this.staged[table] as Map<string, Value>).set(key, copy(value));
  }

  async tokenForUpdate(tokenId: string) {
    return this.read<Token>('tokens', tokenId);
  }

  async findWithdrawal(transactionId: string) {
    return this.read<Withdrawal>('withdrawals', transactionId);
  }

  async saveToken(token: Token) {
    this.stage('tokens', token.tokenId, token);
  }

  async recordWithdrawal(withdrawal: Withdrawal) {
    if (this.read('withdrawals', withdrawal.transactionId)) {
      throw new Error(`transaction_id ${withdrawal.transactionId} is already in the ledger`);
    }
    this.stage('withdrawals', withdrawal.transactionId, withdrawal);
  }

  async bookingForUpdate(sourceId: string, bookingId: string) {
    return this.read<Booking>('bookings', bookingKey(sourceId, bookingId));
  }

  async findBookingChange(sourceId: string, key: string) {
    return this.read<BookingChange>('bookingChanges', bookingKey(sourceId, key));
  }

  async saveBooking(booking: Booking) {
    this.stage('bookings', bookingKey(booking.sourceId, booking.bookingId), booking);
  }

  async recordBookingChange(change: BookingChange) {
    this.stage('bookingChanges', bookingKey(change.sourceId, change.key), change);
  }

  /** Applies every staged write in one synchronous step, so no other unit sees half of them. */
  commit(): void {
    for (const table of Object.keys(this.staged) as Array<keyof MemoryState>) {
      for (const [key, value] of this.staged[table]) (this.state[table] as Map<string, unknown>).set(key, value);
    }
    for (const change of this.staged.bookingChanges.values()) this.forgetBookingKeysOlderThan(change.createdAt);
    for (const withdrawal of this.staged.withdrawals.values()) {
      const recent = this.recentByToken.get(withdrawal.tokenId) ?? [];
      recent.push(withdrawal.transactionId);
      if (recent.length > RECENT_WITHDRAWALS_KEPT) recent.shift();
      this.recentByToken.set(withdrawal.tokenId, recent);
    }
  }

  /** Age is measured on the clock that stamped the keys (the service's), not the store's. */
  private forgetBookingKeysOlderThan(newest: Date): void {
    forgetOlderThan(this.state.bookingChanges, newest.getTime() - this.bookingKeyRetentionMs, (change) => change.createdAt);
  }
}

export interface MemoryStoreOptions {
  /** How long booking idempotency keys and webhook ids are kept; the contract asks for at least 24 hours. */
  retentionMs?: number;
}

/**
 * Keeps everything in process memory. Units of work run one at a time, which
 * makes each operation atomic and makes concurrent duplicates apply once.
 */
export class MemoryStore implements Store {
  private readonly state: MemoryState = {
    tokens: new Map(),
    withdrawals: new Map(),
    bookings: new Map(),
    bookingChanges: new Map(),
  };
  private readonly accounts = new Map<string, Account>();
  private readonly webhookDeliveries = new Map<string, WebhookDelivery>();
  /** Transaction ids of each token's latest withdrawals, oldest first. */
  private readonly recentByToken = new Map<string, string[]>();
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  private readonly retentionMs: number;

  constructor(options: MemoryStoreOptions = {}) {
    this.retentionMs = options.retentionMs ?? DAY_MS;
  }

  private assertOpen(): void {
    if (this.closed) throw new ServiceUnavailableError();
  }

  async findAccount(sourceId: string) {
    this.assertOpen();
    return this.accounts.get(sourceId);
  }

  async findToken(tokenId: string) {
    this.assertOpen();
    const token = this.state.tokens.get(tokenId);
    return token && copy(token);
  }

  async recentWithdrawals(tokenId: string, limit: number) {
    this.assertOpen();
    const ids = (this.recentByToken.get(tokenId) ?? []).slice(-limit).reverse();
    return ids.map((id) => copy(this.state.withdrawals.get(id) as Withdrawal));
  }

  async findBooking(sourceId: string, bookingId: string) {
    this.assertOpen();
    const booking = this.state.bookings.get(bookingKey(sourceId, bookingId));
    return booking && copy(booking);
  }

  async findWebhookDelivery(webhookId: string) {
    this.assertOpen();
    const delivery = this.webhookDeliveries.get(webhookId);
    return delivery && copy(delivery);
  }

  async recordWebhookDelivery(delivery: WebhookDelivery) {
    this.assertOpen();
    if (!this.webhookDeliveries.has(delivery.webhookId)) this.webhookDeliveries.set(delivery.webhookId, { ...delivery });
    forgetOlderThan(this.webhookDeliveries, delivery.receivedAt.getTime() - this.retentionMs, (d) => d.receivedAt);
  }

  transaction<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    const run = this.queue.then(async () => {
      this.assertOpen();
      const tx = new MemoryTransaction(this.state, this.recentByToken, this.retentionMs);
      const result = await work(tx);
      tx.commit();
      return result;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  async loadSeed(seed: SeedData) {
    this.assertOpen();
    for (const account of seed.accounts) {
      if (!this.accounts.has(account.sourceId)) this.accounts.set(account.sourceId, account);
    }
    // The store takes the seed's records as they are (they are built for it by toSeedData): copying a
    // million tokens would double the memory at start.
    for (const token of seed.tokens) {
      if (!this.state.tokens.has(token.tokenId)) this.state.tokens.set(token.tokenId, token);
    }
    for (const booking of seed.bookings) {
      const key = bookingKey(booking.sourceId, booking.bookingId);
      if (!this.state.bookings.has(key)) this.state.bookings.set(key, booking);
    }
  }

  async ping() {
    this.assertOpen();
  }

  async close() {
    this.closed = true;
  }
}
