/** Field schemas shared by the payload schemas: one definition per wire format. */
import countries from 'i18n-iso-countries';
import { z } from 'zod';
import iso4217 from '../data/iso-4217.json';
import { dayNumber } from '../domain/calendar-days';
import { AMOUNT_FORMAT_MESSAGE, AMOUNT_PATTERN, formatAmount, parseAmount } from '../domain/money';
import { TOKEN_STATUSES } from '../domain/tokens';

/** "is required" when absent, otherwise what the value must be. */
export function typeError(expected: string) {
  return (issue: { input: unknown }) => (issue.input === undefined ? 'is required' : `must be ${expected}`);
}

/** PostgreSQL cannot store U+0000 in text or JSON, and no identifier or name needs it. */
const NO_NUL_MESSAGE = 'must not contain NUL (U+0000) characters';
/** A pattern rather than a refinement, so the JSON Schema states it too; matching NUL is its purpose. */
// eslint-disable-next-line no-control-regex
const NO_NUL = /^[^\u0000]*$/;

/**
 * A JSON escape can carry half of a surrogate pair ("\ud800"): not text in any encoding, so no store can keep
 * it as sent. Refused here, alike on every store.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const WELL_FORMED_MESSAGE = 'must be valid Unicode text: it contains half of a surrogate pair (\\uD800 to \\uDFFF)';
const isWellFormed = (value: string) => !LONE_SURROGATE.test(value);

/** Text that may be empty, up to `max` characters, without NUL, valid Unicode. */
export function optionalText(max = 255) {
  return z
    .string({ error: typeError('a string') })
    .max(max, `must be at most ${max} characters`)
    .regex(NO_NUL, NO_NUL_MESSAGE)
    .refine(isWellFormed, WELL_FORMED_MESSAGE);
}

