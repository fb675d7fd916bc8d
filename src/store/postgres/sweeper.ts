import type { Pool } from 'pg';
import type { Logger } from '../../process/logger';
import { roundTrip, withClient } from './connection';
import { toStoreError } from './errors';
import { BEGIN, COMMIT, statement } from './statements';

/** Retention, swept by one instance at a time (see RetentionSweeper.sweep). */
const SWEEP = {
  begin: BEGIN,
  commit: COMMIT,
  // Keyed by schema too: instances on one schema are one deployment; another schema's sweep is not a rival.
  lock: statement('sweep_lock', 'SELECT pg_try_advisory_xact_lock($1, hashtext(current_schema())) AS locked'),
  // The counts of the accounts whose keys go, locked first and in source_id byte order as a batch locks them
  // (table-statements.ts), so the sweep and a batch cannot deadlock on them.
  lockHoldings: statement(
    'sweep_lock_holdings',
    `SELECT 1 FROM account_holdings
      WHERE source_id IN (SELECT source_id FROM keyed_requests WHERE created_at < $1 UNION SELECT source_id FROM deliveries WHERE received_at < $1)
      ORDER BY source_id COLLATE "C" FOR UPDATE`,
  ),
  // Each deletes its rows and takes them off their accounts' kept keys (migrations/012) in one statement.
  keyedRequests: statement(
    'sweep_keyed_requests',
    `WITH gone AS (DELETE FROM keyed_requests WHERE created_at < $1 RETURNING source_id)
     UPDATE account_holdings h SET keys = h.keys - g.n FROM (SELECT source_id, count(*) AS n FROM gone GROUP BY source_id) g WHERE h.source_id = g.source_id`,
    'UPDATE',
  ),
  deliveries: statement(
    'sweep_deliveries',
    `WITH gone AS (DELETE FROM deliveries WHERE received_at < $1 RETURNING source_id)
     UPDATE account_holdings h SET keys = h.keys - g.n FROM (SELECT source_id, count(*) AS n FROM gone GROUP BY source_id) g WHERE h.source_id = g.source_id`,
    'UPDATE',
  ),
  // Changes go in bounded batches (CHANGE_SWEEP_BATCH a statement), each its own short transaction, oldest first.
  changes: statement(
    'sweep_changes',
    `DELETE FROM changes WHERE (source_id, seq) IN (SELECT source_id, seq FROM changes WHERE created_at < $1 ORDER BY created_at LIMIT $2)`,
  ),
};

/** The most changes one statement of the sweep deletes: a sweep never holds many rows' locks or writes much WAL at once. */
export const CHANGE_SWEEP_BATCH = 10_000;

/** Any fixed 32-bit number: the instance that holds it sweeps, the others skip that round. */
const SWEEP_LOCK = 72_041_183;

/**
 * Request keys and webhook deliveries kept at least `retention.keysMs`, changes `retention.changesMs`, then forgotten
 * by a sweep every `intervalMs` (0: never).
 */
export class RetentionSweeper {
  private timer: NodeJS.Timeout | undefined;
  private sweeping = false;
  private stopped = false;

  constructor(
    private readonly pool: Pool,
    private readonly retention: { keysMs: number; changesMs: number },
    intervalMs: number,
    private readonly logger: Logger | undefined,
  ) {
    if (intervalMs > 0) {
      this.timer = setInterval(() => void this.sweepInTheBackground(), intervalMs);
      this.timer.unref();
    }
  }

  /**
   * Forgets request keys and webhook deliveries stamped before `now` less their retention, then changes in bounded
   * batches (one instance at a time too: only the instance that swept the keys goes on), measured on the
   * clock that stamped them (the services'). One instance at a time: the sweep holds a transaction-level
   * advisory lock, released with the transaction even when the connection breaks, and an instance that
   * cannot take it skips the round. Resolves false when it skipped.
   */
  async sweep(now = new Date()): Promise<boolean> {
    const cutoff = new Date(now.getTime() - this.retention.keysMs);
    const changesCutoff = new Date(now.getTime() - this.retention.changesMs);
    try {
      const locked = await withClient(
        this.pool,
        async (client) => {
          const [, lock] = await roundTrip(client, [{ statement: SWEEP.begin }, { statement: SWEEP.lock, values: [SWEEP_LOCK] }]);
          const locked = (lock.rows[0] as { locked: boolean }).locked;
          await roundTrip(client, [
            ...(locked
              ? [
                  { statement: SWEEP.lockHoldings, values: [cutoff] },
                  { statement: SWEEP.keyedRequests, values: [cutoff] },
                  { statement: SWEEP.deliveries, values: [cutoff] },
                ]
              : []),
            { statement: SWEEP.commit },
          ]);
          return locked;
        },
        (client) => client.query('ROLLBACK'),
      );
      // The counter rows stay: an account's numbering goes on after its changes are gone.
      if (locked) {
        let deleted = CHANGE_SWEEP_BATCH;
        while (deleted === CHANGE_SWEEP_BATCH && !this.stopped) {
          const result = await this.pool.query({
            name: SWEEP.changes.name,
            text: SWEEP.changes.text,
            values: [changesCutoff, CHANGE_SWEEP_BATCH],
          });
          deleted = result.rowCount ?? 0;
        }
      }
      return locked;
    } catch (error) {
      throw toStoreError(error);
    }
  }

  /** No timer's sweep from now on: the store is closing. */
  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** The timer's sweep: never two at once on this instance, and a failure (the database is away) waits for the next round. */
  private async sweepInTheBackground(): Promise<void> {
    if (this.sweeping || this.stopped) return;
    this.sweeping = true;
    try {
      await this.sweep();
    } catch (error) {
      this.logger?.warn({ err: error }, 'retention sweep failed; it runs again at the next interval');
    } finally {
      this.sweeping = false;
    }
  }
}
