import type { Logger } from '../../process/logger';
import type { ChangeListener } from '../store';
import type { Query } from './accounts';
import type { NotificationSession } from './notifications';

/** Where migration 019's numbering trigger says, with the account as the payload, that a change will commit. */
const CHANGES_CHANNEL = 'receiver_changes';
/** How often the accounts listened for are asked for their last seq while no LISTEN session hears commits. */
export const CHANGE_POLL_MS = 500;

/**
 * Tells the store's change listeners (the feed's waiting requests) of the changes committed by any instance sharing
 * the database. With a LISTEN session, migration 019's NOTIFY reaches every instance at its COMMIT (docs/POSTGRESQL.md,
 * "How a waiting feed is woken"); after the session comes back, every account listened for is told, for what it
 * missed. Without a session (behind a pooler without DATABASE_DIRECT_URL), or while it reconnects, one statement every
 * CHANGE_POLL_MS reads the last seq of every account listened for, and those past what their listener read are told.
 * Nothing runs while nobody listens.
 */
export class PgChangeWatch {
  private readonly listeners = new Set<ChangeListener>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  /** The poll's failure is logged once, not every 500 ms, until a poll succeeds again. */
  private pollFailing = false;

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
    this.timer ??= setInterval(() => void this.pollUnlessListening(), CHANGE_POLL_MS).unref();
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

  /** One poll at a time, only while the session does not hear commits; a failure (the database away) waits for the next round. */
  private async pollUnlessListening(): Promise<void> {
    if (this.session.listening || this.polling) return;
    const listening = [...this.listeners];
    const watched = listening.map((listener) => listener.watched());
    const accounts = [...new Set(watched.flatMap((seen) => [...seen.keys()]))];
    if (accounts.length === 0) return;
    this.polling = true;
    try {
      const { rows } = await this.query<{ source_id: string; last_seq: string }>(
        'SELECT source_id, last_seq FROM change_counters WHERE source_id = ANY($1)',
        [accounts],
      );
      this.pollFailing = false;
      const lastSeqs = new Map(rows.map((row) => [row.source_id, Number(row.last_seq)]));
      listening.forEach((listener, i) => {
        for (const [sourceId, seen] of watched[i]) if ((lastSeqs.get(sourceId) ?? 0) > seen) listener.changed(sourceId);
      });
    } catch (error) {
      if (!this.pollFailing)
        this.logger?.warn({ err: error }, 'waiting feeds could not ask for their changes; they try again every 500 ms');
      this.pollFailing = true;
    } finally {
      this.polling = false;
    }
  }
}
