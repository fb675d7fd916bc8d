import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/process/logger';

export interface CapturedResponse {
  method: string;
  path: string;
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

/**
 * Every log line and response of this test file: for the secret scan and the
 * check against the OpenAPI document (test/helpers/traffic-checks.ts).
 */
export const captured = {
  logLines: [] as string[],
  bodies: [] as string[],
  responses: [] as CapturedResponse[],
  /** Every change the file's requests recorded, as JSON (contract section 13.1: no key or secret in a change). */
  changes: [] as string[],
  /** Set when the file built a capturing logger or server, or started a server process: its traffic is checked. */
  capturing: false,
};

/** A logger at info level writing into the capture, so the suites run with logging on. */
export function capturingLogger(): Logger {
  captured.capturing = true;
  return createLogger(
    'info',
    new Writable({
      write(chunk, _encoding, done) {
        captured.logLines.push(String(chunk));
        done();
      },
    }),
  );
}

/**
 * Captures every response the server sends, headers included: those passed
 * to writeHead as well as those set before. A listener put ahead of the app's
 * own, so the server stays the one production runs.
 */
export function captureResponses(server: Server): Server {
  captured.capturing = true;
  server.prependListener('request', (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const passed: Record<string, unknown> = {};
    const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => typeof res;
    res.writeHead = ((status: number, ...rest: unknown[]) => {
      const headers = rest.find((arg) => typeof arg === 'object' && arg !== null);
      const pairs = Array.isArray(headers) ? headers : Object.entries(headers ?? {}).flat();
      for (let i = 0; i < pairs.length; i += 2) passed[String(pairs[i]).toLowerCase()] = pairs[i + 1];
      return writeHead(status, ...rest);
    }) as typeof res.writeHead;
    const end = res.end.bind(res) as (...args: unknown[]) => typeof res;
    res.end = ((...args: unknown[]) => {
      const body = args[0] !== undefined && typeof args[0] !== 'function' ? String(args[0]) : '';
      if (body) captured.bodies.push(body);
      captured.responses.push({
        method: req.method ?? '',
        path,
        status: res.statusCode,
        headers: { ...res.getHeaders(), ...passed },
        body,
      });
      return end(...args);
    }) as typeof res.end;
  });
  return server;
}
