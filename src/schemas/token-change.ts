/** Modify Token, Load Token and Unload Token (contract sections 9.8, 9.9): PATCH on Create Token's path, chosen by token_event. */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { dayNumber } from '../domain/calendar-days';
import type { FieldProblem } from '../domain/field-problem';
import { atLeastOneOf, calendarDate, eventName, positiveAmount, ruleClause, text, tokenId, typeError } from './fields';
import { refuseStatusTypos, statusTyposRule } from './status-change';
import { detailsOf, optionalDetails } from './token-creation';

/** The token_event of each operation on the token path, by the method that takes it. */
export const TOKEN_CHANGE_EVENTS = ['modify', 'load', 'unload'] as const;
export type TokenChangeEvent = (typeof TOKEN_CHANGE_EVENTS)[number];

const LISTED_CHANGE_EVENTS = TOKEN_CHANGE_EVENTS.map((event) => `"${event}"`).join(', ');

/** PATCH on the token path reads token_event first, to pick the operation; the operation's schema does the rest. */
export const tokenChangeEventSchema = z.object({
  token_event: z.enum(TOKEN_CHANGE_EVENTS, {
    error: ({ input }) => {
      if (input === undefined) return 'is required';
      if (input === 'create') return `is "create": use POST for create; PATCH takes ${LISTED_CHANGE_EVENTS}`;
      return `must be one of ${LISTED_CHANGE_EVENTS}`;
    },
  }),
});

/** The token_event a parsed body sends, when it is a string. */
function sentTokenEvent(body: unknown): string | undefined {
  const sent = typeof body === 'object' && body !== null ? (body as { token_event?: unknown }).token_event : undefined;
  return typeof sent === 'string' ? sent : undefined;
}

/** A body for PATCH sent with POST: told which method takes it, not of every field Create Token needs. */
export function otherTokenOperation(body: unknown): FieldProblem | undefined {
  const sent = sentTokenEvent(body);
  if (sent === undefined || !(TOKEN_CHANGE_EVENTS as readonly string[]).includes(sent)) return undefined;
  return { field: 'token_event', message: `is "${sent}": use PATCH for ${sent}; POST takes "create"` };
}

/** The details Modify Token changes; founding_balance is Create Token's alone. */
const CHANGEABLE_DETAILS = [
  'token_name',
  'token_reference',
  'customer_name',
  'booking_reference',
  'check_in',
  'check_out',
  'room_count',
] as const;
/** The stay fields Load and Unload Token may carry, stored on the token. */
const STAY_DETAILS = ['check_in', 'check_out', 'room_count'] as const;

/** The statuses a partner sets itself: disputed and deleted are the platform's, by Status Change. */
const PARTNER_STATUSES = ['active', 'freezed'] as const;

const MODIFY_STATUS_FIELDS: readonly string[] = ['token_status'];

const CHANGEABLE_FIELDS = ['token_status', 'available_date', 'expiry_date', ...CHANGEABLE_DETAILS] as const;
/** What every Modify Token body carries besides the fields it changes. */
const MODIFY_IDENTITY_FIELDS = ['share_secret', 'token_event', 'source_id', 'destination_id', 'token_id'] as const;

/**
 * The published page lists email_token and email_settings without their types. Any JSON value is accepted (and
 * counted in the request's fingerprint), so the document names every JSON type rather than an empty schema.
 */
const IGNORED_EMAIL_FIELD = {
  description:
    'Listed by the published platform page (the platform e-mails the recipient); this service sends no e-mail: any JSON value is accepted and applied to nothing, and it does not count as a field to change; it is part of the request its {randomkey} stands for, so a retry that changes it is a 422',
  type: ['string', 'number', 'boolean', 'object', 'array', 'null'],
  // Stated, or openapi-typescript types the object as having no fields at all.
  additionalProperties: true,
};

/**
 * Fields a body must not carry, each with why: an ignored amount or balance would be a 200 telling its sender that
 * money moved, or a balance was set, when nothing did (as a misspelt status would say a status changed).
 */
type ForeignFields = Readonly<Record<string, string>>;

