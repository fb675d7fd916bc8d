import bytes from 'bytes';
import type { z } from 'zod';
import { LISTED_PROBLEMS, type FieldProblem } from './domain/field-problem';
import type { errorEnvelopeSchema } from './schemas/responses';

/**
 * Domain errors and the one table that turns any thrown value into the
 * contract's error envelope. Services throw these by meaning; only this
 * module knows HTTP statuses.
 */

export abstract class DomainError extends Error {
  /** A stable code for metrics and the event log; when absent, the error class's default reason applies. */
  reason: string | undefined;

  constructor(message: string, reason?: string) {
    super(message);
    this.name = new.target.name;
    this.reason = reason;
  }
}

/** Bad input: a malformed body, a field out of its format, a rule broken. */
export class ValidationError extends DomainError {
  constructor(
    message: string,
    readonly details: FieldProblem[] = [],
    reason?: string,
  ) {
    super(message, reason);
  }
}

/** Unknown account or a key that does not match: one message for both. */
export class UnauthorizedError extends DomainError {
  constructor() {
    super('Unauthorized');
  }
}

/** A signed notification whose signature headers are missing, stale or wrong. */
export class SignatureError extends DomainError {
  constructor(message: string, reason: string) {
    super(message, reason);
  }
}

export class ForbiddenError extends DomainError {}

/** Contract section 11: an account holds at most the quota its setting names; nothing more is created. */
export class QuotaExceededError extends ForbiddenError {
  constructor(what: 'tokens' | 'bookings', setting: string, quota: number) {
    super(`Quota exceeded: the account already holds ${quota} ${what}, the most ${setting} allows`, 'quota_exceeded');
  }
}

/** Contract section 11: an account keeps at most MAX_KEYS_PER_ACCOUNT request keys and deliveries at once. */
export class KeyLimitError extends ForbiddenError {
  constructor(limit: number) {
    super(
      `Key limit reached: the account already keeps ${limit} request keys and signed deliveries of their retention window, the most MAX_KEYS_PER_ACCOUNT allows; replays of kept keys are still answered`,
      'key_limit',
    );
  }
}

export class NotFoundError extends DomainError {
  constructor(message = 'Not Found', reason?: string) {
    super(message, reason);
  }
}

/** The message names the methods the path takes, as the Allow header does. */
export class MethodNotAllowedError extends DomainError {
  constructor(readonly allow: readonly string[]) {
    super(`Method Not Allowed: use ${allow.length > 1 ? `${allow.slice(0, -1).join(', ')} or ${allow[allow.length - 1]}` : allow[0]}`);
  }
}

/** The request is valid but clashes with the current state; safe to retry once the state changes. */
export class ConflictError extends DomainError {
  constructor(message: string, reason: string) {
    super(message, reason);
  }
}

export class DestinationUnknownError extends DomainError {
  constructor() {
    super('Destination ID Unknown');
  }
}

/** The message states the limit (BODY_LIMIT), so the sender knows how far to shrink the body. */
export class PayloadTooLargeError extends DomainError {
  constructor(limitBytes: number) {
    super(`Payload Too Large: the limit is ${String(bytes.format(limitBytes, { unitSeparator: '' })).toLowerCase()}`);
  }
}

export class UnsupportedMediaTypeError extends DomainError {}

/** Well-formed but cannot be honoured: an overdraft, or an idempotency key reused for another request. */
export class UnprocessableError extends DomainError {
  constructor(message: string, reason: string) {
    super(message, reason);
  }
}

export class TokenMismatchError extends DomainError {
  constructor() {
    super("Token ID doesn't match");
  }
}

