/**
 * The OpenAPI 3.1 document, generated from the same zod schemas the routes
 * validate with (zod 4's JSON Schema output). Only the layout is written
 * here: paths, statuses, headers, security and examples.
 *
 * CI lints it with Redocly's recommended rules (`npm run lint:openapi`) and a
 * unit test validates every example against its schema. An operation added
 * keeps both passing when it is built as the others are: its body schema in
 * REQUEST_SCHEMAS and its answer in RESPONSE_SCHEMAS (so the compiler checks
 * its examples); tokenNotification(), bookingOperation() or adminGet(), which
 * set its tag, security, errors and success answer; complete examples. Any
 * other operation states its `security` (OPEN when it is open) and uses a tag
 * of TAGS.
 */
import { STATUS_CODES } from 'node:http';
import { z } from 'zod';
import { eventQuerySchema } from './schemas/admin';
import { bookingChangeSchema, cancelBookingSchema, createBookingSchema, keyedPathSchema } from './schemas/booking';
import {
  adminBookingSchema,
  adminEventsSchema,
  adminTokenSchema,
  bookingSuccessSchema,
  errorEnvelopeSchema,
  healthSchema,
  readySchema,
  successSchema,
  tokenSuccessSchema,
} from './schemas/responses';
import { ruleClause } from './schemas/fields';
import { statusChangeSchema } from './schemas/status-change';
import { availableDateSchema, expiryDateSchema } from './schemas/token-dates';
import { createTokenSchema } from './schemas/token-creation';
import { loadedSchema, loadScheduleSchema, unloadedSchema } from './schemas/token-ledger';
import { withdrawSchema } from './schemas/withdraw';

type Json = Record<string, unknown>;

/** zod schema -> JSON Schema 2020-12, as OpenAPI 3.1 takes it; requests are described as sent (the input side). */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json;
  return rest;
}

/** Request bodies, described as sent (zod's input side). */
const REQUEST_SCHEMAS = {
  StatusChangeRequest: statusChangeSchema,
  WithdrawRequest: withdrawSchema,
  LoadedRequest: loadedSchema,
  UnloadedRequest: unloadedSchema,
  LoadScheduleRequest: loadScheduleSchema,
  ExpiryDateRequest: expiryDateSchema,
  AvailableDateRequest: availableDateSchema,
  CreateTokenRequest: createTokenSchema,
  CreateBookingRequest: createBookingSchema,
  BookingChangeRequest: bookingChangeSchema,
  CancelBookingRequest: cancelBookingSchema,
};

/** Answers, described as sent back (zod's output side). */
const RESPONSE_SCHEMAS = {
  Success: successSchema,
  BookingSuccess: bookingSuccessSchema,
  TokenSuccess: tokenSuccessSchema,
  ErrorEnvelope: errorEnvelopeSchema,
  Health: healthSchema,
  Ready: readySchema,
  AdminToken: adminTokenSchema,
  AdminBooking: adminBookingSchema,
  AdminEvents: adminEventsSchema,
};

type RequestName = keyof typeof REQUEST_SCHEMAS;
type ResponseName = keyof typeof RESPONSE_SCHEMAS;
/** What an example of a component must be, so the compiler checks it against the zod schema (a unit test checks the document). */
type RequestExample<Name extends RequestName> = z.input<(typeof REQUEST_SCHEMAS)[Name]>;
type ResponseExample<Name extends ResponseName> = z.output<(typeof RESPONSE_SCHEMAS)[Name]>;

function mapValues<Value>(record: Record<string, Value>, map: (value: Value) => Json): Record<string, Json> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, map(value)]));
}

const ref = (name: RequestName | ResponseName) => ({ $ref: `#/components/schemas/${name}` });

/**
 * Examples carry the demo seed's keys (seed/demo.json, account PDR28), so "Try it out" against a demo service
 * authenticates. They are public: the README shows them, and NODE_ENV=production refuses to start on the demo seed.
 */
const DEMO_PUBLIC_KEY = 'pk_demo_PDR28_7f3a9c2e';
const DEMO_SECRET_KEY = 'sk_demo_PDR28_d41b8e60';

