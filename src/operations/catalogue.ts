/**
 * The catalogue: one entry per operation, in the order app.ts mounts them. An entry says what the operation is
 * (its name for metrics and the event log, its path and methods, the event value its body carries, its schema, its
 * service and the kind of answer); the routers (routes/operation.ts, routes/lifecycle.ts) build each chain from it,
 * POST /v1/events dispatches on its read_event values, and the OpenAPI document describes it, with the prose and
 * examples each entry takes from docs.ts by the operation's name.
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
import { bookingChangeSchema, cancelBookingSchema, createBookingSchema, otherBookingOperation } from '../schemas/booking';
import { feedPathSchema, feedQuerySchema } from '../schemas/feed';
import { statusChangeSchema } from '../schemas/status-change';
import { availableDateSchema, expiryDateSchema } from '../schemas/token-dates';
import { createTokenSchema } from '../schemas/token-creation';
import { ROUTE_OF_EVENT, TOKEN_EVENTS, type TokenEvent } from '../schemas/token-event';
import {
  loadTokenSchema,
  modifyTokenSchema,
  otherTokenOperation,
  otherPathEvent,
  unloadTokenSchema,
  type TokenChangeEvent,
} from '../schemas/token-change';
import { loadedSchema, loadScheduleSchema, refundSchema, unloadedSchema, withdrawSchema } from '../schemas/token-ledger';
import type { Outcome } from '../services/apply-once';
import { cancelBooking, createBooking, modifyBooking } from '../services/booking-changes';
import type { KeyedCall } from '../services/keyed-requests';
import { changeTokenStatus } from '../services/status-change';
import { createToken } from '../services/token-creation';
import { changeAvailableDate, changeExpiryDate } from '../services/token-dates';
import { loadToken, modifyToken, unloadToken } from '../services/token-changes';
import { load, refund, settleLoadSchedule, unload, withdraw } from '../services/token-ledger';
import type { Account, ChangeType, StoreTransaction } from '../store/store';
import { OPERATION_DOCS, type FeedDocs, type KeyedDocs, type NotificationDocs, type OperationText } from './docs';

/** The methods an operation is served on, as Express names its route methods. */
export type Method = 'get' | 'post' | 'patch' | 'delete';

type NotificationSchema = z.ZodType<{ source_id: string; share_public?: string }>;
type KeyedSchema = z.ZodType<{ source_id: string; share_secret: string }>;

/**
 * A token notification: `share_public` in the body, a read_event naming it, the plain success answer. Served on its
 * own path and by POST /v1/events.
 */
export interface TokenNotification<Schema extends NotificationSchema = NotificationSchema> {
  kind: 'token notification';
  /** For metrics and the event log. */
  name: string;
  /** The type of the change it records when it applies something (contract section 13.1). */
  change: ChangeType;
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
  /** Its summary, description and examples (docs.ts), checked against the schema. */
  openapi: NotificationDocs<Schema>;
}

/** What a keyed operation's service makes or changes, by the kind of answer that shows it. */
export interface KeyedResults {
  token: Token;
  booking: Booking;
  /** Load and Unload Token: the token after the move, and its ledger row. */
  movement: { token: Token; entry: LedgerEntry };
}

/**
 * An operation keyed by `{randomkey}` (Create Token, the booking operations): `share_secret` in the body, the path's
 * partner and key, answered with what it made or changed. Operations of one path share one route, a method each.
 */
export interface KeyedOperation<Schema extends KeyedSchema = KeyedSchema, AnswerKind extends keyof KeyedResults = keyof KeyedResults> {
  kind: 'keyed';
  name: string;
  /** The type of the change it records when it applies something (contract section 13.1). */
  change: ChangeType;
  path: string;
  methods: readonly [Method];
  schema: Schema;
  /** A body meant for another operation of the same path, told which method takes it before its fields are checked. */
  otherOperation?: (body: unknown) => FieldProblem | undefined;
  service(tx: StoreTransaction, call: KeyedCall<z.output<Schema>>): Promise<Outcome<KeyedResults[AnswerKind]>>;
  /** What the answer carries besides success and message: `{ token }`, `{ booking }` or `{ token, transaction }`. */
  answer: AnswerKind;
  /** The token_event that picks it on PATCH of the token path (the token change dispatch), beside its own published path. */
  tokenEvent?: TokenChangeEvent;
  /** Its summary, description, examples, answer's example and example {randomkey} (docs.ts), checked against the schema and the answer. */
  openapi: KeyedDocs<Schema, AnswerKind>;
}

