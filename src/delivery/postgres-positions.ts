/**
 * Sinks' positions in PostgreSQL (migration 018), shared by every instance: a lease per sink says which one sends to
 * it, and every write of a sender checks, in its transaction, that it still holds the lease at the generation it
 * loaded. A pool of its own, of three connections, so delivery never takes a connection a partner's request waits for;
 * no transaction is ever open across a sink's attempt (the engine writes before and after it, never during).
 */
import { Pool, type PoolClient } from 'pg';
import type { Logger } from '../process/logger';
import { roundTrip, withClient, withoutSessionState } from '../store/postgres/connection';
import { BEGIN, COMMIT, statement } from '../store/postgres/statements';
import { CHANGES_AFTER, changeFromRow } from '../store/postgres/tables';
import type { Change } from '../store/store';
import { ATTEMPTS_KEPT, type AttemptRecord, type SenderWrite, type SinkPositions, type SinkSnapshot, type SinkState } from './positions';

export interface PgSinkPositionsOptions {
  connectionString: string;
  /** The store's schema, when it has one of its own (tests). */
  schema?: string;
  statementTimeoutMs: number;
  connectTimeoutMs?: number;
  /** A transaction-mode pooler: no start-up parameter it would refuse; the driver's own time limit stands in. */
  pooled?: boolean;
  logger?: Logger;
  /** How its connections name themselves (pg_stat_activity). Default: DELIVERY_APPLICATION_NAME. */
  applicationName?: string;
  /** Attempts kept per sink, newest first. Default: ATTEMPTS_KEPT. */
  attemptsKept?: number;
}

/** How delivery's connections name themselves in pg_stat_activity: ops (and a test) can tell them from the store's. */
export const DELIVERY_APPLICATION_NAME = 'token-booking-receiver/delivery';
/**
 * Connections delivery uses at most, whatever the number of sinks: one for a sender's writes, one for its pages of
 * changes (read here since delivery has a thread of its own), one for leases and ops.
 */
const POOL_SIZE = 3;

/**
 * A sender's write does not wait for its WAL to reach the disk: a database crash can lose the last moment of
 * positions, which only sends those changes again (at least once), never loses one; and a delivery's write a
 * moment of the disk's time, however busy partners keep it. Per transaction, so a transaction-mode pooler passes it.
 */
const ASYNCHRONOUS_COMMIT = statement('delivery_asynchronous_commit', "SELECT set_config('synchronous_commit', 'off', true)");

/**
 * A sender's write (SinkPositions.record) as one statement, sent with its BEGIN and COMMIT in one round trip: each
 * part runs only while `owner` holds the lease at `generation`, which `held` locks FOR SHARE, so that the lease cannot
 * pass to another instance, nor an enable or replay commit, before this COMMIT. A lease that lapsed but that no one
 * took is still its owner's: the write goes in and saves a re-send. Window rows at or below the position are not
 * written (the position passes them; they are deleted), so no row is both written and deleted by the statement.
 * Answers held = 1 when written, 0 when nothing was.
 */
const RECORD = statement(
  'delivery_record',
  `WITH held AS (
     SELECT 1 FROM sink_states WHERE sink_id = $1 AND lease_owner = $2 AND generation = $3 FOR SHARE
   ), attempt AS (
     INSERT INTO sink_attempts (sink_id, source_id, seq, change_id, attempt, result, status, error, duration_ms, attempted_at)
     SELECT $1, $4, $7, $8, $9, $10, $11, $12, $13, $14 FROM held WHERE $6::boolean
   ), window_rows AS (
     INSERT INTO sink_window (sink_id, source_id, seq, delivered, attempts, next_attempt_at, last_error)
     SELECT $1, $4, row.seq, row.delivered, row.attempts, row.next_attempt_at, row.last_error
     FROM held, unnest($15::bigint[], $16::boolean[], $17::int[], $18::timestamptz[], $19::text[])
       AS row (seq, delivered, attempts, next_attempt_at, last_error)
     WHERE row.seq > $5
     ON CONFLICT (sink_id, source_id, seq) DO UPDATE SET delivered = excluded.delivered, attempts = excluded.attempts,
       next_attempt_at = excluded.next_attempt_at, last_error = excluded.last_error
   ), passed AS (
     DELETE FROM sink_window WHERE sink_id = $1 AND source_id = $4 AND seq <= $5 AND EXISTS (SELECT 1 FROM held)
   ), position AS (
     INSERT INTO sink_positions (sink_id, source_id, position) SELECT $1, $4, $5 FROM held
     ON CONFLICT (sink_id, source_id) DO UPDATE SET position = excluded.position
   ), disabled AS (
     UPDATE sink_states SET enabled = false, reason = $20, disabled_at = now(), generation = generation + 1
     WHERE sink_id = $1 AND $20::text IS NOT NULL AND EXISTS (SELECT 1 FROM held)
   )
   SELECT count(*)::int AS held FROM held`,
  'SELECT',
);

