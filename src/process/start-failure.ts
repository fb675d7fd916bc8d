import pino from 'pino';
import { ConfigError, instanceIdIn } from './config';
import { createLogger } from './logger';

/** PgBouncer's refusal of a start-up parameter it does not pass on, such as statement_timeout. */
const POOLER_REFUSAL = /unsupported startup parameter/i;

/** The database must answer at start; what it said, and the setting that named it, are the operator's to act on. */
export class DatabaseStartError extends Error {
  constructor(cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    // Only a transaction-mode pooler refuses the session's start-up parameters: the setting that stops sending them.
    const advice = POOLER_REFUSAL.test(reason)
      ? '; DATABASE_URL names a pooler (PgBouncer) that refuses session start-up parameters: set DATABASE_POOLER=transaction'
      : '';
    super(`Cannot open the database named by DATABASE_URL: ${reason}${advice}`, { cause });
  }
}

/** The problems of a failed start that a setting or the database explains, one per line; undefined for any other failure. */
export function startProblemsOf(error: unknown): readonly string[] | undefined {
  if (error instanceof ConfigError) return error.problems;
  if (error instanceof DatabaseStartError) return [error.message];
  return undefined;
}

/**
 * Ends a start that failed, with JSON lines on stderr, as every other line is JSON: one per problem, without a stack,
 * where the operator has a setting, the seed or the database to fix; a fault nobody foresaw with its stack, under
 * `failure`. The settings may be what failed: the instance as INSTANCE_ID names it, else the host name.
 */
export function exitForStartFailure(error: unknown, problems: readonly string[] | undefined, failure: string): never {
  const startLog = createLogger('info', pino.destination({ dest: 2, sync: true }), instanceIdIn(process.env));
  if (problems) for (const problem of problems) startLog.fatal(problem);
  else startLog.fatal({ err: error }, failure);
  process.exit(1);
}
