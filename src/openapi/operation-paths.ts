/**
 * The partner operations of the OpenAPI document, from the catalogue (src/operations/catalogue.ts): each entry
 * documented by its kind (a token notification, /v1/events, an operation keyed by {randomkey}, PATCH on the token
 * path), with the summary, description and examples of its documentation (src/operations/docs.ts).
 */
import type { OperationText } from '../operations/docs';
import {
  OPERATIONS,
  operationRoutes,
  tokenChangesByEvent,
  type ChangesFeed,
  type KeyedOperation,
  type Method,
  type Operation,
  type TokenNotification,
} from '../operations/catalogue';
import { keyedPathSchema } from '../schemas/booking';
import { ruleClause } from '../schemas/fields';
import {
  envelopeExample,
  ERROR_EXAMPLES,
  errorResponses,
  jsonSchema,
  RATE_LIMIT_HEADERS,
  ref,
  REQUEST_ID_HEADER,
  type Json,
  type ResponseExample,
  success,
} from './responses';
import { ACCOUNT_BEARER, authenticationNote, SIGNED_OR_UNSIGNED } from './security';

const TOKEN_ERRORS = [400, 401, 403, 405, 409, 413, 415, 422, 428, 429, 500, 503, 504];
const BOOKING_ERRORS = [400, 401, 403, 404, 405, 409, 413, 415, 422, 429, 500, 503, 504];
/** Modify, Load and Unload Token name a token the caller must have (428). */
const TOKEN_CHANGE_ERRORS = [...BOOKING_ERRORS, 428].sort((a, b) => a - b);
const SUCCESS_EXAMPLE: ResponseExample<'Success'> = { success: true, message: 'Success' };

function jsonBody(schemaName: string, examples: Record<string, unknown>): Json {
  return {
    required: true,
    content: {
      'application/json': {
        schema: ref(schemaName),
        examples: Object.fromEntries(Object.entries(examples).map(([name, value]) => [name, { value }])),
      },
    },
  };
}

