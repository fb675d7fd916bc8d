/** The answers of the OpenAPI document: the response schemas, the error envelope's examples, statuses and headers. */
import { STATUS_CODES } from 'node:http';
import { z } from 'zod';
import {
  adminAttemptsSchema,
  adminBookingSchema,
  adminEndpointSchema,
  adminEndpointsSchema,
  adminEventsSchema,
  adminTokenSchema,
  bookingSuccessSchema,
  errorEnvelopeSchema,
  healthSchema,
  readySchema,
  successSchema,
  tokenMovementSuccessSchema,
  tokenSuccessSchema,
} from '../schemas/responses';

export type Json = Record<string, unknown>;

/** zod schema -> JSON Schema 2020-12, as OpenAPI 3.1 takes it; requests are described as sent (the input side). */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json;
  return rest;
}

export const RESPONSE_SCHEMAS = {
  Success: successSchema,
  BookingSuccess: bookingSuccessSchema,
  TokenSuccess: tokenSuccessSchema,
  TokenMovementSuccess: tokenMovementSuccessSchema,
  ErrorEnvelope: errorEnvelopeSchema,
  Health: healthSchema,
  Ready: readySchema,
  AdminToken: adminTokenSchema,
  AdminBooking: adminBookingSchema,
  AdminEvents: adminEventsSchema,
  AdminEndpoints: adminEndpointsSchema,
  AdminEndpoint: adminEndpointSchema,
  AdminAttempts: adminAttemptsSchema,
};

export type ResponseName = keyof typeof RESPONSE_SCHEMAS;
/** What an example of a component must be, so the compiler checks it against the zod schema (a unit test checks the document). */
export type ResponseExample<Name extends ResponseName> = z.output<(typeof RESPONSE_SCHEMAS)[Name]>;

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const envelopeExample = (
  status: number,
  message: string,
  details?: Array<{ field: string; message: string }>,
): ResponseExample<'ErrorEnvelope'> => ({
  success: 'false',
  errors: { code: String(status), message, ...(details ? { details } : {}) },
});

/** One example per status; two where the same status has two meanings. */
const ERROR_EXAMPLES: Record<number, Array<[string, ResponseExample<'ErrorEnvelope'>]>> = {
  400: [
    ['invalid', envelopeExample(400, 'Invalid field: token_id', [{ field: 'token_id', message: 'is required' }])],
    ['malformed', envelopeExample(400, 'Malformed JSON body: unexpected "}" at line 1, column 6')],
  ],
  401: [
    ['unauthorized', envelopeExample(401, 'Unauthorized')],
    ['signature', envelopeExample(401, 'Invalid webhook signature')],
  ],
  403: [
    ['partner', envelopeExample(403, 'partnerid in the path does not match source_id')],
    ['quota', envelopeExample(403, 'Quota exceeded: the account already holds 1000000 tokens, the most MAX_TOKENS_PER_ACCOUNT allows')],
    [
      'key limit',
      envelopeExample(
        403,
        'Key limit reached: the account already keeps 100000 request keys and signed deliveries of their retention window, the most MAX_KEYS_PER_ACCOUNT allows; replays of kept keys are still answered',
      ),
    ],
  ],
  404: [
    ['booking', envelopeExample(404, 'Booking not found')],
    ['version', envelopeExample(404, 'Unsupported API version')],
  ],
  405: [['method', envelopeExample(405, 'Method Not Allowed: use POST')]],
  409: [
    ['not active', envelopeExample(409, 'Token is freezed; only an active token can be withdrawn from')],
    ['expired', envelopeExample(409, 'Token expired on 31-12-2024')],
    ['balance', envelopeExample(409, 'token_balance 800.00 does not match the ledger: expected 900.00')],
    ['booking exists', envelopeExample(409, 'Booking 1396 already exists')],
    ['booking cancelled', envelopeExample(409, 'Booking is cancelled; a cancelled booking cannot be modified')],
  ],
  413: [
    ['destination', envelopeExample(413, 'Destination ID Unknown')],
    ['size', envelopeExample(413, 'Payload Too Large: the limit is 32kb')],
  ],
  415: [['type', envelopeExample(415, 'Content-Type must be application/json')]],
  422: [
    ['overdraft', envelopeExample(422, 'withdrawn_amount 600.00 is more than the token balance 500.00')],
    ['ceiling', envelopeExample(422, 'load_amount 0.01 would take the token balance 9999999999.99 over 9999999999.99')],
    ['key reused', envelopeExample(422, 'transaction_id was already used for a different request')],
  ],
  428: [['token', envelopeExample(428, "Token ID doesn't match")]],
  429: [['limit', envelopeExample(429, 'Too Many Requests')]],
  500: [['crash', envelopeExample(500, 'internal Server Error')]],
  503: [['unavailable', envelopeExample(503, 'Service Unavailable')]],
  504: [['timeout', envelopeExample(504, 'Gateway Timeout')]],
};

