/**
 * The catalogue: one entry per operation, in the order app.ts mounts them. An entry says what the operation is
 * (its name for metrics and the event log, its path and methods, the event value its body carries, its schema, its
 * service and the kind of answer); the routers (routes/operation.ts) build each chain from it, POST /v1/events
 * dispatches on its read_event values, and the OpenAPI document describes it.
 *
 * The catalogue imports schemas and services, never routes: app.ts and the routers read it (only app.ts mounts
 * routers). A token notification's path comes from ROUTE_OF_EVENT in schemas/token-event.ts, where every
 * notification schema's read_event message needs it to tell a body sent to the wrong route where it belongs; the
 * schemas sit below the catalogue, so the table cannot live here.
 */
import type { z } from 'zod';
import type { Booking } from '../domain/bookings';
import type { LedgerEntry } from '../domain/ledger';
import type { FieldProblem } from '../domain/field-problem';
import type { Token } from '../domain/tokens';
import { DEMO_BOOKING, DEMO_NOTIFICATION, DEMO_PUBLIC_KEY, DEMO_SECRET_KEY } from './demo-examples';
import { bookingChangeSchema, cancelBookingSchema, createBookingSchema, otherBookingOperation } from '../schemas/booking';
import type { bookingSuccessSchema, tokenMovementSuccessSchema, tokenSuccessSchema } from '../schemas/responses';
import { statusChangeSchema } from '../schemas/status-change';
import { availableDateSchema, expiryDateSchema } from '../schemas/token-dates';
import { createTokenSchema } from '../schemas/token-creation';
import { ROUTE_OF_EVENT, TOKEN_EVENTS, type TokenEvent } from '../schemas/token-event';
import { loadTokenSchema, modifyTokenSchema, otherTokenOperation, otherPathEvent, unloadTokenSchema, type TokenChangeEvent } from '../schemas/token-change';
import { loadedSchema, loadScheduleSchema, refundSchema, unloadedSchema, withdrawSchema } from '../schemas/token-ledger';
import type { Outcome } from '../services/apply-once';
import { cancelBooking, createBooking, modifyBooking } from '../services/booking-changes';
import type { KeyedCall } from '../services/keyed-requests';
import { changeTokenStatus } from '../services/status-change';
import { createToken } from '../services/token-creation';
import { changeAvailableDate, changeExpiryDate } from '../services/token-dates';
import { loadToken, modifyToken, unloadToken } from '../services/token-changes';
import { load, refund, settleLoadSchedule, unload, withdraw } from '../services/token-ledger';
import type { Account, StoreTransaction } from '../store/store';

/** The methods an operation is served on, as Express names its route methods. */
export type Method = 'get' | 'post' | 'patch' | 'delete';

type NotificationSchema = z.ZodType<{ source_id: string; share_public?: string }>;
type KeyedSchema = z.ZodType<{ source_id: string; share_secret: string }>;

/** What the OpenAPI document says of an operation; operationId is unique in the document. */
export interface OperationDocs<Example = unknown> {
  /** The request body's name under components.schemas. */
  component: string;
  operationId: string;
  summary: string;
  description: string;
  /** Complete request bodies, by name; the compiler checks them against the schema (z.input). */
  examples: Record<string, Example>;
  /** A method documented as an operation of its own (Withdraw's GET). */
  byMethod?: Partial<Record<Method, { operationId: string; summary: string; description?: string }>>;
}

/**
 * A token notification: `share_public` in the body, a read_event naming it, the plain success answer. Served on its
 * own path and by POST /v1/events.
 */
