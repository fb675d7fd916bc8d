import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler, Response } from 'express';
import type { Account } from '../store/store';

/** The body as readJsonBody received it: the bytes the signature covers, and their parse. */
export interface ReceivedBody {
  raw: Buffer;
  /** The parsed JSON, for the schema and the event log's identifying fields: never logged whole. */
  parsed: unknown;
}

/** The account the body's source_id names, looked up once for the signature check and authentication alike. */
export interface NamedAccount {
  /** Unset when the body names none as text: the schema then refuses it, before authentication. */
  sourceId: string | undefined;
  /** Unset when no account has that source_id. */
  account: Account | undefined;
}

/** What verifySignature found out, for authenticate and for applying the request once. */
export interface CheckedSignature {
  /** The webhook-id of a signed notification whose signature verified; unset when none was needed. */
  webhookId: string | undefined;
  /** Signed with the named account's own signing secret (not the upstream sender's). */
  signedByAccount: boolean;
}

/**
 * What validate made of the request: the body, typed and normalised by the operation's schema, and the path's
 * parameters for an operation keyed by its path (unset otherwise); or, for the feed (validateQuery), its query and
 * path, without a body. The schemas of the catalogue give its type.
 */
export interface ValidatedInput {
  body: unknown;
  path: unknown;
  query?: unknown;
}

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Honours a sane incoming X-Request-Id, otherwise makes one; every answer echoes it (send-json.ts). */
function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming) ? incoming : randomUUID();
}

function stageMissing(step: string): never {
  throw new Error(`${step}() did not run before this step`);
}

/**
 * What one request carries between the steps that serve it, each part written by the one step that learns it
 * and read through an accessor that fails loudly when that step has not run: the body (readJsonBody), the account
 * it names (findAccount), the signature (verifySignature), the validated input (validate), the account
 * authenticated (authenticate). The outcome (replayed, why refused) is written by
 * the step that answers and read by the request log, the metrics and the per-address rate limit.
 */
export class RequestContext {
  /** The operation being served, for metrics and the event log; unset for the routes that are not operations. */
  operation: string | undefined = undefined;
  /** Answered 200 as a repeat of an applied request: nothing was applied again. */
  replayed = false;
  /** Why the request was refused, as a stable code (errors.ts). */
  errorReason: string | undefined = undefined;
  /** A failure nobody foresaw (500): the log line carries it, with its stack; the client sees only the envelope. */
  unexpectedError: Error | undefined = undefined;
  private receivedBody: ReceivedBody | undefined = undefined;
  private foundAccount: NamedAccount | undefined = undefined;
  private checkedSignature: CheckedSignature | undefined = undefined;
  private validatedInput: ValidatedInput | undefined = undefined;
  private authenticatedAccount: Account | undefined = undefined;

  constructor(
    /** X-Request-Id, echoed by every answer and carried by its log line and event. */
    readonly requestId: string,
    /** performance.now() when the request reached the app. */
    readonly startedAt: number,
  ) {}

  /** Written by readJsonBody. */
  set body(body: ReceivedBody) {
    this.receivedBody = body;
  }

  get body(): ReceivedBody {
    return this.receivedBody ?? stageMissing('readJsonBody');
  }

  /** The body if it was read: the observers of a request see every request, refused ones included. */
  get bodyIfRead(): ReceivedBody | undefined {
    return this.receivedBody;
  }

  /** Written by findAccount. */
  set namedAccount(named: NamedAccount) {
    this.foundAccount = named;
  }

  get namedAccount(): NamedAccount {
    return this.foundAccount ?? stageMissing('findAccount');
  }

  /** Written by verifySignature. */
  set signature(signature: CheckedSignature) {
    this.checkedSignature = signature;
  }

  get signature(): CheckedSignature {
    return this.checkedSignature ?? stageMissing('verifySignature');
  }

  /** Written by validate. */
  set input(input: ValidatedInput) {
    this.validatedInput = input;
  }

  get input(): ValidatedInput {
    return this.validatedInput ?? stageMissing('validate');
  }

  /** Written by authenticate. */
  set account(account: Account) {
    this.authenticatedAccount = account;
  }

  get account(): Account {
    return this.authenticatedAccount ?? stageMissing('authenticate');
  }

  /** The account if the request authenticated as one. */
  get accountIfAuthenticated(): Account | undefined {
    return this.authenticatedAccount;
  }
}

/**
 * The context lives on the response, in res.locals (Express's place for what one request carries), and goes with
 * it. Not in a WeakMap keyed by the response: V8's scavenges keep a WeakMap's values alive until a full collection,
 * so every request's body, parse and answer were promoted to the old generation (docs/BENCHMARKS.md, "What survives
 * a scavenge").
 */
declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express types res.locals by this global interface
  namespace Express {
    interface Locals {
      requestContext?: RequestContext;
    }
  }
}

/** The first step of every request: its context, which the steps after it read through requestContext(res). */
export const beginRequestContext: RequestHandler = function beginRequestContext(req, res, next) {
  res.locals.requestContext = new RequestContext(requestIdOf(req), performance.now());
  next();
};

/** The request's context if it reached the app (a response Express never handled has no locals): for what observes every answer (process/tracing.ts names spans with it). */
export function requestContextIfBegun(res: ServerResponse): RequestContext | undefined {
  return (res as Partial<Response>).locals?.requestContext;
}

/** The context beginRequestContext made for this request; a step mounted before it is a programming error. */
export function requestContext(res: Response): RequestContext {
  return res.locals.requestContext ?? stageMissing('beginRequestContext');
}