const DEMO_WITHDRAWAL: RequestExample<'WithdrawRequest'> = {
  share_public: DEMO_PUBLIC_KEY,
  read_event: 'token.withdrawn_created',
  source_id: 'PDR28',
  destination_id: 'ID001',
  token_id: '2908926013012565',
  transaction_id: '20240121000000000001',
  withdrawn_amount: '100.00',
  token_balance: '900.00',
};
const DEMO_STATUS_CHANGE: RequestExample<'StatusChangeRequest'> = {
  share_public: DEMO_PUBLIC_KEY,
  read_event: 'token.status_changed',
  source_id: 'PDR28',
  destination_id: 'ID001',
  token_id: 1010,
  tokes_status: 'disputed',
};
/** The notification fields every demo shares, naming the demo seed's token 2908926013012565. */
const DEMO_NOTIFICATION = { share_public: DEMO_PUBLIC_KEY, source_id: 'PDR28', destination_id: 'ID001', token_id: '2908926013012565' };
const DEMO_LOAD: RequestExample<'LoadedRequest'> = {
  ...DEMO_NOTIFICATION,
  read_event: 'token.loaded_created',
  transaction_id: '20240121000000000002',
  load_amount: '250.00',
  fee_amount: '2.50',
  token_balance: '1150.00',
};
const DEMO_UNLOAD: RequestExample<'UnloadedRequest'> = {
  ...DEMO_NOTIFICATION,
  read_event: 'token.unloaded_created',
  transaction_id: '20240121000000000003',
  unload_amount: '50.00',
  token_balance: '1100.00',
};
const DEMO_LOAD_SCHEDULE: RequestExample<'LoadScheduleRequest'> = {
  ...DEMO_NOTIFICATION,
  read_event: 'token.load_schedule',
  schedule_status: 'credited',
  transaction_id: '20240121000000000004',
  token_balance: '1200.00',
};
const DEMO_SCHEDULE_FAILURE: RequestExample<'LoadScheduleRequest'> = { ...DEMO_LOAD_SCHEDULE, schedule_status: 'failure', transaction_id: '', token_balance: '1200.00' };
const DEMO_EXPIRY_DATE: RequestExample<'ExpiryDateRequest'> = { ...DEMO_NOTIFICATION, read_event: 'token.expiry_updated', expiry_date: '31-12-2027' };
const DEMO_AVAILABLE_DATE: RequestExample<'AvailableDateRequest'> = { ...DEMO_NOTIFICATION, read_event: 'token.available_updated', available_date: '01-02-2024' };
const DEMO_TOKEN_CREATION: RequestExample<'CreateTokenRequest'> = {
  share_secret: DEMO_SECRET_KEY,
  token_event: 'create',
  source_id: 'PDR28',
  destination_id: 'ID001',
  destination_currency: 'EUR',
  load_amount: '300.00',
  available_date: '01-03-2024',
  expiry_date: '31-03-2025',
  token_name: 'Guest card 1396',
  booking_reference: '1396',
};
const DEMO_TOKEN: ResponseExample<'TokenSuccess'>['token'] = {
  token_id: '5293042871100385',
  source_id: 'PDR28',
  destination_id: 'ID001',
  status: 'active',
  balance: '300.00',
  destination_currency: 'EUR',
  available_date: '01-03-2024',
  expiry_date: '31-03-2025',
  token_name: 'Guest card 1396',
  booking_reference: '1396',
};
const DEMO_BOOKING_CHANGE: RequestExample<'BookingChangeRequest'> = {
  share_secret: DEMO_SECRET_KEY,
  booking_event: 'modify',
  source_id: 'PDR28',
  booking_id: '1396',
  guests_count: '3',
  check_out: '18-02-2024',
};

/** The booking as the service shows it after DEMO_BOOKING_CHANGE: every field, as the answer always carries them all. */
const DEMO_BOOKING: ResponseExample<'BookingSuccess'>['booking'] = {
  source_id: 'PDR28',
  booking_id: '1396',
  buyer_id: 'B-20931',
  booking_date: '10-01-2024',
  booking_category: 'hotel',
  supplier_id: 'SUP-118',
  property_name: 'Hotel Aurora',
  property_country: 'NL',
  guests_count: '3',
  room_count: '1',
  check_in: '15-02-2024',
  check_out: '18-02-2024',
  transaction_currency: 'EUR',
  transaction_amount: '450.00',
  margin_category: '%',
  transaction_margin: '12.50',
  nonrefundable_amount: '150.00',
  refundable_amount: '300.00',
  firstnight_amount: '150.00',
  cancellation_days: '7',
  auth_code: 'AUTH-5521',
  pre_auth: 'false',
  status: 'active',
  updated_at: '2024-01-21T10:15:00.000Z',
};

