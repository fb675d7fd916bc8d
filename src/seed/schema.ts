import { z } from 'zod';
import { BOOKING_STATUSES, bookingRuleProblems } from '../domain/bookings';
import { isBeforeDate } from '../domain/calendar-days';
import { bookingFieldSchemas } from '../schemas/booking';
import { parseSecrets } from '../middleware/webhooks';
import { amount, calendarDate, text, tokenId, tokenStatus } from '../schemas/fields';

/** A Standard Webhooks secret, as standardwebhooks takes it. */
const signingSecret = text(1024).refine((secret) => {
  try {
    return parseSecrets(secret).length === 1;
  } catch {
    return false;
  }
}, 'must be one whsec_… secret (base64 after the prefix)');

const seedAccount = z.object({
  source_id: text(),
  share_public: text(),
  share_secret: text(),
  /** Optional: when any, every request naming the account must be signed with one of them (contract section 10). */
  signing_secrets: z.array(signingSecret).default([]),
  destinations: z.array(text()),
});

const seedToken = z.object({
  token_id: tokenId,
  source_id: text(),
  destination_id: text(),
  status: tokenStatus,
  balance: amount,
  /**
   * What Refund may still give back (contract section 9.10): what withdrawals took from the token before it was
   * seeded, less what was refunded to it. Default 0: a token whose history is not in the seed can be refunded only
   * what is withdrawn from it here.
   */
  refundable: amount.optional(),
  available_date: calendarDate.optional(),
  expiry_date: calendarDate.optional(),
});

const seedBooking = z.object({
  booking_id: text(),
  source_id: text(),
  ...bookingFieldSchemas,
  status: z.enum(BOOKING_STATUSES, { error: 'must be "active" or "cancelled"' }).default('active'),
  updated_at: z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time' }).optional(),
});

/** The seed file of the contract's section 7, with its cross-references checked. */
export const seedSchema = z
  .object({
    accounts: z.array(seedAccount),
    tokens: z.array(seedToken).default([]),
    bookings: z.array(seedBooking).default([]),
  })
  .superRefine((seed, ctx) => {
    const problem = (path: PropertyKey[], message: string) => ctx.addIssue({ code: 'custom', path, message });
    const accounts = new Map<string, ReadonlySet<string>>();
    seed.accounts.forEach((account, index) => {
      if (accounts.has(account.source_id)) problem(['accounts', index, 'source_id'], `repeats ${account.source_id}`);
      accounts.set(account.source_id, new Set(account.destinations));
    });
    const tokenIds = new Set<string>();
    seed.tokens.forEach((token, index) => {
      if (tokenIds.has(token.token_id)) problem(['tokens', index, 'token_id'], `repeats ${token.token_id}`);
      tokenIds.add(token.token_id);
      if (isBeforeDate(token.expiry_date, token.available_date)) {
        problem(['tokens', index, 'expiry_date'], `must not be before available_date (${token.available_date})`);
      }
      const destinations = accounts.get(token.source_id);
      if (!destinations) problem(['tokens', index, 'source_id'], `names no account in accounts`);
      else if (!destinations.has(token.destination_id)) {
        problem(['tokens', index, 'destination_id'], `is not a destination of account ${token.source_id}`);
      }
    });
    const bookingIds = new Set<string>();
    seed.bookings.forEach((booking, index) => {
      const key = `${booking.source_id}\u0000${booking.booking_id}`;
      if (bookingIds.has(key)) problem(['bookings', index, 'booking_id'], `repeats ${booking.booking_id}`);
      bookingIds.add(key);
      if (!accounts.has(booking.source_id)) problem(['bookings', index, 'source_id'], `names no account in accounts`);
      // The rules read the fields as values: a booking with a field out of its format is reported for that field alone.
      const fieldsValid = !ctx.issues.some(({ path = [] }) => path[0] === 'bookings' && path[1] === index);
      if (fieldsValid) for (const rule of bookingRuleProblems(booking)) problem(['bookings', index, rule.field], rule.message);
    });
  });

export type SeedFile = z.output<typeof seedSchema>;
