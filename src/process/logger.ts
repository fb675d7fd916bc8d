import pino, { type Logger } from 'pino';
import { REDACTED } from './redaction';
import { isoTime } from '../domain/iso-time';

export type { Logger };

/** Where the service writes its lines: stdout, asynchronously (logDestination). */
export type LogDestination = ReturnType<typeof pino.destination>;

/**
 * Where keys or secrets could appear if a log call ever carried them. Explicit paths, not wildcards:
 * a wildcard walks every key of every line, which showed in the profile.
 */
const REDACTED_PATHS = [
  'share_public',
  'share_secret',
  'body.share_public',
  'body.share_secret',
  'req.body.share_public',
  'req.body.share_secret',
  'req.headers.authorization',
  'req.headers.cookie',
];

/** The current time in ISO 8601, made once per millisecond (domain/iso-time.ts). */
export function isoTimeNow(): string {
  return isoTime(Date.now());
}

/**
 * JSON lines at `level`. With `instance` (INSTANCE_ID), every line names the instance that wrote it (contract
 * section 12), so the lines of several instances can be told apart once collected together.
 */
export function createLogger(
  level: string,
  destination?: pino.DestinationStream,
  instance?: string,
  mixin?: () => Record<string, string>,
): Logger {
  return pino(
    {
      level,
      // With traces (tracing.ts): the trace_id of the request a line belongs to.
      mixin,
      redact: { paths: REDACTED_PATHS, censor: REDACTED },
      base: instance === undefined ? undefined : { instance },
      // As pino.stdTimeFunctions.isoTime, from the per-millisecond stamp.
      timestamp: () => `,"time":"${isoTimeNow()}"`,
    },
    destination,
  );
}

/**
 * Stdout with asynchronous writes: lines that arrive while one write is in flight go out together with the next, so
 * a busy service makes far fewer write calls (docs/BENCHMARKS.md). The process must exit through exitOnceWritten.
 */
export function logDestination(): LogDestination {
  return pino.destination({ dest: 1, sync: false });
}

/**
 * Exits with `code` once every line given to `destination` is written, in order. process.exit alone has pino write
 * what is buffered synchronously while an asynchronous write may still be in flight: the last lines then land before
 * it ("stopped" before "shutting down") or it is lost. Ending the stream waits for that write, then writes the rest.
 */
export function exitOnceWritten(destination: LogDestination, code: number): void {
  destination.once('close', () => process.exit(code));
  destination.end();
}