/** Create Booking's body: every field of the booking, under a new booking_id. */
const DEMO_BOOKING_CREATION: RequestExample<'CreateBookingRequest'> = (() => {
  const { source_id: sourceId, booking_id: _bookingId, status: _status, updated_at: _updatedAt, ...fields } = DEMO_BOOKING;
  return { share_secret: DEMO_SECRET_KEY, booking_event: 'new', source_id: sourceId, booking_id: '1400', ...fields, margin_category: '%', pre_auth: 'false' };
})();
const DEMO_BOOKING_CANCELLATION: RequestExample<'CancelBookingRequest'> = { share_secret: DEMO_SECRET_KEY, booking_event: 'cancel', source_id: 'PDR28', booking_id: '1396' };

const envelopeExample = (status: number, message: string, details?: Array<{ field: string; message: string }>): ResponseExample<'ErrorEnvelope'> => ({
  success: 'false',
  errors: { code: String(status), message, ...(details ? { details } : {}) },
});

/** One example per status; two where the same status has two meanings. */
const ERROR_EXAMPLES: Record<number, Array<[string, ResponseExample<'ErrorEnvelope'>]>> = {
  400: [['invalid', envelopeExample(400, 'Invalid field: token_id', [{ field: 'token_id', message: 'is required' }])], ['malformed', envelopeExample(400, 'Malformed JSON body: unexpected "}" at line 1, column 6')]],
  401: [['unauthorized', envelopeExample(401, 'Unauthorized')], ['signature', envelopeExample(401, 'Invalid webhook signature')]],
  403: [
    ['partner', envelopeExample(403, 'partnerid in the path does not match source_id')],
    ['quota', envelopeExample(403, 'Quota exceeded: the account already holds 1000000 tokens, the most MAX_TOKENS_PER_ACCOUNT allows')],
  ],
  404: [['booking', envelopeExample(404, 'Booking not found')], ['version', envelopeExample(404, 'Unsupported API version')]],
  405: [['method', envelopeExample(405, 'Method Not Allowed: use POST')]],
  409: [
    ['not active', envelopeExample(409, 'Token is freezed; only an active token can be withdrawn from')],
    ['expired', envelopeExample(409, 'Token expired on 31-12-2024')],
    ['balance', envelopeExample(409, 'token_balance 800.00 does not match the ledger: expected 900.00')],
    ['booking exists', envelopeExample(409, 'Booking 1396 already exists')],
    ['booking cancelled', envelopeExample(409, 'Booking is cancelled; a cancelled booking cannot be modified')],
  ],
  413: [['destination', envelopeExample(413, 'Destination ID Unknown')], ['size', envelopeExample(413, 'Payload Too Large: the limit is 32kb')]],
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
  403: "Forbidden: {partnerid} is not the body's source_id, or (Create Token, Create Booking) the account already holds its quota of tokens (MAX_TOKENS_PER_ACCOUNT) or bookings (MAX_BOOKINGS_PER_ACCOUNT); nothing is created",
  503: 'Service Unavailable: the store is unreachable or cannot write (a database out of disk, memory or connections; a memory store past 85% of its heap limit refuses to create tokens, bookings, request keys and deliveries, and past 95% ledger rows), or the service is shutting down',
};

const REQUEST_ID_HEADER = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };
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

