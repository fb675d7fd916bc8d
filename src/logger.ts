import pino, { type Logger } from 'pino';

export type { Logger };

/** Field names that carry keys or secrets, wherever they appear in a log object. */
const REDACTED_PATHS = [
  'share_public',
  'share_secret',
  '*.share_public',
  '*.share_secret',
  'req.headers.authorization',
  'req.headers.cookie',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
