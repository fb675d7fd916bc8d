import { Pool, type ClientConfig, type PoolClient } from 'pg';
import type { Logger } from '../../process/logger';
import type { Account, ChangeListener, ChangeQuery, ChangesRead, SeedData, Store, StoreTransaction } from '../store';
import { inTransaction, withClient, withoutSessionState } from './connection';
import { ServiceUnavailableError } from '../../errors';
import { isOutOfResources, toStoreError } from './errors';
import { AccountCache } from './accounts';
import { PgChangeWatch } from './change-watch';
import { NotificationSession } from './notifications';
import { migrate, refuseSchemaBehind } from './migrate';
import { writeSeed } from './seed';
import { RetentionSweeper } from './sweeper';
import { GroupCommit, type BatchSizes, type StoreTracing } from './group-commit';
import { selectList } from './table-statements';
import { BOOKINGS, CHANGES_AFTER, changeFromRow, LEDGER, TOKENS, type Row } from './tables';

const DAY_MS = 24 * 60 * 60 * 1000;
/** How long close() lets connections say goodbye before cutting them: a frozen database never answers. */
const CLOSE_GRACE_MS = 500;

export interface PgStoreOptions {
  connectionString: string;
  /** Longest a statement may run (lock waits included); past it the request answers 504. */
  statementTimeoutMs: number;
  poolSize: number;
  /** How long to wait for a connection before answering 503. */
  connectTimeoutMs?: number;
  /** A schema of its own (created if missing); tests use one per worker. Default: the database's search_path. */
  schema?: string;
  /** How long booking keys and webhook deliveries are kept at least. Default: 24 hours. */
  retentionMs?: number;
  /** How long changes are kept before the sweep deletes them (CHANGE_RETENTION_DAYS). Default: 30 days. */
  changeRetentionMs?: number;
  /** How often an instance tries to sweep what is past retention. Default: a minute; 0: never (tests sweep by hand). */
  sweepIntervalMs?: number;
  logger?: Logger;
  /** Units of work that arrive together share one transaction (group-commit.ts). Default: true; false runs each alone, for comparison. */
  groupCommit?: boolean;
  /** Told the number of units of each batch of group commit as it forms (the metrics' histogram). */
  observeBatch?: (units: number) => void;
  /** Spans for group commit's batches, when the service exports traces (tracing.ts). */
  tracing?: StoreTracing;
  /**
   * 'transaction': connectionString is a transaction-mode pooler (PgBouncer), so nothing relies on a session:
   * statements unnamed, settings per transaction, no LISTEN through it (contract section 12). Default: 'none'.
   */
  pooler?: 'none' | 'transaction';
  /** A connection past the pooler, for LISTEN; behind a pooler without it, accounts are re-read every 10 s and waiting feeds poll. */
  directConnectionString?: string;
  /** Apply pending migrations (default); false: refuse a schema that lacks one (MIGRATE_ON_START). */
  migrate?: boolean;
}

/** What an operator watches of the store's connections (contract section 12): read when /metrics renders. */
export interface StoreConnections {
  /** Pool connections running a statement, idle, and callers waiting for one. */
  inUse: number;
  idle: number;
  waiting: number;
  /** The session that LISTENs for account changes and committed changes is up. */
  listening: boolean;
}

/** The account's last seq and its oldest kept one, with the page beside them (no row of it: one row of nulls). */
const CHANGE_BOUNDS = `SELECT (SELECT last_seq FROM change_counters WHERE source_id = $1) AS last_seq,
                              (SELECT min(seq) FROM changes WHERE source_id = $1) AS oldest_seq`;
const READ_CHANGES = `SELECT b.last_seq, b.oldest_seq, c.seq, c.change_id, c.type, c.created_at, c.body
  FROM (${CHANGE_BOUNDS}) b
  LEFT JOIN LATERAL (SELECT seq, change_id, type, created_at, body FROM changes
                      WHERE source_id = $1 AND seq > $2 ORDER BY seq LIMIT $3) c ON true
 ORDER BY c.seq`;
export const READ_CHANGES_OF_TYPES = `SELECT b.last_seq, b.oldest_seq, c.seq, c.change_id, c.type, c.created_at, c.body
  FROM (${CHANGE_BOUNDS}) b
  LEFT JOIN LATERAL (SELECT p.* FROM unnest($4::text[]) AS t(type)
                       CROSS JOIN LATERAL (SELECT seq, change_id, type, created_at, body FROM changes
                                            WHERE source_id = $1 AND type = t.type AND seq > $2 ORDER BY seq LIMIT $3) p
                      ORDER BY p.seq LIMIT $3) c ON true
 ORDER BY c.seq`;

/**
 * PostgreSQL: durable, and shared by every instance pointed at the database.
 * Each unit of work is one transaction; rows read "for update" are locked, so
 * concurrent units on one token or booking run one after the other, on one
 * instance or several. A 200 is only sent after COMMIT returned. Losing the
 * database never ends the process: a broken connection fails its unit (503,
 * or 504 past the time limit) and is discarded, and the pool connects anew.
 */
