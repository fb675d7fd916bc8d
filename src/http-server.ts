import { STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { envelope } from './errors';

/** Slow clients must not hold connections forever; values sit below typical load-balancer idle timeouts. */
const SERVER_TIME_LIMITS = {
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  keepAliveTimeout: 5_000,
} as const;

/** What Node's HTTP parser reports, as the contract's envelope rather than Node's plain-text default. */
function clientErrorStatus(code: string | undefined): { status: number; message: string } {
  if (code === 'HPE_HEADER_OVERFLOW') return { status: 431, message: 'Request Header Fields Too Large' };
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return { status: 408, message: 'Request Timeout' };
  return { status: 400, message: 'Malformed HTTP request' };
}

/**
 * Sets the time limits and answers requests that never reach Express
 * (unparseable bytes, headers too large, too slow) with a JSON envelope.
 */
export function configureServer(server: Server): void {
  Object.assign(server, SERVER_TIME_LIMITS);
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    // Bytes after a request still being answered (a Content-Length shorter than the body): let that answer
    // go out, then close, rather than cut it off. A timed-out request will never finish, so it is answered now.
    const pending = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
    if (pending && !pending.headersSent && error.code !== 'ERR_HTTP_REQUEST_TIMEOUT') {
      pending.shouldKeepAlive = false;
      return;
    }
    const { status, message } = clientErrorStatus(error.code);
    const body = JSON.stringify(envelope(status, message));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
