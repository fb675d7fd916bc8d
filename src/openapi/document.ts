/**
 * The OpenAPI 3.1 document, generated from the same zod schemas the routes
 * validate with (zod 4's JSON Schema output). The partner operations' paths,
 * summaries, descriptions and examples come from the catalogue
 * (src/operations/catalogue.ts), each entry documented by its kind: a token
 * notification, /v1/events, or an operation keyed by {randomkey}. Only the
 * layout is written here: statuses, headers, security, errors, and the
 * routes that are not operations (health, metrics, this document, admin).
 *
 * CI lints it with Redocly's recommended rules (`npm run lint:openapi`) and a
 * unit test validates every example against its schema. A catalogue entry
 * keeps both passing with complete examples (the compiler checks them against
 * its schema). Any other route's answer goes in RESPONSE_SCHEMAS, is built by
 * adminGet() or plainGet() or states its `security` (OPEN when it is open),
 * and uses a tag of TAGS.
 */
import { STATUS_CODES } from 'node:http';
import { z } from 'zod';
import { DEMO_BOOKING } from '../operations/demo-examples';
import { OPERATIONS, operationRoutes, tokenChangesByEvent, type KeyedOperation, type Method, type Operation, type TokenNotification } from '../operations/catalogue';
import { eventQuerySchema } from '../schemas/admin';
import { keyedPathSchema } from '../schemas/booking';
import {
  adminBookingSchema,
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
import { ruleClause } from '../schemas/fields';

type Json = Record<string, unknown>;

/** zod schema -> JSON Schema 2020-12, as OpenAPI 3.1 takes it; requests are described as sent (the input side). */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json;
  return rest;
}

/** Request bodies, described as sent (zod's input side): each operation's schema of the catalogue, under its component name. */
const REQUEST_SCHEMAS: Record<string, z.ZodType> = Object.fromEntries(
  OPERATIONS.flatMap((entry) => (entry.kind === 'event dispatch' || entry.kind === 'token change dispatch' ? [] : [[entry.openapi.component, entry.schema]])),
);

/** Answers, described as sent back (zod's output side). */
const RESPONSE_SCHEMAS = {
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
};

type ResponseName = keyof typeof RESPONSE_SCHEMAS;
/** What an example of a component must be, so the compiler checks it against the zod schema (a unit test checks the document). */
type ResponseExample<Name extends ResponseName> = z.output<(typeof RESPONSE_SCHEMAS)[Name]>;

function mapValues<Value>(record: Record<string, Value>, map: (value: Value) => Json): Record<string, Json> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, map(value)]));
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

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
    [
      'key limit',
      envelopeExample(
        403,
        'Key limit reached: the account already keeps 100000 request keys and signed deliveries of their retention window, the most MAX_KEYS_PER_ACCOUNT allows; replays of kept keys are still answered',
      ),
    ],
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
  403: "Forbidden: {partnerid} is not the body's source_id, or (Create Token, Create Booking) the account already holds its quota of tokens (MAX_TOKENS_PER_ACCOUNT) or bookings (MAX_BOOKINGS_PER_ACCOUNT), or a request under a new {randomkey} or a signed notification under a new webhook-id would take the account past the request keys and deliveries it may keep (MAX_KEYS_PER_ACCOUNT; replays of kept ones are still answered); nothing is applied",
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

The admin routes exist only when the service runs with \`ADMIN_TOKEN\`, and take it as a bearer token. Health, readiness and this document are open. Prometheus metrics are not on this port: the service serves \`GET /metrics\` on a listener of its own, \`METRICS_PORT\` (default 9464), for the operator's network.`;

/** The line each partner operation's description ends with. */
const authenticationNote = (key: 'share_public' | 'share_secret') =>
  `Authentication: \`${key}\` and \`source_id\` in the body; the signature headers when the account or the service signs (see the API's description).`;

const TOKEN_ERRORS = [400, 401, 403, 405, 409, 413, 415, 422, 428, 429, 500, 503, 504];
const BOOKING_ERRORS = [400, 401, 403, 404, 405, 409, 413, 415, 422, 429, 500, 503, 504];
/** Modify, Load and Unload Token name a token the caller must have (428). */
const TOKEN_CHANGE_ERRORS = [...BOOKING_ERRORS, 428].sort((a, b) => a - b);
const ADMIN_ERRORS = [400, 401, 404, 405, 429, 500, 503, 504];
const SUCCESS_EXAMPLE: ResponseExample<'Success'> = { success: true, message: 'Success' };

