/**
 * What the OpenAPI document says of each operation of the catalogue, keyed by the operation's name: its summary,
 * description and complete examples, which the compiler checks against the operation's schema (z.input) and answer.
 * The catalogue (catalogue.ts) takes each entry's documentation from here, so that it reads as a table of wiring;
 * the OpenAPI document (src/openapi/) reads it through the catalogue.
 */
import type { z } from 'zod';
import type { bookingChangeSchema, cancelBookingSchema, createBookingSchema } from '../schemas/booking';
import type { statusChangeSchema } from '../schemas/status-change';
import type { loadTokenSchema, modifyTokenSchema, unloadTokenSchema } from '../schemas/token-change';
import type { createTokenSchema } from '../schemas/token-creation';
import type { availableDateSchema, expiryDateSchema } from '../schemas/token-dates';
import type { loadScheduleSchema, loadedSchema, refundSchema, unloadedSchema, withdrawSchema } from '../schemas/token-ledger';
import type { FeedQueryText } from '../schemas/feed';
import type { bookingSuccessSchema, changesPageSchema, tokenMovementSuccessSchema, tokenSuccessSchema } from '../schemas/responses';
import { DEMO_BOOKING, DEMO_NOTIFICATION, DEMO_PUBLIC_KEY, DEMO_SECRET_KEY } from './demo-examples';

/** What the OpenAPI document says of an operation; operationId is unique in the document. */
export interface OperationDocs<Example = unknown> {
  /** The request body's name under components.schemas. */
  component: string;
  operationId: string;
  summary: string;
  description: string;
  /** Complete request bodies, by name; the compiler checks them against the schema (z.input). */
  examples: Record<string, Example>;
  /** A method documented as an operation of its own, by the method's name as Express gives it (Withdraw's get). */
  byMethod?: Partial<Record<string, { operationId: string; summary: string; description?: string }>>;
}

/** A token notification's: on POST /v1/events, its first example stands for it, under `eventsExample` (default: the example's own name). */
export type NotificationDocs<Schema extends z.ZodType = z.ZodType> = OperationDocs<z.input<Schema>> & { eventsExample?: string };

/** What a keyed operation's answer shows besides success and message, by its kind of answer: an example for the document. */
export interface AnswerExamples {
  token: z.output<typeof tokenSuccessSchema>['token'];
  booking: z.output<typeof bookingSuccessSchema>['booking'];
  movement: Pick<z.output<typeof tokenMovementSuccessSchema>, 'token' | 'transaction'>;
}

/**
 * An operation keyed by `{randomkey}`: its answer's example, and a {randomkey} of its own, as they share one key space,
 * so a partner copying the examples gets 200s.
 */
export type KeyedDocs<Schema extends z.ZodType = z.ZodType, AnswerKind extends keyof AnswerExamples = keyof AnswerExamples> = OperationDocs<
  z.input<Schema>
> & {
  answerExample: AnswerExamples[AnswerKind];
  randomkey: string;
};

/** What an operation says of itself: a dispatch's whole documentation (the operations it dispatches to bring their own), and an admin route's. */
export type OperationText = Pick<OperationDocs, 'operationId' | 'summary' | 'description'>;

/**
 * The feed's: its path's account and its query as examples, which a fresh demo answers, and a page as the answer's
 * example. The compiler checks them against the query's schema and the page's.
 */
export type FeedDocs = OperationText & {
  sourceId: string;
  query: FeedQueryText;
  answerExample: z.output<typeof changesPageSchema>;
};

/** A page of the demo's feed: the withdrawal of the Withdraw example, as the account's first change. */
export const DEMO_CHANGES_PAGE: FeedDocs['answerExample'] = {
  changes: [
    {
      id: 'chg_3b0f6c1e-8d2a-4f57-9c41-7e5a2d9b6f10',
      source_id: 'PDR28',
      seq: 1,
      type: 'token.withdrawn',
      created_at: '2024-01-21T10:15:00.000Z',
      token: { token_id: '2908926013012565', source_id: 'PDR28', destination_id: 'ID001', status: 'active', balance: '900.00' },
      ledger_entry: {
        transaction_id: '20240121000000000001',
        kind: 'withdrawal',
        amount: '100.00',
        token_balance: '900.00',
        created_at: '2024-01-21T10:15:00.000Z',
      },
      request: { operation: 'withdraw', request_id: '5f0c2a8e-9d41-4c7b-a3e2-1b6f0d9c4e27', transaction_id: '20240121000000000001' },
    },
  ],
  next_after: 1,
  has_more: false,
};

