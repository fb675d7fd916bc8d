import { z } from 'zod';
import { BOOKING_STATUSES, bookingRuleProblems } from '../domain/bookings';
import { isBeforeDate } from '../domain/calendar-days';
import { bookingFieldSchemas } from '../schemas/booking';
import { parseSecrets } from '../middleware/webhooks';
import { amount, calendarDate, text, tokenId, tokenStatus } from '../schemas/fields';
import { CHANGE_TYPES } from '../store/store';
import { ENDPOINT_ID_PATTERN, MAX_ENDPOINT_SECRETS, MAX_ENDPOINTS, NATS_SINK_ID } from '../delivery/endpoints';

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

/**
 * Where an endpoint is called: an http(s) URL without user or password, which would sit in the seed, in logs and in
 * every request's Authorization header; the signature is what proves the sender. Whether http:// is allowed is a
 * setting's (DELIVERY_ALLOW_HTTP), checked at start (seed/file.ts). Any host: endpoints are the operator's choice.
 */
const endpointUrl = text(2048)
  .superRefine((value, ctx) => {
    const url = URL.parse(value);
    const message = !url
      ? 'must be an absolute URL, such as https://erp.example/hooks'
      : url.protocol !== 'https:' && url.protocol !== 'http:'
        ? 'must be an https:// URL'
        : url.username || url.password
          ? 'must not carry a user or password: the signature proves the sender'
          : undefined;
    if (message) ctx.addIssue({ code: 'custom', message });
  })
  .describe('https:// (http:// too with DELIVERY_ALLOW_HTTP=true), without user or password; any host');

/**
 * A webhook endpoint (contract section 13.3): `source_ids` and `types` unset send every account's and type's changes,
 * so an unknown field is refused: a misspelt filter (`source_id`) would otherwise send every account's changes.
 */
const seedEndpoint = z.strictObject({
  id: z
    .string({ error: 'must be a string' })
    .regex(ENDPOINT_ID_PATTERN, "must be 1 to 64 lower-case letters, digits, '-' or '_', starting with a letter or digit"),
  url: endpointUrl,
  secrets: z
    .array(signingSecret)
    .min(1, 'must hold at least one whsec_… secret')
    .max(MAX_ENDPOINT_SECRETS, `must hold at most ${MAX_ENDPOINT_SECRETS} secrets`),
  source_ids: z.array(text()).min(1, 'must name at least one account, or be left out for all').optional(),
  types: z
    .array(z.enum(CHANGE_TYPES, { error: `must be one of ${CHANGE_TYPES.join(', ')}` }))
    .min(1, 'must name at least one type, or be left out for all')
    .optional(),
});

/** The seed file of the contract's section 7, with its cross-references checked. */
export const seedSchema = z
  .object({
    accounts: z.array(seedAccount),
    tokens: z.array(seedToken).default([]),
    bookings: z.array(seedBooking).default([]),
    endpoints: z
      .array(seedEndpoint)
      .max(MAX_ENDPOINTS, `must hold at most ${MAX_ENDPOINTS} endpoints`)
      .default([])
      .describe('Webhook endpoints every matching change is sent to (docs/WEBHOOKS-OUT.md); authoritative on every start'),
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
    const endpointIds = new Set<string>();
    seed.endpoints.forEach((endpoint, index) => {
      if (endpointIds.has(endpoint.id)) problem(['endpoints', index, 'id'], `repeats ${endpoint.id}`);
      if (endpoint.id === NATS_SINK_ID) problem(['endpoints', index, 'id'], `is the NATS relay's own id (NATS_URL): choose another`);
      endpointIds.add(endpoint.id);
      endpoint.source_ids?.forEach((sourceId, at) => {
        if (!accounts.has(sourceId)) problem(['endpoints', index, 'source_ids', at], `names no account in accounts`);
      });
    });
  });

export type SeedFile = z.output<typeof seedSchema>;