/** A GET that answers something other than this API's JSON (this document), or 405. Open. */
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

function jsonBody(schemaName: string, examples: Record<string, unknown>): Json {
  return {
    required: true,
    content: { 'application/json': { schema: ref(schemaName), examples: Object.fromEntries(Object.entries(examples).map(([name, value]) => [name, { value }])) } },
  };
}

/** Every operation has one of these tags, and every tag says what its operations are for. */
const TAGS = {
  Tokens: 'Payment-token notifications from the issuing platform, one URL per event or all on /v1/events. share_public in the body.',
  Bookings: 'Booking creation, changes and cancellation, and Create Token, from partner platforms, each under an idempotency key in the path. share_secret in the body.',
  Health: 'Liveness, readiness and this document, for operators and load balancers. Open.',
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
/**
 * The path of the operations keyed by {randomkey}: /{version}/booking/... and /{version}/token/...; each operation's
 * example key is its own, as they share one key space.
 */
const partnerPathParameters = (randomkey: string) => [
  { name: 'version', in: 'path', required: true, description: 'Only v1 exists; anything else is a 404', schema: { type: 'string', enum: ['v1'] } },
  { name: 'partnerid', in: 'path', required: true, description: "Must equal the body's source_id", schema: partnerPathSchema.properties.partnerid, example: 'PDR28' },
  { name: 'randomkey', in: 'path', required: true, description: 'The idempotency key', schema: partnerPathSchema.properties.randomkey, example: randomkey },
];

const KEYED_DESCRIPTION = '{randomkey} is the idempotency key: the same request again replays the first answer byte for byte; another request with the same key is a 422.';

/** An operation keyed by {randomkey}: share_secret in the body, signed or not, answered with what it made or changed. */
function keyedOperation({ operationId, summary, description }: OperationText, requestBody: Json, answer: Json, randomkey: string, errors = BOOKING_ERRORS): Json {
  return {
    operationId,
    tags: ['Bookings'],
    summary,
    description: `${description} ${KEYED_DESCRIPTION}\n\n${authenticationNote('share_secret')}`,
    security: SIGNED_OR_UNSIGNED,
    parameters: partnerPathParameters(randomkey),
    requestBody,
    responses: { '200': answer, ...errorResponses(errors) },
  };
}

type KeyedAnswerName = 'TokenSuccess' | 'BookingSuccess' | 'TokenMovementSuccess';

/** A keyed operation's answer as its example shows it, by the kind of what it made or changed. */
function answerExample(entry: KeyedOperation): [KeyedAnswerName, ResponseExample<KeyedAnswerName>] {
  const SUCCESS = { success: true, message: 'Success' } as const;
  const example = entry.openapi.answerExample;
  switch (entry.answer) {
    case 'token':
      return ['TokenSuccess', { ...SUCCESS, token: example as ResponseExample<'TokenSuccess'>['token'] }];
    case 'booking':
      return ['BookingSuccess', { ...SUCCESS, booking: example as ResponseExample<'BookingSuccess'>['booking'] }];
    case 'movement':
      return ['TokenMovementSuccess', { ...SUCCESS, ...(example as Pick<ResponseExample<'TokenMovementSuccess'>, 'token' | 'transaction'>) }];
  }
}

/**
 * PATCH on the token path: any token change's body and answer, each with its example; the body's token_event says
 * which it is.
 */
function tokenChangeDocument(text: OperationText): Json {
  const changes = [...tokenChangesByEvent().values()];
  const requestBody = {
    required: true,
    content: {
      'application/json': {
        schema: { oneOf: changes.map((change) => ref(change.openapi.component)) },
        examples: Object.fromEntries(changes.map(({ openapi: { examples } }) => Object.entries(examples)[0]).map(([name, value]) => [name, { value }])),
      },
    },
  };
  const answers = changes.map(answerExample);
  const answer = {
    ...success(...answers[0], true),
    content: {
      'application/json': {
        schema: { oneOf: [...new Set(answers.map(([name]) => name))].map(ref) },
        examples: Object.fromEntries(changes.map((change, i) => [change.openapi.operationId, { value: answers[i][1] }])),
      },
    },
  };
  return keyedOperation(text, requestBody, answer, 'openapi-change-token-01', TOKEN_CHANGE_ERRORS);
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

/** The catalogue's operations, by path: Express's `/:name` is OpenAPI's `/{name}`. */
function operationPaths(): Record<string, Json> {
  return Object.fromEntries(
    operationRoutes().map(({ path, operations }) => [
      path.replace(/:(\w+)/g, '{$1}'),
      Object.fromEntries(operations.flatMap((entry) => documentedMethods(entry).map((method) => [method, operationDocument(entry, method)]))),
    ]),
  );
}

/** POST before GET: Withdraw's GET, which the published samples send, follows the POST it repeats. */
const DOCUMENTED_ORDER: readonly Method[] = ['post', 'get', 'patch', 'delete'];
const documentedMethods = (entry: Operation): Method[] => [...entry.methods].sort((a, b) => DOCUMENTED_ORDER.indexOf(a) - DOCUMENTED_ORDER.indexOf(b));

/** One method of a catalogue entry, as its kind documents it. */
function operationDocument(entry: Operation, method: Method): Json {
  switch (entry.kind) {
    case 'event dispatch':
      return tokenNotification(entry.openapi, eventsBody(OPERATIONS.filter((other) => other.kind === 'token notification')));
    case 'token notification':
      return tokenNotification({ ...entry.openapi, ...entry.openapi.byMethod?.[method] }, jsonBody(entry.openapi.component, entry.openapi.examples));
    case 'keyed': {
      const text = { ...entry.openapi, ...entry.openapi.byMethod?.[method] };
      const errors = entry.tokenEvent === undefined ? BOOKING_ERRORS : TOKEN_CHANGE_ERRORS;
      return keyedOperation(text, jsonBody(entry.openapi.component, entry.openapi.examples), success(...answerExample(entry), true), entry.openapi.randomkey, errors);
    }
    case 'token change dispatch':
      return tokenChangeDocument(entry.openapi);
  }
}

/**
 * POST /v1/events' body: any token notification's, each with its first example. A schema that also takes another
 * notification's read_event (Unloaded takes token.loaded_created) is held to its own here, where that event is the
 * other notification's.
 */
function eventsBody(notifications: TokenNotification[]): Json {
  return {
    required: true,
    content: {
      'application/json': {
        schema: {
          oneOf: notifications.map(({ event, schema, openapi: { component } }) => {
            const { properties } = jsonSchema(schema, 'input') as { properties: { read_event: { enum: string[] } } };
            if (properties.read_event.enum.length === 1) return ref(component);
            return { allOf: [ref(component), ruleClause({ properties: { read_event: { const: event } } })] };
          }),
        },
        examples: Object.fromEntries(
          notifications.map(({ openapi: { examples, eventsExample } }) => {
            const [name, value] = Object.entries(examples)[0];
            return [eventsExample ?? name, { value }];
          }),
        ),
      },
    },
  };
}

const ADMIN_ONLY = 'Only when the service runs with ADMIN_TOKEN; without it the route does not exist (404).';

/** Freezes a JSON value and everything in it, so a document shared by its callers cannot be changed by one of them. */
function deepFreeze<Value>(value: Value): Value {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

const documents = new Map<string, Readonly<Json>>();

/**
 * The OpenAPI document of this service version, built on the first call and the same frozen object after: the
 * conversion of the zod schemas is most of what building an app costs, and every app built in a process (each
 * test builds its own) would otherwise pay it again for the same document.
 */
export function buildOpenApiDocument(version: string): Readonly<Json> {
  let document = documents.get(version);
  if (!document) {
    // A copy of its own: the document holds the module's constants and the catalogue's examples, which stay unfrozen.
    document = deepFreeze(structuredClone(documentOf(version)));
    documents.set(version, document);
  }
  return document;
}

function documentOf(version: string): Json {
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
      ...operationPaths(),
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
