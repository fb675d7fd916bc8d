import { createHash } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import type { LedgerEntry } from '../../domain/ledger';
import type { Booking } from '../../domain/bookings';
import type { Token } from '../../domain/tokens';
import type { Delivery, KeyedRequest, StoreTransaction } from '../store';
import { roundTrip, transactionSettings, withClient, type Call, type Statement, type StatementResult } from './connection';
import { isRetryable } from './errors';
import { toBooking, toDelivery, toHoldings, toLockedToken, toToken, VALUES, type BookingRow, type DeliveryRow, type HoldingsRow, type LockedTokenRow, type TokenRow } from './rows';
import { UNIT } from './statements';

/** A unit that lost a race on a unique key runs again and then sees the winner's row. */
const MAX_ATTEMPTS = 3;

/** Combined statements by the names of their parts, each made (and named) once per process. */
const combinedStatements = new Map<string, Statement>();
/** The longest statement name PostgreSQL keeps whole (NAMEDATALEN - 1). */
const MAX_STATEMENT_NAME = 63;

/**
 * Several writes as one statement (the first ones as data-modifying WITH
 * parts, the last as the main statement, their parameters renumbered), so a
 * round trip carries one statement for all of a unit's writes: each
 * statement costs the database a message cycle and the driver a result.
 * PostgreSQL runs the parts as one, with one snapshot; writes of a unit
 * touch distinct rows (see PgTransaction.write), so none needs another's.
 */
export function combined(writes: readonly Call[]): Call {
  if (writes.length === 1) return writes[0];
  const joined = writes.map((write) => write.statement.name).join('+');
  let combinedStatement = combinedStatements.get(joined);
  if (!combinedStatement) {
    // PostgreSQL cuts a statement name past 63 bytes, and two cut alike would be one statement to it.
    const name = joined.length <= MAX_STATEMENT_NAME ? joined : `combined_${createHash('sha256').update(joined).digest('hex').slice(0, 32)}`;
    let offset = 0;
    const parts = writes.map(({ statement: { text }, values = [] }) => {
      const renumbered = text.replace(/\$(\d+)/g, (_match, n: string) => `$${Number(n) + offset}`);
      offset += values.length;
      return renumbered;
    });
    const last = parts.pop() as string;
    // PostgreSQL answers with the main statement's command tag.
    const text = `WITH ${parts.map((part, i) => `w${i} AS (${part})`).join(', ')} ${last}`;
    combinedStatement = { name, text, tag: writes[writes.length - 1].statement.tag };
    combinedStatements.set(joined, combinedStatement);
  }
  return { statement: combinedStatement, values: writes.flatMap((write) => write.values ?? []) };
}

/**
 * One unit of work on one connection, in as few round trips as its reads
 * allow: round trips, each a write to the socket and a wake-up of the
 * database, were most of the receiver's CPU per withdrawal
 * (docs/BENCHMARKS.md). BEGIN goes with the unit's first read; writes wait
 * and go with the next read or with COMMIT. The statements of a round trip
 * travel together (see roundTrip()) and run one after the other in the same
 * transaction, each seeing what the ones before it did, so a withdrawal is
 * two round trips: BEGIN, lock the token, look up the transaction id; then
 * update the token, record the row, COMMIT.
 */
class PgTransaction implements StoreTransaction {
  private begun = false;
  /** Writes waiting to be sent, each with the row it writes when it is an update (see write()). */
  private readonly pending: Array<Call & { row?: string }> = [];

  constructor(private readonly client: PoolClient) {}

  /** Sends BEGIN (once), the waiting writes as one statement and these calls in one round trip; returns these calls' results. */
  private async send(calls: Call[]): Promise<StatementResult[]> {
    const writes = this.pending.splice(0);
    const all = [...(this.begun ? [] : [{ statement: UNIT.begin }]), ...(writes.length > 0 ? [combined(writes)] : []), ...calls];
    this.begun = true;
    const results = await roundTrip(this.client, all);
    return results.slice(results.length - calls.length);
  }

  private async readOne<Row>(statement: Statement, values: unknown[]): Promise<Row | undefined> {
    const [result] = await this.send([{ statement, values }]);
    return result.rows[0] as Row | undefined;
  }

  /**
   * The writes of a round trip run as one statement, whose parts cannot see one another's rows: a second
   * update of the same row replaces the first, as the later one would have overwritten it anyway. A unit
   * creates a row or updates it, never both.
   */
  private write(statement: Statement, values: unknown[], row?: string): void {
    const earlier = row === undefined ? -1 : this.pending.findIndex((write) => write.row === row);
    if (earlier >= 0) this.pending.splice(earlier, 1);
    this.pending.push({ statement, values, row });
  }