type Row = Record<string, unknown>;

function stateOf(row: Row): SinkState {
  return {
    sinkId: row.sink_id as string,
    enabled: row.enabled as boolean,
    reason: row.reason as string | null,
    disabledAt: row.disabled_at as Date | null,
    generation: Number(row.generation),
  };
}

function attemptOf(row: Row): AttemptRecord {
  return {
    id: Number(row.attempt_id),
    sinkId: row.sink_id as string,
    sourceId: row.source_id as string,
    seq: Number(row.seq),
    changeId: row.change_id as string,
    attempt: row.attempt as number,
    result: row.result as AttemptRecord['result'],
    status: row.status as number | null,
    error: row.error as string | null,
    durationMs: row.duration_ms as number,
    attemptedAt: row.attempted_at as Date,
  };
}

const STATE_COLUMNS = 'sink_id, enabled, reason, disabled_at, generation';

export class PgSinkPositions implements SinkPositions {
  private readonly pool: Pool;
  /** Per sink, attempts written since its last prune. */
  private readonly attemptsSincePrune = new Map<string, number>();
  private readonly attemptsKept: number;
  /** Attempts are pruned once in this many, each time deleting about as many rows: a bounded statement. */
  private readonly pruneEvery: number;

  constructor(options: PgSinkPositionsOptions) {
    this.pool = new Pool({
      connectionString: options.connectionString,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 2_000,
      options: options.schema ? `-c search_path=${options.schema}` : undefined,
      max: POOL_SIZE,
      // Kept open while idle: no reconnect (and no connect time limit to meet on a loaded machine) after every quiet spell.
      idleTimeoutMillis: 0,
      application_name: options.applicationName ?? DELIVERY_APPLICATION_NAME,
      statement_timeout: options.pooled ? undefined : options.statementTimeoutMs,
      query_timeout: options.statementTimeoutMs + 2_000,
    });
    // Behind a transaction-mode pooler: statements unnamed, and the time limit set in each transaction (connection.ts).
    if (options.pooled) withoutSessionState(this.pool, options.statementTimeoutMs);
    this.attemptsKept = options.attemptsKept ?? ATTEMPTS_KEPT;
    this.pruneEvery = Math.ceil(this.attemptsKept / 10);
    // A broken idle connection must not end the process; the next call connects anew, and a call that fails is what
    // the engine logs (once), so this is no warning of its own.
    this.pool.on('error', (error) => options.logger?.debug({ err: error }, 'idle delivery database connection closed'));
  }

  async register(sinkIds: readonly string[]): Promise<void> {
    for (const sinkId of sinkIds) {
      await this.inTransaction(async (client) => {
        const created = await client.query('INSERT INTO sink_states (sink_id) VALUES ($1) ON CONFLICT DO NOTHING RETURNING sink_id', [
          sinkId,
        ]);
        // In the transaction that creates the sink: an account with no row later had no change at this point.
        if (created.rowCount === 1) {
          await client.query(
            'INSERT INTO sink_positions (sink_id, source_id, position) SELECT $1, source_id, last_seq FROM change_counters',
            [sinkId],
          );
        }
      });
    }
  }