export function text(max = 255) {
  return z
    .string({ error: typeError('a string') })
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters`)
    .regex(NO_NUL, NO_NUL_MESSAGE)
    .refine(isWellFormed, WELL_FORMED_MESSAGE);
}

/**
 * A subschema of a rule stated for the JSON Schema (if, then, else, a branch of anyOf) that speaks of some of its
 * parent's properties. unevaluatedProperties: true changes nothing in JSON Schema, but Redocly's example check reads
 * a subschema's missing unevaluatedProperties as false, and would refuse every field the subschema does not name.
 */
export function ruleClause<const Clause extends object>(clause: Clause): Clause & { unevaluatedProperties: true } {
  return { ...clause, unevaluatedProperties: true };
}

/**
 * "At least one of these fields", as the document states it: no branches (an anyOf of one `required` per field made
 * openapi-typescript and @hey-api/openapi-ts type the whole body as `unknown`), but a `not` of "none of them is
 * there", which both generators leave aside, and the count of properties that rule implies beside the `required`
 * ones. The schema's own check (a superRefine) is what the service applies; this states the same rule. `refused`,
 * a clause the body must not match either, shares the one `not` a schema has.
 */
export function atLeastOneOf(fields: readonly string[], required: readonly string[], refused?: object) {
  const noneOfThem = ruleClause({ properties: Object.fromEntries(fields.map((field) => [field, false])) });
  return {
    minProperties: required.length + 1,
    not: refused ? { anyOf: [noneOfThem, refused] } : noneOfThem,
  };
}

export function eventName<const Name extends string>(name: Name) {
  return z.literal(name, { error: typeError(`"${name}"`) });
}

const TOKEN_ID_PATTERN = /^[1-9]\d{0,31}$/;
const TOKEN_ID_FORMAT = 'must be a positive integer or a string of 1 to 32 digits without a leading zero';

/** A token is named by its decimal string, so 1010 and "1010" are the same token. */
export const tokenId = z
  .union([z.number(), z.string()], { error: typeError('a positive integer or a string of digits') })
  .meta({
    description:
      'A positive integer up to 2^53 - 1, or a string of 1 to 32 digits without a leading zero; 1010 and "1010" name the same token',
    examples: ['2908926013012565'],
    // The rule the transform below applies, stated for the document in place of the union's bare types.
    type: undefined,
    anyOf: [
      { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
      { type: 'string', pattern: TOKEN_ID_PATTERN.source },
    ],
  })
  .transform((value, ctx) => {
    if (typeof value === 'string' && TOKEN_ID_PATTERN.test(value)) return value;
    if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return String(value);
    const message =
      typeof value === 'number' && Number.isInteger(value) && value > Number.MAX_SAFE_INTEGER
        ? 'is above 2^53 - 1 and loses digits as a JSON number: send it as a string'
        : TOKEN_ID_FORMAT;
    ctx.issues.push({ code: 'custom', message, input: value });
    return z.NEVER;
  });

/** A token_id where only text can arrive (a query string). */
export const tokenIdText = z
  .string({ error: typeError('a string') })
  .regex(TOKEN_ID_PATTERN, 'must be 1 to 32 digits without a leading zero');

export const TRANSACTION_ID_PATTERN = /^\d{20}$/;

export const transactionId = z
  .string({ error: typeError('a string of 20 digits') })
  .regex(TRANSACTION_ID_PATTERN, 'must be exactly 20 digits')
  .meta({
    description: "20 digits, the account's idempotency key of a ledger row (withdrawal, load, unload, credited schedule or refund)",
    examples: ['20240121000000000001'],
  });

/** A decimal amount string, read as integer minor units. */
/** An amount sent as a JSON number is the commonest mistake: the message says what to send instead. */
const AMOUNT_EXAMPLE = '"100.00"';
function amountTypeError(issue: { input: unknown }): string {
  if (issue.input === undefined) return 'is required';
  if (typeof issue.input === 'number') return `is a JSON number: send it as a string, such as ${AMOUNT_EXAMPLE}`;
  return `must be a string, such as ${AMOUNT_EXAMPLE}`;
}

const AMOUNT_DESCRIPTION = 'Decimal amount: 1 to 10 digits, optionally a point and 1 or 2 decimals';
const amountString = z.string({ error: amountTypeError }).regex(AMOUNT_PATTERN, AMOUNT_FORMAT_MESSAGE);

export const amount = amountString.meta({ description: AMOUNT_DESCRIPTION, examples: ['100.00'] }).transform(parseAmount);

/**
 * An amount moved: a digit other than 0 somewhere. The JSON Schema states both rules as one pattern of a string:
 * as two, zod writes them as allOf branches without a type, which client generators (@hey-api/openapi-ts) read as
 * `unknown`.
 */
export const positiveAmount = amountString
  .regex(/[1-9]/, 'must be above zero')
  .meta({
    description: `${AMOUNT_DESCRIPTION}; above zero`,
    examples: ['100.00'],
    allOf: undefined,
    pattern: `^(?=[^1-9]*[1-9])${AMOUNT_PATTERN.source.slice(1)}`,
  })
  .transform(parseAmount);

/** A decimal amount kept as text, written back with two decimals ("90" -> "90.00"). */
export const amountText = amount.transform(formatAmount);

export const tokenStatus = z.enum(TOKEN_STATUSES, { error: typeError(`one of ${TOKEN_STATUSES.join(', ')}`) });

/**
 * A real calendar day DD-MM-YYYY, years 1000 to 9999, as one regular expression so the JSON Schema states the whole
 * rule: days 1 to 28 of any month, 29 and 30 of any but February, 31 of the long months, and 29 February of leap
 * years (divisible by 4 but not by 100, or by 400). dayNumber agrees (a unit test checks every day of the range).
 */
const CALENDAR_DATE =
  /^(?:(?:(?:0[1-9]|1\d|2[0-8])-(?:0[1-9]|1[0-2])|(?:29|30)-(?:0[13-9]|1[0-2])|31-(?:0[13578]|1[02]))-[1-9]\d{3}|29-02-(?:[1-9]\d(?:0[48]|[2468][048]|[13579][26])|(?:[2468][048]|[13579][26])00))$/;

export const calendarDate = z
  .string({ error: typeError('a string') })
  .regex(CALENDAR_DATE, 'must be a real calendar date written DD-MM-YYYY')
  .meta({ description: 'A real calendar date, DD-MM-YYYY, years 1000 to 9999', examples: ['21-01-2024'] });

/** A calendar date read as its UTC day number (see dayNumber). */
export const calendarDay = calendarDate.transform((value) => dayNumber(value) as number);

/** Officially assigned ISO 3166-1 alpha-2 codes, from a maintained package rather than Intl. */
const COUNTRY_CODES = Object.keys(countries.getAlpha2Codes()).sort() as [string, ...string[]];
/** Active ISO 4217 codes: a dated snapshot of list one in the repository (docs/DECISIONS.md says how to refresh it). */
const CURRENCY_CODES = iso4217.currencies.map((currency) => currency.code) as [string, ...string[]];

export const countryCode = z
  .enum(COUNTRY_CODES, { error: typeError('an ISO 3166-1 alpha-2 country code in upper case (e.g. "NL")') })
  .meta({ description: 'ISO 3166-1 alpha-2, upper case', examples: ['NL'] });

export const currencyCode = z
  .enum(CURRENCY_CODES, { error: typeError('an active ISO 4217 currency code in upper case (e.g. "EUR")') })
  .meta({ description: 'ISO 4217, upper case', examples: ['EUR'] });

export function wholeNumberText(min: 0 | 1, max: 999) {
  const pattern = min === 0 ? /^(0|[1-9]\d{0,2})$/ : /^[1-9]\d{0,2}$/;
  return z
    .string({ error: typeError('a string') })
    .regex(pattern, `must be a whole number from ${min} to ${max}, written as a string without leading zeros`);
}

export function oneOf<const Values extends readonly [string, ...string[]]>(values: Values) {
  const listed = values.map((value) => `"${value}"`).join(' or ');
  return z.enum(values, { error: typeError(listed) });
}
