import { BOOKING_FIELDS, type Booking } from '../domain/bookings';

/** The booking as partners see it: identity, every field in the specification's order, status, then updated_at. */
export function bookingView(booking: Booking): Record<string, string> {
  const view: Record<string, string> = { source_id: booking.sourceId, booking_id: booking.bookingId };
  for (const field of BOOKING_FIELDS) view[field] = booking.fields[field];
  view.status = booking.status;
  view.updated_at = booking.updatedAt.toISOString();
  return view;
}
