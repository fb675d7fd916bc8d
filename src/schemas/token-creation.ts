import { z } from 'zod';
import { isBeforeDate } from '../domain/calendar-days';
import { textBytesProblem } from '../domain/text-bytes';
import { TOKEN_TEXT_FIELDS } from '../domain/tokens';
import { amountText, calendarDate, currencyCode, eventName, positiveAmount, text, wholeNumberText } from './fields';

/** Create Token's optional fields: stored as sent (amounts and dates normalised) and shown with the token. */
export const tokenDetailSchemas = {
  founding_balance: amountText,
  token_name: text(),
  token_reference: text(),
  customer_name: text(),
  booking_reference: text(),
  check_in: calendarDate,
  check_out: calendarDate,
  room_count: wholeNumberText(1, 999),
};

export type TokenDetailField = keyof typeof tokenDetailSchemas;
export const TOKEN_DETAIL_FIELDS = Object.keys(tokenDetailSchemas) as TokenDetailField[];

/** Schemas of the given details, each optional: Create Token's, and those Modify, Load and Unload Token change. */
export function optionalDetails<const Fields extends readonly TokenDetailField[]>(fields: Fields) {
  return Object.fromEntries(fields.map((field) => [field, tokenDetailSchemas[field].optional()])) as {
    [Field in Fields[number]]: z.ZodOptional<(typeof tokenDetailSchemas)[Field]>;
  };
}

/** The given details a body carries, in the order of `fields`. */
export function detailsOf(
  body: Partial<Record<TokenDetailField, string>>,
  fields: readonly TokenDetailField[],
): Partial<Record<TokenDetailField, string>> {
  const details: Partial<Record<TokenDetailField, string>> = {};
  for (const field of fields) {
    const value = body[field];
    if (value !== undefined) details[field] = value;
  }
  return details;
}

/** Create Token body: the service assigns the token_id; load_amount is the opening balance. */
export const createTokenSchema = z
  .object({
    share_secret: text(),
    token_event: eventName('create'),
    source_id: text(),
    destination_id: text(),
    destination_currency: currencyCode,
    load_amount: positiveAmount,
    available_date: calendarDate,
    expiry_date: calendarDate,
    ...optionalDetails(TOKEN_DETAIL_FIELDS),
  })
  .superRefine((body, ctx) => {
    if (isBeforeDate(body.expiry_date, body.available_date)) {
      ctx.addIssue({ code: 'custom', path: ['expiry_date'], message: `must not be before available_date (${body.available_date})` });
    }
    if (isBeforeDate(body.check_out, body.check_in)) {
      ctx.addIssue({ code: 'custom', path: ['check_out'], message: `must not be before check_in (${body.check_in})` });
    }
    const tooLong = textBytesProblem(body, TOKEN_TEXT_FIELDS);
    if (tooLong) ctx.addIssue({ code: 'custom', path: [], message: tooLong.message });
  })
  .transform((body) => ({
    share_secret: body.share_secret,
    source_id: body.source_id,
    destination_id: body.destination_id,
    currency: body.destination_currency,
    balance: body.load_amount,
    available_date: body.available_date,
    expiry_date: body.expiry_date,
    details: detailsOf(body, TOKEN_DETAIL_FIELDS),
  }));

export type CreateTokenRequest = z.output<typeof createTokenSchema>;
