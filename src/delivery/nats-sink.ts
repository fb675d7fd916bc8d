import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import type { JetStreamClient, StreamConfig } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Config, NatsConfig } from '../process/config';
import type { Logger } from '../process/logger';
import type { Change } from '../store/store';
import { changeView } from './change-view';
import { NATS_SINK_ID } from './endpoints';
import { CHANGE_SUBJECT_ROOT, changeSubject } from './nats-subject';
import { retryDelay } from './retry-delay';
import type { DeliveryOutcome, Sink } from './sink';

/**
 * The duplicate window of the stream the service creates: JetStream drops a message whose Nats-Msg-Id it stored
 * this recently. A publish stored just before NATS went away, its acknowledgement lost, is sent again once NATS
 * answers: JetStream's default 2 minutes covers a quick restart, 10 minutes an outage that long (or another
 * instance taking the relay over), for a few MB of ids on the server at full rate.
 */
export const DUPLICATE_WINDOW_MS = 10 * 60_000;

/** How long one connection attempt waits for the server's handshake; the next attempt follows the backoff. */
const CONNECT_TIMEOUT_MS = 5_000;
/** The first pause after a failed connection attempt, doubled after each until RECONNECT_MAX_MS. */
const RECONNECT_FIRST_MS = 500;
const RECONNECT_MAX_MS = 30_000;
/** Once connected, the client itself reconnects forever, every 2 s and up to 1 s of jitter (its defaults, bounded). */
const CLIENT_RECONNECT_WAIT_MS = 2_000;
const CLIENT_RECONNECT_JITTER_MS = 1_000;

const NANOS_PER_MS = 1_000_000;

/**
 * The relay's own retry waits (each with up to 20% jitter), the last repeated for good: NATS back after a restart
 * gets what waited within 30 s, not at the webhooks' 5-minute or 10-hour steps, and an outage, however long, never
 * disables the relay (contract section 13.4: it survives NATS outages and resumes in order).
 */
const NATS_RETRY_SCHEDULE_MS: readonly number[] = [1_000, 2_000, 5_000, 10_000, 30_000];

export interface NatsSinkSettings extends NatsConfig {
  /** max_age of the stream the service creates: as long as the service keeps changes (CHANGE_RETENTION_DAYS). */
  maxAgeMs: number;
}

type NatsClient = typeof import('@nats-io/transport-node');
type JetStreamModule = typeof import('@nats-io/jetstream');

/**
 * The NATS JetStream relay (contract section 13.4) as a sink: every change, on `receiver.changes.<account>.<type>`,
 * with Nats-Msg-Id set to the change's id and the change's JSON as the feed shows it. Order per account comes from
 * the engine (orderKey and one attempt at a time); a publish counts as delivered once JetStream acknowledged it,
 * a duplicate included (the message is in the stream already). It keeps one connection, reconnecting for as long as
 * the service runs: while NATS is away every attempt fails at once, and the engine retries.
 */
export class NatsSink implements Sink {
  readonly id = NATS_SINK_ID;
  // One publish at a time: JetStream acknowledges each before the next, so the stream holds an account's changes
  // in seq order whatever happens to a publish in between.
  readonly concurrency = 1;

  private connection: NatsConnection | undefined;
  /** Between a disconnect and the client's reconnect a publish would wait in its buffer until the timeout. */
  private connected = false;
  /** Whether the stream is known to exist on this connection; a publish that finds no stream asks again. */
  private streamChecked: Promise<void> | undefined;
  private client: { connection: NatsConnection; jetStream: JetStreamClient } | undefined;
  private closing = false;
  private readonly stopWaiting = new AbortController();
  private readonly running: Promise<void>;

  constructor(
    private readonly settings: NatsSinkSettings,
    private readonly logger: Logger,
    private readonly nats: NatsClient,
    private readonly jetStream: JetStreamModule,
  ) {
    this.running = this.keepConnected();
  }

  // Past the schedule's end its last step, for good: a step within the schedule always has a wait.
  readonly retryDelay = (step: number) => retryDelay(Math.min(step, NATS_RETRY_SCHEDULE_MS.length - 1), NATS_RETRY_SCHEDULE_MS);

  takesAccount(): boolean {
    return true;
  }

