import { z } from 'zod';
import { BOOKING_FIELDS, BOOKING_TEXT_FIELDS, bookingRuleProblems, type BookingField, type BookingFields } from '../domain/bookings';
import { textBytesProblem } from '../domain/text-bytes';
import type { FieldProblem } from '../domain/field-problem';
import {
  amountText,
  atLeastOneOf,
  calendarDate,
  countryCode,
  currencyCode,
  eventName,
  oneOf,
  optionalText,
  ruleClause,
  text,
  typeError,
  wholeNumberText,
} from './fields';

/** The format of each booking field, in the domain's order of the fields (the order the document lists them in). */
export const bookingFieldSchemas = {
  buyer_id: optionalText(),
  booking_date: calendarDate,
  booking_category: text(),
  supplier_id: text(),
  property_name: text(),
  property_country: countryCode,
  guests_count: wholeNumberText(1, 999),
  room_count: wholeNumberText(1, 999),
  check_in: calendarDate,
  check_out: calendarDate,
  transaction_currency: currencyCode,
  transaction_amount: amountText,
  margin_category: oneOf(['%', 'fixed']),
  transaction_margin: amountText,
  nonrefundable_amount: amountText,
  refundable_amount: amountText,
  firstnight_amount: amountText,
  cancellation_days: wholeNumberText(0, 999),
  auth_code: text(),
  pre_auth: oneOf(['true', 'false']),
} satisfies { [Field in BookingField]: z.ZodType<string> };

const optionalBookingFields = Object.fromEntries(BOOKING_FIELDS.map((field) => [field, bookingFieldSchemas[field].optional()])) as {
  [Field in BookingField]: z.ZodOptional<(typeof bookingFieldSchemas)[Field]>;
};

/**
 * A % margin is at most 100: a transaction_margin of 0 to 99.99, or 100 with zero decimals, leading zeros allowed
 * as amounts allow them. bookingRuleProblems checks it; this states it in the JSON Schema.
 */
const PERCENT_MARGIN_RULE = {
  if: ruleClause({ properties: { margin_category: { const: '%' } }, required: ['margin_category'] }),
  then: ruleClause({ properties: { transaction_margin: { pattern: '^(?:0{0,8}\\d{1,2}(?:\\.\\d{1,2})?|0{0,7}100(?:\\.0{1,2})?)$' } } }),
};

/** The fields of a booking in the specification's order, as a schema validated them. */
function bookingFieldsOf(body: Partial<BookingFields>): Partial<BookingFields> {
  const fields: Partial<BookingFields> = {};
  for (const field of BOOKING_FIELDS) {
    const value = body[field];
    if (value !== undefined) fields[field] = value;
  }
  return fields;
}

/** Create Booking body: every field but buyer_id (empty when left out), checked together as a stored booking is. */
export const createBookingSchema = z
  .object({
    share_secret: text(),
    booking_event: eventName('new'),
    source_id: text(),
    booking_id: text(),
    ...bookingFieldSchemas,
    buyer_id: bookingFieldSchemas.buyer_id.default(''),
  })
  .superRefine((body, ctx) => {
    // The rules read the fields as values: a field that failed its own format is reported alone.
    if (ctx.issues.length > 0) return;
    for (const problem of bookingRuleProblems(body)) ctx.addIssue({ code: 'custom', path: [problem.field], message: problem.message });
    // Not a rule of the seed's: it bounds what a request makes the service keep.
    // booking_id too: a kept answer and the booking's row hold it; bounded here, where a booking is made.
    const idTooLong = textBytesProblem(body, ['booking_id']);
    if (idTooLong) ctx.addIssue({ code: 'custom', path: ['booking_id'], message: idTooLong.message });
    const tooLong = textBytesProblem(body, BOOKING_TEXT_FIELDS);
    if (tooLong) ctx.addIssue({ code: 'custom', path: [], message: tooLong.message });
  })
  // The margin rule, stated for the document; check_out against check_in compares two values, which JSON Schema cannot.
  .meta(PERCENT_MARGIN_RULE)
  .transform((body) => ({
    share_secret: body.share_secret,
    source_id: body.source_id,
    booking_id: body.booking_id,
    fields: bookingFieldsOf(body) as BookingFields,
  }));