export interface TokenNotification<Schema extends NotificationSchema = NotificationSchema> {
  kind: 'token notification';
  /** For metrics and the event log. */
  name: string;
  /** Its read_event; its own path is this event's route (ROUTE_OF_EVENT). */
  event: TokenEvent;
  path: string;
  /** In the order a 405's Allow names them. */
  methods: readonly Method[];
  schema: Schema;
  /** The validated request, the caller's account and the clock. */
  service(tx: StoreTransaction, request: z.output<Schema>, account: Account, now: Date): Promise<Outcome>;
  /**
   * Whether share_public may be left out: only when the request is signed with the account's own secret, or the
   * operator allows it (ALLOW_KEYLESS_STATUS_CHANGE).
   */
  keyless?: 'signed by the account, or allowed';
  answer: 'success';
  /** On POST /v1/events, its first example stands for it, under this name (default: the example's own). */
  openapi: OperationDocs<z.input<Schema>> & { eventsExample?: string };
}

/** What a keyed operation's service makes or changes, by the kind of answer that shows it. */
export interface KeyedResults {
  token: Token;
  booking: Booking;
  /** Load and Unload Token: the token after the move, and its ledger row. */
  movement: { token: Token; entry: LedgerEntry };
}

/** The same, as the answer shows it besides success and message: an example for the OpenAPI document. */
interface AnswerExamples {
  token: z.output<typeof tokenSuccessSchema>['token'];
  booking: z.output<typeof bookingSuccessSchema>['booking'];
  movement: Pick<z.output<typeof tokenMovementSuccessSchema>, 'token' | 'transaction'>;
}

/**
 * An operation keyed by `{randomkey}` (Create Token, the booking operations): `share_secret` in the body, the path's
 * partner and key, answered with what it made or changed. Operations of one path share one route, a method each.
 */
export interface KeyedOperation<Schema extends KeyedSchema = KeyedSchema, Answer extends keyof KeyedResults = keyof KeyedResults> {
  kind: 'keyed';
  name: string;
  path: string;
  methods: readonly [Method];
  schema: Schema;
  /** A body meant for another operation of the same path, told which method takes it before its fields are checked. */
  otherOperation?: (body: unknown) => FieldProblem | undefined;
  service(tx: StoreTransaction, call: KeyedCall<z.output<Schema>>): Promise<Outcome<KeyedResults[Answer]>>;
  /** What the answer carries besides success and message: `{ token }`, `{ booking }` or `{ token, transaction }`. */
  answer: Answer;
  /** The token_event that picks it on PATCH of the token path (the token change dispatch), beside its own published path. */
  tokenEvent?: TokenChangeEvent;
  /** Each keyed operation's example {randomkey} is its own: they share one key space, so a partner copying them gets 200s. */
  openapi: OperationDocs<z.input<Schema>> & { answerExample: AnswerExamples[Answer]; randomkey: string };
}

/** POST /v1/events: one URL for every token notification, dispatched on read_event to the entry of that event. */
export interface EventDispatch {
  kind: 'event dispatch';
  name: string;
  path: string;
  methods: readonly ['post'];
  openapi: Pick<OperationDocs, 'operationId' | 'summary' | 'description'>;
}

/**
 * PATCH on the token path: Modify, Load or Unload Token, dispatched on token_event to the entry that names it, whose
 * chain runs from the schema on (as on its own published path, `.../{randomkey}/load`).
 */
export interface TokenChangeDispatch {
  kind: 'token change dispatch';
  name: string;
  path: string;
  methods: readonly ['patch'];
  openapi: Pick<OperationDocs, 'operationId' | 'summary' | 'description'>;
}

export type Operation =
  | TokenNotification
  | KeyedOperation<KeyedSchema, 'token'>
  | KeyedOperation<KeyedSchema, 'booking'>
  | KeyedOperation<KeyedSchema, 'movement'>
  | EventDispatch
  | TokenChangeDispatch;

/** A token notification's entry, its path taken from its event; the compiler checks the service and examples against the schema. */
function tokenNotification<Schema extends NotificationSchema>(entry: Omit<TokenNotification<Schema>, 'kind' | 'path' | 'answer'>): TokenNotification {
  return { kind: 'token notification', path: ROUTE_OF_EVENT[entry.event], answer: 'success', ...entry };
}