  accepts(): boolean {
    return true;
  }

  orderKey(change: Change): string {
    return change.sourceId;
  }

  async send(change: Change, signal: AbortSignal): Promise<DeliveryOutcome> {
    const started = performance.now();
    const failed = (error: string): DeliveryOutcome => ({ result: 'failed', error, durationMs: performance.now() - started });
    const connection = this.connection;
    if (!connection || !this.connected) return failed('NATS is not connected');
    try {
      const published = this.ensureStream(connection).then(() =>
        this.clientOf(connection).publish(
          changeSubject(change),
          JSON.stringify(changeView(change)),
          // The stream named in the settings, not any other that happens to capture the subject.
          { msgID: change.id, expect: { streamName: this.settings.stream } },
        ),
      );
      await untilAborted(published, signal);
      return { result: 'delivered', durationMs: performance.now() - started };
    } catch (error) {
      // The stream may be what failed (deleted by hand, JetStream off): the next attempt looks for it again first.
      this.streamChecked = undefined;
      return failed(error instanceof Error ? error.message : String(error));
    }
  }

  /** The JetStream client of the connection, made once per connection rather than once per publish. */
  private clientOf(connection: NatsConnection): JetStreamClient {
    if (this.client?.connection !== connection) {
      this.client = { connection, jetStream: this.jetStream.jetstream(connection, { timeout: this.settings.publishTimeoutMs }) };
    }
    return this.client.jetStream;
  }

  /** Stops reconnecting and closes the connection; an attempt in flight fails. */
  async close(): Promise<void> {
    this.closing = true;
    this.stopWaiting.abort();
    await this.connection?.close();
    await this.running;
  }

  /** Connects, and once the client gives up on a connection (it reconnects by itself until then), connects again. */
  private async keepConnected(): Promise<void> {
    let failures = 0;
    while (!this.closing) {
      let connection: NatsConnection;
      try {
        connection = await this.nats.connect({
          servers: this.settings.servers,
          ...this.settings.credentials,
          ...(this.settings.tls ? { tls: {} } : {}),
          name: 'token-booking-receiver',
          // Never `debug`: nats.js then prints every frame, the CONNECT with its password or token too, to the console,
          // which this thread logs (delivery-worker.ts, consoleAsLog), and no redaction knows that text.
          timeout: CONNECT_TIMEOUT_MS,
          maxReconnectAttempts: -1,
          reconnectTimeWait: CLIENT_RECONNECT_WAIT_MS,
          reconnectJitter: CLIENT_RECONNECT_JITTER_MS,
          // Else every publish makes an Error (a stack trace) in case it fails, to say later where it began: 3.5% of
          // the process's time in the bench at 2,500 publishes a second. A failure is logged by its message alone.
          noAsyncTraces: true,
        });
      } catch (error) {
        const waitMs = Math.min(RECONNECT_MAX_MS, RECONNECT_FIRST_MS * 2 ** failures);
        // The first failure says NATS is away; the following ones would repeat it every few seconds.
        this.logger[failures === 0 ? 'warn' : 'debug']({ err: error, retryInMs: waitMs }, 'NATS connection failed; changes wait for it');
        failures = Math.min(failures + 1, 16);
        await pause(waitMs * (0.8 + 0.4 * Math.random()), this.stopWaiting.signal);
        continue;
      }
      if (this.closing) {
        await connection.close();
        break;
      }
      failures = 0;
      this.connection = connection;
      this.connected = true;
      this.logger.info({ server: connection.getServer() }, 'NATS connected');
      this.checkStream(connection);
      void this.watchStatus(connection).catch((error: unknown) => this.logger.warn({ err: error }, 'NATS status not followed'));
      const closedBy = await connection.closed();
      this.connection = undefined;
      this.connected = false;
      if (!this.closing) this.logger.warn({ err: closedBy }, 'NATS connection closed; connecting again');
    }
  }

  private async watchStatus(connection: NatsConnection): Promise<void> {
    for await (const status of connection.status()) {
      if (status.type === 'disconnect') {
        this.connected = false;
        this.logger.warn({ server: status.server }, 'NATS disconnected; reconnecting');
      } else if (status.type === 'reconnect') {
        this.connected = true;
        this.logger.info({ server: status.server }, 'NATS reconnected');
        this.checkStream(connection);
      }
    }
  }

