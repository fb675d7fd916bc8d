import type { QueryResult } from 'pg';
import type { Logger } from '../../process/logger';
import type { Account } from '../store';
import type { NotificationSession } from './notifications';

/** Contract section 11: no request is authenticated against accounts read longer ago than this; it waits for a fresh read. */
const ACCOUNTS_MAX_AGE_MS = 10_000;
/** Past this age a lookup reads the accounts again in the background, so that under traffic no request waits for the read. */
const ACCOUNTS_REFRESH_AFTER_MS = 5_000;
/** Where migration 008's triggers say that accounts or destinations changed. */
const ACCOUNTS_CHANNEL = 'receiver_accounts';

/** A statement on the store's pool, its failure already a domain error. */
export type Query = <Row extends object>(text: string, values?: unknown[]) => Promise<QueryResult<Row>>;

/**
 * Every enabled account, kept in memory on each instance, read again when the instance's LISTEN session hears that
 * they changed (docs/POSTGRESQL.md, "Accounts on several instances").
 */
export class AccountCache {
  /** Every enabled account as last read (see find), undefined when none may be used; a read under way. */
  private accounts: Map<string, Account> | undefined;
  /** When the read in force was sent: what it returned was true then. */
  private readAt = 0;
  private reading: Promise<Map<string, Account>> | undefined;
  /** Bumped when the accounts change (a seed, a notification), so a read begun before never replaces a later one. */
  private generation = 0;

  /**
   * Each notification forgets the accounts, so a change made by any instance is read here at once; so does each
   * (re)connection of the session, for the changes it may have missed. Meanwhile the maximum age of find holds.
   */
  constructor(
    private readonly query: Query,
    session: NotificationSession,
    private readonly logger: Logger | undefined,
  ) {
    session.on(ACCOUNTS_CHANNEL, () => this.forget());
    session.onListening(() => this.forget());
  }

  /**
   * Accounts are few (one per partner) and every enabled one is kept in memory, so a lookup is the same for a
   * known and an unknown account (no oracle for which accounts exist). Contract section 11: the accounts in use
   * were read at most ACCOUNTS_MAX_AGE_MS ago, idle or not; past that a lookup waits for a fresh read (503 if
   * the database cannot be read). Past ACCOUNTS_REFRESH_AFTER_MS a lookup starts that read in the background,
   * so under traffic nobody waits; a notification (listen) makes the next lookup wait for it.
   */
  async find(sourceId: string): Promise<Account | undefined> {
    const age = Date.now() - this.readAt;
    if (!this.accounts || age >= ACCOUNTS_MAX_AGE_MS) return (await this.readOnce()).get(sourceId);
    if (age >= ACCOUNTS_REFRESH_AFTER_MS) {
      this.readOnce().catch((error: unknown) =>
        this.logger?.warn({ err: error }, 'accounts could not be read again; lookups wait for a read once they are 10 s old'),
      );
    }
    return this.accounts.get(sourceId);
  }

  /** The next lookup waits for a read that starts after this. */
  forget(): void {
    this.generation += 1;
    this.accounts = undefined;
    this.reading = undefined;
  }

  /** One read at a time; one begun before the accounts last changed never replaces what a later one read. */
  private readOnce(): Promise<Map<string, Account>> {
    if (this.reading) return this.reading;
    const generation = this.generation;
    const sentAt = Date.now();
    const reading = this.read()
      .then((accounts) => {
        if (generation === this.generation) {
          this.accounts = accounts;
          this.readAt = sentAt;
        }
        return accounts;
      })
      .finally(() => {
        if (this.reading === reading) this.reading = undefined;
      });
    this.reading = reading;
    return reading;
  }

  private async read(): Promise<Map<string, Account>> {
    const { rows } = await this.query<{
      source_id: string;
      public_key_hash: Buffer;
      secret_key_hash: Buffer;
      signing_secrets: string[];
      destinations: string[];
    }>(
      `SELECT a.source_id, a.public_key_hash, a.secret_key_hash, a.signing_secrets,
              coalesce(array_agg(d.destination_id) FILTER (WHERE d.destination_id IS NOT NULL), '{}') AS destinations
         FROM accounts a LEFT JOIN destinations d USING (source_id)
        WHERE a.enabled
        GROUP BY a.source_id`,
    );
    return new Map(
      rows.map((row) => [
        row.source_id,
        {
          sourceId: row.source_id,
          publicKeyHash: row.public_key_hash,
          secretKeyHash: row.secret_key_hash,
          signingSecrets: row.signing_secrets,
          destinations: new Set(row.destinations),
        },
      ]),
    );
  }
}
