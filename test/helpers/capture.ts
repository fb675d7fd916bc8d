import { Writable } from 'node:stream';
import express, { type Express } from 'express';
import { createLogger, type Logger } from '../../src/logger';

/** Every log line and response body of this test file, for the secret scan (test/helpers/secret-scan.ts). */
export const captured = { logLines: [] as string[], bodies: [] as string[] };

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

/** Wraps an app so every response body it sends is captured too. */
export function capturingBodies(app: Express): Express {
  const outer = express();
  outer.disable('x-powered-by');
  outer.disable('etag');
  outer.use((_req, res, next) => {
    const end = res.end.bind(res) as (...args: unknown[]) => typeof res;
    res.end = ((...args: unknown[]) => {
      if (args[0] !== undefined && typeof args[0] !== 'function') captured.bodies.push(String(args[0]));
      return end(...args);
    }) as typeof res.end;
    next();
  });
  outer.use(app);
  return outer;
}