function errorResponses(statuses: number[], extraHeaders: Record<number, Json> = {}): Json {
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
function success<Name extends ResponseName>(schemaName: Name, example: ResponseExample<Name>, operation: boolean): Json {
  return {
    description: operation ? 'Applied, or a repeat of an accepted request (then Idempotent-Replayed: true)' : 'OK',
    headers: {
      ...REQUEST_ID_HEADER,
      ...(operation ? { ...RATE_LIMIT_HEADERS, 'Idempotent-Replayed': { $ref: '#/components/headers/IdempotentReplayed' } } : {}),
    },
    content: { 'application/json': { schema: ref(schemaName), example } },
  };
}

const DEMO_ADMIN_TOKEN: ResponseExample<'AdminToken'> = {
  token_id: '2908926013012565',
  source_id: 'PDR28',
  destination_id: 'ID001',
  status: 'active',
  balance: '900.00',
  available_date: '01-01-2024',
  expiry_date: '31-12-2025',
  last_ledger_entries: [
    { transaction_id: '20240121000000000002', kind: 'load', amount: '250.00', fee_amount: '2.50', token_balance: '1150.00', created_at: '2024-01-21T11:00:00.000Z' },
    { transaction_id: '20240121000000000001', kind: 'withdrawal', amount: '100.00', token_balance: '900.00', created_at: '2024-01-21T10:15:00.000Z' },
  ],
};

const DEMO_ADMIN_EVENTS: ResponseExample<'AdminEvents'> = {
  events: [
    {
      time: '2024-01-21T10:15:00.012Z',
      request_id: '5f0c2a8e-9d41-4c7b-a3e2-1b6f0d9c4e27',
      method: 'POST',
      route: '/v1/tokens/withdraw',
      operation: 'withdraw',
      source_id: 'PDR28',
      token_id: '2908926013012565',
      transaction_id: '20240121000000000001',
      status: 200,
      outcome: 'accepted',
    },
  ],
};

const ADMIN_CHALLENGE: Record<number, Json> = {
  401: { 'WWW-Authenticate': { required: true, description: 'Bearer realm="admin"', schema: { type: 'string' } } },
};

/**
 * Who may call an operation, as OpenAPI can state it. Partners' keys travel in the JSON body (share_public,
 * share_secret), which no security scheme can express: AUTHENTICATION in info.description and each operation's
 * description say it. What a scheme can express is the Standard Webhooks signature (contract section 10): all three
 * headers together, or none where the contract allows an unsigned request (neither the account nor the service has a
 * signing secret), hence the empty requirement beside them.
 */
const SIGNED_OR_UNSIGNED = [{ webhookId: [], webhookTimestamp: [], webhookSignature: [] }, {}];
const ADMIN_BEARER = [{ adminBearer: [] }];
/** Stated, not left out: an operation without `security` fails the linter, so none is open by omission. */
const OPEN: Json[] = [];

const SECURITY_SCHEMES = {
  webhookId: signatureHeader('webhook-id', 'The delivery id, 1 to 256 printable ASCII characters. A repeated id with the same body is answered as a replay (Idempotent-Replayed: true); with another body it is a 422.'),
  webhookTimestamp: signatureHeader('webhook-timestamp', 'Unix seconds when the delivery was signed; at most WEBHOOK_TOLERANCE_SECONDS (300 unless set lower) from the service clock, either way.'),
  webhookSignature: signatureHeader(
    'webhook-signature',
    'One or more space-separated signatures, each v1, a comma, then the base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{raw body}" with a signing secret. Computed for each request: not a fixed key.',
  ),
  adminBearer: { type: 'http', scheme: 'bearer', description: 'The ADMIN_TOKEN the service runs with. A missing or wrong token is a 401 with WWW-Authenticate: Bearer realm="admin".' },
};

function signatureHeader(name: string, description: string): Json {
  return {
    type: 'apiKey',
    in: 'header',
    name,
    description: `Standard Webhooks, sent with the other two signature headers. ${description} Required when the account named by source_id has signing secrets, or the service runs with WEBHOOK_SECRET; otherwise optional.`,
  };
}

/** How partners authenticate: the keys in the body, which OpenAPI has no scheme for, then the signature. */
const AUTHENTICATION = `## Authentication

Partners authenticate in the JSON body, with the account named by \`source_id\` and one of its keys; OpenAPI has no security scheme for a key in the body, so it is described here and on each operation:

- token notifications (\`/v1/tokens/...\`, \`/v1/events\`) carry the account's public key in \`share_public\`;
- booking operations (\`/{version}/booking/...\`) and Create Token (\`/{version}/token/...\`) carry the account's secret key in \`share_secret\`.

An unknown \`source_id\` and a wrong key answer the same 401 \`Unauthorized\`, so callers cannot probe which accounts exist. A missing key is a 400 naming the field, as any missing field is, except in a Status Change, where it is the 401 (see below). Keys are never echoed.

The request examples carry the keys of the demo seed (account \`PDR28\`), so "Try it out" works against a service started on it (\`npm start\` without \`SEED_FILE\`). They are public, published with the service: production refuses to start on the demo seed.

A request must also be signed, following Standard Webhooks (the headers \`webhook-id\`, \`webhook-timestamp\` and \`webhook-signature\`, the security schemes of those operations), when the account has signing secrets of its own (it must sign with one of them) or, for an account without, when the service runs with \`WEBHOOK_SECRET\`. Otherwise a request needs no signature: hence the empty security requirement beside the signature.

A Status Change may leave out \`share_public\` when it is signed with the account's own secret, or when the service runs with \`ALLOW_KEYLESS_STATUS_CHANGE=true\`.

The admin routes exist only when the service runs with \`ADMIN_TOKEN\`, and take it as a bearer token. Health, readiness, metrics and this document are open.`;

/** The line each partner operation's description ends with. */
const authenticationNote = (key: 'share_public' | 'share_secret') =>
  `Authentication: \`${key}\` and \`source_id\` in the body; the signature headers when the account or the service signs (see the API's description).`;

const TOKEN_ERRORS = [400, 401, 405, 409, 413, 415, 422, 428, 429, 500, 503, 504];
const BOOKING_ERRORS = [400, 401, 403, 404, 405, 409, 413, 415, 422, 429, 500, 503, 504];
const ADMIN_ERRORS = [400, 401, 404, 405, 429, 500, 503, 504];
const SUCCESS_EXAMPLE: ResponseExample<'Success'> = { success: true, message: 'Success' };

/** A GET that answers something other than this API's JSON (metrics, this document), or 405. Open. */
function plainGet(operationId: string, summary: string, description: string, mediaType: string, schemaType: 'string' | 'object'): Json {
  return {
    get: {
      operationId,
      tags: ['Health'],
      summary,
      security: OPEN,
      responses: {
        '200': { description, headers: REQUEST_ID_HEADER, content: { [mediaType]: { schema: { type: schemaType } } } },
        ...errorResponses([405]),
      },
    },
  };
}

function jsonBody<Name extends RequestName>(schemaName: Name, examples: Record<string, RequestExample<Name>>): Json {
  return {
    required: true,
    content: { 'application/json': { schema: ref(schemaName), examples: Object.fromEntries(Object.entries(examples).map(([name, value]) => [name, { value }])) } },
  };
}

/** Every operation has one of these tags, and every tag says what its operations are for. */
const TAGS = {
  Tokens: 'Payment-token notifications from the issuing platform, one URL per event or all on /v1/events. share_public in the body.',
  Bookings: 'Booking creation, changes and cancellation, and Create Token, from partner platforms, each under an idempotency key in the path. share_secret in the body.',
  Health: 'Liveness, readiness, Prometheus metrics and this document, for operators and load balancers. Open.',
  Admin: 'Read-only inspection of tokens, bookings and recent requests, for ops and developers. Only with ADMIN_TOKEN, as a bearer token.',
};

/** What each operation says of itself; operationId is unique in the document. */
interface OperationText {
  operationId: string;
  summary: string;
  description: string;
}

/** A token notification: share_public in the body, signed or not, answered with the plain success body. */
function tokenNotification({ operationId, summary, description }: OperationText, requestBody: Json): Json {
  return {
    operationId,
    tags: ['Tokens'],
    summary,
    description: `${description}\n\n${authenticationNote('share_public')}`,
    security: SIGNED_OR_UNSIGNED,
    requestBody,
    responses: { '200': success('Success', SUCCESS_EXAMPLE, true), ...errorResponses(TOKEN_ERRORS) },
  };
}

const partnerPathSchema = jsonSchema(keyedPathSchema, 'input') as { properties: Record<string, Json> };
/** The path of the operations keyed by {randomkey}: /{version}/booking/... and /{version}/token/.... */
const PARTNER_PATH_PARAMETERS = [
  { name: 'version', in: 'path', required: true, description: 'Only v1 exists; anything else is a 404', schema: { type: 'string', enum: ['v1'] } },
  { name: 'partnerid', in: 'path', required: true, description: "Must equal the body's source_id", schema: partnerPathSchema.properties.partnerid },
  { name: 'randomkey', in: 'path', required: true, description: 'The idempotency key', schema: partnerPathSchema.properties.randomkey, example: '3f9c1a7e-change-01' },
];

const KEYED_DESCRIPTION = '{randomkey} is the idempotency key: the same request again replays the first answer byte for byte; another request with the same key is a 422.';

/** An operation keyed by {randomkey}: share_secret in the body, signed or not, answered with what it made or changed. */
function keyedOperation({ operationId, summary, description }: OperationText, requestBody: Json, answer: Json): Json {
  return {
    operationId,
    tags: ['Bookings'],
    summary,
    description: `${description} ${KEYED_DESCRIPTION}\n\n${authenticationNote('share_secret')}`,
    security: SIGNED_OR_UNSIGNED,
    parameters: PARTNER_PATH_PARAMETERS,
    requestBody,
    responses: { '200': answer, ...errorResponses(BOOKING_ERRORS) },
  };
}

/** A booking operation, answered with the whole booking. */
function bookingOperation(text: OperationText, requestBody: Json, booking: ResponseExample<'BookingSuccess'>['booking']): Json {
  return keyedOperation(text, requestBody, success('BookingSuccess', { success: true, message: 'Success', booking }, true));
}

/** A read-only admin GET: the bearer ADMIN_TOKEN. */
function adminGet<Name extends ResponseName>({ operationId, summary, description }: OperationText, parameters: Json[], schemaName: Name, example: ResponseExample<Name>): Json {
  return {
    get: {
      operationId,
      tags: ['Admin'],
      summary,
      description,
      security: ADMIN_BEARER,
      parameters,
      responses: { '200': success(schemaName, example, false), ...errorResponses(ADMIN_ERRORS, ADMIN_CHALLENGE) },
    },
  };
}

const WITHDRAW_DESCRIPTION =
  'An amount was withdrawn from a token. Idempotent by transaction_id: the same request again answers 200 with Idempotent-Replayed and applies nothing; the same transaction_id with other fields is a 422.';
const ADMIN_ONLY = 'Only when the service runs with ADMIN_TOKEN; without it the route does not exist (404).';

export function buildOpenApiDocument(version: string): Json {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Token and booking receiver',
      version,
      description: `Receives payment-token notifications (status changes, withdrawals, loads, unloads, load schedules, dates) and token and booking operations (Create Token; create, modify and cancel a booking) from partner platforms. Every error is the JSON envelope shown in the responses. The interactive page for this document, /docs, and its scripts and styles are for browsers, not API operations: they are not listed.\n\n${AUTHENTICATION}`,
      // package.json's "UNLICENSED": proprietary, no licence granted. LicenseRef- is SPDX's form for a licence not on its list.
      license: { name: 'Proprietary (UNLICENSED): no licence is granted', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: '/', description: 'The service that serves this document at /openapi.json: paths are relative to it, wherever it runs' }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths: {
      '/v1/tokens/status-change': {
        post: tokenNotification(
          {
            operationId: 'statusChange',
            summary: 'Status Change',
            description:
              "A token's status changed. deleted is final. Setting the status a token has, or sending none, changes nothing; but any other field whose name holds stat (in any case: status, token_stats) is a 400 naming it, as a misspelt status field would otherwise be a 200 that changed nothing. token_status, the alias, must equal tokes_status when both are sent. share_public may be left out when the request is signed with the account's own secret, or the service runs with ALLOW_KEYLESS_STATUS_CHANGE=true.",
          },
          jsonBody('StatusChangeRequest', { statusChange: DEMO_STATUS_CHANGE }),
        ),
      },
      '/v1/tokens/withdraw': {
        post: tokenNotification({ operationId: 'withdraw', summary: 'Withdraw', description: WITHDRAW_DESCRIPTION }, jsonBody('WithdrawRequest', { withdrawal: DEMO_WITHDRAWAL })),
        get: tokenNotification(
          { operationId: 'withdrawWithGet', summary: 'Withdraw (GET with a JSON body, as the published samples send it)', description: WITHDRAW_DESCRIPTION },
          jsonBody('WithdrawRequest', { withdrawal: DEMO_WITHDRAWAL }),
        ),
      },
      '/v1/events': {
        post: tokenNotification(
          {
            operationId: 'tokenEvent',
            summary: 'One URL for every token notification',
            description:
              'Dispatches on read_event to the operation of that event: token.status_changed, token.withdrawn_created, token.loaded_created (always Loaded here, though the Unloaded route also takes that name), token.unloaded_created, token.load_schedule, token.expiry_updated, token.available_updated. An unknown read_event is a 400 that lists the known ones; the rest of the body is then checked as on the operation\'s own route.',
          },
          {
            required: true,
            content: {
              'application/json': {
                schema: {
                  oneOf: [
                    ref('StatusChangeRequest'),
                    ref('WithdrawRequest'),
                    ref('LoadedRequest'),
                    // Here token.loaded_created is Loaded: only the Unloaded route also takes that name for Unloaded.
                    { allOf: [ref('UnloadedRequest'), ruleClause({ properties: { read_event: { const: 'token.unloaded_created' } } })] },
                    ref('LoadScheduleRequest'),
                    ref('ExpiryDateRequest'),
                    ref('AvailableDateRequest'),
                  ],
                },
                examples: {
                  statusChange: { value: DEMO_STATUS_CHANGE },
                  withdrawal: { value: DEMO_WITHDRAWAL },
                  load: { value: DEMO_LOAD },
                  unload: { value: DEMO_UNLOAD },
                  loadSchedule: { value: DEMO_LOAD_SCHEDULE },
                  expiryDate: { value: DEMO_EXPIRY_DATE },
                  availableDate: { value: DEMO_AVAILABLE_DATE },
                },
              },
            },
          },
        ),
      },
      '/v1/tokens/loaded': {
        post: tokenNotification(
          {
            operationId: 'loaded',
            summary: 'Loaded',
            description:
              'Funds were added to a token: the balance goes up by load_amount, and token_balance must equal the result (409). fee_amount is charged to the sender and only recorded. A deleted token, or one outside its available and expiry dates, cannot be loaded (409); a balance over 9999999999.99 is a 422. A ledger row under transaction_id, idempotent as Withdraw.',
          },
          jsonBody('LoadedRequest', { load: DEMO_LOAD }),
        ),
      },
      '/v1/tokens/unloaded': {
        post: tokenNotification(
          {
            operationId: 'unloaded',
            summary: 'Unloaded',
            description:
              'The sender took funds back: allowed unless the token is deleted (409). unload_amount must not exceed the balance (422) and token_balance must equal the balance less it (409). Also takes read_event token.loaded_created, the name the published page shows for this event. A ledger row under transaction_id, idempotent as Withdraw.',
          },
          jsonBody('UnloadedRequest', { unload: DEMO_UNLOAD }),
        ),
      },
      '/v1/tokens/load-schedule': {
        post: tokenNotification(
          {
            operationId: 'loadSchedule',
            summary: 'Load Schedule',
            description:
              'A scheduled load settled. credited: the balance becomes token_balance, never lower than it is (409); the difference is a ledger row under transaction_id (20 digits). deleted and failure change nothing; their transaction_id is empty and token_balance must equal the balance (409).',
          },
          jsonBody('LoadScheduleRequest', { credited: DEMO_LOAD_SCHEDULE, failure: DEMO_SCHEDULE_FAILURE }),
        ),
      },
      '/v1/tokens/expiry-date': {
        post: tokenNotification(
          {
            operationId: 'expiryDate',
            summary: 'Expiry Date',
            description:
              "Sets the token's last usable day (UTC). Without expiry_date nothing changes. An expiry before the token's available date is a 400; a deleted token's dates cannot change (409).",
          },
          jsonBody('ExpiryDateRequest', { expiryDate: DEMO_EXPIRY_DATE }),
        ),
      },
      '/v1/tokens/available-date': {
        post: tokenNotification(
          {
            operationId: 'availableDate',
            summary: 'Available Date',
            description: "Sets the token's first usable day (UTC). A date after the token's expiry date is a 400; a deleted token's dates cannot change (409).",
          },
          jsonBody('AvailableDateRequest', { availableDate: DEMO_AVAILABLE_DATE }),
        ),
      },
      '/{version}/token/{partnerid}/{randomkey}': {
        post: keyedOperation(
          {
            operationId: 'createToken',
            summary: 'Create Token',
            description:
              'A new token at one of the account\'s destinations (else 413), active, with load_amount as its opening balance and the dates given; the service assigns its 16-digit token_id. The optional fields are stored and shown as sent. expiry_date must not be before available_date, nor check_out before check_in (400): comparisons of two values the schema cannot state. A retry under the same key gets the same token, never a second one.',
          },
          jsonBody('CreateTokenRequest', { createToken: DEMO_TOKEN_CREATION }),
          success('TokenSuccess', { success: true, message: 'Success', token: DEMO_TOKEN }, true),
        ),
      },
      '/{version}/booking/{partnerid}/{randomkey}': {
        post: bookingOperation(
          {
            operationId: 'createBooking',
            summary: 'Create Booking',
            description:
              'A booking the account does not have yet (else 409), starting active. Every field is required but buyer_id (empty when left out). check_out must not be before check_in (400), a comparison of two values the schema cannot state; the schema states every other rule.',
          },
          jsonBody('CreateBookingRequest', { createBooking: DEMO_BOOKING_CREATION }),
          { ...DEMO_BOOKING, booking_id: '1400', guests_count: '3', updated_at: '2024-01-21T10:15:00.000Z' },
        ),
        patch: bookingOperation(
          {
            operationId: 'modifyBooking',
            summary: 'Modify Booking',
            description:
              'Changes the fields the body carries, at least one besides the four that name the booking. A cancelled booking cannot be modified (409). The rules across fields hold on the booking as it would be after the change, whichever of the fields the body carries, so they need the stored booking and the schema cannot state them: check_out not before check_in, and a transaction_margin of at most 100 when margin_category is % (400).',
          },
          jsonBody('BookingChangeRequest', { bookingChange: DEMO_BOOKING_CHANGE }),
          DEMO_BOOKING,
        ),
        delete: bookingOperation(
          {
            operationId: 'cancelBooking',
            summary: 'Cancel Booking',
            description: 'The booking becomes cancelled; cancelling a cancelled booking is a 200 that changes nothing.',
          },
          jsonBody('CancelBookingRequest', { cancelBooking: DEMO_BOOKING_CANCELLATION }),
          { ...DEMO_BOOKING, status: 'cancelled', updated_at: '2024-01-22T08:00:00.000Z' },
        ),
      },
      '/healthz': {
        get: {
          operationId: 'liveness',
          tags: ['Health'],
          summary: 'Liveness: 200 while the process serves',
          security: OPEN,
          responses: { '200': success('Health', { status: 'ok' }, false), ...errorResponses([405]) },
        },
      },
      '/readyz': {
        get: {
          operationId: 'readiness',
          tags: ['Health'],
          summary: 'Readiness: 200 when the store answers; 503 otherwise and while shutting down',
          security: OPEN,
          responses: { '200': success('Ready', { status: 'ready' }, false), ...errorResponses([405, 503]) },
        },
      },
      '/metrics': plainGet('metrics', 'Prometheus metrics', 'Prometheus text format', 'text/plain', 'string'),
      '/openapi.json': plainGet('openapi', 'This document', 'OpenAPI 3.1', 'application/json', 'object'),
      '/admin/tokens/{tokenId}': adminGet(
        { operationId: 'adminToken', summary: 'A token with its latest ledger rows (withdrawals, loads, unloads, credited schedules)', description: ADMIN_ONLY },
        [{ name: 'tokenId', in: 'path', required: true, schema: { type: 'string', pattern: '^[1-9]\\d{0,31}$' } }],
        'AdminToken',
        DEMO_ADMIN_TOKEN,
      ),
      '/admin/bookings/{sourceId}/{bookingId}': adminGet(
        { operationId: 'adminBooking', summary: 'A booking', description: ADMIN_ONLY },
        ['sourceId', 'bookingId'].map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
        'AdminBooking',
        { booking: DEMO_BOOKING },
      ),
      '/admin/events': adminGet(
        { operationId: 'adminEvents', summary: 'The most recent operation requests of this instance, newest first', description: ADMIN_ONLY },
        Object.entries((jsonSchema(eventQuerySchema, 'input') as { properties: Record<string, Json> }).properties).map(([name, schema]) => ({
          name,
          in: 'query',
          required: false,
          schema,
        })),
        'AdminEvents',
        DEMO_ADMIN_EVENTS,
      ),
    },
    components: {
      schemas: {
        ...mapValues(REQUEST_SCHEMAS, (schema) => jsonSchema(schema, 'input')),
        ...mapValues(RESPONSE_SCHEMAS, (schema) => jsonSchema(schema, 'output')),
      },
      headers: {
        RequestId: { description: 'The request id: the X-Request-Id sent (when well-formed) or a new UUID', schema: { type: 'string' } },
        IdempotentReplayed: { description: 'Present, as "true", when the answer repeats an earlier accepted request', schema: { type: 'string', const: 'true' } },
        RateLimit: {
          description:
            "The caller's own per-account budget, in the IETF RateLimit header fields draft's format (draft-ietf-httpapi-ratelimit-headers-08): the policy's name, r = requests left in this window, t = seconds until it resets. Sent on answers after authentication; absent when the per-account limit is off (RATE_LIMIT_PER_MINUTE=0) and on the per-address 429.",
          schema: { type: 'string', pattern: '^"\\d+-in-1min"; r=\\d+; t=\\d+$' },
          example: '"6000-in-1min"; r=5999; t=60',
        },
        RateLimitPolicy: {
          description:
            "The per-account limit's policy, in the same draft's format: q = requests per window, w = the window in seconds, pk = a partition key derived from the account. Sent with RateLimit.",
          schema: { type: 'string', pattern: '^"\\d+-in-1min"; q=\\d+; w=60(; pk=:[A-Za-z0-9+/]+=*:)?$' },
          example: '"6000-in-1min"; q=6000; w=60; pk=:NDdiZWYyMjNiNGU0:',
        },
      },
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}
