/** A booking: its fields, its status, and the rules that span its fields. */
import { isBeforeDate } from './calendar-days';
import type { FieldProblem } from './field-problem';
import { parseAmount } from './money';

/** Every changeable field of a booking, in the interface specification's order. */
export const BOOKING_FIELDS = [
  'buyer_id',
  'booking_date',
  'booking_category',
  'supplier_id',
  'property_name',
  'property_country',
  'guests_count',
  'room_count',
  'check_in',
  'check_out',
  'transaction_currency',
  'transaction_amount',
  'margin_category',
  'transaction_margin',
  'nonrefundable_amount',
  'refundable_amount',
  'firstnight_amount',
  'cancellation_days',
  'auth_code',
  'pre_auth',
] as const;

export type BookingField = (typeof BOOKING_FIELDS)[number];
/** Values are normalised strings, as the payload schemas leave them. */
export type BookingFields = { [Field in BookingField]: string };

export const BOOKING_STATUSES = ['active', 'cancelled'] as const;
export type BookingStatus = (typeof BOOKING_STATUSES)[number];

export interface Booking {
  sourceId: string;
  bookingId: string;
  fields: BookingFields;
  status: BookingStatus;
  updatedAt: Date;
}

const PERCENT_MARGIN_LIMIT = parseAmount('100');

/** Rules that span fields, checked on the whole booking as it would be after a change. */
/** A booking's free text, bounded in bytes together (text-bytes.ts); booking_id is bounded by its characters, as a key. */
export const BOOKING_TEXT_FIELDS = ['buyer_id', 'booking_category', 'supplier_id', 'property_name', 'auth_code'] as const;

export function bookingRuleProblems(booking: BookingFields): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (isBeforeDate(booking.check_out, booking.check_in)) {
    problems.push({ field: 'check_out', message: `must not be before check_in (${booking.check_in})` });
  }
  if (booking.margin_category === '%' && parseAmount(booking.transaction_margin) > PERCENT_MARGIN_LIMIT) {
    problems.push({ field: 'transaction_margin', message: 'must be at most 100 when margin_category is "%"' });
  }
  return problems;
}