/** POST /v1/events: one URL for every token notification, dispatched on read_event to the entry of that event. */
export interface EventDispatch {
  kind: 'event dispatch';
  name: string;
  path: string;
  methods: readonly ['post'];
  openapi: OperationText;
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
  openapi: OperationText;
}

/**
 * GET /v1/accounts/{source_id}/changes: the account's feed (contract section 13.2), read by position from the store
 * (src/delivery/feed.ts), authenticated by its share_secret as a bearer token; no body.
 */
export interface ChangesFeed {
  kind: 'feed';
  name: string;
  path: string;
  methods: readonly ['get'];
  query: typeof feedQuerySchema;
  pathSchema: typeof feedPathSchema;
  openapi: FeedDocs;
}

export type Operation =
  | TokenNotification
  | KeyedOperation<KeyedSchema, 'token'>
  | KeyedOperation<KeyedSchema, 'booking'>
  | KeyedOperation<KeyedSchema, 'movement'>
  | EventDispatch
  | TokenChangeDispatch
  | ChangesFeed;

/** A token notification's entry, its path taken from its event; the compiler checks the service and examples against the schema. */
function tokenNotification<Schema extends NotificationSchema>(
  entry: Omit<TokenNotification<Schema>, 'kind' | 'path' | 'answer'>,
): TokenNotification {
  return { kind: 'token notification', path: ROUTE_OF_EVENT[entry.event], answer: 'success', ...entry };
}

