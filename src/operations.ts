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
import type { Booking } from './domain/bookings';
import type { FieldProblem } from './domain/field-problem';
import type { Token } from './domain/tokens';
import { bookingChangeSchema, cancelBookingSchema, createBookingSchema, otherBookingOperation } from './schemas/booking';
import { statusChangeSchema } from './schemas/status-change';
import { availableDateSchema, expiryDateSchema } from './schemas/token-dates';
import { createTokenSchema } from './schemas/token-creation';
import { ROUTE_OF_EVENT, TOKEN_EVENTS, type TokenEvent } from './schemas/token-event';
import { loadedSchema, loadScheduleSchema, unloadedSchema } from './schemas/token-ledger';
import { withdrawSchema } from './schemas/withdraw';
import { cancelBooking, createBooking, modifyBooking } from './services/booking-changes';
import type { KeyedCall, KeyedOutcome } from './services/keyed-requests';
import type { OperationOutcome } from './services/token-checks';
import { createToken } from './services/token-creation';
import { load, settleLoadSchedule, unload, withdraw } from './services/token-ledger';
import { changeAvailableDate, changeExpiryDate, changeTokenStatus } from './services/token-notifications';
import type { Account, StoreTransaction } from './store/store';

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
  /** Its read_event; its own path is this event's route (ROUTE_OF_EVENT). */
  event: TokenEvent;
  path: string;
  /** In the order a 405's Allow names them. */
  methods: readonly Method[];
  schema: Schema;
  /** The validated request, the caller's account and the clock. */
  service(tx: StoreTransaction, request: z.output<Schema>, account: Account, now: Date): Promise<OperationOutcome>;
  /**
   * Whether share_public may be left out: only when the request is signed with the account's own secret, or the
   * operator allows it (ALLOW_KEYLESS_STATUS_CHANGE).
   */
  keyless?: 'signed by the account, or allowed';
  answer: 'success';
}

/** What a keyed operation's service makes or changes, by the kind of answer that shows it. */
export interface KeyedResults {
  token: Token;
  booking: Booking;
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
  service(tx: StoreTransaction, call: KeyedCall<z.output<Schema>>): Promise<KeyedOutcome<KeyedResults[Answer]>>;
  /** What the answer carries besides success and message: `{ token }` or `{ booking }`. */
  answer: Answer;
}

export type Operation = TokenNotification | KeyedOperation<KeyedSchema, 'token'> | KeyedOperation<KeyedSchema, 'booking'>;

/** A token notification's entry, its path taken from its event; the compiler checks the service against the schema. */
function tokenNotification<Schema extends NotificationSchema>(entry: Omit<TokenNotification<Schema>, 'kind' | 'path' | 'answer'>): TokenNotification {
  return { kind: 'token notification', path: ROUTE_OF_EVENT[entry.event], answer: 'success', ...entry };
}

/** A keyed operation's entry; the compiler checks the service against the schema and the answer. */
function keyedOperation<Schema extends KeyedSchema, Answer extends keyof KeyedResults>(entry: Omit<KeyedOperation<Schema, Answer>, 'kind'>): KeyedOperation<KeyedSchema, Answer> {
  return { kind: 'keyed', ...entry };
}

/** The booking operations' path: POST creates, PATCH modifies, DELETE cancels. */
const BOOKING_PATH = '/:version/booking/:partnerid/:randomkey';

export const OPERATIONS: readonly Operation[] = [
  tokenNotification({
    name: 'status_change',
    event: TOKEN_EVENTS.statusChanged,
    methods: ['post'],
    schema: statusChangeSchema,
    service: changeTokenStatus,
    // A keyless Status Change would let anyone who knows an account, a destination and a token delete it for good.
    keyless: 'signed by the account, or allowed',
  }),
  tokenNotification({
    name: 'withdraw',
    event: TOKEN_EVENTS.withdrawn,
    // GET with a JSON body too, as the published code samples send it; HEAD is refused, so only these move money.
    methods: ['get', 'post'],
    schema: withdrawSchema,
    service: withdraw,
  }),
  tokenNotification({ name: 'loaded', event: TOKEN_EVENTS.loaded, methods: ['post'], schema: loadedSchema, service: load }),
  tokenNotification({ name: 'unloaded', event: TOKEN_EVENTS.unloaded, methods: ['post'], schema: unloadedSchema, service: unload }),
  tokenNotification({ name: 'load_schedule', event: TOKEN_EVENTS.loadSchedule, methods: ['post'], schema: loadScheduleSchema, service: settleLoadSchedule }),
  tokenNotification({ name: 'expiry_date', event: TOKEN_EVENTS.expiryUpdated, methods: ['post'], schema: expiryDateSchema, service: changeExpiryDate }),
  tokenNotification({ name: 'available_date', event: TOKEN_EVENTS.availableUpdated, methods: ['post'], schema: availableDateSchema, service: changeAvailableDate }),
  keyedOperation({
    name: 'create_token',
    path: '/:version/token/:partnerid/:randomkey',
    // A new token with a token_id the service assigns; a retry under the same {randomkey} gets the same token.
    methods: ['post'],
    schema: createTokenSchema,
    service: createToken,
    answer: 'token',
  }),
  keyedOperation({
    name: 'create_booking',
    path: BOOKING_PATH,
    // A booking the account does not have yet, starting active.
    methods: ['post'],
    schema: createBookingSchema,
    otherOperation: otherBookingOperation('new'),
    service: createBooking,
    answer: 'booking',
  }),
  keyedOperation({
    name: 'modify_booking',
    path: BOOKING_PATH,
    // Changes only the fields the body carries.
    methods: ['patch'],
    schema: bookingChangeSchema,
    otherOperation: otherBookingOperation('modify'),
    service: modifyBooking,
    answer: 'booking',
  }),
  keyedOperation({
    name: 'cancel_booking',
    path: BOOKING_PATH,
    // Cancelling again changes nothing.
    methods: ['delete'],
    schema: cancelBookingSchema,
    otherOperation: otherBookingOperation('cancel'),
    service: cancelBooking,
    answer: 'booking',
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

/** The token notifications, by read_event: POST /v1/events serves each event's operation. */
export function tokenNotificationsByEvent(operations: readonly Operation[] = OPERATIONS): ReadonlyMap<TokenEvent, TokenNotification> {
  return new Map(operations.flatMap((entry) => (entry.kind === 'token notification' ? [[entry.event, entry] as const] : [])));
}