/** A keyed operation's entry; the compiler checks the service and examples against the schema and the answer. */
function keyedOperation<Schema extends KeyedSchema, Answer extends keyof KeyedResults>(entry: Omit<KeyedOperation<Schema, Answer>, 'kind'>): KeyedOperation<KeyedSchema, Answer> {
  return { kind: 'keyed', ...entry };
}

/** The booking operations' path: POST creates, PATCH modifies, DELETE cancels. */
const BOOKING_PATH = '/:version/booking/:partnerid/:randomkey';
/** The token operations' path: POST creates; PATCH modifies, loads or unloads, by token_event. */
const TOKEN_PATH = '/:version/token/:partnerid/:randomkey';

/** The published form of a token change's path, its event after the key; the body's token_event must be that event (400). */
function tokenChangePath(event: TokenChangeEvent): Pick<KeyedOperation, 'path' | 'tokenEvent' | 'otherOperation'> {
  return { path: `${TOKEN_PATH}/${event}`, tokenEvent: event, otherOperation: otherPathEvent(event) };
}

const DEMO_TOKEN_CHANGE = { share_secret: DEMO_SECRET_KEY, source_id: 'PDR28', token_id: '2908926013012565' } as const;
const DEMO_TOKEN_VIEW = {
  token_id: '2908926013012565',
  source_id: 'PDR28',
  destination_id: 'ID001',
  status: 'active',
  available_date: '01-01-2024',
  expiry_date: '31-12-2027',
} as const;

const WITHDRAW_DESCRIPTION =
  'An amount was withdrawn from a token. Idempotent by transaction_id: the same request again answers 200 with Idempotent-Replayed and applies nothing; the same transaction_id with other fields is a 422.';
const DEMO_WITHDRAWAL = {
  share_public: DEMO_PUBLIC_KEY,
  read_event: 'token.withdrawn_created',
  source_id: 'PDR28',
  destination_id: 'ID001',
  token_id: '2908926013012565',
  transaction_id: '20240121000000000001',
  withdrawn_amount: '100.00',
  token_balance: '900.00',
} as const;
const DEMO_LOAD_SCHEDULE = {
  ...DEMO_NOTIFICATION,
  read_event: 'token.load_schedule',
  schedule_status: 'credited',
  transaction_id: '20240121000000000004',
  token_balance: '1200.00',
} as const;