/** The money fields a token body could carry: each operation's amount, the answers' amounts and balances, the other ledger rows' amounts. */
const TOKEN_MONEY_FIELDS = [
  'load_amount',
  'unload_amount',
  'amount',
  'balance',
  'token_balance',
  'founding_balance',
  'refund_amount',
  'fee_amount',
  'withdrawn_amount',
] as const;
type TokenMoneyField = (typeof TOKEN_MONEY_FIELDS)[number];

/** Every money field but `used` refused, each with `message` unless `specific` has one of its own. */
function moneyFieldsBut(
  used: TokenMoneyField | undefined,
  message: string,
  specific: Partial<Record<TokenMoneyField, string>>,
): ForeignFields {
  return Object.fromEntries(TOKEN_MONEY_FIELDS.filter((field) => field !== used).map((field) => [field, specific[field] ?? message]));
}

/** Set on Create Token and shown with the token, never changed after. */
const FOUNDING_BALANCE_MESSAGE = "is Create Token's: a token's founding balance is stated once, when the token is created";

const MODIFY_FOREIGN_FIELDS = moneyFieldsBut(
  undefined,
  'is a money field: Modify Token moves no money; Load Token and Unload Token do, with load_amount or unload_amount',
  { founding_balance: FOUNDING_BALANCE_MESSAGE },
);
const LOAD_FOREIGN_FIELDS = moneyFieldsBut(
  'load_amount',
  'is a money field Load Token does not use: it moves load_amount alone, and its answer states the balance after',
  { unload_amount: "is Unload Token's amount: Load Token takes load_amount", founding_balance: FOUNDING_BALANCE_MESSAGE },
);
const UNLOAD_FOREIGN_FIELDS = moneyFieldsBut(
  'unload_amount',
  'is a money field Unload Token does not use: it moves unload_amount alone, and its answer states the balance after',
  { load_amount: "is Load Token's amount: Unload Token takes unload_amount", founding_balance: FOUNDING_BALANCE_MESSAGE },
);

function refuseForeignFields(body: object, ctx: z.RefinementCtx, foreign: ForeignFields): void {
  for (const field of Object.keys(body)) {
    if (Object.hasOwn(foreign, field)) ctx.addIssue({ code: 'custom', path: [field], message: foreign[field] });
  }
}

/** The same rule in the JSON Schema: a clause that holds when any of the fields is present, for a `not` (each clause names its property, as Redocly wants). */
function anyForeignField(foreign: ForeignFields) {
  const clauses = Object.keys(foreign).map((field) => ruleClause({ required: [field], properties: { [field]: {} } }));
  return clauses.length === 1 ? clauses[0] : { anyOf: clauses };
}

/** A JSON value with every object's keys in order, so values that differ in key order alone fingerprint alike (contract section 6). */
function inKeyOrder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(inKeyOrder);
  if (typeof value !== 'object' || value === null) return value;
  const object = value as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(object)
      .sort()
      .map((key) => [key, inKeyOrder(object[key])]),
  );
}

