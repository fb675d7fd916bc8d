import { Router, type RequestHandler } from 'express';
import { NotFoundError } from '../errors';
import { authenticate, authenticatedAccount } from '../middleware/authenticate';
import { methodNotAllowed } from '../middleware/errors';
import { validate } from '../middleware/validate';
import { bookingChangeSchema, bookingPathSchema } from '../schemas/booking';
import { modifyBooking } from '../services/booking-changes';
import { bookingView } from './booking-view';
import type { OperationRouterDeps } from './operation-deps';
import { operation, respond } from './respond';

const BOOKING_PATH = '/:version/booking/:partnerid/:randomkey';
const SUPPORTED_VERSIONS: ReadonlySet<string> = new Set(['v1']);

/** The version is checked on the path alone, before the body is read; like the rest of the path, in any case. */
const supportedVersion: RequestHandler = (req, _res, next) => {
  if (!SUPPORTED_VERSIONS.has(String(req.params.version).toLowerCase())) throw new NotFoundError('Unsupported API version', 'unsupported_version');
  next();
};

export function modifyBookingRouter(deps: OperationRouterDeps): Router {
  const { store, now, intake, afterAuthentication } = deps;
  const change = validate(bookingChangeSchema, bookingPathSchema);
  const router = Router();
  router
    .route(BOOKING_PATH)
    .patch(
      operation('booking_change'),
      supportedVersion,
      ...intake,
      change,
      authenticate(store, 'share_secret', (res) => change.input(res).body),
      ...afterAuthentication,
      respond(store, now, async (tx, res) => {
        const { body, path } = change.input(res);
        const outcome = await modifyBooking(tx, path.partnerid, path.randomkey, body, authenticatedAccount(res), now());
        return { replayed: outcome.replayed, extra: { booking: bookingView(outcome.booking) } };
      }),
    )
    .all(methodNotAllowed(['PATCH']));
  return router;
}
