/**
 * The OpenAPI 3.1 document, generated from the same zod schemas the routes validate with (zod 4's JSON Schema
 * output). The partner operations' paths come from the catalogue (src/operations/catalogue.ts), with the summaries,
 * descriptions and examples of its documentation (src/operations/docs.ts): operation-paths.ts documents each entry by
 * its kind. responses.ts holds the answers (statuses, headers, the error envelope's examples), security.ts who may
 * call what; this module assembles them with the routes that are not operations (health, this document, admin).
 *
 * CI lints it with Redocly's recommended rules (`npm run lint:openapi`) and a unit test validates every example
 * against its schema. A catalogue entry keeps both passing with complete examples (the compiler checks them against
 * its schema). Any other route's answer goes in RESPONSE_SCHEMAS, is built by adminGet() or plainGet() or states its
 * `security` (OPEN when it is open), and uses a tag of TAGS.
 */
import type { z } from 'zod';
import { DEMO_BOOKING } from '../operations/demo-examples';
import { OPERATIONS } from '../operations/catalogue';
import { loadConfig } from '../process/config';
import { attemptsQuerySchema, eventQuerySchema, replaySchema } from '../schemas/admin';
import { adminFeedQuerySchema } from '../schemas/feed';
import { DEMO_CHANGES_PAGE, type OperationText } from '../operations/docs';
import { operationPaths } from './operation-paths';
import {
  errorResponses,
  jsonSchema,
  REQUEST_ID_HEADER,
  RESPONSE_SCHEMAS,
  success,
  type Json,
  type ResponseExample,
  type ResponseName,
} from './responses';
import { ADMIN_BEARER, AUTHENTICATION, OPEN, SECURITY_SCHEMES } from './security';

/** Request bodies, described as sent (zod's input side): each operation's schema of the catalogue, under its component name. */
const REQUEST_SCHEMAS: Record<string, z.ZodType> = Object.fromEntries(
  OPERATIONS.flatMap((entry) =>
    entry.kind === 'event dispatch' || entry.kind === 'token change dispatch' || entry.kind === 'feed'
      ? []
      : [[entry.openapi.component, entry.schema]],
  ),
);

/** What a service started with no settings does: the demo's address and the rate limits' defaults. */
const DEFAULTS = loadConfig({});
const DEPLOYMENT_ADDRESS =
  'A deployment serves the same paths at the address its operator gives its partners, which a generated client takes as its base URL (or as the first server\'s host and port). On the page at /docs, pick the second server for "Try it out" against the service that serves the page.';

const RATE_LIMITS = `## Rate limits

Each account may make RATE_LIMIT_PER_MINUTE requests a minute (${DEFAULTS.rateLimitPerMinute} unless the operator sets another; 0: no limit), in fixed one-minute windows. Every request that authenticates as the account counts, whatever its answer (applied, replayed, refused by a rule), and whether or not the client waited for it. Requests that fail before they authenticate (a wrong key, a malformed body, an unknown route) count against the client address instead, RATE_LIMIT_PER_ADDRESS_PER_MINUTE a minute (${DEFAULTS.rateLimitPerAddressPerMinute} by default); an address past it gets 429 for every request until its window passes. Answers below 400 never count against an address, so partners behind one address do not lock each other out. Every request for this document, /docs and its scripts and styles counts against the client address too, whatever its answer, RATE_LIMIT_DOCUMENTS_PER_ADDRESS_PER_MINUTE a minute (${DEFAULTS.rateLimitDocumentsPerAddressPerMinute} by default): they are open and large. Past a limit the answer is 429 with Retry-After (seconds); a per-address 429 also closes its connection (Connection: close), so requests pipelined behind it get no answer. Answers after authentication carry RateLimit and RateLimit-Policy with the account's own budget, whose q is the limit in force.`;

/** Answers, described as sent back (zod's output side). */
function mapValues<Value>(record: Record<string, Value>, map: (value: Value) => Json): Record<string, Json> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, map(value)]));
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
    {
      transaction_id: '20240121000000000002',
      kind: 'load',
      amount: '250.00',
      fee_amount: '2.50',
      token_balance: '1150.00',
      created_at: '2024-01-21T11:00:00.000Z',
    },
    {
      transaction_id: '20240121000000000001',
      kind: 'withdrawal',
      amount: '100.00',
      token_balance: '900.00',
      created_at: '2024-01-21T10:15:00.000Z',
    },
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
const ADMIN_ERRORS = [400, 401, 404, 405, 429, 500, 503, 504];

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
        // Past RATE_LIMIT_DOCUMENTS_PER_ADDRESS_PER_MINUTE.
        ...errorResponses([405, 429]),
      },
    },
  };
}