export class PgStore implements Store {
  private readonly pool: Pool;
  private readonly logger: Logger | undefined;
  /** The instance's one LISTEN session: account changes and committed changes. */
  private readonly notifications: NotificationSession;
  /** Every enabled account, read again when the session hears they changed. */
  private readonly accounts: AccountCache;
  /** The feed's waiting requests, told of committed changes. */
  private readonly changeWatch: PgChangeWatch;
  /** Every open connection, idle or checked out, so that close() can cut those the database no longer answers on. */
  private readonly clients = new Set<PoolClient>();
  private readonly sweeper: RetentionSweeper;
  private readonly groupCommit: GroupCommit;
  private closing: Promise<void> | undefined;
  /** Set when the database refused a statement for want of resources (SQLSTATE class 53), until ping sees a write succeed. */
  private outOfResources = false;

  private constructor(options: PgStoreOptions) {
    this.logger = options.logger;
    const connection: ClientConfig = {
      connectionString: options.connectionString,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 2_000,
      options: options.schema ? `-c search_path=${options.schema}` : undefined,
    };
    const pooled = options.pooler === 'transaction';
    // LISTEN needs a session: its own connection, past the pooler when one is named; none through a pooler.
    const listenOn = options.directConnectionString
      ? { ...connection, connectionString: options.directConnectionString }
      : pooled
        ? undefined
        : connection;
    this.notifications = new NotificationSession(listenOn, this.logger);
    this.accounts = new AccountCache(this.query.bind(this), this.notifications, this.logger);
    this.changeWatch = new PgChangeWatch(this.query.bind(this), this.notifications, this.logger);
    this.pool = new Pool({
      ...connection,
      max: options.poolSize,
      // A start-up parameter a pooler refuses: behind one, each transaction sets it (withoutSessionState).
      statement_timeout: pooled ? undefined : options.statementTimeoutMs,
      // The driver's own limit, for a database that stops answering without closing the socket; the
      // connection is then discarded (see withClient).
      query_timeout: options.statementTimeoutMs + 2_000,
    });
    // An idle connection that breaks (the database restarted) must not crash the process; the next unit connects anew.
    this.pool.on('error', (error) => this.logger?.warn({ err: error }, 'idle database connection failed'));
    if (pooled) withoutSessionState(this.pool, options.statementTimeoutMs);
    this.pool.on('connect', (client) => this.clients.add(client));
    this.pool.on('remove', (client) => this.clients.delete(client));
    this.groupCommit = new GroupCommit(this.pool, (error) => this.storeError(error), {
      grouped: options.groupCommit,
      observeBatch: options.observeBatch,
      tracing: options.tracing,
      logger: options.logger,
    });
    this.sweeper = new RetentionSweeper(
      this.pool,
      { keysMs: options.retentionMs ?? DAY_MS, changesMs: options.changeRetentionMs ?? 30 * DAY_MS },
      options.sweepIntervalMs ?? 60_000,
      this.logger,
    );
  }

  /** Connects, creates the schema when one is named, and applies pending migrations, or refuses a schema lacking one. */
  static async open(options: PgStoreOptions): Promise<PgStore> {
    const store = new PgStore(options);
    try {
      if (options.migrate === false) {
        await refuseSchemaBehind(store.pool);
      } else {
        const applied = await migrate(store.pool, { schema: options.schema });
        if (applied.length > 0) options.logger?.info({ applied }, 'database migrated');
      }
    } catch (error) {
      await store.close();
      throw error;
    }
    store.notifications.start();
    return store;
  }

  findAccount(sourceId: string): Promise<Account | undefined> {
    return this.accounts.find(sourceId);
  }

  async findToken(tokenId: string) {
    const { rows } = await this.query<Row>(`SELECT ${selectList(TOKENS)} FROM tokens WHERE token_id = $1`, [tokenId]);
    return rows[0] && TOKENS.fromRow(rows[0]);
  }

  async recentLedgerEntries(tokenId: string, limit: number) {
    const { rows } = await this.query<Row>(
      `SELECT ${selectList(LEDGER)} FROM ledger WHERE token_id = $1 ORDER BY ledger_seq DESC LIMIT $2`,
      [tokenId, limit],
    );
    return rows.map((row) => LEDGER.fromRow(row));
  }

  async findBooking(sourceId: string, bookingId: string) {
    const { rows } = await this.query<Row>(`SELECT ${selectList(BOOKINGS)} FROM bookings WHERE source_id = $1 AND booking_id = $2`, [
      sourceId,
      bookingId,
    ]);
    return rows[0] && BOOKINGS.fromRow(rows[0]);
  }

  async changesAfter(sourceId: string, after: number, limit: number) {
    const { rows } = await this.query<Row>(CHANGES_AFTER, [sourceId, after, limit]);
    return rows.map((row) => changeFromRow(row));
  }