  async accountHeads(): Promise<Map<string, number>> {
    const { rows } = await this.pool.query<Row>('SELECT source_id, last_seq FROM change_counters');
    return new Map(rows.map((row) => [row.source_id as string, Number(row.last_seq)]));
  }

  /** The changes the engine hands on, read on this pool: on the delivery thread, which has no store of its own. */
  async changesAfter(sourceId: string, after: number, limit: number): Promise<Change[]> {
    const { rows } = await this.pool.query<Row>(CHANGES_AFTER, [sourceId, after, limit]);
    return rows.map((row) => changeFromRow(row));
  }

  async lease(sinkId: string, owner: string, leaseMs: number): Promise<SinkState | undefined> {
    // Taken from another owner (or none): a new generation, so whatever an earlier holder loaded is stale for it.
    const { rows } = await this.pool.query<Row>(
      `UPDATE sink_states SET lease_owner = $2, lease_until = now() + $3 * interval '1 millisecond',
         generation = generation + (lease_owner IS DISTINCT FROM $2)::int
       WHERE sink_id = $1 AND (lease_until < now() OR lease_owner = $2) RETURNING ${STATE_COLUMNS}`,
      [sinkId, owner, leaseMs],
    );
    return rows[0] && stateOf(rows[0]);
  }

  async release(sinkIds: readonly string[], owner: string): Promise<void> {
    await this.pool.query(
      "UPDATE sink_states SET lease_owner = NULL, lease_until = '-infinity' WHERE sink_id = ANY($1::text[]) AND lease_owner = $2",
      [sinkIds, owner],
    );
  }

  async state(sinkId: string): Promise<SinkState | undefined> {
    const { rows } = await this.pool.query<Row>(`SELECT ${STATE_COLUMNS} FROM sink_states WHERE sink_id = $1`, [sinkId]);
    return rows[0] && stateOf(rows[0]);
  }