/** Every operation has one of these tags, and every tag says what its operations are for. */
const TAGS = {
  'Token notifications':
    'Payment-token notifications from the issuing platform, one URL per event or all on /v1/events. share_public in the body.',
  Tokens:
    "A partner's own token operations: Create, Modify, Load and Unload Token, each under an idempotency key in the path. share_secret in the body.",
  Bookings:
    'Booking creation, changes and cancellation, from partner platforms, each under an idempotency key in the path. share_secret in the body.',
  Health: 'Liveness, readiness and this document, for operators and load balancers. Open.',
  Changes: "An account's feed of the changes the service accepted, in order, by position: share_secret as a bearer token.",
  Admin:
    "Inspection of tokens, bookings, recent requests and any account's feed of changes, and the endpoints of webhooks out (state, positions, attempts; enable, replay), for ops and developers. Only with ADMIN_TOKEN, as a bearer token.",
};

/** An endpoint of webhooks out as GET /admin/endpoints shows it (contract section 13.3). */
const DEMO_ENDPOINT: ResponseExample<'AdminEndpoint'> = {
  id: 'erp',
  state: 'disabled',
  reason:
    'change chg_0b9e7c1a-8d52-4f0e-9a43-2c7d1e5f6a80 (account PDR28, seq 42) failed every step of the retry schedule, last with 503: Service Unavailable',
  positions: [{ source_id: 'PDR28', position: 41, oldest_undelivered: { seq: 42, created_at: '2026-11-27T10:00:00.000Z' } }],
  last_attempt: {
    id: 1207,
    change_id: 'chg_0b9e7c1a-8d52-4f0e-9a43-2c7d1e5f6a80',
    source_id: 'PDR28',
    seq: 42,
    attempt: 8,
    result: 'failed',
    status: 503,
    error: '503: Service Unavailable',
    duration_ms: 38,
    attempted_at: '2026-11-28T09:41:07.512Z',
  },
};

const ENDPOINT_ID_PARAMETER = {
  name: 'id',
  in: 'path',
  required: true,
  schema: { type: 'string' },
  description: "The endpoint's id in the seed",
};

/** An admin POST on an endpoint of webhooks out: answers the endpoint as GET /admin/endpoints shows it. */
function adminEndpointPost({ operationId, summary, description }: OperationText, body?: z.ZodType): Json {
  return {
    post: {
      operationId,
      tags: ['Admin'],
      summary,
      description,
      security: ADMIN_BEARER,
      parameters: [ENDPOINT_ID_PARAMETER],
      ...(body ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(body, 'input') } } } } : {}),
      responses: {
        '200': success('AdminEndpoint', { ...DEMO_ENDPOINT, state: 'enabled', reason: null }, false),
        ...errorResponses(ADMIN_ERRORS, ADMIN_CHALLENGE),
      },
    },
  };
}

/** A read-only admin GET: the bearer ADMIN_TOKEN; `errors` adds the statuses of its own to the admin routes'. */
function adminGet<Name extends ResponseName>(
  { operationId, summary, description }: OperationText,
  parameters: Json[],
  schemaName: Name,
  example: ResponseExample<Name>,
  errors: number[] = [],
): Json {
  const statuses = [...ADMIN_ERRORS, ...errors].sort((a, b) => a - b);
  return {
    get: {
      operationId,
      tags: ['Admin'],
      summary,
      description,
      security: ADMIN_BEARER,
      parameters,
      responses: { '200': success(schemaName, example, false), ...errorResponses(statuses, ADMIN_CHALLENGE) },
    },
  };
}