  /**
   * One statement, one snapshot: the page, and the account's last and oldest kept seq, which say whether the page
   * follows `after` without a gap (a sweep between two statements could delete what the first one counted on). With
   * types, each type is read from migration 019's index in seq order, a page of it at most, and the pages merged:
   * however rare a type among the account's changes, the read stays within types x (limit) index entries.
   */
  async readChanges(sourceId: string, { after, limit, types }: ChangeQuery): Promise<ChangesRead> {
    const { rows } = await this.query<Row>(types ? READ_CHANGES_OF_TYPES : READ_CHANGES, [
      sourceId,
      after,
      limit,
      ...(types ? [types] : []),
    ]);
    const first = rows[0] as { last_seq: string | null; oldest_seq: string | null };
    return {
      changes: rows.filter((row) => row.seq !== null).map((row) => changeFromRow({ ...row, source_id: sourceId })),
      lastSeq: Number(first.last_seq ?? 0),
      oldestSeq: first.oldest_seq === null ? undefined : Number(first.oldest_seq),
    };
  }

  watchChanges(listener: ChangeListener): () => void {
    return this.changeWatch.watch(listener);
  }

  /** Forgets what is past retention now (see RetentionSweeper.sweep); resolves false when another instance was sweeping. */
  sweep(now = new Date()): Promise<boolean> {
    return this.sweeper.sweep(now);
  }

  transaction<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    return this.groupCommit.run(work);
  }

  connections(): StoreConnections {
    const { totalCount, idleCount, waitingCount } = this.pool;
    return { inUse: totalCount - idleCount, idle: idleCount, waiting: waitingCount, listening: this.notifications.listening };
  }

  /** How many units the batches of group commit held so far. */
  batchSizes(): BatchSizes {
    return this.groupCommit.batchSizes();
  }

  /** Sets the seed's accounts, inserts its missing tokens and bookings, in batches, in one transaction; operations' rows are left as they are. */
  async loadSeed(seed: SeedData): Promise<void> {
    await inTransaction(this.pool, (client) => writeSeed(client, seed)).catch((error: unknown) => {
      throw this.storeError(error);
    });
    // The next lookup reads the accounts as the seed set them.
    this.accounts.forget();
  }

  /**
   * Ready means writable: a database that failed over to a standby, or was made read-only, answers reads but
   * applies nothing, and one out of disk answers reads while every write that needs a new page fails. So a
   * fresh (truncated) copy of migration 010's write_probe gets one row, which needs a new page, and the
   * transaction is rolled back. /readyz asks at most once a second, so this costs little.
   */
  async ping(): Promise<void> {
    const { rows } = await this.query<{ writable: boolean }>(
      "SELECT NOT pg_is_in_recovery() AND current_setting('transaction_read_only') = 'off' AS writable",
    );
    if (!rows[0]?.writable) throw new ServiceUnavailableError();
    await withClient(
      this.pool,
      async (client) => {
        await client.query('BEGIN');
        await client.query('TRUNCATE write_probe');
        await client.query('INSERT INTO write_probe (checked_at) VALUES (now())');
        await client.query('ROLLBACK');
      },
      (client) => client.query('ROLLBACK'),
    ).catch((error: unknown) => {
      throw this.storeError(error);
    });
    if (this.outOfResources) this.logger?.info('the database can write again: ready');
    this.outOfResources = false;
  }

  /** Idempotent. Resolves once every connection is closed: at the latest CLOSE_GRACE_MS after the call, when they are cut. */
  close(): Promise<void> {
    this.closing ??= this.end();
    return this.closing;
  }

  private async end(): Promise<void> {
    this.sweeper.stop();
    this.changeWatch.stop();
    // How well units shared transactions over the process's life: what an operator tunes pool and load by.
    this.logger?.info({ batches: this.groupCommit.batchSizes() }, 'group commit: units per batch');
    // pool.end() waits for every connection to close, and one stuck on a database that stopped answering
    // would hold it until its query timeout, or for ever for an idle one whose goodbye is never answered.
    const cut = setTimeout(() => {
      for (const client of this.clients) client.connection.stream.destroy();
      this.notifications.cut();
    }, CLOSE_GRACE_MS);
    try {
      await Promise.all([this.pool.end(), this.notifications.stop()]);
    } finally {
      clearTimeout(cut);
    }
  }

  private async query<Row extends object>(text: string, values?: unknown[]) {
    try {
      return await this.pool.query<Row>(text, values);
    } catch (error) {
      throw this.storeError(error);
    }
  }

  /** The domain error for a driver's; a database out of resources is remembered, so that ping answers unready while it lasts. */
  private storeError(error: unknown): unknown {
    if (isOutOfResources(error) && !this.outOfResources) {
      this.outOfResources = true;
      this.logger?.error(
        { err: error },
        'the database is out of resources (disk, memory or connections): writes answer 503 and /readyz 503 until it can write again',
      );
    }
    return toStoreError(error);
  }
}