  async snapshot(sinkId: string): Promise<SinkSnapshot | undefined> {
    // One transaction (repeatable read): state, positions and window as of one moment.
    return this.inTransaction(async (client) => {
      const states = await client.query<Row>(`SELECT ${STATE_COLUMNS} FROM sink_states WHERE sink_id = $1`, [sinkId]);
      if (states.rows.length === 0) return undefined;
      const positions = await client.query<Row>('SELECT source_id, position FROM sink_positions WHERE sink_id = $1', [sinkId]);
      const window = await client.query<Row>(
        'SELECT source_id, seq, delivered, attempts, next_attempt_at, last_error FROM sink_window WHERE sink_id = $1 ORDER BY source_id, seq',
        [sinkId],
      );
      return {
        state: stateOf(states.rows[0]),
        positions: new Map(positions.rows.map((row) => [row.source_id as string, Number(row.position)])),
        window: window.rows.map((row) => ({
          sourceId: row.source_id as string,
          seq: Number(row.seq),
          delivered: row.delivered as boolean,
          attempts: row.attempts as number,
          nextAttemptAt: row.next_attempt_at as Date | null,
          lastError: row.last_error as string | null,
        })),
      };
    }, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  }

  async record(sinkId: string, owner: string, generation: number, write: SenderWrite): Promise<boolean> {
    const { attempt, sourceId, window } = write;
    const values = [
      sinkId,
      owner,
      generation,
      sourceId,
      write.position,
      attempt !== undefined,
      attempt?.seq ?? null,
      attempt?.changeId ?? null,
      attempt?.attempt ?? null,
      attempt?.result ?? null,
      attempt?.status ?? null,
      attempt?.error ?? null,
      attempt ? Math.round(attempt.durationMs) : null,
      attempt?.attemptedAt ?? null,
      window.map((row) => row.seq),
      window.map((row) => row.delivered),
      window.map((row) => row.attempts),
      window.map((row) => row.nextAttemptAt),
      window.map((row) => row.lastError),
      write.disable ?? null,
    ];
    const [, , recorded] = await withClient(
      this.pool,
      (client) =>
        roundTrip(client, [{ statement: BEGIN }, { statement: ASYNCHRONOUS_COMMIT }, { statement: RECORD, values }, { statement: COMMIT }]),
      (client) => client.query('ROLLBACK'),
    );
    const written = (recorded.rows[0] as { held: number }).held === 1;
    if (written && attempt) await this.countAttempt(sinkId);
    return written;
  }

  async enable(sinkId: string): Promise<boolean> {
    return this.inTransaction(async (client) => {
      const updated = await client.query(
        'UPDATE sink_states SET enabled = true, reason = NULL, disabled_at = NULL, generation = generation + 1 WHERE sink_id = $1',
        [sinkId],
      );
      if (updated.rowCount !== 1) return false;
      // From the first step again: the retries' counts go; what was delivered above the position stays.
      await client.query('DELETE FROM sink_window WHERE sink_id = $1 AND NOT delivered', [sinkId]);
      return true;
    });
  }

  async replay(sinkId: string, sourceId: string, after: number): Promise<boolean> {
    return this.inTransaction(async (client) => {
      const updated = await client.query('UPDATE sink_states SET generation = generation + 1 WHERE sink_id = $1', [sinkId]);
      if (updated.rowCount !== 1) return false;
      await client.query('DELETE FROM sink_window WHERE sink_id = $1 AND source_id = $2', [sinkId, sourceId]);
      await client.query(
        `INSERT INTO sink_positions (sink_id, source_id, position) VALUES ($1, $2, $3)
         ON CONFLICT (sink_id, source_id) DO UPDATE SET position = $3`,
        [sinkId, sourceId, after],
      );
      return true;
    });
  }

  async attempts(sinkId: string, limit: number, before?: number): Promise<AttemptRecord[]> {
    const { rows } = await this.pool.query<Row>(
      `SELECT * FROM sink_attempts WHERE sink_id = $1 AND ($3::bigint IS NULL OR attempt_id < $3) ORDER BY attempt_id DESC LIMIT $2`,
      [sinkId, limit, before ?? null],
    );
    return rows.map(attemptOf);
  }

  close(): Promise<void> {
    return this.pool.end();
  }

  /** Prunes the sink's attempts once in `pruneEvery`; a prune that fails is done at its next attempt, never failing the write. */
  private async countAttempt(sinkId: string): Promise<void> {
    const since = (this.attemptsSincePrune.get(sinkId) ?? 0) + 1;
    this.attemptsSincePrune.set(sinkId, since);
    if (since < this.pruneEvery) return;
    try {
      await this.pruneAttempts(sinkId);
      this.attemptsSincePrune.set(sinkId, 0);
    } catch {
      // Left at its count: the sink's next attempt prunes.
    }
  }

  /** Keeps the newest `attemptsKept` of the sink: deletes the few older ones since the last prune. */
  private async pruneAttempts(sinkId: string): Promise<void> {
    await this.pool.query(
      `DELETE FROM sink_attempts WHERE sink_id = $1 AND attempt_id <=
         (SELECT attempt_id FROM sink_attempts WHERE sink_id = $1 ORDER BY attempt_id DESC OFFSET $2 LIMIT 1)`,
      [sinkId, this.attemptsKept],
    );
  }

  /**
   * BEGIN (or `begin`), the work, COMMIT; ROLLBACK when it throws. On the store's withClient: a connection that dies
   * while checked out emits an error the pool does not listen to, which would end the process.
   */
  private inTransaction<T>(work: (client: PoolClient) => Promise<T>, begin = 'BEGIN'): Promise<T> {
    return withClient(
      this.pool,
      async (client) => {
        await client.query(begin);
        const result = await work(client);
        const commit = await client.query('COMMIT');
        if (commit.command !== 'COMMIT') throw new Error(`COMMIT answered ${commit.command}`);
        return result;
      },
      (client) => client.query('ROLLBACK'),
    );
  }
}
