import { Router, type RequestHandler } from 'express';
import type { z } from 'zod';
import type { FieldProblem } from '../domain/field-problem';
import { NotFoundError } from '../errors';
import { authenticate } from '../middleware/authenticate';
import { requestContext } from '../middleware/request-context';
import { validate } from '../middleware/validate';
import { keyedPathSchema } from '../schemas/booking';
import { tokenChangeEventSchema } from '../schemas/token-change';
import { parsePayload, validationError } from '../schemas/validate';
import type { KeyedCall, KeyedOutcome } from '../services/keyed-requests';
import type { StoreTransaction } from '../store/store';
import type { OperationRouterDeps } from './operation-deps';
import { applyInOneUnit, keyedAnswer, operation } from './apply-in-one-unit';

const SUPPORTED_VERSIONS: ReadonlySet<string> = new Set(['v1']);

/** The version is checked on the path alone, before the body is read; like the rest of the path, in any case. */
const supportedVersion: RequestHandler = (req, _res, next) => {
  if (!SUPPORTED_VERSIONS.has(String(req.params.version).toLowerCase())) throw new NotFoundError('Unsupported API version', 'unsupported_version');
  next();
};

export interface KeyedOperation<Schema extends z.ZodType<{ source_id: string; share_secret: string }>, Result> {
  /** For metrics and the event log. */
  name: string;
  schema: Schema;
  /** A body meant for another operation of the same path, told which method takes it before its fields are checked. */
  otherOperation?: (body: unknown) => FieldProblem | undefined;
  service: (tx: StoreTransaction, call: KeyedCall<z.output<Schema>>) => Promise<KeyedOutcome<Result>>;
  /** What the answer carries besides success and message, e.g. `{ booking }`. */
  view: (result: Result) => object;
}

/** A body of another operation would otherwise be told of every field that operation does not send. */
function refuseOtherOperation(otherOperation: (body: unknown) => FieldProblem | undefined): RequestHandler {
  return function refuseOtherOperation(_req, res, next) {
    const problem = otherOperation(requestContext(res).body.parsed);
    if (problem) throw validationError([problem]);
    next();
  };
}

/**
 * The chain of an operation keyed by `{randomkey}` (booking operations, Create Token, the token changes): version
 * (404), receiving it, then its chain once received (receivedKeyedChain). Its router puts it on the path's route
 * beside the path's other methods, so OPTIONS and the 405 name them all.
 */
export function keyedOperationChain<Schema extends z.ZodType<{ source_id: string; share_secret: string }>, Result>(
  deps: OperationRouterDeps,
  entry: KeyedOperation<Schema, Result>,
): RequestHandler[] {
  return [operation(entry.name), supportedVersion, ...deps.receive, ...receivedKeyedChain(deps, entry)];
}

/**
 * A keyed operation once received: a body of another operation of the path refused (400), body and path schema (400),
 * account and share_secret (401), what follows authentication (429), then its service in one unit of work, which
 * keeps the answer under the key. PATCH on the token path runs it from here once token_event has chosen it.
 */
export function receivedKeyedChain<Schema extends z.ZodType<{ source_id: string; share_secret: string }>, Result>(
  deps: OperationRouterDeps,
  { schema, otherOperation, service, view }: KeyedOperation<Schema, Result>,
): RequestHandler[] {
  const { store, now, afterAuthentication, quotas } = deps;
  const request = validate(schema, keyedPathSchema);
  return [
    ...(otherOperation ? [refuseOtherOperation(otherOperation)] : []),
    request,
    authenticate(store, 'share_secret', (res) => request.input(res).body),
    ...afterAuthentication,
    applyInOneUnit(deps, async (tx, res, keys) => {
      const { body, path: { partnerid, randomkey } } = request.input(res);
      const outcome = await service(tx, { partnerId: partnerid, key: randomkey, body, account: requestContext(res).account, now: now(), quotas, keys });
      return keyedAnswer(outcome, view);
    }),
  ];
}

/** PATCH on the token path, named and received: version (404), then the chain of the token change its token_event names (400 when none). */
export function dispatchOnTokenEvent(deps: OperationRouterDeps, chains: ReadonlyMap<string, { name: string; chain: RequestHandler[] }>): RequestHandler[] {
  // mergeParams: the chosen chain reads the path's partner and key, which this route matched.
  const routers = new Map([...chains].map(([event, { name, chain }]) => [event, { name, router: Router({ mergeParams: true }).use(chain) }]));
  return [
    supportedVersion,
    ...deps.receive,
    function dispatchOnTokenEvent(req, res, next) {
      const context = requestContext(res);
      const chosen = routers.get(parsePayload(tokenChangeEventSchema, context.body.parsed).token_event);
      if (!chosen) throw new Error('a token_event of the schema has no operation in the catalogue');
      context.operation = chosen.name;
      chosen.router(req, res, next);
    },
  ];
}