const DEMO_TOKEN_CHANGE = { share_secret: DEMO_SECRET_KEY, source_id: 'PDR28', token_id: '2908926013012565' } as const;
/** The demo token 2908926013012565 (1000.00, no dates) as a fresh demo shows it. */
const DEMO_TOKEN_VIEW = { token_id: '2908926013012565', source_id: 'PDR28', destination_id: 'ID001', status: 'active' } as const;

/**
 * A demo token of its own for each example that states a balance, so each example is accepted by a fresh demo
 * alone, and all of them in the document's order (seed/demo.json holds the balances).
 */
const DEMO_TOKENS = {
  /** 500.00 */
  loaded: { destination_id: 'ID001', token_id: '2908926013012566' },
  /** 250.00, frozen: the sender may still unload it. */
  unloaded: { destination_id: 'ID002', token_id: '2908926013012567' },
  /** 200.00, usable 2024 to 2030. */
  credited: { destination_id: 'ID002', token_id: '2908926013012571' },
  /** 75.50, disputed: a failed schedule changes nothing whatever the status. */
  failed: { destination_id: 'ID001', token_id: '2908926013012568' },
  /** 860.00, of which 140.00 may be refunded (withdrawn before the seed). */
  refunded: { destination_id: 'ID001', token_id: '2908926013012572' },
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
  ...DEMO_TOKENS.credited,
  read_event: 'token.load_schedule',
  schedule_status: 'credited',
  transaction_id: '20240121000000000004',
  token_balance: '300.00',
} as const;