/** Modify Token body: the token named by its account and destination, and at least one field to change. */
export const modifyTokenSchema = z
  .looseObject({
    share_secret: text(),
    token_event: eventName('modify'),
    source_id: text(),
    destination_id: text(),
    token_id: tokenId,
    token_status: z
      .enum(PARTNER_STATUSES, {
        error: typeError('"active" or "freezed": disputed and deleted are set by the platform (Status Change), not by Modify Token'),
      })
      .optional(),
    available_date: calendarDate.optional(),
    expiry_date: calendarDate.optional(),
    ...optionalDetails(CHANGEABLE_DETAILS),
    // The platform e-mails the recipient; this service sends no e-mail: accepted, and applied to nothing, but part of
    // the request a {randomkey} stands for (docs/DECISIONS.md).
    email_token: z.unknown().optional().meta(IGNORED_EMAIL_FIELD),
    email_settings: z.unknown().optional().meta(IGNORED_EMAIL_FIELD),
  })
  .superRefine((body, ctx) => {
    // Partners know tokes_status from Status Change: here too a misspelt status is a 400, never a 200 that changed nothing.
    refuseStatusTypos(body, ctx, MODIFY_STATUS_FIELDS, 'token_status');
    refuseForeignFields(body, ctx, MODIFY_FOREIGN_FIELDS);
    if (!CHANGEABLE_FIELDS.some((field) => body[field] !== undefined)) {
      ctx.addIssue({ code: 'custom', path: [], message: `must carry at least one field to change: ${CHANGEABLE_FIELDS.join(', ')}` });
    }
  })
  // Unknown fields are ignored, as JSON Schema's default says without zod's `additionalProperties: {}`, which client
  // generators turn into an index signature that lets any misspelt field through.
  .meta({
    ...atLeastOneOf(CHANGEABLE_FIELDS, MODIFY_IDENTITY_FIELDS, anyForeignField(MODIFY_FOREIGN_FIELDS)),
    additionalProperties: undefined,
    ...statusTyposRule(MODIFY_STATUS_FIELDS),
  })
  .transform((body) => ({
    share_secret: body.share_secret,
    source_id: body.source_id,
    destination_id: body.destination_id,
    token_id: body.token_id,
    status: body.token_status,
    availableDay: body.available_date === undefined ? undefined : dayNumber(body.available_date),
    expiryDay: body.expiry_date === undefined ? undefined : dayNumber(body.expiry_date),
    details: detailsOf(body, CHANGEABLE_DETAILS),
    /**
     * Their digest: they may be any JSON up to the body's limit, and the fingerprint is kept with the key for 24 hours.
     * Unset when the body carries neither: such a request's fingerprint is the one it had before they counted.
     */
    emailFields:
      body.email_token === undefined && body.email_settings === undefined
        ? undefined
        : createHash('sha256')
            .update(JSON.stringify({ email_token: inKeyOrder(body.email_token), email_settings: inKeyOrder(body.email_settings) }))
            .digest('base64'),
  }));

export type ModifyTokenRequest = z.output<typeof modifyTokenSchema>;

/** Load Token and Unload Token: the token, optionally its destination and the stay; the amount is each one's own field. */
const moneyMoveFields = {
  share_secret: text(),
  source_id: text(),
  token_id: tokenId,
  destination_id: text().optional(),
  ...optionalDetails(STAY_DETAILS),
};

/** A load or an unload as its service takes it: the amount under one name. */
function moneyMove(body: z.output<z.ZodObject<typeof moneyMoveFields>>, amount: number) {
  return {
    share_secret: body.share_secret,
    source_id: body.source_id,
    token_id: body.token_id,
    destination_id: body.destination_id,
    amount,
    details: detailsOf(body, STAY_DETAILS),
  };
}

export const loadTokenSchema = z
  .looseObject({ ...moneyMoveFields, token_event: eventName('load'), load_amount: positiveAmount })
  .superRefine((body, ctx) => refuseForeignFields(body, ctx, LOAD_FOREIGN_FIELDS))
  .meta({ not: anyForeignField(LOAD_FOREIGN_FIELDS), additionalProperties: undefined })
  .transform((body) => moneyMove(body, body.load_amount));

export const unloadTokenSchema = z
  .looseObject({ ...moneyMoveFields, token_event: eventName('unload'), unload_amount: positiveAmount })
  .superRefine((body, ctx) => refuseForeignFields(body, ctx, UNLOAD_FOREIGN_FIELDS))
  .meta({ not: anyForeignField(UNLOAD_FOREIGN_FIELDS), additionalProperties: undefined })
  .transform((body) => moneyMove(body, body.unload_amount));

export type MoneyMoveRequest = z.output<typeof loadTokenSchema>;

/** The published form's last segment (`.../{randomkey}/load`) must be the body's token_event. */
export function otherPathEvent(segment: TokenChangeEvent): (body: unknown) => FieldProblem | undefined {
  return (body) => {
    const sent = sentTokenEvent(body);
    if (sent === undefined || sent === segment) return undefined;
    return { field: 'token_event', message: `is "${sent}", but the path ends in /${segment}: they must be the same` };
  };
}
