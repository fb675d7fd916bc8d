import { BOOKING_FIELDS, type Booking, type BookingFields } from '../../src/domain/bookings';
import { bookingView } from '../../src/routes/booking-view';

/** Every field a different value, so a field written from the wrong source shows. */
const BOOKING: Booking = {
  sourceId: 'ACME',
  bookingId: '1396',
  fields: Object.fromEntries(BOOKING_FIELDS.map((field, n) => [field, `${field}-value-${n}`])) as BookingFields,
  status: 'cancelled',
  updatedAt: new Date('2024-01-21T09:30:00.123Z'),
};

describe('the booking view', () => {
  it('has identity, every field in the specification order (BOOKING_FIELDS), status, then updated_at', () => {
    expect(Object.keys(bookingView(BOOKING))).toEqual(['source_id', 'booking_id', ...BOOKING_FIELDS, 'status', 'updated_at']);
  });

  it('gives the same bytes as the view built key by key from BOOKING_FIELDS', () => {
    const keyByKey: Record<string, string> = { source_id: 'ACME', booking_id: '1396' };
    for (const field of BOOKING_FIELDS) keyByKey[field] = BOOKING.fields[field];
    keyByKey.status = 'cancelled';
    keyByKey.updated_at = '2024-01-21T09:30:00.123Z';
    expect(JSON.stringify({ booking: bookingView(BOOKING) })).toBe(JSON.stringify({ booking: keyByKey }));
  });
});
