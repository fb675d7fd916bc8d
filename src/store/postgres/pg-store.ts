import { Pool, type PoolClient, type QueryResult } from 'pg';
import type { Logger } from '../../logger';
import { BOOKING_FIELDS, type BookingFields } from '../../schemas/booking';
import type { TokenStatus } from '../../schemas/fields';
import type { Account, Booking, BookingChange, SeedData, Store, StoreTransaction, Token, WebhookDelivery, Withdrawal } from '../store';
import { isRetryable, toStoreError } from './errors';
import { literal } from './literal';
import { migrate } from './migrate';

const DAY_MS = 24 * 60 * 60 * 1000;
/** A unit that lost a race on a unique key runs again and then sees the winner's row. */
const MAX_ATTEMPTS = 3;
const SEED_BATCH = 10_000;
const ACCOUNT_CACHE_MS = 60_000;

export interface PgStoreOptions {
  connectionString: string;
  /** Longest a statement may run (lock waits included); past it the request answers 504. */
  statementTimeoutMs: number;
  poolSize: number;
  /** How long to wait for a connection before answering 503. */
  connectTimeoutMs?: number;
  /** A schema of its own (created if missing); tests use one per worker. Default: the database's search_path. */
  schema?: string;
  retentionMs?: number;
  logger?: Logger;
}

interface TokenRow {
  token_id: string;
  source_id: string;
  destination_id: string;
  status: TokenStatus;
  balance: string;
}

interface WithdrawalRow {
  transaction_id: string;
  source_id: string;
  destination_id: string;
  token_id: string;
  amount: string;
  token_balance: string;
  created_at: Date;
}

interface BookingRow {
  source_id: string;
  booking_id: string;
  fields: Record<string, string>;
  updated_at: Date;
}

/** What a booking change keeps of its result, as JSON. */
interface StoredBooking {
  sourceId: string;
  bookingId: string;
  fields: Record<string, string>;
  updatedAt: string;
}

function toToken(row: TokenRow): Token {
  return { tokenId: row.token_id, sourceId: row.source_id, destinationId: row.destination_id, status: row.status, balance: Number(row.balance) };
}

function toWithdrawal(row: WithdrawalRow): Withdrawal {
  return {
    transactionId: row.transaction_id,
    sourceId: row.source_id,
    destinationId: row.destination_id,
    tokenId: row.token_id,
    amount: Number(row.amount),
    tokenBalance: Number(row.token_balance),
    createdAt: row.created_at,
  };
}

/** JSON objects come back in any key order; the booking's fields are put back in the specification's. */
function bookingFields(stored: Record<string, string>): BookingFields {
  return Object.fromEntries(BOOKING_FIELDS.map((field) => [field, stored[field]])) as BookingFields;
}

function toBooking(row: BookingRow): Booking {
  return { sourceId: row.source_id, bookingId: row.booking_id, fields: bookingFields(row.fields), updatedAt: row.updated_at };
}

/**
 * The statements of units of work, prepared once per connection (PREPARE)
 * and run with EXECUTE: the database then plans each only once, and EXECUTEs
 * can still travel several to a round trip, which the driver's own prepared
 * statements cannot.
 */
