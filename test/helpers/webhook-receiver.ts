import http, { type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request a webhook endpoint received, as it arrived: its raw body bytes, for signatures and byte-equality. */
export interface ReceivedWebhook {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** How the endpoint answers a request; it may also never answer, or answer slowly, to test the sender's limits. */
export type WebhookAnswer = (request: ReceivedWebhook, response: ServerResponse) => void;

/**
 * A real webhook endpoint on 127.0.0.1 and a port the kernel picks, for the sending side's tests: it keeps every
 * request it received, answers with `answer` (default 204), and counts the connections the sender opened and closed.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  answer: WebhookAnswer = (_request, response) => response.writeHead(204).end();
  connectionsOpened = 0;
  connectionsClosed = 0;
  /** Requests received and not yet answered to their end. */
  inFlight = 0;
  maxInFlight = 0;

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<WebhookReceiver> {
    const server = http.createServer();
    const receiver = new WebhookReceiver(server);
    server.on('connection', (socket) => {
      receiver.connectionsOpened += 1;
      socket.on('close', () => (receiver.connectionsClosed += 1));
    });
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const received = { method: request.method ?? '', path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks) };
        receiver.received.push(received);
        receiver.inFlight += 1;
        receiver.maxInFlight = Math.max(receiver.maxInFlight, receiver.inFlight);
        response.on('close', () => (receiver.inFlight -= 1));
        receiver.answer(received, response);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  url(path = '/hooks'): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  /** Closes the listener and every connection, answered or not. */
  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }
}
