import http from 'node:http';
import https from 'node:https';
import { Webhook } from 'standardwebhooks';
import type { DeliveryConfig } from '../process/config';
import { SERVICE_VERSION } from '../process/version';
import type { Change, ChangeType } from '../store/store';
import { changeView } from './change-view';
import type { EndpointConfig } from './endpoints';
import type { DeliveryOutcome, Sink } from './sink';

/** Contract section 13.3: at most this much of an answer is read; past it the connection is dropped. */
const ANSWER_BYTES_READ = 4096;

/** How much of a refusing answer's body its error shows: enough to say why, short enough for a log line. */
const ERROR_EXCERPT_CHARS = 200;

/** How long a kept-alive socket may sit idle; shorter when the endpoint's Keep-Alive header says so. */
const IDLE_SOCKET_MS = 30_000;

const USER_AGENT = `token-booking-receiver/${SERVICE_VERSION}`;

/** The settings one endpoint's sink reads (config.delivery). */
export type WebhookSinkSettings = Pick<DeliveryConfig, 'timeoutMs' | 'concurrency'>;

/** A Retry-After in seconds or as an HTTP date, in milliseconds from `now`; undefined when it is neither. */
function retryAfterMsOf(value: string | undefined, now: Date): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime());
}

/** What an answer's status comes to (contract section 13.3): a 2xx delivered, 410 gone, anything else failed. */
function outcomeOfAnswer(answer: http.IncomingMessage, body: Buffer, now: Date, durationMs: number): DeliveryOutcome {
  const status = answer.statusCode ?? 0;
  if (status >= 200 && status < 300) return { result: 'delivered', status, durationMs };
  const excerpt = body.toString('utf8').replace(/\s+/g, ' ').trim().slice(0, ERROR_EXCERPT_CHARS);
  const redirect = status >= 300 && status < 400 ? ` (redirects are not followed; Location: ${answer.headers.location ?? 'none'})` : '';
  const error = `HTTP ${status}${redirect}${excerpt ? `: ${excerpt}` : ''}`.slice(0, 2 * ERROR_EXCERPT_CHARS);
  if (status === 410) return { result: 'gone', status, error, durationMs };
  const retryAfterMs = status === 429 || status === 503 ? retryAfterMsOf(answer.headers['retry-after'], now) : undefined;
  return { result: 'failed', status, error, durationMs, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
}

/** A connection, DNS or TLS failure in a line: Node's message, and its code when the message does not say it. */
function errorText(error: Error & { code?: string }): string {
  const { message, code } = error;
  return (code && !message.includes(code) ? `${message} (${code})` : message).slice(0, 2 * ERROR_EXCERPT_CHARS);
}

/**
 * A token's changes go one after the other, and a booking's (by its account and id: booking ids are the account's).
 * JSON arrays, so no account, token or booking id can spell another's key.
 */
function orderKeyOf(change: Change): string {
  const { token, booking } = change.body as { token?: { token_id?: unknown }; booking?: { booking_id?: unknown } };
  if (typeof booking?.booking_id === 'string') return JSON.stringify(['booking', change.sourceId, booking.booking_id]);
  if (typeof token?.token_id === 'string') return JSON.stringify(['token', change.sourceId, token.token_id]);
  return JSON.stringify(['account', change.sourceId]);
}

/**
 * One webhook endpoint (contract section 13.3), as the delivery engine hands it changes: one signed POST per attempt.
 * Node's own http/https rather than fetch: no redirect is ever followed, the answer is read as bytes and the socket
 * dropped past ANSWER_BYTES_READ, and one keep-alive agent per endpoint holds at most `concurrency` sockets, with no
 * dependency to add (undici's Agent would be one).
 */
export class WebhookSink implements Sink {
  readonly id: string;
  readonly concurrency: number;
  readonly #url: URL;
  readonly #signers: readonly Webhook[];
  readonly #sourceIds: ReadonlySet<string> | undefined;
  readonly #types: ReadonlySet<ChangeType> | undefined;
  readonly #timeoutMs: number;
  readonly #agent: http.Agent;
  readonly #now: () => Date;

  constructor(endpoint: EndpointConfig, settings: WebhookSinkSettings, now: () => Date = () => new Date()) {
    this.id = endpoint.id;
    this.concurrency = settings.concurrency;
    this.#url = new URL(endpoint.url);
    this.#signers = endpoint.secrets.map((secret) => new Webhook(secret));
    this.#sourceIds = endpoint.sourceIds && new Set(endpoint.sourceIds);
    this.#types = endpoint.types && new Set(endpoint.types);
    this.#timeoutMs = settings.timeoutMs;
    this.#now = now;
    const Agent = this.#url.protocol === 'https:' ? https.Agent : http.Agent;
    this.#agent = new Agent({
      keepAlive: true,
      maxSockets: settings.concurrency,
      maxFreeSockets: settings.concurrency,
      timeout: IDLE_SOCKET_MS,
    });
  }

  takesAccount(sourceId: string): boolean {
    return this.#sourceIds?.has(sourceId) ?? true;
  }

  accepts(change: Change): boolean {
    return (this.#sourceIds?.has(change.sourceId) ?? true) && (this.#types?.has(change.type) ?? true);
  }

  orderKey(change: Change): string {
    return orderKeyOf(change);
  }

  /**
   * One POST of the change as the feed shows it, signed with every secret. Settled by the first of: the answer read
   * (to its end or ANSWER_BYTES_READ), DELIVERY_TIMEOUT_MS, `signal`, a connection error. Once the status is in, it
   * is the outcome: a body still coming at the time limit is cut without changing it.
   */
  send(change: Change, signal: AbortSignal): Promise<DeliveryOutcome> {
    const started = performance.now();
    const body = JSON.stringify(changeView(change));
    const timestamp = this.#now();
    const headers = {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'user-agent': USER_AGENT,
      'webhook-id': change.id,
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': this.#signers.map((signer) => signer.sign(change.id, timestamp, body)).join(' '),
    };
    const durationMs = () => Math.round(performance.now() - started);
    if (signal.aborted) return Promise.resolve({ result: 'failed', error: 'aborted before sending', durationMs: durationMs() });

    return new Promise((resolve) => {
      const transport = this.#url.protocol === 'https:' ? https : http;
      const request = transport.request(this.#url, { method: 'POST', agent: this.#agent, headers });
      let answer: http.IncomingMessage | undefined;
      const chunks: Buffer[] = [];
      let bytesRead = 0;
      let settled = false;

      const settle = (failure?: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        // An answer not read to its end leaves its socket unusable: it goes, and the agent opens another.
        if (!answer?.complete) request.destroy();
        resolve(
          answer
            ? outcomeOfAnswer(answer, Buffer.concat(chunks).subarray(0, ANSWER_BYTES_READ), this.#now(), durationMs())
            : { result: 'failed', error: failure ?? 'no answer', durationMs: durationMs() },
        );
      };
      const timer = setTimeout(() => settle(`no answer within ${this.#timeoutMs} ms`), this.#timeoutMs);
      const onAbort = () => settle('aborted: the instance stops or no longer holds the endpoint');
      signal.addEventListener('abort', onAbort, { once: true });

      request.on('error', (error) => settle(errorText(error)));
      request.on('response', (response) => {
        answer = response;
        response.on('data', (chunk: Buffer) => {
          bytesRead += chunk.length;
          if (bytesRead - chunk.length < ANSWER_BYTES_READ) chunks.push(chunk);
          if (bytesRead > ANSWER_BYTES_READ) settle();
        });
        response.on('end', () => settle());
        response.on('error', () => settle());
      });
      request.end(body);
    });
  }

  async close(): Promise<void> {
    this.#agent.destroy();
  }
}