/** A token notification: share_public in the body, signed or not, answered with the plain success body. */
function tokenNotificationDocument({ operationId, summary, description }: OperationText, requestBody: Json): Json {
  return {
    operationId,
    tags: ['Token notifications'],
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
 * example key is its own, as they share one key space. Where one path takes several operations' bodies (PATCH on the
 * token path), each body example has a key of its own under the same example name.
 */
const partnerPathParameters = (randomkey: string | Record<string, string>) => [
  {
    name: 'version',
    in: 'path',
    required: true,
    description: 'Only v1 exists; anything else is a 404',
    schema: { type: 'string', enum: ['v1'] },
  },
  {
    name: 'partnerid',
    in: 'path',
    required: true,
    description: "Must equal the body's source_id",
    schema: partnerPathSchema.properties.partnerid,
    example: 'PDR28',
  },
  {
    name: 'randomkey',
    in: 'path',
    required: true,
    description: `The idempotency key. ${KEY_RETENTION}`,
    schema: partnerPathSchema.properties.randomkey,
    ...(typeof randomkey === 'string'
      ? { example: randomkey }
      : { examples: Object.fromEntries(Object.entries(randomkey).map(([name, value]) => [name, { value }])) }),
  },
];

/** How long a {randomkey} holds (contract section 6; the stores' retention, src/store). */
const KEY_RETENTION =
  "Kept 24 hours from the request that first used it, in one key space per account with the other operations under {randomkey}; then forgotten, and the same key starts a new request. The account's kept keys count against MAX_KEYS_PER_ACCOUNT (403 past it).";

const KEYED_DESCRIPTION = `{randomkey} is the idempotency key: the same request again replays the first answer byte for byte; another request with the same key is a 422. ${KEY_RETENTION}`;

/** An operation keyed by {randomkey}: share_secret in the body, signed or not, answered with what it made or changed. */
function keyedOperationDocument(
  { operationId, summary, description }: OperationText,
  requestBody: Json,
  answer: Json,
  randomkey: string | Record<string, string>,
  tag: 'Tokens' | 'Bookings',
  errors = BOOKING_ERRORS,
): Json {
  return {
    operationId,
    tags: [tag],
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
      return [
        'TokenMovementSuccess',
        { ...SUCCESS, ...(example as Pick<ResponseExample<'TokenMovementSuccess'>, 'token' | 'transaction'>) },
      ];
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
        examples: Object.fromEntries(
          changes.map(({ openapi: { examples } }) => Object.entries(examples)[0]).map(([name, value]) => [name, { value }]),
        ),
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
  const randomkeys = Object.fromEntries(changes.map(({ openapi: { examples, randomkey } }) => [Object.keys(examples)[0], randomkey]));
  return keyedOperationDocument(text, requestBody, answer, randomkeys, 'Tokens', TOKEN_CHANGE_ERRORS);
}

const FEED_ERRORS = [400, 401, 405, 409, 410, 429, 500, 503, 504];

/** The feed's own refusals, in place of the operations' examples of the same statuses. */
const FEED_ERROR_EXAMPLES = {
  ...ERROR_EXAMPLES,
  400: [
    ['limit', envelopeExample(400, 'Invalid field: limit', [{ field: 'limit', message: 'must be a whole number from 1 to 1000' }])],
    [
      'type',
      envelopeExample(400, 'Invalid field: types', [
        { field: 'types', message: '"token.withdrew" is not a change type: the types are token.created, token.modified, …' },
      ]),
    ],
  ],
  401: [['unauthorized', envelopeExample(401, 'Unauthorized')]],
  409: [
    [
      'cursor ahead',
      envelopeExample(
        409,
        "Cursor ahead: after=500 is past the account's last change, seq 3; its changes were reset (a memory store restarted, or a database restored): read again from after=0",
      ),
    ],
  ],
  410: [
    [
      'cursor expired',
      envelopeExample(
        410,
        'Cursor expired: the changes after seq 3 are no longer kept; the oldest seq still kept is 42 (read on with after=41)',
      ),
    ],
  ],
  429: [
    ...ERROR_EXAMPLES[429],
    [
      'waiting',
      envelopeExample(
        429,
        'Too Many Requests: 4 feed requests of this account already wait for changes on this instance, the most MAX_WAITING_FEEDS_PER_ACCOUNT allows',
      ),
    ],
  ],
} satisfies typeof ERROR_EXAMPLES;

/** The feed's 401 carries the bearer challenge (RFC 6750). */
const FEED_CHALLENGE: Record<number, Json> = {
  401: { 'WWW-Authenticate': { required: true, description: 'Bearer realm="changes"', schema: { type: 'string' } } },
};

/** GET /v1/accounts/{source_id}/changes: the path's account, the query's parameters with the example's values, a page. */
function feedDocument({ query, pathSchema, openapi }: ChangesFeed): Json {
  const { operationId, summary, description, sourceId, query: example, answerExample } = openapi;
  const { properties } = jsonSchema(query, 'input') as { properties: Record<string, Json> };
  return {
    operationId,
    tags: ['Changes'],
    summary,
    description,
    security: ACCOUNT_BEARER,
    parameters: [
      {
        name: 'source_id',
        in: 'path',
        required: true,
        description: 'The account whose changes are read: the one the bearer secret is of',
        schema: (jsonSchema(pathSchema, 'input') as { properties: Record<string, Json> }).properties.source_id,
        example: sourceId,
      },
      ...Object.entries(properties).map(([name, { description: parameterDescription, ...schema }]) => ({
        name,
        in: 'query',
        required: false,
        description: parameterDescription,
        schema,
        ...(name in example ? { example: example[name as keyof typeof example] } : {}),
      })),
    ],
    responses: {
      '200': {
        description: 'A page of changes (empty when none matches, after waiting when asked to)',
        headers: { ...REQUEST_ID_HEADER, ...RATE_LIMIT_HEADERS },
        content: { 'application/json': { schema: ref('ChangesPage'), example: answerExample } },
      },
      ...errorResponses(FEED_ERRORS, FEED_CHALLENGE, FEED_ERROR_EXAMPLES),
    },
  };
}

/** The catalogue's operations, by path: Express's `/:name` is OpenAPI's `/{name}`. */
export function operationPaths(): Record<string, Json> {
  return Object.fromEntries(
    operationRoutes().map(({ path, operations }) => [
      path.replace(/:(\w+)/g, '{$1}'),
      Object.fromEntries(
        operations.flatMap((entry) => documentedMethods(entry).map((method) => [method, operationDocument(entry, method)])),
      ),
    ]),
  );
}

/** POST before GET: Withdraw's GET, which the published samples send, follows the POST it repeats. */
const DOCUMENTED_ORDER: readonly Method[] = ['post', 'get', 'patch', 'delete'];
const documentedMethods = (entry: Operation): Method[] =>
  [...entry.methods].sort((a, b) => DOCUMENTED_ORDER.indexOf(a) - DOCUMENTED_ORDER.indexOf(b));

/** One method of a catalogue entry, as its kind documents it. */
function operationDocument(entry: Operation, method: Method): Json {
  switch (entry.kind) {
    case 'event dispatch':
      return tokenNotificationDocument(entry.openapi, eventsBody(OPERATIONS.filter((other) => other.kind === 'token notification')));
    case 'token notification':
      return tokenNotificationDocument(
        { ...entry.openapi, ...entry.openapi.byMethod?.[method] },
        jsonBody(entry.openapi.component, entry.openapi.examples),
      );
    case 'keyed': {
      const text = { ...entry.openapi, ...entry.openapi.byMethod?.[method] };
      const errors = entry.tokenEvent === undefined ? BOOKING_ERRORS : TOKEN_CHANGE_ERRORS;
      return keyedOperationDocument(
        text,
        jsonBody(entry.openapi.component, entry.openapi.examples),
        success(...answerExample(entry), true),
        entry.openapi.randomkey,
        entry.answer === 'booking' ? 'Bookings' : 'Tokens',
        errors,
      );
    }
    case 'token change dispatch':
      return tokenChangeDocument(entry.openapi);
    case 'feed':
      return feedDocument(entry);
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
