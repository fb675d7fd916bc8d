/** What the service answers: used for the error envelope's type and for the OpenAPI document. */
import { z } from 'zod';
import { BOOKING_FIELDS, BOOKING_STATUSES } from '../domain/bookings';
import { LISTED_PROBLEMS } from '../domain/field-problem';
import { LEDGER_KINDS } from '../domain/ledger';
import { TOKEN_STATUSES } from '../domain/tokens';
import { TRANSACTION_ID_PATTERN } from './fields';
import { TOKEN_DETAIL_FIELDS, type TokenDetailField } from './token-creation';

export const successSchema = z.strictObject({ success: z.literal(true), message: z.literal('Success') });

const bookingViewSchema = z.strictObject({
  source_id: z.string(),
  booking_id: z.string(),
  ...(Object.fromEntries(BOOKING_FIELDS.map((field) => [field, z.string()])) as Record<(typeof BOOKING_FIELDS)[number], z.ZodString>),
  status: z.enum(BOOKING_STATUSES),
  updated_at: z.iso.datetime().meta({ description: 'When the booking last changed (UTC)' }),
});

export const bookingSuccessSchema = z.strictObject({
  success: z.literal(true),
  message: z.literal('Success'),
  booking: bookingViewSchema,
});

const fieldProblemSchema = z.strictObject({ field: z.string(), message: z.string() });

export const errorEnvelopeSchema = z.strictObject({
  success: z.literal('false').meta({ description: 'The string "false", as the interface specification says' }),
  errors: z.strictObject({
    code: z
      .string()
      .regex(/^\d{3}$/)
      .meta({ description: 'The HTTP status, as a string' }),
    message: z.string(),
    details: z
      .array(fieldProblemSchema)
      .max(LISTED_PROBLEMS)
      .optional()
      .meta({ description: `Validation errors only: one entry per bad field, the first ${LISTED_PROBLEMS} at most` }),
    details_total: z
      .int()
      .min(LISTED_PROBLEMS + 1)
      .optional()
      .meta({ description: `How many bad fields there were, when details lists only the first ${LISTED_PROBLEMS}` }),
  }),
});

export const healthSchema = z.strictObject({ status: z.literal('ok') });
export const readySchema = z.strictObject({ status: z.literal('ready') });

/** A token as its account sees it (Create Token's answer, the admin view). */
const tokenViewSchema = z.strictObject({
  token_id: z.string(),
  source_id: z.string(),
  destination_id: z.string(),
  status: z.enum(TOKEN_STATUSES),
  balance: z.string(),
  destination_currency: z.string().optional(),
  available_date: z.string().optional(),
  expiry_date: z.string().optional(),
  ...(Object.fromEntries(TOKEN_DETAIL_FIELDS.map((field) => [field, z.string().optional()])) as Record<
    TokenDetailField,
    z.ZodOptional<z.ZodString>
  >),
});

export const tokenSuccessSchema = z.strictObject({
  success: z.literal(true),
  message: z.literal('Success'),
  token: tokenViewSchema,
});

/** Load Token's and Unload Token's answer: the token after the move, and the ledger row the service filed. */
export const tokenMovementSuccessSchema = z.strictObject({
  success: z.literal(true),
  message: z.literal('Success'),
  token: tokenViewSchema,
  transaction: z.strictObject({
    transaction_id: z
      .string()
      .regex(TRANSACTION_ID_PATTERN)
      .meta({ description: "The ledger row's id, made by the service: 20 digits, unique in the account's ledger key space" }),
    kind: z.enum(['load', 'unload']),
    amount: z.string(),
    token_balance: z.string().meta({ description: 'The balance after the move' }),
  }),
});

export const adminTokenSchema = tokenViewSchema.extend({
  last_ledger_entries: z.array(
    z.strictObject({
      transaction_id: z.string(),
      kind: z.enum(LEDGER_KINDS),
      amount: z.string(),
      fee_amount: z.string().optional().meta({ description: 'Loads only: the fee charged to the sender' }),
      token_balance: z.string(),
      created_at: z.iso.datetime(),
    }),
  ),
});

export const adminBookingSchema = z.strictObject({ booking: bookingViewSchema });

export const adminEventsSchema = z.strictObject({
  events: z.array(
    z.strictObject({
      time: z.iso.datetime(),
      request_id: z.string(),
      method: z.string(),
      route: z.string(),
      operation: z.string(),
      source_id: z.string().optional(),
      token_id: z.string().optional(),
      booking_id: z.string().optional(),
      transaction_id: z.string().optional(),
      status: z.number().int(),
      outcome: z.enum(['accepted', 'replayed', 'rejected']),
      reason: z.string().optional(),
    }),
  ),
});

const attemptViewSchema = z.strictObject({
  id: z.number().int().meta({ description: "The attempt's id: the cursor of the next page (before)" }),
  change_id: z.string().meta({ description: "The change's id, the webhook-id it was sent with" }),
  source_id: z.string(),
  seq: z.number().int(),
  attempt: z
    .number()
    .int()
    .meta({ description: '1 for the first attempt of the change, 2 for the first retry, ... (from 1 again after an enable)' }),
  result: z.enum(['delivered', 'failed', 'gone']),
  status: z
    .number()
    .int()
    .nullable()
    .meta({ description: "The endpoint's HTTP status; null when it gave none (timeout, refused connection)" }),
  error: z.string().nullable(),
  duration_ms: z.number().int(),
  attempted_at: z.iso.datetime(),
});

export const adminEndpointSchema = z.strictObject({
  id: z.string(),
  state: z.enum(['enabled', 'disabled']),
  reason: z.string().nullable().meta({ description: 'Why it is disabled; null while enabled' }),
  positions: z.array(
    z.strictObject({
      source_id: z.string(),
      position: z
        .number()
        .int()
        .meta({ description: 'Every change of the account up to this seq is done: delivered, or not one the endpoint takes' }),
      oldest_undelivered: z.strictObject({ seq: z.number().int(), created_at: z.iso.datetime() }).nullable().meta({
        description: 'The first change after the position that the endpoint takes and has not taken (within the next 100); null: none',
      }),
    }),
  ),
  last_attempt: attemptViewSchema.nullable(),
});

export const adminEndpointsSchema = z.strictObject({ endpoints: z.array(adminEndpointSchema) });

export const adminAttemptsSchema = z.strictObject({ attempts: z.array(attemptViewSchema) });
