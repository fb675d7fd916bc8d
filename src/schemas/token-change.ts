/** Modify Token, Load Token and Unload Token (contract sections 9.8, 9.9): PATCH on Create Token's path, chosen by token_event. */
import { z } from 'zod';
import { dayNumber } from '../domain/calendar-days';
import type { FieldProblem } from '../domain/field-problem';
import { atLeastOneOf, calendarDate, eventName, positiveAmount, text, tokenId, typeError } from './fields';
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
 * The published page lists email_token and email_settings without their types. Any JSON value is accepted and
 * ignored, so the document names every JSON type rather than an empty schema.
 */
const IGNORED_EMAIL_FIELD = {
  description:
    'Listed by the published platform page (the platform e-mails the recipient); this service sends no e-mail: any JSON value is accepted and ignored, and it does not count as a field to change',
  type: ['string', 'number', 'boolean', 'object', 'array', 'null'],
  // Stated, or openapi-typescript types the object as having no fields at all.
  additionalProperties: true,
};

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
    // The platform e-mails the recipient; this service sends no e-mail: accepted, and ignored.
    email_token: z.unknown().optional().meta(IGNORED_EMAIL_FIELD),
    email_settings: z.unknown().optional().meta(IGNORED_EMAIL_FIELD),
  })
  .superRefine((body, ctx) => {
    // Partners know tokes_status from Status Change: here too a misspelt status is a 400, never a 200 that changed nothing.
    refuseStatusTypos(body, ctx, MODIFY_STATUS_FIELDS, 'token_status');
    if (!CHANGEABLE_FIELDS.some((field) => body[field] !== undefined)) {
      ctx.addIssue({ code: 'custom', path: [], message: `must carry at least one field to change: ${CHANGEABLE_FIELDS.join(', ')}` });
    }
  })
  // Unknown fields are ignored, as JSON Schema's default says without zod's `additionalProperties: {}`, which client
  // generators turn into an index signature that lets any misspelt field through.
  .meta({
    ...atLeastOneOf(CHANGEABLE_FIELDS, MODIFY_IDENTITY_FIELDS),
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
  .object({ ...moneyMoveFields, token_event: eventName('load'), load_amount: positiveAmount })
  .transform((body) => moneyMove(body, body.load_amount));

export const unloadTokenSchema = z
  .object({ ...moneyMoveFields, token_event: eventName('unload'), unload_amount: positiveAmount })
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