export const OPERATIONS: readonly Operation[] = [
  tokenNotification({
    name: 'status_change',
    event: TOKEN_EVENTS.statusChanged,
    methods: ['post'],
    schema: statusChangeSchema,
    service: changeTokenStatus,
    // A keyless Status Change would let anyone who knows an account, a destination and a token delete it for good.
    keyless: 'signed by the account, or allowed',
    openapi: {
      component: 'StatusChangeRequest',
      operationId: 'statusChange',
      summary: 'Status Change',
      description:
        "A token's status changed. deleted is final. Setting the status a token has, or sending none, changes nothing; but any other field whose name holds stat (in any case: status, token_stats) is a 400 naming it, as a misspelt status field would otherwise be a 200 that changed nothing. token_status, the alias, must equal tokes_status when both are sent. share_public may be left out when the request is signed with the account's own secret, or the service runs with ALLOW_KEYLESS_STATUS_CHANGE=true.",
      examples: {
        statusChange: { share_public: DEMO_PUBLIC_KEY, read_event: 'token.status_changed', source_id: 'PDR28', destination_id: 'ID001', token_id: 1010, tokes_status: 'disputed' },
      },
    },
  }),
  tokenNotification({
    name: 'withdraw',
    event: TOKEN_EVENTS.withdrawn,
    // GET with a JSON body too, as the published code samples send it; HEAD is refused, so only these move money.
    methods: ['get', 'post'],
    schema: withdrawSchema,
    service: withdraw,
    openapi: {
      component: 'WithdrawRequest',
      operationId: 'withdraw',
      summary: 'Withdraw',
      description: WITHDRAW_DESCRIPTION,
      examples: { withdrawal: DEMO_WITHDRAWAL },
      byMethod: {
        get: {
          operationId: 'withdrawWithGet',
          summary: 'Withdraw (GET with a JSON body, as the published samples send it)',
          description: `${WITHDRAW_DESCRIPTION} Served for senders that follow the published code samples. Fetch-based clients (browsers, fetch in Node, clients generated on it) cannot send a body with GET: use POST /v1/tokens/withdraw, which takes the same body.`,
        },
      },
    },
  }),
  {
    kind: 'event dispatch',
    name: 'token_event',
    path: '/v1/events',
    methods: ['post'],
    openapi: {
      operationId: 'tokenEvent',
      summary: 'One URL for every token notification',
      description:
        "Dispatches on read_event to the operation of that event: token.status_changed, token.withdrawn_created, token.loaded_created (always Loaded here, though the Unloaded route also takes that name), token.unloaded_created, token.load_schedule, token.expiry_updated, token.available_updated, token.refund_available. An unknown read_event is a 400 that lists the known ones; the rest of the body is then checked as on the operation's own route.",
    },
  },
  tokenNotification({
    name: 'loaded',
    event: TOKEN_EVENTS.loaded,
    methods: ['post'],
    schema: loadedSchema,
    service: load,
    openapi: {
      component: 'LoadedRequest',
      operationId: 'loaded',
      summary: 'Loaded',
      description:
        'Funds were added to a token: the balance goes up by load_amount, and token_balance must equal the result (409). fee_amount is charged to the sender and only recorded. A deleted token, or one outside its available and expiry dates, cannot be loaded (409); a balance over 9999999999.99 is a 422. A ledger row under transaction_id, idempotent as Withdraw.',
      examples: {
        load: { ...DEMO_NOTIFICATION, read_event: 'token.loaded_created', transaction_id: '20240121000000000002', load_amount: '250.00', fee_amount: '2.50', token_balance: '1150.00' },
      },
    },
  }),
  tokenNotification({
    name: 'unloaded',
    event: TOKEN_EVENTS.unloaded,
    methods: ['post'],
    schema: unloadedSchema,
    service: unload,
    openapi: {
      component: 'UnloadedRequest',
      operationId: 'unloaded',
      summary: 'Unloaded',
      description:
        'The sender took funds back: allowed unless the token is deleted (409). unload_amount must not exceed the balance (422) and token_balance must equal the balance less it (409). Also takes read_event token.loaded_created, the name the published page shows for this event. A ledger row under transaction_id, idempotent as Withdraw.',
      examples: {
        unload: { ...DEMO_NOTIFICATION, read_event: 'token.unloaded_created', transaction_id: '20240121000000000003', unload_amount: '50.00', token_balance: '1100.00' },
      },
    },
  }),
  tokenNotification({
    name: 'load_schedule',
    event: TOKEN_EVENTS.loadSchedule,
    methods: ['post'],
    schema: loadScheduleSchema,
    service: settleLoadSchedule,
    openapi: {
      component: 'LoadScheduleRequest',
      operationId: 'loadSchedule',
      summary: 'Load Schedule',
      description:
        'A scheduled load settled. credited: the balance becomes token_balance, never lower than it is (409); the difference is a ledger row under transaction_id (20 digits). deleted and failure change nothing; their transaction_id is empty and token_balance must equal the balance (409).',
      examples: { credited: DEMO_LOAD_SCHEDULE, failure: { ...DEMO_LOAD_SCHEDULE, schedule_status: 'failure', transaction_id: '', token_balance: '1200.00' } },
      eventsExample: 'loadSchedule',
    },
  }),
  tokenNotification({
    name: 'expiry_date',
    event: TOKEN_EVENTS.expiryUpdated,
    methods: ['post'],
    schema: expiryDateSchema,
    service: changeExpiryDate,
    openapi: {
      component: 'ExpiryDateRequest',
      operationId: 'expiryDate',
      summary: 'Expiry Date',
      description:
        "Sets the token's last usable day (UTC). Without expiry_date nothing changes. An expiry before the token's available date is a 400; a deleted token's dates cannot change (409).",
      examples: { expiryDate: { ...DEMO_NOTIFICATION, read_event: 'token.expiry_updated', expiry_date: '31-12-2027' } },
    },
  }),
  tokenNotification({
    name: 'available_date',
    event: TOKEN_EVENTS.availableUpdated,
    methods: ['post'],
    schema: availableDateSchema,
    service: changeAvailableDate,
    openapi: {
      component: 'AvailableDateRequest',
      operationId: 'availableDate',
      summary: 'Available Date',
      description: "Sets the token's first usable day (UTC). A date after the token's expiry date is a 400; a deleted token's dates cannot change (409).",
      examples: { availableDate: { ...DEMO_NOTIFICATION, read_event: 'token.available_updated', available_date: '01-02-2024' } },
    },
  }),
  tokenNotification({
    name: 'refund',
    event: TOKEN_EVENTS.refund,
    methods: ['post'],
    schema: refundSchema,
    service: refund,
    openapi: {
      component: 'RefundRequest',
      operationId: 'refund',
      summary: 'Refund',
      description:
        'Money the recipient had collected from the token comes back to it: the balance goes up by refund_amount, and token_balance must equal the result (409). A token gets back at most what was withdrawn from it less what was refunded to it before: more is a 422 stating the most. A balance over 9999999999.99 is a 422. Allowed unless the token is deleted (409): a frozen, disputed or expired token can be refunded. A ledger row under transaction_id, idempotent as Withdraw.',
      examples: {
        refund: { ...DEMO_NOTIFICATION, read_event: 'token.refund_available', transaction_id: '20240121000000000005', refund_amount: '40.00', token_balance: '1240.00' },
      },
    },
  }),
  keyedOperation({
    name: 'create_token',
    path: TOKEN_PATH,
    methods: ['post'],
    schema: createTokenSchema,
    otherOperation: otherTokenOperation,
    service: createToken,
    answer: 'token',
    openapi: {
      component: 'CreateTokenRequest',
      operationId: 'createToken',
      summary: 'Create Token',
      description:
        "A new token at one of the account's destinations (else 413), active, with load_amount as its opening balance and the dates given; the service assigns its 16-digit token_id. The optional fields are stored and shown as sent. expiry_date must not be before available_date, nor check_out before check_in (400): comparisons of two values the schema cannot state. A retry under the same key gets the same token, never a second one.",
      examples: {
        createToken: {
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
        },
      },
      randomkey: '7d2e-new-token-01',
      answerExample: {
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
      },
    },
  }),
  {
    kind: 'token change dispatch',
    name: 'token_change',
    path: TOKEN_PATH,
    methods: ['patch'],
    openapi: {
      operationId: 'changeToken',
      summary: 'Modify, Load or Unload Token',
      description:
        'Dispatches on token_event to Modify Token (modify), Load Token (load) or Unload Token (unload), each also served on its own published path with the event after the key (PATCH .../{randomkey}/load), where the rules are described. A missing or unknown token_event is a 400 that lists the three; "create" is told to use POST.',
    },
  },
  keyedOperation({
    name: 'modify_token',
    ...tokenChangePath('modify'),
    methods: ['patch'],
    schema: modifyTokenSchema,
    service: modifyToken,
    answer: 'token',
    openapi: {
      component: 'ModifyTokenRequest',
      operationId: 'modifyToken',
      summary: 'Modify Token',
      description:
        "Changes the fields the body carries, at least one of token_status, available_date, expiry_date, token_name, token_reference, customer_name, booking_reference, check_in, check_out, room_count. token_status is active or freezed only: disputed and deleted are the platform's (Status Change). The token must be the caller's and at destination_id (428); a deleted token cannot be modified (409). The rules hold on the token as it would be after the change: expiry_date not before available_date, check_out not before check_in (400). email_token and email_settings are accepted and ignored: the service sends no e-mail. Answered with the token after the change; a body that changes nothing is a 200 that changes nothing. Also served as PATCH on the token path with token_event modify.",
      examples: {
        modifyToken: { ...DEMO_TOKEN_CHANGE, token_event: 'modify', destination_id: 'ID001', expiry_date: '31-12-2028', token_name: 'Guest card 1396' },
      },
      randomkey: 'openapi-modify-token-01',
      answerExample: { ...DEMO_TOKEN_VIEW, balance: '1240.00', expiry_date: '31-12-2028', token_name: 'Guest card 1396' },
    },
  }),
  keyedOperation({
    name: 'load_token',
    ...tokenChangePath('load'),
    methods: ['patch'],
    schema: loadTokenSchema,
    service: loadToken,
    answer: 'movement',
    openapi: {
      component: 'LoadTokenRequest',
      operationId: 'loadToken',
      summary: 'Load Token',
      description:
        "The partner adds money to its token: the balance goes up by load_amount. destination_id is optional; when sent it must be the token's (428). A deleted token, or one outside its available and expiry dates, cannot be loaded (409); a balance over 9999999999.99 is a 422. check_in, check_out and room_count, when sent, are stored on the token. The service makes the ledger row's 20-digit transaction_id, in the account's one key space of ledger rows; a retry under the same {randomkey} gets the same answer and the same transaction_id: money moves once. Also served as PATCH on the token path with token_event load.",
      examples: { loadToken: { ...DEMO_TOKEN_CHANGE, token_event: 'load', load_amount: '60.00', destination_id: 'ID001' } },
      randomkey: 'openapi-load-token-01',
      answerExample: {
        token: { ...DEMO_TOKEN_VIEW, balance: '1300.00', expiry_date: '31-12-2028', token_name: 'Guest card 1396' },
        transaction: { transaction_id: '48201937465019283746', kind: 'load', amount: '60.00', token_balance: '1300.00' },
      },
    },
  }),
  keyedOperation({
    name: 'unload_token',
    ...tokenChangePath('unload'),
    methods: ['patch'],
    schema: unloadTokenSchema,
    service: unloadToken,
    answer: 'movement',
    openapi: {
      component: 'UnloadTokenRequest',
      operationId: 'unloadToken',
      summary: 'Unload Token',
      description:
        "The partner takes money back from its token: the balance goes down by unload_amount, which must not exceed it (422). Allowed unless the token is deleted (409): a frozen, disputed or expired token can be unloaded. destination_id, check_in, check_out and room_count as in Load Token, and the transaction_id too. Also served as PATCH on the token path with token_event unload.",
      examples: { unloadToken: { ...DEMO_TOKEN_CHANGE, token_event: 'unload', unload_amount: '25.00' } },
      randomkey: 'openapi-unload-token-01',
      answerExample: {
        token: { ...DEMO_TOKEN_VIEW, balance: '1275.00', expiry_date: '31-12-2028', token_name: 'Guest card 1396' },
        transaction: { transaction_id: '93017264518203947561', kind: 'unload', amount: '25.00', token_balance: '1275.00' },
      },
    },
  }),
  keyedOperation({
    name: 'create_booking',
    path: BOOKING_PATH,
    methods: ['post'],
    schema: createBookingSchema,
    otherOperation: otherBookingOperation('new'),
    service: createBooking,
    answer: 'booking',
    openapi: {
      component: 'CreateBookingRequest',
      operationId: 'createBooking',
      summary: 'Create Booking',
      description:
        'A booking the account does not have yet (else 409), starting active. Every field is required but buyer_id (empty when left out). check_out must not be before check_in (400), a comparison of two values the schema cannot state; the schema states every other rule.',
      // Every field of the demo booking, under a new booking_id.
      examples: {
        createBooking: (() => {
          const { source_id: sourceId, booking_id: _bookingId, status: _status, updated_at: _updatedAt, ...fields } = DEMO_BOOKING;
          return { share_secret: DEMO_SECRET_KEY, booking_event: 'new', source_id: sourceId, booking_id: '1400', ...fields, margin_category: '%', pre_auth: 'false' } as const;
        })(),
      },
      randomkey: '3f9c1a7e-new-booking-01',
      answerExample: { ...DEMO_BOOKING, booking_id: '1400', guests_count: '3', updated_at: '2024-01-21T10:15:00.000Z' },
    },
  }),
  keyedOperation({
    name: 'modify_booking',
    path: BOOKING_PATH,
    methods: ['patch'],
    schema: bookingChangeSchema,
    otherOperation: otherBookingOperation('modify'),
    service: modifyBooking,
    answer: 'booking',
    openapi: {
      component: 'BookingChangeRequest',
      operationId: 'modifyBooking',
      summary: 'Modify Booking',
      description:
        'Changes the fields the body carries, at least one besides the four that name the booking. A cancelled booking cannot be modified (409). The rules across fields hold on the booking as it would be after the change, whichever of the fields the body carries, so they need the stored booking and the schema cannot state them: check_out not before check_in, and a transaction_margin of at most 100 when margin_category is % (400).',
      examples: { bookingChange: { share_secret: DEMO_SECRET_KEY, booking_event: 'modify', source_id: 'PDR28', booking_id: '1396', guests_count: '3', check_out: '18-02-2024' } },
      randomkey: '3f9c1a7e-change-01',
      answerExample: DEMO_BOOKING,
    },
  }),
  keyedOperation({
    name: 'cancel_booking',
    path: BOOKING_PATH,
    methods: ['delete'],
    schema: cancelBookingSchema,
    otherOperation: otherBookingOperation('cancel'),
    service: cancelBooking,
    answer: 'booking',
    openapi: {
      component: 'CancelBookingRequest',
      operationId: 'cancelBooking',
      summary: 'Cancel Booking',
      description: 'The booking becomes cancelled; cancelling a cancelled booking is a 200 that changes nothing.',
      examples: { cancelBooking: { share_secret: DEMO_SECRET_KEY, booking_event: 'cancel', source_id: 'PDR28', booking_id: '1396' } },
      randomkey: '3f9c1a7e-cancel-01',
      answerExample: { ...DEMO_BOOKING, status: 'cancelled', updated_at: '2024-01-22T08:00:00.000Z' },
    },
  }),
];