const UNIT_STATEMENTS = {
  lock_token: ['text', 'SELECT token_id, source_id, destination_id, status, balance FROM tokens WHERE token_id = $1 FOR UPDATE'],
  find_withdrawal: [
    'text',
    'SELECT transaction_id, source_id, destination_id, token_id, amount, token_balance, created_at FROM withdrawals WHERE transaction_id = $1',
  ],
  save_token: ['text, text, bigint', 'UPDATE tokens SET status = $2, balance = $3 WHERE token_id = $1'],
  record_withdrawal: [
    'text, text, text, text, bigint, bigint, timestamptz',
    `INSERT INTO withdrawals (transaction_id, source_id, destination_id, token_id, amount, token_balance, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
  ],
  lock_booking: ['text, text', 'SELECT source_id, booking_id, fields, updated_at FROM bookings WHERE source_id = $1 AND booking_id = $2 FOR UPDATE'],
  find_booking_change: ['text, text', 'SELECT fingerprint, result, created_at FROM booking_changes WHERE source_id = $1 AND key = $2'],
  save_booking: ['text, text, jsonb, timestamptz', 'UPDATE bookings SET fields = $3, updated_at = $4 WHERE source_id = $1 AND booking_id = $2'],
  record_booking_change: [
    'text, text, text, jsonb, timestamptz',
    'INSERT INTO booking_changes (source_id, key, fingerprint, result, created_at) VALUES ($1, $2, $3, $4, $5)',
  ],
  forget_booking_changes: ['timestamptz', 'DELETE FROM booking_changes WHERE created_at < $1'],
} as const;

type UnitStatement = keyof typeof UNIT_STATEMENTS;

const PREPARE_UNIT_STATEMENTS = Object.entries(UNIT_STATEMENTS)
  .map(([name, [types, text]]) => `PREPARE ${name} (${types}) AS ${text}`)
  .join(';\n');

function execute(name: UnitStatement, values: readonly unknown[]): string {
  return `EXECUTE ${name} (${values.map(literal).join(', ')})`;
}

/**
 * One unit of work on one connection, in as few round trips as its reads
 * allow: round trips, each a write to the socket and a wake-up of the
 * database, were most of the receiver's CPU per withdrawal
 * (docs/BENCHMARKS.md). BEGIN goes with the unit's first read; writes wait
 * and go with the next read or with COMMIT. Statements sent together run one
 * after the other in the same transaction, each seeing what the ones before
 * it did, so a withdrawal is two round trips: BEGIN, lock the token, look up
 * the transaction id; then update the token, record the row, COMMIT.
 * Values travel as literals (see literal()); the statements are prepared.
 */
class PgTransaction implements StoreTransaction {
  private begun = false;
  private readonly pending: string[] = [];

  constructor(
    private readonly client: PoolClient,
    private readonly retentionMs: number,
  ) {}

  /** Sends BEGIN (once), the waiting writes and these statements as one query; returns these statements' results. */
  private async send(statements: string[]): Promise<QueryResult[]> {
    const all = [...(this.begun ? [] : ['BEGIN']), ...this.pending.splice(0), ...statements];
    this.begun = true;
    const result = (await this.client.query(all.join(';\n'))) as QueryResult | QueryResult[];
    const results = Array.isArray(result) ? result : [result];
    return results.slice(results.length - statements.length);
  }

  private async readOne<Row>(name: UnitStatement, values: readonly unknown[]): Promise<Row | undefined> {
    const [result] = await this.send([execute(name, values)]);
    return result.rows[0] as Row | undefined;
  }

  private write(name: UnitStatement, values: readonly unknown[]): void {
    this.pending.push(execute(name, values));
  }

  /** COMMIT with whatever writes are still waiting; nothing at all when the unit neither read nor wrote. */
  async commit(): Promise<void> {
    if (this.begun || this.pending.length > 0) await this.send(['COMMIT']);
  }

  /** True when the database holds a transaction for this unit that must be rolled back. */
  get started(): boolean {
    return this.begun;
  }

  async tokenForUpdate(tokenId: string) {
    const row = await this.readOne<TokenRow>('lock_token', [tokenId]);
    return row && toToken(row);
  }

  async findWithdrawal(transactionId: string) {
    const row = await this.readOne<WithdrawalRow>('find_withdrawal', [transactionId]);
    return row && toWithdrawal(row);
  }

  async lockTokenAndFindWithdrawal(tokenId: string, transactionId: string): Promise<[Token | undefined, Withdrawal | undefined]> {
    const [token, withdrawal] = await this.send([execute('lock_token', [tokenId]), execute('find_withdrawal', [transactionId])]);
    const tokenRow = token.rows[0] as TokenRow | undefined;
    const withdrawalRow = withdrawal.rows[0] as WithdrawalRow | undefined;
    return [tokenRow && toToken(tokenRow), withdrawalRow && toWithdrawal(withdrawalRow)];
  }

  async saveToken(token: Token) {
    this.write('save_token', [token.tokenId, token.status, token.balance]);
  }

  async recordWithdrawal(w: Withdrawal) {
    this.write('record_withdrawal', [w.transactionId, w.sourceId, w.destinationId, w.tokenId, w.amount, w.tokenBalance, w.createdAt]);
  }

  async bookingForUpdate(sourceId: string, bookingId: string) {
    const row = await this.readOne<BookingRow>('lock_booking', [sourceId, bookingId]);
    return row && toBooking(row);
  }

  async findBookingChange(sourceId: string, key: string) {
    const row = await this.readOne<{ fingerprint: string; result: StoredBooking; created_at: Date }>('find_booking_change', [sourceId, key]);
    if (!row) return undefined;
    const result: Booking = {
      sourceId: row.result.sourceId,
      bookingId: row.result.bookingId,
      fields: bookingFields(row.result.fields),
      updatedAt: new Date(row.result.updatedAt),
    };
    return { sourceId, key, fingerprint: row.fingerprint, result, createdAt: row.created_at };
  }

  async saveBooking(booking: Booking) {
    this.write('save_booking', [booking.sourceId, booking.bookingId, { ...booking.fields }, booking.updatedAt]);
  }

  /** Also forgets keys past their retention, measured on the clock that stamped them (the service's). */
  async recordBookingChange(change: BookingChange) {
    const result: StoredBooking = {
      sourceId: change.result.sourceId,
      bookingId: change.result.bookingId,
      fields: change.result.fields,
      updatedAt: change.result.updatedAt.toISOString(),
    };
    this.write('record_booking_change', [change.sourceId, change.key, change.fingerprint, result, change.createdAt]);
    this.write('forget_booking_changes', [new Date(change.createdAt.getTime() - this.retentionMs)]);
  }
}

/**
 * PostgreSQL: durable, and shared by every instance pointed at the database.
 * Each unit of work is one transaction; rows read "for update" are locked, so
 * concurrent units on one token or booking run one after the other, on one
 * instance or several. A 200 is only sent after COMMIT returned.
 */
export class PgStore implements Store {
  private readonly pool: Pool;
  private readonly retentionMs: number;
  private readonly accounts = new Map<string, { account: Account; until: number }>();
  /** Connections on which UNIT_STATEMENTS have been prepared. */
  private readonly prepared = new WeakSet<PoolClient>();

  private constructor(options: PgStoreOptions) {
    this.retentionMs = options.retentionMs ?? DAY_MS;
    this.pool = new Pool({
      connectionString: options.connectionString,
      max: options.poolSize,
      statement_timeout: options.statementTimeoutMs,
      // The driver's own limit, for a database that stops answering without closing the socket.
      query_timeout: options.statementTimeoutMs + 2_000,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 2_000,
      options: options.schema ? `-c search_path=${options.schema}` : undefined,
    });
    // An idle connection that breaks (the database restarted) must not crash the process; the next query reconnects.
    this.pool.on('error', (error) => options.logger?.warn({ err: error }, 'idle database connection failed'));
  }

  /** Connects, creates the schema when one is named, and applies pending migrations. */
  static async open(options: PgStoreOptions): Promise<PgStore> {
    const store = new PgStore(options);
    try {
      const applied = await migrate(store.pool, { schema: options.schema });
      if (applied.length > 0) options.logger?.info({ applied }, 'database migrated');
    } catch (error) {
      await store.pool.end();
      throw error;
    }
    return store;
  }

  /**
   * Accounts change only when a seed is loaded, so found accounts are kept for a minute: it saves a round
   * trip on every operation. Unknown ids always ask the database; the minute bounds how long a destination
   * that another instance's seed added can go unseen here.
   */
  async findAccount(sourceId: string): Promise<Account | undefined> {
    const cached = this.accounts.get(sourceId);
    if (cached && cached.until > Date.now()) return cached.account;
    const account = await this.readAccount(sourceId);
    if (account) this.accounts.set(sourceId, { account, until: Date.now() + ACCOUNT_CACHE_MS });
    return account;
  }

  private async readAccount(sourceId: string): Promise<Account | undefined> {
    const { rows } = await this.query<{ source_id: string; public_key_hash: Buffer; secret_key_hash: Buffer; destinations: string[] }>(
      `SELECT a.source_id, a.public_key_hash, a.secret_key_hash,
              coalesce(array_agg(d.destination_id) FILTER (WHERE d.destination_id IS NOT NULL), '{}') AS destinations
         FROM accounts a LEFT JOIN destinations d USING (source_id)
        WHERE a.source_id = $1
        GROUP BY a.source_id`,
      [sourceId],
    );
    const row = rows[0];
    if (!row) return undefined;
    return { sourceId: row.source_id, publicKeyHash: row.public_key_hash, secretKeyHash: row.secret_key_hash, destinations: new Set(row.destinations) };
  }

  async findToken(tokenId: string) {
    const { rows } = await this.query<TokenRow>('SELECT token_id, source_id, destination_id, status, balance FROM tokens WHERE token_id = $1', [tokenId]);
    return rows[0] && toToken(rows[0]);
  }

  async recentWithdrawals(tokenId: string, limit: number) {
    const { rows } = await this.query<WithdrawalRow>(
      'SELECT * FROM withdrawals WHERE token_id = $1 ORDER BY ledger_seq DESC LIMIT $2',
      [tokenId, limit],
    );
    return rows.map(toWithdrawal);
  }

  async findBooking(sourceId: string, bookingId: string) {
    const { rows } = await this.query<BookingRow>('SELECT * FROM bookings WHERE source_id = $1 AND booking_id = $2', [sourceId, bookingId]);
    return rows[0] && toBooking(rows[0]);
  }

  async findWebhookDelivery(webhookId: string) {
    const { rows } = await this.query<{ response: string; received_at: Date }>(
      'SELECT response, received_at FROM webhook_deliveries WHERE webhook_id = $1',
      [webhookId],
    );
    return rows[0] && { webhookId, response: rows[0].response, receivedAt: rows[0].received_at };
  }

  async recordWebhookDelivery(delivery: WebhookDelivery) {
    await this.query(
      `WITH expired AS (DELETE FROM webhook_deliveries WHERE received_at < $4)
       INSERT INTO webhook_deliveries (webhook_id, response, received_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [delivery.webhookId, delivery.response, delivery.receivedAt, new Date(delivery.receivedAt.getTime() - this.retentionMs)],
    );
  }

  async transaction<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.unitOfWork(work);
      } catch (error) {
        if (!(isRetryable(error) && attempt < MAX_ATTEMPTS)) throw toStoreError(error);
      }
    }
  }

  /**
   * Runs work on a pooled connection. When the work throws, `recover` must make the connection fit for
   * reuse (ROLLBACK, say); if it cannot, the connection is discarded rather than returned to the pool.
   */
  private async onConnection<T>(work: (client: PoolClient) => Promise<T>, recover: (client: PoolClient) => Promise<unknown>): Promise<T> {
    const client = await this.pool.connect();
    let broken = false;
    try {
      return await work(client);
    } catch (error) {
      await recover(client).catch(() => {
        broken = true;
      });
      throw error;
    } finally {
      client.release(broken);
    }
  }

  /**
   * The work as one unit on one connection, then COMMIT; ROLLBACK when it throws. A connection whose
   * statements could not be prepared is discarded: some of them may exist, and preparing again would fail.
   */
  private async unitOfWork<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    let tx: PgTransaction | undefined;
    return this.onConnection(
      async (client) => {
        if (!this.prepared.has(client)) {
          await client.query(PREPARE_UNIT_STATEMENTS);
          this.prepared.add(client);
        }
        tx = new PgTransaction(client, this.retentionMs);
        const result = await work(tx);
        await tx.commit();
        return result;
      },
      async (client) => {
        if (!tx) throw new Error('statements not prepared');
        if (tx.started) await client.query('ROLLBACK');
      },
    );
  }

  /** BEGIN, the work, COMMIT; ROLLBACK when the work throws. */
  private inTransaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    return this.onConnection(
      async (client) => {
        await client.query('BEGIN');
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      },
      (client) => client.query('ROLLBACK'),
    );
  }

  /** Inserts what is missing, in batches, in one transaction; existing rows are left as operations made them. */
  async loadSeed(seed: SeedData): Promise<void> {
    await this.inTransaction(async (client) => {
      for (const accounts of batches(seed.accounts)) {
        await client.query(
          `INSERT INTO accounts (source_id, public_key_hash, secret_key_hash)
           SELECT * FROM unnest($1::text[], $2::bytea[], $3::bytea[]) ON CONFLICT DO NOTHING`,
          [accounts.map((a) => a.sourceId), accounts.map((a) => a.publicKeyHash), accounts.map((a) => a.secretKeyHash)],
        );
      }
      const destinations = seed.accounts.flatMap((a) => [...a.destinations].map((destinationId) => [a.sourceId, destinationId]));
      for (const batch of batches(destinations)) {
        await client.query(
          'INSERT INTO destinations (source_id, destination_id) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT DO NOTHING',
          [batch.map((d) => d[0]), batch.map((d) => d[1])],
        );
      }
      for (const tokens of batches(seed.tokens)) {
        await client.query(
          `INSERT INTO tokens (token_id, source_id, destination_id, status, balance)
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[]) ON CONFLICT DO NOTHING`,
          [tokens.map((t) => t.tokenId), tokens.map((t) => t.sourceId), tokens.map((t) => t.destinationId), tokens.map((t) => t.status), tokens.map((t) => t.balance)],
        );
      }
      for (const bookings of batches(seed.bookings)) {
        await client.query(
          `INSERT INTO bookings (source_id, booking_id, fields, updated_at)
           SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::timestamptz[]) ON CONFLICT DO NOTHING`,
          [bookings.map((b) => b.sourceId), bookings.map((b) => b.bookingId), bookings.map((b) => JSON.stringify(b.fields)), bookings.map((b) => b.updatedAt)],
        );
      }
    }).catch((error: unknown) => {
      throw toStoreError(error);
    });
  }

  async ping(): Promise<void> {
    await this.query('SELECT 1');
  }

  async close(): Promise<void> {
    if (!this.pool.ended) await this.pool.end();
  }

  private async query<Row extends object>(text: string, values?: unknown[]) {
    try {
      return await this.pool.query<Row>(text, values);
    } catch (error) {
      throw toStoreError(error);
    }
  }
}

function batches<Item>(items: readonly Item[]): Item[][] {
  const result: Item[][] = [];
  for (let start = 0; start < items.length; start += SEED_BATCH) result.push(items.slice(start, start + SEED_BATCH));
  return result;
}
