/**
 * The OpenAPI 3.1 document, generated from the same zod schemas the routes
 * validate with (zod 4's JSON Schema output). Only the layout is written
 * here: paths, statuses, headers and examples.
 */
import { STATUS_CODES } from 'node:http';
import { z } from 'zod';
import { eventQuerySchema } from './schemas/admin';
import { bookingChangeSchema, bookingPathSchema } from './schemas/booking';
import {
  adminBookingSchema,
  adminEventsSchema,
  adminTokenSchema,
  bookingSuccessSchema,
  errorEnvelopeSchema,
  healthSchema,
  readySchema,
  successSchema,
} from './schemas/responses';
import { statusChangeSchema } from './schemas/status-change';
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
  BookingChangeRequest: bookingChangeSchema,
};

/** Answers, described as sent back (zod's output side). */
const RESPONSE_SCHEMAS = {
  Success: successSchema,
  BookingSuccess: bookingSuccessSchema,
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

/** Examples use placeholders for keys: a published document must not carry anything that looks like a real one. */
const PUBLIC_KEY_PLACEHOLDER = 'your-public-key';

const DEMO_WITHDRAWAL: RequestExample<'WithdrawRequest'> = {
  share_public: PUBLIC_KEY_PLACEHOLDER,
  read_event: 'token.withdrawn_created',
  source_id: 'PDR28',
  destination_id: 'ID001',
  token_id: '2908926013012565',
  transaction_id: '20240121000000000001',
  withdrawn_amount: '100.00',
  token_balance: '900.00',
};
const DEMO_STATUS_CHANGE: RequestExample<'StatusChangeRequest'> = {
  share_public: PUBLIC_KEY_PLACEHOLDER,
  read_event: 'token.status_changed',
  source_id: 'PDR28',
  destination_id: 'ID001',
  token_id: 1010,
  tokes_status: 'disputed',
};
const DEMO_BOOKING_CHANGE: RequestExample<'BookingChangeRequest'> = {
  share_secret: 'your-secret-key',
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
  updated_at: '2024-01-21T10:15:00.000Z',
};

const envelopeExample = (status: number, message: string, details?: Array<{ field: string; message: string }>): ResponseExample<'ErrorEnvelope'> => ({
  success: 'false',
  errors: { code: String(status), message, ...(details ? { details } : {}) },
});

/** One example per status; two where the same status has two meanings. */
const ERROR_EXAMPLES: Record<number, Array<[string, ResponseExample<'ErrorEnvelope'>]>> = {
  400: [['invalid', envelopeExample(400, 'Invalid field: token_id', [{ field: 'token_id', message: 'is required' }])], ['malformed', envelopeExample(400, 'Malformed JSON body: unexpected "}" at line 1, column 6')]],
  401: [['unauthorized', envelopeExample(401, 'Unauthorized')], ['signature', envelopeExample(401, 'Invalid webhook signature')]],
  403: [['partner', envelopeExample(403, 'partnerid in the path does not match source_id')]],
  404: [['booking', envelopeExample(404, 'Booking not found')], ['version', envelopeExample(404, 'Unsupported API version')]],
  405: [['method', envelopeExample(405, 'Method Not Allowed: use POST')]],
  409: [['not active', envelopeExample(409, 'Token is freezed; only an active token can be withdrawn from')], ['balance', envelopeExample(409, 'token_balance 800.00 does not match the ledger: expected 900.00')]],
  413: [['destination', envelopeExample(413, 'Destination ID Unknown')], ['size', envelopeExample(413, 'Payload Too Large')]],
  415: [['type', envelopeExample(415, 'Content-Type must be application/json')]],
  422: [['overdraft', envelopeExample(422, 'withdrawn_amount 600.00 is more than the token balance 500.00')], ['key reused', envelopeExample(422, 'transaction_id was already used for a different withdrawal')]],
  428: [['token', envelopeExample(428, "Token ID doesn't match")]],
  429: [['limit', envelopeExample(429, 'Too Many Requests')]],
  500: [['crash', envelopeExample(500, 'internal Server Error')]],
  503: [['unavailable', envelopeExample(503, 'Service Unavailable')]],
  504: [['timeout', envelopeExample(504, 'Gateway Timeout')]],
};

const REQUEST_ID_HEADER = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };

/** Headers some error statuses always carry. */
const ERROR_HEADERS: Record<number, Json> = {
  405: { Allow: { required: true, description: 'The methods the path takes', schema: { type: 'string' } } },
  429: { 'Retry-After': { required: true, description: 'Seconds until the limit resets', schema: { type: 'string', pattern: '^\\d+$' } } },
};

