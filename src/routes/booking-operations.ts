/** Create, Modify and Cancel Booking: one route, a method each, answered with the booking. */
import { Router } from 'express';
import type { Booking } from '../domain/bookings';
import { methodNotAllowed } from '../middleware/errors';
import { bookingChangeSchema, cancelBookingSchema, createBookingSchema, otherBookingOperation } from '../schemas/booking';
import { cancelBooking, createBooking, modifyBooking } from '../services/booking-changes';
import { bookingView } from './booking-view';
import { BOOKING_PATH, keyedOperationChain } from './keyed-operation';
import type { OperationRouterDeps } from './operation-deps';

const withBooking = (booking: Booking) => ({ booking: bookingView(booking) });

/**
 * POST creates a booking the account does not have yet, starting active; PATCH changes only the fields it carries;
 * DELETE cancels (again: nothing changes). One route, so OPTIONS and the 405 of any other method name all three.
 */
export function bookingRouter(deps: OperationRouterDeps): Router {
  const router = Router();
  router
    .route(BOOKING_PATH)
    .post(...keyedOperationChain(deps, { name: 'create_booking', schema: createBookingSchema, otherOperation: otherBookingOperation('new'), service: createBooking, view: withBooking }))
    .patch(...keyedOperationChain(deps, { name: 'modify_booking', schema: bookingChangeSchema, otherOperation: otherBookingOperation('modify'), service: modifyBooking, view: withBooking }))
    .delete(...keyedOperationChain(deps, { name: 'cancel_booking', schema: cancelBookingSchema, otherOperation: otherBookingOperation('cancel'), service: cancelBooking, view: withBooking }))
    .all(methodNotAllowed(['POST', 'PATCH', 'DELETE']));
  return router;
}