  /** COMMIT with whatever writes are still waiting; nothing at all when the unit neither read nor wrote. */
  async commit(): Promise<void> {
    if (this.begun || this.pending.length > 0) await this.send([{ statement: UNIT.commit }]);
  }

  /** True when the database holds a transaction for this unit that must be rolled back. */
  get started(): boolean {
    return this.begun;
  }

  async tokenForUpdate(sourceId: string, tokenId: string) {
    const row = await this.readOne<TokenRow>(UNIT.lockToken, [tokenId, sourceId]);
    return row && toToken(row);
  }

  async isTokenIdTaken(tokenId: string) {
    return (await this.readOne<{ taken: boolean }>(UNIT.tokenIdTaken, [tokenId]))?.taken === true;
  }

  async lockTokenAndFindLedgerEntry(tokenId: string, sourceId: string, transactionId: string): Promise<[Token | undefined, LedgerEntry | undefined]> {
    const row = (await this.readOne<LockedTokenRow>(UNIT.lockTokenAndFindLedgerEntry, [tokenId, sourceId, transactionId])) as LockedTokenRow;
    return toLockedToken(row);
  }

  async holdingsForUpdate(sourceId: string) {
    return toHoldings(await this.readOne<HoldingsRow>(UNIT.lockHoldings, [sourceId]));
  }

  async createToken(t: Token) {
    this.write(UNIT.countToken, [t.sourceId]);
    this.write(UNIT.createToken, VALUES.createdToken(t));
  }

  async saveToken(t: Token) {
    this.write(UNIT.saveToken, VALUES.savedToken(t), `token ${t.tokenId}`);
  }

  async recordLedgerEntry(e: LedgerEntry) {
    this.write(UNIT.recordLedgerEntry, VALUES.ledgerEntry(e));
  }

  async bookingForUpdate(sourceId: string, bookingId: string) {
    const row = await this.readOne<BookingRow>(UNIT.lockBooking, [sourceId, bookingId]);
    return row && toBooking(row);
  }

  async createBooking(b: Booking) {
    this.write(UNIT.countBooking, [b.sourceId]);
    this.write(UNIT.createBooking, VALUES.booking(b));
  }

  async saveBooking(b: Booking) {
    this.write(UNIT.saveBooking, VALUES.booking(b), `booking ${JSON.stringify([b.sourceId, b.bookingId])}`);
  }

  async findKeyedRequest(sourceId: string, key: string): Promise<KeyedRequest | undefined> {
    const row = await this.readOne<{ fingerprint: string; response: string; created_at: Date }>(UNIT.findKeyedRequest, [sourceId, key]);
    return row && { sourceId, key, fingerprint: row.fingerprint, response: row.response, createdAt: row.created_at };
  }

  async recordKeyedRequest(r: KeyedRequest) {
    this.write(UNIT.countKey, [r.sourceId]);
    this.write(UNIT.recordKeyedRequest, VALUES.keyedRequest(r));
  }

  async findDelivery(sourceId: string, webhookId: string) {
    const row = await this.readOne<DeliveryRow>(UNIT.findDelivery, [sourceId, webhookId]);
    return row && toDelivery(sourceId, webhookId, row);
  }

  async recordDelivery(d: Delivery) {
    this.write(UNIT.countKey, [d.sourceId]);
    this.write(UNIT.recordDelivery, VALUES.delivery(d));
  }
}

/**
 * Runs `work` as one unit of work, and again (up to MAX_ATTEMPTS in all) when it lost a race on a unique key;
 * any other failure, or the last, is thrown as `storeError` makes it.
 */
export async function inUnitOfWork<T>(pool: Pool, work: (tx: StoreTransaction) => Promise<T>, storeError: (error: unknown) => unknown): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await unitOfWork(pool, work);
    } catch (error) {
      if (!(isRetryable(error) && attempt < MAX_ATTEMPTS)) throw storeError(error);
    }
  }
}

/** The work as one unit on one connection, then COMMIT; ROLLBACK when it throws. */
async function unitOfWork<T>(pool: Pool, work: (tx: StoreTransaction) => Promise<T>): Promise<T> {
  let tx: PgTransaction | undefined;
  return withClient(
    pool,
    async (client) => {
      tx = new PgTransaction(client);
      const result = await work(tx);
      await tx.commit();
      return result;
    },
    async (client) => {
      if (tx?.started) await client.query('ROLLBACK');
    },
  );
}

/** BEGIN, the work, COMMIT; ROLLBACK when the work throws. */
export function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  return withClient(
    pool,
    async (client) => {
      await client.query('BEGIN');
      for (const { statement, values } of transactionSettings(client)) await client.query(statement.text, values);
      const result = await work(client);
      const commit = await client.query('COMMIT');
      if (commit.command !== 'COMMIT') throw new Error(`COMMIT answered ${commit.command}`);
      return result;
    },
    (client) => client.query('ROLLBACK'),
  );
}