export type CreateBookingRequest = z.output<typeof createBookingSchema>;

/** Cancel Booking body: the booking, named by its account. */
export const cancelBookingSchema = z.object({
  share_secret: text(),
  booking_event: eventName('cancel'),
  source_id: text(),
  booking_id: text(),
});

export type CancelBookingRequest = z.output<typeof cancelBookingSchema>;

/** What every Modify Booking body carries besides the fields it changes. */
const BOOKING_IDENTITY_FIELDS = ['share_secret', 'booking_event', 'source_id', 'booking_id'] as const;

/** Modify Booking body: identity, secret and event are required; PATCH changes only the fields it carries. */
export const bookingChangeSchema = z
  .object({
    share_secret: text(),
    booking_event: eventName('modify'),
    source_id: text(),
    booking_id: text(),
    ...optionalBookingFields,
  })
  .superRefine((body, ctx) => {
    if (!BOOKING_FIELDS.some((field) => body[field] !== undefined)) {
      ctx.addIssue({ code: 'custom', path: [], message: `must carry at least one field to change: ${BOOKING_FIELDS.join(', ')}` });
    }
    // The margin rule where the body sets both fields, as the document states it; against the stored booking's
    // fields, the service checks it after the booking is found.
    if (ctx.issues.length > 0 || body.margin_category !== '%' || body.transaction_margin === undefined) return;
    const { margin_category: category, transaction_margin: margin } = body;
    for (const problem of bookingRuleProblems({ margin_category: category, transaction_margin: margin } as BookingFields)) {
      ctx.addIssue({ code: 'custom', path: [problem.field], message: problem.message });
    }
  })
  // At least one field; and the margin rule where the body itself sets margin_category to % (against a stored %,
  // only the service can check it).
  .meta({ ...atLeastOneOf(BOOKING_FIELDS, BOOKING_IDENTITY_FIELDS), ...PERCENT_MARGIN_RULE })
  .transform((body) => ({
    share_secret: body.share_secret,
    source_id: body.source_id,
    booking_id: body.booking_id,
    changes: bookingFieldsOf(body),
  }));

export type BookingChangeRequest = z.output<typeof bookingChangeSchema>;

/** One path, three operations: the method names the operation, and booking_event must agree with it. */
const METHOD_OF_BOOKING_EVENT = { new: 'POST', modify: 'PATCH', cancel: 'DELETE' } as const;
type BookingEvent = keyof typeof METHOD_OF_BOOKING_EVENT;

/**
 * A body whose booking_event names another booking operation is told which method takes it: otherwise it would be
 * told of every field this operation needs and that one does not send.
 */
export function otherBookingOperation(event: BookingEvent): (body: unknown) => FieldProblem | undefined {
  return (body) => {
    const sent = typeof body === 'object' && body !== null ? (body as { booking_event?: unknown }).booking_event : undefined;
    if (typeof sent !== 'string' || sent === event || !Object.hasOwn(METHOD_OF_BOOKING_EVENT, sent)) return undefined;
    const method = METHOD_OF_BOOKING_EVENT[sent as BookingEvent];
    return {
      field: 'booking_event',
      message: `is "${sent}": use ${method} for ${sent}; ${METHOD_OF_BOOKING_EVENT[event]} takes "${event}"`,
    };
  };
}

/** Path of the booking operations and Create Token; `{randomkey}` is the idempotency key. `{version}` is routed, not validated here. */
export const keyedPathSchema = z.object({
  partnerid: text(),
  randomkey: z
    .string({ error: typeError('a string') })
    .regex(/^[A-Za-z0-9_-]{8,64}$/, 'must be 8 to 64 characters of A-Z, a-z, 0-9, _ and -'),
});
