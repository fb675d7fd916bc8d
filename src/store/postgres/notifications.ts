import { Client, type ClientConfig } from 'pg';
import type { Logger } from '../../process/logger';

/** Wait before connecting the session again after it lost the database. */
const LISTEN_RETRY_MS = 1_000;

/**
 * The instance's one LISTEN session, outside the pool (docs/POSTGRESQL.md): migration 008's account changes and
 * migration 019's committed changes arrive on it, each channel to its handler. Losing it never ends the process: it
 * connects again by itself, and tells `onListening` each time it listens again, for what it may have missed
 * meanwhile. Behind a transaction-mode pooler without DATABASE_DIRECT_URL there is none (`connection` unset): the
 * users of each channel make do without (the accounts' 10 s re-read, the feed's poll).
 */
export class NotificationSession {
  private client: Client | undefined;
  private retry: NodeJS.Timeout | undefined;
  private up = false;
  /** Set once the store closes: the session is not connected again. */
  private stopped = false;
  private readonly handlers = new Map<string, (payload: string) => void>();
  private readonly listeningHandlers: Array<() => void> = [];

  constructor(
    /** How to connect (the pool's own settings, or a direct connection past a pooler); unset: no session. */
    private readonly connection: ClientConfig | undefined,
    private readonly logger: Logger | undefined,
  ) {}

  /** Whether the store can listen at all: false behind a pooler without a direct connection. */
  get possible(): boolean {
    return this.connection !== undefined;
  }

  /** Whether the session is up and listening on every channel: notifications are heard at once. */
  get listening(): boolean {
    return this.up;
  }

  /** The handler of a channel's notifications; set before start. */
  on(channel: string, handler: (payload: string) => void): void {
    this.handlers.set(channel, handler);
  }

  /** Called each time the session listens, at first and after every reconnection. */
  onListening(handler: () => void): void {
    this.listeningHandlers.push(handler);
  }

  start(): void {
    if (this.stopped) return;
    if (!this.connection) {
      this.logger?.info(
        "behind a transaction-mode pooler without DATABASE_DIRECT_URL: no LISTEN session; accounts are read again every 10 s, and waiting feeds ask for their accounts' changes every 500 ms",
      );
      return;
    }
    const client = new Client({ ...this.connection, keepAlive: true });
    this.client = client;
    let lost = false;
    const reconnect = (error?: unknown) => {
      if (lost) return;
      lost = true;
      this.up = false;
      client.end().catch(() => undefined);
      if (this.stopped) return;
      this.logger?.warn(
        { err: error },
        'not listening for account changes nor committed changes; accounts are read again at least every 10 s, waiting feeds poll; reconnecting',
      );
      this.retry = setTimeout(() => this.start(), LISTEN_RETRY_MS);
      this.retry.unref();
    };
    client.on('error', reconnect);
    client.on('end', () => reconnect(new Error('the listening connection ended')));
    client.on('notification', ({ channel, payload }) => this.handlers.get(channel)?.(payload ?? ''));
    client
      .connect()
      // Channel names are the store's own constants, never a caller's text: LISTEN takes no bound parameter.
      .then(() => client.query([...this.handlers.keys()].map((channel) => `LISTEN ${channel}`).join('; ')))
      .then(() => {
        if (lost) return;
        this.up = true;
        for (const handler of this.listeningHandlers) handler();
      })
      .catch(reconnect);
  }

  /** Stops listening for good; resolves once the session said goodbye (see cut). */
  stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    return this.client?.end().catch(() => undefined) ?? Promise.resolve();
  }

  /** Cuts the session, whose goodbye a frozen database never answers. */
  cut(): void {
    this.client?.connection.stream.destroy();
  }
}
