import { NotFoundError } from '../errors';
import { BOOKING_FIELDS, bookingChangeSchema, bookingPathSchema } from '../schemas/booking';
import { fieldProblems, validationError } from '../schemas/validate';
import { modifyBooking } from '../services/booking-changes';
import type { Booking } from '../store/store';
import type { OperationRoute, OperationRouteDeps } from './operations';

const SUPPORTED_VERSIONS: ReadonlySet<string> = new Set(['v1']);

/** The booking as partners see it: identity, every field in the specification's order, then updated_at. */
export function bookingView(booking: Booking): Record<string, string> {
  const view: Record<string, string> = { source_id: booking.sourceId, booking_id: booking.bookingId };
  for (const field of BOOKING_FIELDS) view[field] = booking.fields[field];
  view.updated_at = booking.updatedAt.toISOString();
  return view;
}

/** Modify Booking: the version is checked on the path alone, before the body is read. */
export function bookingRoutes({ store, now }: OperationRouteDeps): OperationRoute[] {
  return [
    {
      path: '/:version/booking/:partnerid/:randomkey',
      operation: 'booking_change',
      methods: ['PATCH'],
      checkPath: (params) => {
        if (!SUPPORTED_VERSIONS.has(params.version)) throw new NotFoundError('Unsupported API version', 'unsupported_version');
      },
      handle: async (rawBody, params) => {
        const body = bookingChangeSchema.safeParse(rawBody);
        const path = bookingPathSchema.safeParse(params);
        if (!body.success || !path.success) {
          throw validationError([
            ...(path.success ? [] : fieldProblems(path.error.issues)),
            ...(body.success ? [] : fieldProblems(body.error.issues)),
          ]);
        }
        const outcome = await modifyBooking(store, path.data.partnerid, path.data.randomkey, body.data, now());
        return { replayed: outcome.replayed, extra: { booking: bookingView(outcome.booking) } };
      },
    },
  ];
}