/** A keyed operation's entry; the compiler checks the service and examples against the schema and the answer. */
function keyedOperation<Schema extends KeyedSchema, AnswerKind extends keyof KeyedResults>(
  entry: Omit<KeyedOperation<Schema, AnswerKind>, 'kind'>,
): KeyedOperation<KeyedSchema, AnswerKind> {
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

export const OPERATIONS: readonly Operation[] = [
  tokenNotification({
    name: 'status_change',
    change: 'token.status_changed',
    event: TOKEN_EVENTS.statusChanged,
    methods: ['post'],
    schema: statusChangeSchema,
    service: changeTokenStatus,
    // A keyless Status Change would let anyone who knows an account, a destination and a token delete it for good.
    keyless: 'signed by the account, or allowed',
    openapi: OPERATION_DOCS.status_change,
  }),
  tokenNotification({
    name: 'withdraw',
    change: 'token.withdrawn',
    event: TOKEN_EVENTS.withdrawn,
    // GET with a JSON body too, as the published code samples send it; HEAD is refused, so only these move money.
    methods: ['get', 'post'],
    schema: withdrawSchema,
    service: withdraw,
    openapi: OPERATION_DOCS.withdraw,
  }),
  {
    kind: 'event dispatch',
    name: 'token_event',
    path: '/v1/events',
    methods: ['post'],
    openapi: OPERATION_DOCS.token_event,
  },
  tokenNotification({
    name: 'loaded',
    change: 'token.loaded',
    event: TOKEN_EVENTS.loaded,
    methods: ['post'],
    schema: loadedSchema,
    service: load,
    openapi: OPERATION_DOCS.loaded,
  }),
  tokenNotification({
    name: 'unloaded',
    change: 'token.unloaded',
    event: TOKEN_EVENTS.unloaded,
    methods: ['post'],
    schema: unloadedSchema,
    service: unload,
    openapi: OPERATION_DOCS.unloaded,
  }),
  tokenNotification({
    name: 'load_schedule',
    change: 'token.schedule_credited',
    event: TOKEN_EVENTS.loadSchedule,
    methods: ['post'],
    schema: loadScheduleSchema,
    service: settleLoadSchedule,
    openapi: OPERATION_DOCS.load_schedule,
  }),
  tokenNotification({
    name: 'expiry_date',
    change: 'token.dates_changed',
    event: TOKEN_EVENTS.expiryUpdated,
    methods: ['post'],
    schema: expiryDateSchema,
    service: changeExpiryDate,
    openapi: OPERATION_DOCS.expiry_date,
  }),
  tokenNotification({
    name: 'available_date',
    change: 'token.dates_changed',
    event: TOKEN_EVENTS.availableUpdated,
    methods: ['post'],
    schema: availableDateSchema,
    service: changeAvailableDate,
    openapi: OPERATION_DOCS.available_date,
  }),
  tokenNotification({
    name: 'refund',
    change: 'token.refunded',
    event: TOKEN_EVENTS.refund,
    methods: ['post'],
    schema: refundSchema,
    service: refund,
    openapi: OPERATION_DOCS.refund,
  }),
  keyedOperation({
    name: 'create_token',
    change: 'token.created',
    path: TOKEN_PATH,
    methods: ['post'],
    schema: createTokenSchema,
    otherOperation: otherTokenOperation,
    service: createToken,
    answer: 'token',
    openapi: OPERATION_DOCS.create_token,
  }),
  {
    kind: 'token change dispatch',
    name: 'token_change',
    path: TOKEN_PATH,
    methods: ['patch'],
    openapi: OPERATION_DOCS.token_change,
  },
  keyedOperation({
    name: 'modify_token',
    change: 'token.modified',
    ...tokenChangePath('modify'),
    methods: ['patch'],
    schema: modifyTokenSchema,
    service: modifyToken,
    answer: 'token',
    openapi: OPERATION_DOCS.modify_token,
  }),
  keyedOperation({
    name: 'load_token',
    change: 'token.loaded',
    ...tokenChangePath('load'),
    methods: ['patch'],
    schema: loadTokenSchema,
    service: loadToken,
    answer: 'movement',
    openapi: OPERATION_DOCS.load_token,
  }),
  keyedOperation({
    name: 'unload_token',
    change: 'token.unloaded',
    ...tokenChangePath('unload'),
    methods: ['patch'],
    schema: unloadTokenSchema,
    service: unloadToken,
    answer: 'movement',
    openapi: OPERATION_DOCS.unload_token,
  }),
  keyedOperation({
    name: 'create_booking',
    change: 'booking.created',
    path: BOOKING_PATH,
    methods: ['post'],
    schema: createBookingSchema,
    otherOperation: otherBookingOperation('new'),
    service: createBooking,
    answer: 'booking',
    openapi: OPERATION_DOCS.create_booking,
  }),
  keyedOperation({
    name: 'modify_booking',
    change: 'booking.modified',
    path: BOOKING_PATH,
    methods: ['patch'],
    schema: bookingChangeSchema,
    otherOperation: otherBookingOperation('modify'),
    service: modifyBooking,
    answer: 'booking',
    openapi: OPERATION_DOCS.modify_booking,
  }),
  keyedOperation({
    name: 'cancel_booking',
    change: 'booking.cancelled',
    path: BOOKING_PATH,
    methods: ['delete'],
    schema: cancelBookingSchema,
    otherOperation: otherBookingOperation('cancel'),
    service: cancelBooking,
    answer: 'booking',
    openapi: OPERATION_DOCS.cancel_booking,
  }),
  {
    kind: 'feed',
    name: 'changes_feed',
    path: '/v1/accounts/:source_id/changes',
    methods: ['get'],
    query: feedQuerySchema,
    pathSchema: feedPathSchema,
    openapi: OPERATION_DOCS.changes_feed,
  },
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
  return new Map(
    operations.flatMap((entry) =>
      entry.kind === 'keyed' && entry.tokenEvent !== undefined ? [[entry.tokenEvent, entry as KeyedOperation] as const] : [],
    ),
  );
}

/** The token notifications, by read_event: POST /v1/events serves each event's operation. */
export function tokenNotificationsByEvent(operations: readonly Operation[] = OPERATIONS): ReadonlyMap<TokenEvent, TokenNotification> {
  return new Map(operations.flatMap((entry) => (entry.kind === 'token notification' ? [[entry.event, entry] as const] : [])));
}
