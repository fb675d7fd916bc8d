import type { Booking, BookingField } from '../domain/bookings';

/** The view's keys: identity, every field in the specification's order (BOOKING_FIELDS), status, then updated_at. */
type BookingViewKey = 'source_id' | 'booking_id' | BookingField | 'status' | 'updated_at';

/**
 * The booking as partners see it: identity, every field in the specification's order, status, then updated_at.
 * Written out as one literal, not copied key by key: 24 keys added one at a time pass V8's limit for fast
 * properties, and the dictionary-mode object that makes costs its build and the answer's JSON.stringify
 * (docs/BENCHMARKS.md, issue 22). The type names every key, so none can be missing; a test holds the order.
 */
export function bookingView(booking: Booking): Record<BookingViewKey, string> {
  const { fields } = booking;
  return {
    source_id: booking.sourceId,
    booking_id: booking.bookingId,
    buyer_id: fields.buyer_id,
    booking_date: fields.booking_date,
    booking_category: fields.booking_category,
    supplier_id: fields.supplier_id,
    property_name: fields.property_name,
    property_country: fields.property_country,
    guests_count: fields.guests_count,
    room_count: fields.room_count,
    check_in: fields.check_in,
    check_out: fields.check_out,
    transaction_currency: fields.transaction_currency,
    transaction_amount: fields.transaction_amount,
    margin_category: fields.margin_category,
    transaction_margin: fields.transaction_margin,
    nonrefundable_amount: fields.nonrefundable_amount,
    refundable_amount: fields.refundable_amount,
    firstnight_amount: fields.firstnight_amount,
    cancellation_days: fields.cancellation_days,
    auth_code: fields.auth_code,
    pre_auth: fields.pre_auth,
    status: booking.status,
    updated_at: booking.updatedAt.toISOString(),
  };
}
