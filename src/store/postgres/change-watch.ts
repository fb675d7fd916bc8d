import { randomUUID } from 'node:crypto';
import type { Logger } from '../../process/logger';
import type { ChangeListener } from '../store';
import type { Query } from './accounts';
import type { NotificationSession } from './notifications';

/** Where the numbering of changes (migration 020) says, with the account as the payload, that a change will commit. */
const CHANGES_CHANNEL = 'receiver_changes';
/** How often the watch looks at what its listeners wait for: registers new accounts, or polls without a session. */
export const CHANGE_POLL_MS = 500;
/** How long a registration holds (migration 019's change_listeners), renewed once less than half of it is left. */
const REGISTRATION_MS = 60_000;

/**
 * Tells the store's change listeners (the feed's waiting requests) of the changes committed by any instance sharing
 * the database (docs/POSTGRESQL.md, "How a waiting feed is woken"). With a LISTEN session, the accounts listened for
 * are registered in change_listeners, and the numbering of their changes (migration 020) sends a NOTIFY for them, which reaches
 * every instance at COMMIT: an account newly registered is told once it is (a change may have committed between its
 * reader's read and the registration), and after the session comes back every account is told, for what it missed.
 * Without a session (behind a pooler without DATABASE_DIRECT_URL), or while it reconnects, one statement every
 * CHANGE_POLL_MS reads the last seq of every account listened for, and those past what their listener read are
 * told. Nothing runs while nobody listens.
 */
export class PgChangeWatch {
  private readonly listeners = new Set<ChangeListener>();
  /** This store's name in change_listeners. */
  private readonly instance = randomUUID();
  /** The accounts registered, each with when its registration lapses (Date.now() time). */
  private readonly registered = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private looking = false;
  /** A failure is logged once, not every 500 ms, until a round succeeds again. */
  private failing = false;

  constructor(
    private readonly query: Query,
    private readonly session: NotificationSession,
    private readonly logger: Logger | undefined,
  ) {
    session.on(CHANGES_CHANNEL, (sourceId) => this.tell(sourceId));
    session.onListening(() => {
      for (const listener of this.listeners) for (const sourceId of listener.watched().keys()) listener.changed(sourceId);
    });
  }

  watch(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    this.timer ??= setInterval(() => void this.look(), CHANGE_POLL_MS).unref();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private tell(sourceId: string): void {
    for (const listener of this.listeners) listener.changed(sourceId);
  }

  /** One round at a time; a failure (the database away) waits for the next round, 500 ms on. */
  private async look(): Promise<void> {
    if (this.looking) return;
    const listening = [...this.listeners];
    const watched = listening.map((listener) => listener.watched());
    const accounts = [...new Set(watched.flatMap((seen) => [...seen.keys()]))];
    if (accounts.length === 0) return;
    this.looking = true;
    try {
      if (this.session.listening) await this.register(accounts);
      else await this.poll(listening, watched, accounts);
      this.failing = false;
    } catch (error) {
      if (!this.failing)
        this.logger?.warn({ err: error }, 'waiting feeds could not register or ask for their changes; they try again every 500 ms');
      this.failing = true;
    } finally {
      this.looking = false;
    }
  }

  /** Registers the accounts not registered, or whose registration is half gone; tells the new ones once it holds. */
  private async register(accounts: string[]): Promise<void> {
    const now = Date.now();
    const due = accounts.filter((sourceId) => (this.registered.get(sourceId) ?? 0) - now < REGISTRATION_MS / 2);
    if (due.length === 0) return;
    // Other instances' lapsed registrations go too; this one's are renewed or lapse harmlessly (the numbering reads until).
    await this.query(
      `WITH lapsed AS (DELETE FROM change_listeners WHERE until < now() AND instance <> $2)
       INSERT INTO change_listeners (source_id, instance, until)
       SELECT source_id, $2, now() + make_interval(secs => $3) FROM unnest($1::text[]) AS source_id
       ON CONFLICT (source_id, instance) DO UPDATE SET until = EXCLUDED.until`,
      [due, this.instance, REGISTRATION_MS / 1000],
    );
    for (const sourceId of due) {
      const isNew = !this.registered.has(sourceId) || (this.registered.get(sourceId) ?? 0) <= now;
      this.registered.set(sourceId, now + REGISTRATION_MS);
      if (isNew) this.tell(sourceId);
    }
  }

  /** Tells each listener of the accounts whose last seq is past what it read. */
  private async poll(listening: ChangeListener[], watched: Array<ReadonlyMap<string, number>>, accounts: string[]): Promise<void> {
    const { rows } = await this.query<{ source_id: string; last_seq: string }>(
      'SELECT source_id, last_seq FROM change_counters WHERE source_id = ANY($1)',
      [accounts],
    );
    const lastSeqs = new Map(rows.map((row) => [row.source_id, Number(row.last_seq)]));
    listening.forEach((listener, i) => {
      for (const [sourceId, seen] of watched[i]) if ((lastSeqs.get(sourceId) ?? 0) > seen) listener.changed(sourceId);
    });
  }
}