  /**
   * On each (re)connection, before any change waits for it: JetStream may have lost the stream meanwhile (another
   * server, a wiped store), and ops see it made as soon as the service runs.
   */
  private checkStream(connection: NatsConnection): void {
    this.streamChecked = undefined;
    this.ensureStream(connection).catch((error: unknown) =>
      this.logger.warn({ err: error, stream: this.settings.stream }, 'NATS stream not found or made yet; publishing tries again'),
    );
  }

  /** The stream exists, or is created as section 13.4 says; checked once per connection, one check at a time. */
  private ensureStream(connection: NatsConnection): Promise<void> {
    this.streamChecked ??= this.findOrCreateStream(connection).catch((error: unknown) => {
      this.streamChecked = undefined;
      throw error;
    });
    return this.streamChecked;
  }

  private async findOrCreateStream(connection: NatsConnection): Promise<void> {
    const { jetstreamManager, JetStreamApiError, JetStreamApiCodes } = this.jetStream;
    const manager = await jetstreamManager(connection, { timeout: this.settings.publishTimeoutMs });
    const name = this.settings.stream;
    try {
      const { config } = await manager.streams.info(name);
      this.warnOfOtherSettings(config);
      return;
    } catch (error) {
      if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound)) throw error;
    }
    try {
      await manager.streams.add(this.streamToCreate());
      this.logger.info({ stream: name }, 'NATS stream created');
    } catch (error) {
      // Another instance created it meanwhile: what is there is what counts.
      const { config } = await manager.streams.info(name).catch(() => Promise.reject(error));
      this.warnOfOtherSettings(config);
    }
  }

  /**
   * What the service sets on the stream it creates; retention (limits), size, replicas and placement are left to
   * JetStream's defaults and to ops, who may create or edit the stream themselves (docs/OPERATIONS.md).
   */
  private streamToCreate(): Partial<StreamConfig> & Pick<StreamConfig, 'name'> {
    return {
      name: this.settings.stream,
      subjects: [`${CHANGE_SUBJECT_ROOT}.>`],
      storage: this.jetStream.StorageType.File,
      duplicate_window: DUPLICATE_WINDOW_MS * NANOS_PER_MS,
      max_age: this.settings.maxAgeMs * NANOS_PER_MS,
    };
  }

  /** An existing stream is ops' to shape: the service never changes it, but says what would break the contract. */
  private warnOfOtherSettings(config: StreamConfig): void {
    const problems: string[] = [];
    if (!(config.subjects ?? []).includes(`${CHANGE_SUBJECT_ROOT}.>`))
      problems.push(`its subjects (${(config.subjects ?? []).join(', ')}) may not capture ${CHANGE_SUBJECT_ROOT}.>`);
    if (config.storage !== this.jetStream.StorageType.File) problems.push('it keeps its messages in memory, not on disk');
    if (config.duplicate_window < 2 * 60_000 * NANOS_PER_MS) problems.push('its duplicate window is under 2 minutes');
    if (problems.length > 0)
      this.logger.warn({ stream: config.name, problems }, 'NATS stream kept as it is, but it differs from what the relay needs');
  }
}

/** The promise, or a rejection as soon as the signal aborts (the publish itself still ends by its own timeout). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Error('aborted'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Waits `ms`, or less when the signal aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

/**
 * The relay, with NATS_URL set: NATS's packages are loaded here and nowhere else, so a service without NATS never
 * loads them. createRequire rather than import(): jest's CommonJS runtime cannot run a dynamic import.
 */
export function openNatsSink(settings: NatsSinkSettings, logger: Logger): NatsSink {
  const load = createRequire(__filename);
  return new NatsSink(
    settings,
    logger.child({ sink: NATS_SINK_ID }),
    load('@nats-io/transport-node') as NatsClient,
    load('@nats-io/jetstream') as JetStreamModule,
  );
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** The relay as server.ts wires it: none without NATS_URL, and then nothing of NATS is loaded. */
export function openNatsRelay(config: Config, logger: Logger): NatsSink | undefined {
  return config.nats && openNatsSink({ ...config.nats, maxAgeMs: config.changes.retentionDays * DAY_MS }, logger);
}
