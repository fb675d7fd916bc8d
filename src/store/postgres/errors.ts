import { ConflictError, DomainError, ServiceUnavailableError, StoreTimeoutError } from '../../errors';

/** SQLSTATEs and socket errors that mean the database cannot be reached or is going away. */
const UNAVAILABLE_CODES = new Set([
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '08007', // connection exceptions
  '57P01',
  '57P02',
  '57P03', // admin shutdown, crash shutdown, cannot connect now
  '25006', // read-only transaction: the database failed over to a standby, or was made read-only
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
]);

/** Messages node-postgres uses for the same, without a code. */
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Cannot use a pool after calling end|Client has encountered a connection error|Client was closed/;

/** The server ended the session or refused it (database gone or closed to connections, login refused): never the request's fault. */
function isFatal(error: unknown): boolean {
  const severity = (error as { severity?: unknown } | null)?.severity;
  return severity === 'FATAL' || severity === 'PANIC';
}

/** statement_timeout fired, or the driver gave up waiting for an answer. */
const QUERY_CANCELED = '57014';

/** A concurrent unit inserted the same key first; running the unit again sees its row. */
const RETRYABLE_CODES = new Set(['23505', '40001', '40P01']);

/**
 * SQLSTATE class 53, insufficient resources: disk full (53100), out of memory (53200), too many connections
 * (53300), a configuration limit (53400). The database cannot take the write now; it may later.
 */
export function isOutOfResources(error: unknown): boolean {
  return codeOf(error)?.startsWith('53') === true;
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** node-postgres stopped waiting for an answer (query_timeout): the database stopped answering. */
export function isReadTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === 'Query read timeout';
}

export function isRetryable(error: unknown): boolean {
  return RETRYABLE_CODES.has(codeOf(error) ?? '');
}

/** Turns a driver error into the domain error the contract maps (503, 504); anything else passes through. */
export function toStoreError(error: unknown): unknown {
  if (error instanceof DomainError) return error;
  const code = codeOf(error);
  const message = error instanceof Error ? error.message : '';
  if (code === QUERY_CANCELED || isReadTimeout(error)) return new StoreTimeoutError();
  if ((code && UNAVAILABLE_CODES.has(code)) || isOutOfResources(error) || isFatal(error) || UNAVAILABLE_MESSAGES.test(message))
    return new ServiceUnavailableError();
  if (isRetryable(error)) return new ConflictError('A duplicate of this request is still being processed; retry shortly', 'in_flight');
  return error;
}