export const OPERATION_DOCS = {
  status_change: {
    component: 'StatusChangeRequest',
    operationId: 'statusChange',
    summary: 'Status Change',
    description:
      "A token's status changed. deleted is final. Setting the status a token has, or sending none, changes nothing; but any other field whose name holds stat (in any case: status, token_stats) is a 400 naming it, as a misspelt status field would otherwise be a 200 that changed nothing. token_status, the alias, must equal tokes_status when both are sent. share_public may be left out when the request is signed with the account's own secret, or the service runs with ALLOW_KEYLESS_STATUS_CHANGE=true.",
    examples: {
      statusChange: {
        share_public: DEMO_PUBLIC_KEY,
        read_event: 'token.status_changed',
        source_id: 'PDR28',
        destination_id: 'ID001',
        token_id: 1010,
        tokes_status: 'disputed',
      },
    },
  } satisfies NotificationDocs<typeof statusChangeSchema>,
  withdraw: {
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
  } satisfies NotificationDocs<typeof withdrawSchema>,
  token_event: {
    operationId: 'tokenEvent',
    summary: 'One URL for every token notification',
    description:
      "Dispatches on read_event to the operation of that event: token.status_changed, token.withdrawn_created, token.loaded_created (always Loaded here, though the Unloaded route also takes that name), token.unloaded_created, token.load_schedule, token.expiry_updated, token.available_updated, token.refund_available. An unknown read_event is a 400 that lists the known ones; the rest of the body is then checked as on the operation's own route.",
  } satisfies OperationText,
  loaded: {
    component: 'LoadedRequest',
    operationId: 'notifyLoaded',
    summary: 'Loaded',
    description:
      'Funds were added to a token: the balance goes up by load_amount, and token_balance must equal the result (409). fee_amount is charged to the sender and only recorded. A deleted token, or one outside its available and expiry dates, cannot be loaded (409); a balance over 9999999999.99 is a 422. A ledger row under transaction_id, idempotent as Withdraw.',
    examples: {
      load: {
        ...DEMO_NOTIFICATION,
        ...DEMO_TOKENS.loaded,
        read_event: 'token.loaded_created',
        transaction_id: '20240121000000000002',
        load_amount: '250.00',
        fee_amount: '2.50',
        token_balance: '750.00',
      },
    },
  } satisfies NotificationDocs<typeof loadedSchema>,
  unloaded: {
    component: 'UnloadedRequest',
    operationId: 'notifyUnloaded',
    summary: 'Unloaded',
    description:
      'The sender took funds back: allowed unless the token is deleted (409). unload_amount must not exceed the balance (422) and token_balance must equal the balance less it (409). Also takes read_event token.loaded_created, the name the published page shows for this event. A ledger row under transaction_id, idempotent as Withdraw.',
    examples: {
      unload: {
        ...DEMO_NOTIFICATION,
        ...DEMO_TOKENS.unloaded,
        read_event: 'token.unloaded_created',
        transaction_id: '20240121000000000003',
        unload_amount: '50.00',
        token_balance: '200.00',
      },
    },
  } satisfies NotificationDocs<typeof unloadedSchema>,
  load_schedule: {
    component: 'LoadScheduleRequest',
    operationId: 'loadSchedule',
    summary: 'Load Schedule',
    description:
      'A scheduled load settled. credited: the balance becomes token_balance, never lower than it is (409); the difference is a ledger row under transaction_id (20 digits). deleted and failure change nothing; their transaction_id is empty and token_balance must equal the balance (409).',
    examples: {
      credited: DEMO_LOAD_SCHEDULE,
      failure: { ...DEMO_LOAD_SCHEDULE, ...DEMO_TOKENS.failed, schedule_status: 'failure', transaction_id: '', token_balance: '75.50' },
    },
    eventsExample: 'loadSchedule',
  } satisfies NotificationDocs<typeof loadScheduleSchema>,
  expiry_date: {
    component: 'ExpiryDateRequest',
    operationId: 'setExpiryDate',
    summary: 'Expiry Date',
    description:
      "Sets the token's last usable day (UTC). Without expiry_date nothing changes. An expiry before the token's available date is a 400; a deleted token's dates cannot change (409).",
    examples: { expiryDate: { ...DEMO_NOTIFICATION, read_event: 'token.expiry_updated', expiry_date: '31-12-2027' } },
  } satisfies NotificationDocs<typeof expiryDateSchema>,
  available_date: {
    component: 'AvailableDateRequest',
    operationId: 'setAvailableDate',
    summary: 'Available Date',
    description:
      "Sets the token's first usable day (UTC). A date after the token's expiry date is a 400; a deleted token's dates cannot change (409).",
    examples: { availableDate: { ...DEMO_NOTIFICATION, read_event: 'token.available_updated', available_date: '01-02-2024' } },
  } satisfies NotificationDocs<typeof availableDateSchema>,
  refund: {
    component: 'RefundRequest',
    operationId: 'refund',
    summary: 'Refund',
    description:
      'Money the recipient had collected from the token comes back to it: the balance goes up by refund_amount, and token_balance must equal the result (409). A token gets back at most what was withdrawn from it less what was refunded to it before: more is a 422 stating the most. A balance over 9999999999.99 is a 422. Allowed unless the token is deleted (409): a frozen, disputed or expired token can be refunded. A ledger row under transaction_id, idempotent as Withdraw.',
    examples: {
      refund: {
        ...DEMO_NOTIFICATION,
        ...DEMO_TOKENS.refunded,
        read_event: 'token.refund_available',
        transaction_id: '20240121000000000005',
        refund_amount: '40.00',
        token_balance: '900.00',
      },
    },
  } satisfies NotificationDocs<typeof refundSchema>,
  create_token: {
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
        available_date: '01-01-2026',
        expiry_date: '31-12-2030',
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
      available_date: '01-01-2026',
      expiry_date: '31-12-2030',
      token_name: 'Guest card 1396',
      booking_reference: '1396',
    },
  } satisfies KeyedDocs<typeof createTokenSchema, 'token'>,
  token_change: {
    operationId: 'modifyLoadOrUnloadToken',
    summary: 'Modify, Load or Unload Token',
    description:
      'Dispatches on token_event to Modify Token (modify), Load Token (load) or Unload Token (unload), each also served on its own published path with the event after the key (PATCH .../{randomkey}/load), where the rules are described. A missing or unknown token_event is a 400 that lists the three; "create" is told to use POST.',
  } satisfies OperationText,
  modify_token: {
    component: 'ModifyTokenRequest',
    operationId: 'modifyToken',
    summary: 'Modify Token',
    description:
      "Changes the fields the body carries, at least one of token_status, available_date, expiry_date, token_name, token_reference, customer_name, booking_reference, check_in, check_out, room_count. token_status is active or freezed only: disputed and deleted are the platform's (Status Change). The token must be the caller's and at destination_id (428); a deleted token cannot be modified (409). The rules hold on the token as it would be after the change: expiry_date not before available_date, check_out not before check_in (400). email_token and email_settings are accepted and applied to nothing (the service sends no e-mail), but they are part of the request its {randomkey} stands for: a retry that changes them is a 422. A money field (load_amount, unload_amount, amount, balance, token_balance, founding_balance, refund_amount, fee_amount, withdrawn_amount) is a 400 naming it: Modify Token moves no money. Answered with the token after the change; a body that changes nothing is a 200 that changes nothing. Also served as PATCH on the token path with token_event modify.",
    examples: {
      modifyToken: {
        ...DEMO_TOKEN_CHANGE,
        token_event: 'modify',
        destination_id: 'ID001',
        expiry_date: '31-12-2028',
        token_name: 'Guest card 1396',
      },
    },
    randomkey: 'openapi-modify-token-01',
    answerExample: { ...DEMO_TOKEN_VIEW, balance: '1000.00', expiry_date: '31-12-2028', token_name: 'Guest card 1396' },
  } satisfies KeyedDocs<typeof modifyTokenSchema, 'token'>,
  load_token: {
    component: 'LoadTokenRequest',
    operationId: 'loadToken',
    summary: 'Load Token',
    description:
      "The partner adds money to its token: the balance goes up by load_amount. destination_id is optional; when sent it must be the token's (428). A deleted token, or one outside its available and expiry dates, cannot be loaded (409); a balance over 9999999999.99 is a 422. check_in, check_out and room_count, when sent, are stored on the token. Any other money field (unload_amount, amount, balance, token_balance, founding_balance, refund_amount, fee_amount, withdrawn_amount) is a 400 naming it: no stated balance is checked, so it is refused rather than ignored. The service makes the ledger row's 20-digit transaction_id, in the account's one key space of ledger rows; a retry under the same {randomkey} gets the same answer and the same transaction_id: money moves once. Also served as PATCH on the token path with token_event load.",
    examples: { loadToken: { ...DEMO_TOKEN_CHANGE, token_event: 'load', load_amount: '60.00', destination_id: 'ID001' } },
    randomkey: 'openapi-load-token-01',
    answerExample: {
      token: { ...DEMO_TOKEN_VIEW, balance: '1060.00' },
      transaction: { transaction_id: '48201937465019283746', kind: 'load', amount: '60.00', token_balance: '1060.00' },
    },
  } satisfies KeyedDocs<typeof loadTokenSchema, 'movement'>,
  unload_token: {
    component: 'UnloadTokenRequest',
    operationId: 'unloadToken',
    summary: 'Unload Token',
    description:
      'The partner takes money back from its token: the balance goes down by unload_amount, which must not exceed it (422). Allowed unless the token is deleted (409): a frozen, disputed or expired token can be unloaded. destination_id, check_in, check_out and room_count as in Load Token, and the transaction_id too. Any other money field (load_amount, amount, balance, token_balance, founding_balance, refund_amount, fee_amount, withdrawn_amount) is a 400 naming it: no stated balance is checked, so it is refused rather than ignored. Also served as PATCH on the token path with token_event unload.',
    examples: { unloadToken: { ...DEMO_TOKEN_CHANGE, token_event: 'unload', unload_amount: '25.00' } },
    randomkey: 'openapi-unload-token-01',
    answerExample: {
      token: { ...DEMO_TOKEN_VIEW, balance: '975.00' },
      transaction: { transaction_id: '93017264518203947561', kind: 'unload', amount: '25.00', token_balance: '975.00' },
    },
  } satisfies KeyedDocs<typeof unloadTokenSchema, 'movement'>,
  create_booking: {
    component: 'CreateBookingRequest',
    operationId: 'createBooking',
    summary: 'Create Booking',
    description:
      'A booking the account does not have yet (else 409), starting active. Every field is required but buyer_id (empty when left out). check_out must not be before check_in (400), a comparison of two values the schema cannot state; the schema states every other rule.',
    // Every field of the demo booking, under a new booking_id.
    examples: {
      createBooking: (() => {
        const { source_id: sourceId, booking_id: _bookingId, status: _status, updated_at: _updatedAt, ...fields } = DEMO_BOOKING;
        return {
          share_secret: DEMO_SECRET_KEY,
          booking_event: 'new',
          source_id: sourceId,
          booking_id: '1400',
          ...fields,
          margin_category: '%',
          pre_auth: 'false',
        } as const;
      })(),
    },
    randomkey: '3f9c1a7e-new-booking-01',
    answerExample: { ...DEMO_BOOKING, booking_id: '1400', guests_count: '3', updated_at: '2024-01-21T10:15:00.000Z' },
  } satisfies KeyedDocs<typeof createBookingSchema, 'booking'>,
  modify_booking: {
    component: 'ModifyBookingRequest',
    operationId: 'modifyBooking',
    summary: 'Modify Booking',
    description:
      'Changes the fields the body carries, at least one besides the four that name the booking. A cancelled booking cannot be modified (409). The rules across fields hold on the booking as it would be after the change, whichever of the fields the body carries, so they need the stored booking and the schema cannot state them: check_out not before check_in, and a transaction_margin of at most 100 when margin_category is % (400).',
    examples: {
      modifyBooking: {
        share_secret: DEMO_SECRET_KEY,
        booking_event: 'modify',
        source_id: 'PDR28',
        booking_id: '1396',
        guests_count: '3',
        check_out: '18-02-2024',
      },
    },
    randomkey: '3f9c1a7e-change-01',
    answerExample: DEMO_BOOKING,
  } satisfies KeyedDocs<typeof bookingChangeSchema, 'booking'>,
  cancel_booking: {
    component: 'CancelBookingRequest',
    operationId: 'cancelBooking',
    summary: 'Cancel Booking',
    description: 'The booking becomes cancelled; cancelling a cancelled booking is a 200 that changes nothing.',
    examples: { cancelBooking: { share_secret: DEMO_SECRET_KEY, booking_event: 'cancel', source_id: 'PDR28', booking_id: '1396' } },
    randomkey: '3f9c1a7e-cancel-01',
    answerExample: { ...DEMO_BOOKING, status: 'cancelled', updated_at: '2024-01-22T08:00:00.000Z' },
  } satisfies KeyedDocs<typeof cancelBookingSchema, 'booking'>,
  changes_feed: {
    operationId: 'listChanges',
    summary: "The account's feed of accepted changes",
    description:
      "The account's own changes (one per applied request, section 13.1 of the contract) with seq above after, oldest first, at most limit, only the listed types if given. next_after is the seq of the last change of the page (or after, for an empty page): the next page's after. has_more is true only when a change matching the request follows the page. With wait, a request that finds nothing matching waits up to that many seconds for the account's next matching change, committed on any instance, and answers it at once, or an empty page when the time is up; at most MAX_WAITING_FEEDS_PER_ACCOUNT requests of an account wait at once on one instance (429 with Retry-After past it), and a waiting request answers its empty page at once when the service stops. A cursor whose next changes are no longer kept (past CHANGE_RETENTION_DAYS) is a 410 whose message gives the oldest seq still kept; a cursor past the account's last change (its changes were reset: a memory store restarted, a database restored) is a 409. A parameter the route does not take is a 400 naming it. Requests count against the account's rate limit; a wrong or missing secret, an unknown or disabled account answer the same 401, counted against the client address.\n\nAuthentication: `Authorization: Bearer <share_secret>` of the account the path names (the security scheme accountBearer); no body and no signature.",
    sourceId: 'PDR28',
    query: { after: '0', limit: '100' },
    answerExample: DEMO_CHANGES_PAGE,
  } satisfies FeedDocs,
};
