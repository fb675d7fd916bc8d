import { Router, type RequestHandler, type Response } from 'express';
import type { z } from 'zod';
import { authenticate, authenticatedAccount } from '../middleware/authenticate';
import { methodNotAllowed } from '../middleware/errors';
import { validate } from '../middleware/validate';
import type { OperationOutcome } from '../services/token-checks';
import type { Account, StoreTransaction } from '../store/store';
import type { OperationRouterDeps } from './operation-deps';
import { operation, respond } from './respond';

/** A token notification's service: the validated request, the caller's account and the clock. */
export type NotificationService<Request> = (tx: StoreTransaction, request: Request, account: Account, now: Date) => Promise<OperationOutcome>;

/**
 * A token notification after the intake: its schema (400), account and share_public (401), what follows
 * authentication (429), then its service in one unit of work. Served by its own route and by POST /v1/events.
 */
export function tokenNotificationChain<Schema extends z.ZodType<{ source_id: string; share_public?: string }>>(
  { store, now, afterAuthentication }: OperationRouterDeps,
  schema: Schema,
  service: NotificationService<z.output<Schema>>,
  keyless?: (res: Response) => boolean,
): RequestHandler[] {
  const notification = validate(schema);
  return [
    notification,
    authenticate(store, 'share_public', notification.input, keyless),
    ...afterAuthentication,
    respond(store, now, (tx, res) => service(tx, notification.input(res), authenticatedAccount(res), now())),
  ];
}

/** The notification's own route: POST only; the operation is named for metrics before anything can refuse it. */
export function tokenNotificationRouter(path: string, name: string, deps: OperationRouterDeps, chain: RequestHandler[]): Router {
  const router = Router();
  router
    .route(path)
    .post(operation(name), ...deps.intake, ...chain)
    .all(methodNotAllowed(['POST']));
  return router;
}
