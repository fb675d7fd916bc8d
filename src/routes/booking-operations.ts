/** Create, Modify and Cancel Booking: one router each, on one path, answered with the booking. */
import type { Router } from 'express';
import { bookingChangeSchema, cancelBookingSchema, createBookingSchema } from '../schemas/booking';
import { cancelBooking, createBooking, modifyBooking } from '../services/booking-changes';
import type { Booking } from '../store/store';
import { bookingView } from './booking-view';
import { BOOKING_PATH, keyedOperationRouter } from './keyed-operation';
import type { OperationRouterDeps } from './operation-deps';

const withBooking = (booking: Booking) => ({ booking: bookingView(booking) });

/** POST: a booking the account does not have yet, starting active. */
export function createBookingRouter(deps: OperationRouterDeps): Router {
  return keyedOperationRouter(deps, { method: 'post', path: BOOKING_PATH, name: 'create_booking', schema: createBookingSchema, service: createBooking, view: withBooking });
}

/** PATCH: changes only the fields it carries. */
export function modifyBookingRouter(deps: OperationRouterDeps): Router {
  return keyedOperationRouter(deps, { method: 'patch', path: BOOKING_PATH, name: 'modify_booking', schema: bookingChangeSchema, service: modifyBooking, view: withBooking });
}

/** DELETE: the booking becomes cancelled; cancelling it again changes nothing. */
export function cancelBookingRouter(deps: OperationRouterDeps): Router {
  return keyedOperationRouter(deps, { method: 'delete', path: BOOKING_PATH, name: 'cancel_booking', schema: cancelBookingSchema, service: cancelBooking, view: withBooking });
}