export class TooManyRequestsError extends DomainError {
  constructor(
    message = 'Too Many Requests',
    reason?: string,
    /** Sent as Retry-After; unset where the rate limiter already set it. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message, reason);
  }
}

/**
 * Contract section 13.2: changes after a feed's cursor are no longer kept (past their retention, or the memory
 * store's bound), so the next page would skip them: never a silent jump. The message says where reading can go on.
 */
export class CursorExpiredError extends DomainError {
  constructor(after: number, oldestSeq: number | undefined, lastSeq: number) {
    const kept =
      oldestSeq === undefined
        ? `no change is kept now; the next will be seq ${lastSeq + 1} (read on with after=${lastSeq})`
        : `the oldest seq still kept is ${oldestSeq} (read on with after=${oldestSeq - 1})`;
    super(`Cursor expired: the changes after seq ${after} are no longer kept; ${kept}`, 'cursor_expired');
  }
}

/** The store cannot be reached or has no room to create anything (storage_full), or the service is draining. */
export class ServiceUnavailableError extends DomainError {
  constructor(reason?: 'shutting_down' | 'storage_full') {
    super('Service Unavailable', reason);
  }
}

/** A store call ran past its time limit. */
export class StoreTimeoutError extends DomainError {
  constructor() {
    super('Gateway Timeout');
  }
}

type DomainErrorClass = abstract new (...args: never[]) => DomainError;

/** Each error class's status, and the reason counted when the error names none. */
const STATUS_BY_ERROR: ReadonlyArray<readonly [DomainErrorClass, number, string]> = [
  [ValidationError, 400, 'invalid_request'],
  [UnauthorizedError, 401, 'unauthorized'],
  [SignatureError, 401, 'signature_invalid'],
  [ForbiddenError, 403, 'forbidden'],
  [NotFoundError, 404, 'not_found'],
  [MethodNotAllowedError, 405, 'method_not_allowed'],
  [ConflictError, 409, 'conflict'],
  [DestinationUnknownError, 413, 'destination_unknown'],
  [PayloadTooLargeError, 413, 'payload_too_large'],
  [UnsupportedMediaTypeError, 415, 'unsupported_media_type'],
  [CursorExpiredError, 410, 'cursor_expired'],
  [UnprocessableError, 422, 'unprocessable'],
  [TokenMismatchError, 428, 'token_mismatch'],
  [TooManyRequestsError, 429, 'rate_limited'],
  [ServiceUnavailableError, 503, 'store_unavailable'],
  [StoreTimeoutError, 504, 'store_timeout'],
];

const INTERNAL_ERROR_MESSAGE = 'internal Server Error';

export type ErrorEnvelope = z.output<typeof errorEnvelopeSchema>;

export interface ErrorResponse {
  status: number;
  /** Why, as a stable code: for metrics and the event log, never shown to the client. */
  reason: string;
  headers: Record<string, string>;
  body: ErrorEnvelope;
  /** Not a known, client-caused error: worth logging with its stack. */
  unexpected: boolean;
}

/**
 * An answer lists the first LISTED_PROBLEMS problems, and their number in details_total when there were more. A
 * field's name is the client's own text (an unknown field can be as long as the body), and a message may quote a
 * value the client sent, so each is cut too: the answer stays small whatever the request's size.
 */
const SHOWN_FIELD_CHARACTERS = 64;
/** Above the service's own longest message (Modify Booking's list of the fields it changes, 353). */
const SHOWN_MESSAGE_CHARACTERS = 400;

/** The first `limit` characters (code points, so no pair is split) of a text, with an ellipsis when it was longer. */
function cut(text: string, limit: number): string {
  if (text.length <= limit) return text;
  let shown = '';
  let count = 0;
  for (const character of text) {
    if (count === limit) return `${shown}…`;
    shown += character;
    count += 1;
  }
  return shown;
}

/** A field's name as an error answer shows it. */
export function shownField(field: string): string {
  return cut(field, SHOWN_FIELD_CHARACTERS);
}

export function envelope(status: number, message: string, details?: FieldProblem[]): ErrorEnvelope {
  const errors: ErrorEnvelope['errors'] = { code: String(status), message };
  if (details && details.length > 0) {
    errors.details = details
      .slice(0, LISTED_PROBLEMS)
      .map((problem) => ({ field: shownField(problem.field), message: cut(problem.message, SHOWN_MESSAGE_CHARACTERS) }));
    if (details.length > LISTED_PROBLEMS) errors.details_total = details.length;
  }
  return { success: 'false', errors };
}

/** Express's router throws a URIError when a path parameter has a malformed percent-escape (`%ZZ`). */
function pathDecodingError(value: unknown): DomainError | undefined {
  return value instanceof URIError ? new ValidationError('Malformed percent-encoding in the path') : undefined;
}

/** Turns anything thrown (a domain error, a router error, junk) into the envelope. */
export function toErrorResponse(thrown: unknown): ErrorResponse {
  const error = thrown instanceof DomainError ? thrown : pathDecodingError(thrown);
  const entry = error && STATUS_BY_ERROR.find(([errorClass]) => error instanceof errorClass);
  if (!error || !entry) {
    return { status: 500, reason: 'internal', headers: {}, body: envelope(500, INTERNAL_ERROR_MESSAGE), unexpected: true };
  }
  const [, status, defaultReason] = entry;
  const headers: Record<string, string> = {};
  if (error instanceof MethodNotAllowedError) headers.Allow = error.allow.join(', ');
  if (error instanceof TooManyRequestsError && error.retryAfterSeconds !== undefined)
    headers['Retry-After'] = String(error.retryAfterSeconds);
  const details = error instanceof ValidationError ? error.details : undefined;
  return { status, reason: error.reason ?? defaultReason, headers, body: envelope(status, error.message, details), unexpected: false };
}
