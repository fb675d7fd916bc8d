import { Router, type RequestHandler } from 'express';
import type { z } from 'zod';
import { NotFoundError } from '../errors';
import { authenticate, authenticatedAccount } from '../middleware/authenticate';
import { methodNotAllowed } from '../middleware/errors';
import { validate } from '../middleware/validate';
import { keyedPathSchema } from '../schemas/booking';
import type { KeyedCall, KeyedOutcome } from '../services/keyed-requests';
import type { StoreTransaction } from '../store/store';
import type { OperationRouterDeps } from './operation-deps';
import { keyedAnswer, operation, respond } from './respond';

/** The booking operations' path: POST creates, PATCH modifies, DELETE cancels. */
export const BOOKING_PATH = '/:version/booking/:partnerid/:randomkey';
/** Create Token's path. */
export const TOKEN_PATH = '/:version/token/:partnerid/:randomkey';

const SUPPORTED_VERSIONS: ReadonlySet<string> = new Set(['v1']);

/** The version is checked on the path alone, before the body is read; like the rest of the path, in any case. */
const supportedVersion: RequestHandler = (req, _res, next) => {
  if (!SUPPORTED_VERSIONS.has(String(req.params.version).toLowerCase())) throw new NotFoundError('Unsupported API version', 'unsupported_version');
  next();
};

export interface KeyedOperation<Schema extends z.ZodType<{ source_id: string; share_secret: string }>, Result> {
  method: 'post' | 'patch' | 'delete';
  path: string;
  /** For metrics and the event log. */
  name: string;
  schema: Schema;
  service: (tx: StoreTransaction, call: KeyedCall<z.output<Schema>>) => Promise<KeyedOutcome<Result>>;
  /** What the answer carries besides success and message, e.g. `{ booking }`. */
  view: (result: Result) => object;
}

/**
 * An operation keyed by `{randomkey}` (booking operations, Create Token): version (404), the intake, body and
 * path schema (400), account and share_secret (401), what follows authentication (429), then its service in
 * one unit of work, which keeps the answer under the key.
 */
export function keyedOperationRouter<Schema extends z.ZodType<{ source_id: string; share_secret: string }>, Result>(
  { store, now, intake, afterAuthentication, quotas }: OperationRouterDeps,
  { method, path, name, schema, service, view }: KeyedOperation<Schema, Result>,
): Router {
  const request = validate(schema, keyedPathSchema);
  const router = Router();
  router[method](
    path,
    operation(name),
    supportedVersion,
    ...intake,
    request,
    authenticate(store, 'share_secret', (res) => request.input(res).body),
    ...afterAuthentication,
    respond(store, now, async (tx, res) => {
      const { body, path: { partnerid, randomkey } } = request.input(res);
      const outcome = await service(tx, { partnerId: partnerid, key: randomkey, body, account: authenticatedAccount(res), now: now(), quotas });
      return keyedAnswer(outcome, view);
    }),
  );
  return router;
}

/** A path served by one router per method: any other method is a 405 naming theirs. Mounted after them. */
export function otherMethodsRouter(path: string, allowed: readonly string[]): Router {
  const router = Router();
  router.all(path, methodNotAllowed(allowed));
  return router;
}