/** What an error status means where its HTTP name alone does not say it. */
const ERROR_DESCRIPTIONS: Record<number, string> = {
  403: "Forbidden: {partnerid} is not the body's source_id, or (Create Token, Create Booking) the account already holds its quota of tokens (MAX_TOKENS_PER_ACCOUNT) or bookings (MAX_BOOKINGS_PER_ACCOUNT), or a request under a new {randomkey} or a signed notification under a new webhook-id would take the account past the request keys and deliveries it may keep (MAX_KEYS_PER_ACCOUNT; replays of kept ones are still answered); nothing is applied",
  503: 'Service Unavailable: the store is unreachable or cannot write (a database out of disk, memory or connections; a memory store past 85% of its heap limit refuses to create tokens, bookings, request keys and deliveries, and past 95% ledger rows), or the service is shutting down',
};

export const REQUEST_ID_HEADER = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };
/** The per-account limit's own budget, on every answer after authentication (none when RATE_LIMIT_PER_MINUTE is 0). */
const RATE_LIMIT_HEADERS = {
  RateLimit: { $ref: '#/components/headers/RateLimit' },
  'RateLimit-Policy': { $ref: '#/components/headers/RateLimitPolicy' },
};

/** Headers some error statuses always carry. */
const ERROR_HEADERS: Record<number, Json> = {
  405: { Allow: { required: true, description: 'The methods the path takes', schema: { type: 'string' } } },
  429: {
    'Retry-After': { required: true, description: 'Seconds until the limit resets', schema: { type: 'string', pattern: '^\\d+$' } },
    ...RATE_LIMIT_HEADERS,
  },
};

export function errorResponses(statuses: number[], extraHeaders: Record<number, Json> = {}): Json {
  return Object.fromEntries(
    statuses.map((status) => [
      String(status),
      {
        description: ERROR_DESCRIPTIONS[status] ?? STATUS_CODES[status],
        headers: { ...REQUEST_ID_HEADER, ...ERROR_HEADERS[status], ...extraHeaders[status] },
        content: {
          'application/json': {
            schema: ref('ErrorEnvelope'),
            examples: Object.fromEntries((ERROR_EXAMPLES[status] ?? []).map(([name, value]) => [name, { value }])),
          },
        },
      },
    ]),
  );
}

/** `operation`: an operation's answer, which may be a replay and carries the caller's per-account budget. */
export function success<Name extends ResponseName>(schemaName: Name, example: ResponseExample<Name>, operation: boolean): Json {
  return {
    description: operation ? 'Applied, or a repeat of an accepted request (then Idempotent-Replayed: true)' : 'OK',
    headers: {
      ...REQUEST_ID_HEADER,
      ...(operation ? { ...RATE_LIMIT_HEADERS, 'Idempotent-Replayed': { $ref: '#/components/headers/IdempotentReplayed' } } : {}),
    },
    content: { 'application/json': { schema: ref(schemaName), example } },
  };
}
