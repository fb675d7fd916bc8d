import { Router, type RequestHandler } from 'express';
import { NotFoundError } from '../errors';
import { BOOKING_FIELDS, bookingChangeSchema, bookingPathSchema } from '../schemas/booking';
import { fieldProblems, validationError } from '../schemas/validate';
import { modifyBooking } from '../services/booking-changes';
import type { Booking, Store } from '../store/store';
import { methodNotAllowed } from '../middleware/errors';
import { operation } from '../middleware/observe';
import { answer } from './respond';

const SUPPORTED_VERSIONS: ReadonlySet<string> = new Set(['v1']);

/** The booking as partners see it: identity, every field in the specification's order, then updated_at. */
export function bookingView(booking: Booking): Record<string, string> {
  const view: Record<string, string> = { source_id: booking.sourceId, booking_id: booking.bookingId };
  for (const field of BOOKING_FIELDS) view[field] = booking.fields[field];
  view.updated_at = booking.updatedAt.toISOString();
  return view;
}

export interface BookingRouteDeps {
  store: Store;
  intake: RequestHandler[];
  now: () => Date;
}

export function bookingRouter({ store, intake, now }: BookingRouteDeps): Router {
  const requireSupportedVersion: RequestHandler = (req, _res, next) => {
    if (!SUPPORTED_VERSIONS.has(req.params.version as string)) throw new NotFoundError('Unsupported API version', 'unsupported_version');
    next();
  };

  const modify: RequestHandler = async (req, res) => {
    const body = bookingChangeSchema.safeParse(req.body);
    const path = bookingPathSchema.safeParse(req.params);
    if (!body.success || !path.success) {
      throw validationError([
        ...(path.success ? [] : fieldProblems(path.error.issues)),
        ...(body.success ? [] : fieldProblems(body.error.issues)),
      ]);
    }
    const outcome = await modifyBooking(store, path.data.partnerid, path.data.randomkey, body.data, now());
    await answer(res, store, outcome.replayed, { booking: bookingView(outcome.booking) });
  };

  const router = Router();
  router
    .route('/:version/booking/:partnerid/:randomkey')
    .patch(operation('booking_change'), requireSupportedVersion, intake, modify)
    .all(methodNotAllowed(['PATCH']));
  return router;
}
