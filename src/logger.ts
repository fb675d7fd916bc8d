import pino, { type Logger } from 'pino';

export type { Logger };

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