function errorResponses(statuses: number[], extraHeaders: Record<number, Json> = {}): Json {
  return Object.fromEntries(
    statuses.map((status) => [
      String(status),
      {
        description: STATUS_CODES[status],
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

function success<Name extends ResponseName>(schemaName: Name, example: ResponseExample<Name>, replayable: boolean): Json {
  return {
    description: replayable ? 'Applied, or a repeat of an accepted request (then Idempotent-Replayed: true)' : 'OK',
    headers: {
      ...REQUEST_ID_HEADER,
      ...(replayable ? { 'Idempotent-Replayed': { $ref: '#/components/headers/IdempotentReplayed' } } : {}),
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
  last_withdrawals: [{ transaction_id: '20240121000000000001', withdrawn_amount: '100.00', token_balance: '900.00', created_at: '2024-01-21T10:15:00.000Z' }],
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

const SIGNATURE_PARAMETERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => ({ $ref: `#/components/parameters/${name}` }));
const TOKEN_ERRORS = [400, 401, 405, 409, 413, 415, 422, 428, 429, 500, 503, 504];
const BOOKING_ERRORS = [400, 401, 403, 404, 405, 409, 413, 415, 422, 429, 500, 503, 504];
const ADMIN_ERRORS = [400, 401, 404, 405, 500, 503, 504];
const SUCCESS_EXAMPLE: ResponseExample<'Success'> = { success: true, message: 'Success' };

/** A GET that answers something other than this API's JSON (metrics, the document, the docs page), or 405. */
function plainGet(operationId: string, summary: string, description: string, mediaType: string, schemaType: 'string' | 'object'): Json {
  return {
    get: {
      operationId,
      tags: ['Health'],
      summary,
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

function withdrawOperation(method: 'get' | 'post'): Json {
  return {
    operationId: method === 'post' ? 'withdraw' : 'withdrawWithGet',
    tags: ['Tokens'],
    summary: method === 'post' ? 'Withdraw' : 'Withdraw (GET with a JSON body, as the published samples send it)',
    description:
      'An amount was withdrawn from a token. Idempotent by transaction_id: the same request again answers 200 with Idempotent-Replayed and applies nothing; the same transaction_id with other fields is a 422.',
    parameters: SIGNATURE_PARAMETERS,
    requestBody: jsonBody('WithdrawRequest', { withdrawal: DEMO_WITHDRAWAL }),
    responses: { '200': success('Success', SUCCESS_EXAMPLE, true), ...errorResponses(TOKEN_ERRORS) },
  };
}

export function buildOpenApiDocument(version: string): Json {
  const pathParameters = jsonSchema(bookingPathSchema, 'input') as { properties: Record<string, Json> };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Token and booking receiver',
      version,
      description:
        'Receives payment-token notifications (status changes, withdrawals) and booking changes from partner platforms. Every error is the JSON envelope shown in the responses.',
    },
    tags: [{ name: 'Tokens' }, { name: 'Bookings' }, { name: 'Health' }, { name: 'Admin' }],
    paths: {
      '/v1/tokens/status-change': {
        post: {
          operationId: 'statusChange',
          tags: ['Tokens'],
          summary: 'Status Change',
          description: "A token's status changed. deleted is final. Setting the status a token has, or sending none, changes nothing.",
          parameters: SIGNATURE_PARAMETERS,
          requestBody: jsonBody('StatusChangeRequest', { statusChange: DEMO_STATUS_CHANGE }),
          responses: { '200': success('Success', SUCCESS_EXAMPLE, true), ...errorResponses(TOKEN_ERRORS) },
        },
      },
      '/v1/tokens/withdraw': { post: withdrawOperation('post'), get: withdrawOperation('get') },
      '/v1/events': {
        post: {
          operationId: 'tokenEvent',
          tags: ['Tokens'],
          summary: 'One URL for every token notification',
          description: 'Dispatches on read_event to Status Change or Withdraw; an unknown read_event is a 400.',
          parameters: SIGNATURE_PARAMETERS,
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: { oneOf: [ref('StatusChangeRequest'), ref('WithdrawRequest')] },
                examples: { statusChange: { value: DEMO_STATUS_CHANGE }, withdrawal: { value: DEMO_WITHDRAWAL } },
              },
            },
          },
          responses: { '200': success('Success', SUCCESS_EXAMPLE, true), ...errorResponses(TOKEN_ERRORS) },
        },
      },
      '/{version}/booking/{partnerid}/{randomkey}': {
        patch: {
          operationId: 'modifyBooking',
          tags: ['Bookings'],
          summary: 'Modify Booking',
          description:
            'Changes the fields the body carries. {randomkey} is the idempotency key: the same request again replays the first answer byte for byte; another request with the same key is a 422.',
          parameters: [
            { name: 'version', in: 'path', required: true, description: 'Only v1 exists; anything else is a 404', schema: { type: 'string', enum: ['v1'] } },
            { name: 'partnerid', in: 'path', required: true, description: "Must equal the body's source_id", schema: pathParameters.properties.partnerid },
            { name: 'randomkey', in: 'path', required: true, description: 'The idempotency key', schema: pathParameters.properties.randomkey, example: '3f9c1a7e-change-01' },
            ...SIGNATURE_PARAMETERS,
          ],
          requestBody: jsonBody('BookingChangeRequest', { bookingChange: DEMO_BOOKING_CHANGE }),
          responses: { '200': success('BookingSuccess', { success: true, message: 'Success', booking: DEMO_BOOKING }, true), ...errorResponses(BOOKING_ERRORS) },
        },
      },
      '/healthz': {
        get: {
          operationId: 'liveness',
          tags: ['Health'],
          summary: 'Liveness: 200 while the process serves',
          responses: { '200': success('Health', { status: 'ok' }, false), ...errorResponses([405]) },
        },
      },
      '/readyz': {
        get: {
          operationId: 'readiness',
          tags: ['Health'],
          summary: 'Readiness: 200 when the store answers; 503 otherwise and while shutting down',
          responses: { '200': success('Ready', { status: 'ready' }, false), ...errorResponses([405, 503]) },
        },
      },
      '/metrics': plainGet('metrics', 'Prometheus metrics', 'Prometheus text format', 'text/plain', 'string'),
      '/openapi.json': plainGet('openapi', 'This document', 'OpenAPI 3.1', 'application/json', 'object'),
      '/docs': plainGet('docs', 'Interactive documentation of this document (Swagger UI, served from the installed package)', 'HTML page', 'text/html', 'string'),
      '/docs/init.js': plainGet('docsScript', 'The script that starts the documentation page', 'JavaScript', 'application/javascript', 'string'),
      '/docs/assets/{file}': {
        get: {
          operationId: 'docsAssets',
          tags: ['Health'],
          summary: "Swagger UI's scripts and styles, from the installed package",
          parameters: [{ name: 'file', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { '200': { description: 'A file of swagger-ui-dist', content: { '*/*': { schema: { type: 'string' } } } }, ...errorResponses([404]) },
        },
      },
      '/admin/tokens/{tokenId}': {
        get: {
          operationId: 'adminToken',
          tags: ['Admin'],
          summary: 'A token with its latest withdrawals (only with ADMIN_TOKEN)',
          security: [{ admin: [] }],
          parameters: [{ name: 'tokenId', in: 'path', required: true, schema: { type: 'string', pattern: '^[1-9]\\d{0,31}$' } }],
          responses: { '200': success('AdminToken', DEMO_ADMIN_TOKEN, false), ...errorResponses(ADMIN_ERRORS, ADMIN_CHALLENGE) },
        },
      },
      '/admin/bookings/{sourceId}/{bookingId}': {
        get: {
          operationId: 'adminBooking',
          tags: ['Admin'],
          summary: 'A booking (only with ADMIN_TOKEN)',
          security: [{ admin: [] }],
          parameters: ['sourceId', 'bookingId'].map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
          responses: { '200': success('AdminBooking', { booking: DEMO_BOOKING }, false), ...errorResponses(ADMIN_ERRORS, ADMIN_CHALLENGE) },
        },
      },
      '/admin/events': {
        get: {
          operationId: 'adminEvents',
          tags: ['Admin'],
          summary: "The most recent operation requests of this instance, newest first (only with ADMIN_TOKEN)",
          security: [{ admin: [] }],
          parameters: Object.entries((jsonSchema(eventQuerySchema, 'input') as { properties: Record<string, Json> }).properties).map(([name, schema]) => ({
            name,
            in: 'query',
            required: false,
            schema,
          })),
          responses: { '200': success('AdminEvents', DEMO_ADMIN_EVENTS, false), ...errorResponses(ADMIN_ERRORS, ADMIN_CHALLENGE) },
        },
      },
    },
    components: {
      schemas: {
        ...mapValues(REQUEST_SCHEMAS, (schema) => jsonSchema(schema, 'input')),
        ...mapValues(RESPONSE_SCHEMAS, (schema) => jsonSchema(schema, 'output')),
      },
      headers: {
        RequestId: { description: 'The request id: the X-Request-Id sent (when well-formed) or a new UUID', schema: { type: 'string' } },
        IdempotentReplayed: { description: 'Present, as "true", when the answer repeats an earlier accepted request', schema: { type: 'string', const: 'true' } },
      },
      parameters: {
        'webhook-id': signatureParameter('webhook-id', 'Delivery id; a repeated id is answered as a replay'),
        'webhook-timestamp': signatureParameter('webhook-timestamp', 'Unix seconds, within WEBHOOK_TOLERANCE_SECONDS of the service clock'),
        'webhook-signature': signatureParameter('webhook-signature', 'Standard Webhooks signature(s): v1, a comma, then the base64 HMAC-SHA256'),
      },
      securitySchemes: { admin: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' } },
    },
  };
}

function signatureParameter(name: string, description: string): Json {
  return { name, in: 'header', required: false, description: `${description}. Required when the service runs with WEBHOOK_SECRET.`, schema: { type: 'string' } };
}