/** A query's parameters, from its zod schema; `required` and `examples` by name, all optional otherwise. */
function queryParameters(schema: z.ZodType, examples: Record<string, string> = {}): Json[] {
  const { properties, required = [] } = jsonSchema(schema, 'input') as { properties: Record<string, Json>; required?: string[] };
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: 'query',
    required: required.includes(name),
    schema: property,
    ...(name in examples ? { example: examples[name] } : {}),
  }));
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
      description: `Receives payment-token notifications (status changes, withdrawals, loads, unloads, load schedules, dates) and token and booking operations (Create Token; create, modify and cancel a booking) from partner platforms. Every error is the JSON envelope shown in the responses. The interactive page for this document, /docs, and its scripts and styles are for browsers, not API operations: they are not listed.\n\nThe server listed is the demo's (npm start with no settings, on the demo seed, which every request example names). ${DEPLOYMENT_ADDRESS}\n\n${AUTHENTICATION}\n\n${RATE_LIMITS}\n\n## Idempotency keys\n\nThe operations under /{version}/token/ and /{version}/booking/ take an idempotency key in the path, {randomkey} (8 to 64 characters of A-Z, a-z, 0-9, _ and -). A key is kept 24 hours from the request that first used it, in one key space per account for all of these operations: within that time the same request again replays the first answer byte for byte (Idempotent-Replayed: true) and another request under the key is a 422; after it, the key is forgotten. Ledger notifications are idempotent by transaction_id, kept for good, and signed deliveries by webhook-id, kept 24 hours.`,
      // package.json's "UNLICENSED": proprietary, no licence granted. LicenseRef- is SPDX's form for a licence not on its list.
      license: { name: 'Proprietary (UNLICENSED): no licence is granted', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [
      {
        // Variables rather than http://localhost:3000, which Redocly's recommended rules refuse as an example host.
        url: 'http://{host}:{port}',
        description: `The demo: npm start with no settings serves the demo seed on port ${DEFAULTS.port}. ${DEPLOYMENT_ADDRESS}`,
        variables: {
          host: { default: 'localhost', description: 'Where the service runs' },
          port: { default: String(DEFAULTS.port), description: 'PORT' },
        },
      },
      { url: '/', description: 'The service that serves this document at /openapi.json' },
    ],
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
      '/openapi.json': plainGet('getOpenApiDocument', 'This document', 'OpenAPI 3.1', 'application/json', 'object'),
      '/admin/tokens/{tokenId}': adminGet(
        {
          operationId: 'adminToken',
          summary: 'A token with its latest ledger rows (withdrawals, loads, unloads, credited schedules)',
          description: ADMIN_ONLY,
        },
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
        {
          operationId: 'adminEvents',
          summary: 'The most recent operation requests of this instance, newest first',
          description: ADMIN_ONLY,
        },
        queryParameters(eventQuerySchema),
        'AdminEvents',
        DEMO_ADMIN_EVENTS,
      ),
      '/admin/changes': adminGet(
        {
          operationId: 'adminChanges',
          summary: "Any account's feed of changes, as the account reads it (same parameters; source_id names the account)",
          description: `${ADMIN_ONLY} Waiting requests are bounded per account as the account's own are (MAX_WAITING_FEEDS_PER_ACCOUNT), apart from them.`,
        },
        queryParameters(adminFeedQuerySchema, { source_id: 'PDR28' }),
        'ChangesPage',
        DEMO_CHANGES_PAGE,
        [409, 410],
      ),
      '/admin/endpoints': adminGet(
        {
          operationId: 'adminEndpoints',
          summary: 'Webhooks out: each endpoint of the seed, its state, its position per account and its last attempt',
          description: `${ADMIN_ONLY} An endpoint the seed no longer lists is not shown (its positions are kept).`,
        },
        [],
        'AdminEndpoints',
        { endpoints: [DEMO_ENDPOINT] },
      ),
      '/admin/endpoints/{id}/attempts': adminGet(
        {
          operationId: 'adminEndpointAttempts',
          summary: "An endpoint's attempts, newest first (the newest 1,000 are kept)",
          description: ADMIN_ONLY,
        },
        [
          ENDPOINT_ID_PARAMETER,
          ...Object.entries((jsonSchema(attemptsQuerySchema, 'input') as { properties: Record<string, Json> }).properties).map(
            ([name, schema]) => ({
              name,
              in: 'query',
              required: false,
              schema,
            }),
          ),
        ],
        'AdminAttempts',
        { attempts: [DEMO_ENDPOINT.last_attempt as NonNullable<ResponseExample<'AdminEndpoint'>['last_attempt']>] },
      ),
      '/admin/endpoints/{id}/enable': adminEndpointPost({
        operationId: 'adminEnableEndpoint',
        summary: 'Enables a disabled endpoint: it resumes where it stopped, in order, the failed change from the first retry step',
        description: ADMIN_ONLY,
      }),
      '/admin/endpoints/{id}/replay': adminEndpointPost(
        {
          operationId: 'adminReplayEndpoint',
          summary: "Moves the endpoint's position in an account back to `after`: the changes after it that match are sent again, in order",
          description: `${ADMIN_ONLY} Same webhook-id and body as before, new timestamp and signature. \`after\` above the current position is a 400: a replay never skips a change.`,
        },
        replaySchema,
      ),
    },
    components: {
      schemas: {
        ...mapValues(REQUEST_SCHEMAS, (schema) => jsonSchema(schema, 'input')),
        ...mapValues(RESPONSE_SCHEMAS, (schema) => jsonSchema(schema, 'output')),
      },
      headers: {
        RequestId: { description: 'The request id: the X-Request-Id sent (when well-formed) or a new UUID', schema: { type: 'string' } },
        IdempotentReplayed: {
          description: 'Present, as "true", when the answer repeats an earlier accepted request',
          schema: { type: 'string', const: 'true' },
        },
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
