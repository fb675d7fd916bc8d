import type { RequestHandler, Response } from 'express';
import { authenticate } from '../middleware/authenticate';
import { requestContext } from '../middleware/request-context';
import { validate } from '../middleware/validate';
import type { TokenNotification } from '../operations';
import type { OperationRouterDeps } from './operation-deps';
import { applyInOneUnit } from './apply-in-one-unit';

/**
 * A token notification once received (deps.receive): its schema (400), account and share_public (401), what follows
 * authentication (429), then its service in one unit of work. Served by its own route and by POST /v1/events.
 */
export function tokenNotificationChain(deps: OperationRouterDeps, entry: TokenNotification): RequestHandler[] {
  const { store, now, afterAuthentication, allowKeylessStatusChange } = deps;
  const notification = validate(entry.schema);
  // A keyless request only where the entry allows it: signed with the account's own secret, or allowed by the operator.
  const keyless = entry.keyless ? (res: Response) => allowKeylessStatusChange || requestContext(res).signature.signedByAccount : undefined;
  return [
    notification,
    authenticate(store, 'share_public', notification.input, keyless),
    ...afterAuthentication,
    applyInOneUnit(deps, (tx, res) => entry.service(tx, notification.input(res), requestContext(res).account, now())),
  ];
}