/** The operations of one path, which one route serves (so OPTIONS and the 405's Allow name all its methods). */
export interface OperationRoute {
  path: string;
  operations: readonly Operation[];
}

/** The catalogue by path, in its order: each path where its first operation is. */
export function operationRoutes(operations: readonly Operation[] = OPERATIONS): OperationRoute[] {
  const routes = new Map<string, Operation[]>();
  for (const entry of operations) routes.set(entry.path, [...(routes.get(entry.path) ?? []), entry]);
  return [...routes].map(([path, entries]) => ({ path, operations: entries }));
}

/** The token changes, by token_event: PATCH on the token path serves each event's operation. */
export function tokenChangesByEvent(operations: readonly Operation[] = OPERATIONS): ReadonlyMap<TokenChangeEvent, KeyedOperation> {
  return new Map(operations.flatMap((entry) => (entry.kind === 'keyed' && entry.tokenEvent !== undefined ? [[entry.tokenEvent, entry as KeyedOperation] as const] : [])));
}

/** The token notifications, by read_event: POST /v1/events serves each event's operation. */
export function tokenNotificationsByEvent(operations: readonly Operation[] = OPERATIONS): ReadonlyMap<TokenEvent, TokenNotification> {
  return new Map(operations.flatMap((entry) => (entry.kind === 'token notification' ? [[entry.event, entry] as const] : [])));
}
