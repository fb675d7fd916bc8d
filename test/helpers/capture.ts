import { Writable } from 'node:stream';
import express, { type Express } from 'express';
import { createLogger, type Logger } from '../../src/logger';

export interface CapturedResponse {
  method: string;
  path: string;
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

/**
 * Every log line and response of this test file: for the secret scan and the
 * check against the OpenAPI document (test/helpers/after-each-file.ts).
 */
export const captured = { logLines: [] as string[], bodies: [] as string[], responses: [] as CapturedResponse[] };

/** A logger at info level writing into the capture, so the suites run with logging on. */
export function capturingLogger(): Logger {
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

/** Wraps an app so every response it sends is captured too. */
export function capturingBodies(app: Express): Express {
  const outer = express();
  outer.disable('x-powered-by');
  outer.disable('etag');
  outer.use((req, res, next) => {
    const end = res.end.bind(res) as (...args: unknown[]) => typeof res;
    res.end = ((...args: unknown[]) => {
      const body = args[0] !== undefined && typeof args[0] !== 'function' ? String(args[0]) : '';
      if (body) captured.bodies.push(body);
      captured.responses.push({ method: req.method, path: req.originalUrl.split('?')[0], status: res.statusCode, headers: res.getHeaders(), body });
      return end(...args);
    }) as typeof res.end;
    next();
  });
  outer.use(app);
  return outer;
}
