import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request a webhook endpoint received, its signature checked with standardwebhooks. */
export interface Received {
  id: string;
  body: string;
  change: { id: string; source_id: string; seq: number; type: string; token?: { token_id: string } };
  /** Whether `Webhook.verify` took the request with the endpoint's secret. */
  verified: boolean;
}

/** What the endpoint answers a request: a status (and headers), or never (the request hangs until the sender gives up). */
export type Answer = { status: number; headers?: Record<string, string> } | 'never';

/**
 * A webhook endpoint the test runs on port 0: records every request, checks its signature, answers as `answer` says
 * (default 200). Requests it never answers are cut when it closes.
 */
export class EndpointServer {
  readonly received: Received[] = [];
  answer: (received: Received) => Answer = () => ({ status: 200 });
  private readonly server: Server;
  private readonly hanging = new Set<ServerResponse>();

  private constructor(secret: string) {
    const webhook = new Webhook(secret);
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let verified = true;
        try {
          webhook.verify(body, req.headers as Record<string, string>);
        } catch {
          verified = false;
        }
        const received: Received = { id: String(req.headers['webhook-id']), body, change: JSON.parse(body), verified };
        this.received.push(received);
        const answer = this.answer(received);
        if (answer === 'never') {
          this.hanging.add(res);
          return;
        }
        res.writeHead(answer.status, answer.headers).end();
      });
    });
  }

  static async start(secret: string): Promise<EndpointServer> {
    const endpoint = new EndpointServer(secret);
    await new Promise<void>((resolve) => endpoint.server.listen(0, '127.0.0.1', resolve));
    return endpoint;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  /** The seq of each request for `token_id`, in the order they arrived. */
  seqsOf(tokenId: string): number[] {
    return this.received.filter((received) => received.change.token?.token_id === tokenId).map((received) => received.change.seq);
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
