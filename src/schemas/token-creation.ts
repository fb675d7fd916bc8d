import { z } from 'zod';
import { isBeforeDate } from '../domain/calendar-days';
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

const optionalDetails = Object.fromEntries(TOKEN_DETAIL_FIELDS.map((field) => [field, tokenDetailSchemas[field].optional()])) as {
  [Field in TokenDetailField]: z.ZodOptional<(typeof tokenDetailSchemas)[Field]>;
};

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
    ...optionalDetails,
  })
  .superRefine((body, ctx) => {
    if (isBeforeDate(body.expiry_date, body.available_date)) {
      ctx.addIssue({ code: 'custom', path: ['expiry_date'], message: `must not be before available_date (${body.available_date})` });
    }
    if (isBeforeDate(body.check_out, body.check_in)) {
      ctx.addIssue({ code: 'custom', path: ['check_out'], message: `must not be before check_in (${body.check_in})` });
    }
  })
  .transform((body) => {
    const details: Partial<Record<TokenDetailField, string>> = {};
    for (const field of TOKEN_DETAIL_FIELDS) {
      const value = body[field];
      if (value !== undefined) details[field] = value;
    }
    return {
      share_secret: body.share_secret,
      source_id: body.source_id,
      destination_id: body.destination_id,
      currency: body.destination_currency,
      balance: body.load_amount,
      available_date: body.available_date,
      expiry_date: body.expiry_date,
      details,
    };
  });

export type CreateTokenRequest = z.output<typeof createTokenSchema>;
