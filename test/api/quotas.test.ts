import { describeOnEveryStore } from '../helpers/app';
import * as client from '../helpers/clients';
import { OTHER, TOKENS } from '../helpers/fixtures';
import { errorBody } from '../helpers/http';
import { bookingChange, bookingCreation, tokenCreation } from '../helpers/payloads';
import { expectRejection } from '../helpers/state';

/** The fixture seeds ACME with this many tokens and one booking: seeded objects count toward the quotas. */
const ACME_SEEDED_TOKENS = Object.values(TOKENS).filter((token) => token.source_id === 'ACME').length;

/** Contract section 11: MAX_TOKENS_PER_ACCOUNT and MAX_BOOKINGS_PER_ACCOUNT. */
describeOnEveryStore(
  'quotas per account',
  (current) => {
    it('Create Token past MAX_TOKENS_PER_ACCOUNT is a 403 naming the quota and creates nothing; a retry of a create that fitted still replays; another account is not held back', async () => {
      const fitted = await client.createToken(current(), tokenCreation(), 'quota-key-0001');
      expect(fitted.status).toBe(200);
      await expectRejection(
        current().store,
        () => client.createToken(current(), tokenCreation(), 'quota-key-0002'),
        403,
        errorBody(
          403,
          `Quota exceeded: the account already holds ${ACME_SEEDED_TOKENS + 1} tokens, the most MAX_TOKENS_PER_ACCOUNT allows`,
        ),
        { keys: ['quota-key-0002'] },
      );
      const retry = await client.createToken(current(), tokenCreation(), 'quota-key-0001');
      expect({ status: retry.status, replayed: retry.headers['idempotent-replayed'], body: retry.body }).toEqual({
        status: 200,
        replayed: 'true',
        body: fitted.body,
      });
      const others = await client.createToken(
        current(),
        tokenCreation({ share_secret: OTHER.share_secret, source_id: 'OTHER', destination_id: 'X1' }),
        'quota-key-0003',
        'OTHER',
      );
      expect(others.status).toBe(200);
    });

    it('Create Booking past MAX_BOOKINGS_PER_ACCOUNT is a 403 naming the quota: the seeded booking already fills it', async () => {
      await expectRejection(
        current().store,
        () => client.createBooking(current(), bookingCreation(), 'quota-key-0004'),
        403,
        errorBody(403, 'Quota exceeded: the account already holds 1 bookings, the most MAX_BOOKINGS_PER_ACCOUNT allows'),
        { keys: ['quota-key-0004'] },
      );
      expect(await current().store.findBooking('ACME', 'B-2001')).toBeUndefined();
    });
  },
  { config: { quotas: { tokensPerAccount: ACME_SEEDED_TOKENS + 1, bookingsPerAccount: 1, keysPerAccount: 0 } } },
);

describeOnEveryStore(
  'a quota below what the seed holds',
  (current) => {
    it('never refuses the seed; creating more is a 403', async () => {
      expect(await current().store.findToken(TOKENS.notYetAvailable.token_id)).toBeDefined();
      const response = await client.createToken(current(), tokenCreation(), 'quota-key-0005');
      expect({ status: response.status, body: response.body }).toEqual({
        status: 403,
        body: errorBody(403, 'Quota exceeded: the account already holds 2 tokens, the most MAX_TOKENS_PER_ACCOUNT allows'),
      });
    });
  },
  { config: { quotas: { tokensPerAccount: 2, bookingsPerAccount: 0, keysPerAccount: 0 } } },
);

/** Contract section 11: MAX_KEYS_PER_ACCOUNT, request keys and signed deliveries an account keeps at once. */
describeOnEveryStore(
  'the key limit per account',
  (current) => {
    const KEY_LIMIT_MESSAGE =
      'Key limit reached: the account already keeps 2 request keys and signed deliveries of their retention window, the most MAX_KEYS_PER_ACCOUNT allows; replays of kept keys are still answered';

    it('a request under a new key past MAX_KEYS_PER_ACCOUNT is a 403 naming the setting and changes nothing; kept keys still replay; another account is not held back', async () => {
      const first = await client.modifyBooking(current(), bookingChange({ guests_count: '3' }), 'keys-limit-0001');
      expect(first.status).toBe(200);
      expect((await client.modifyBooking(current(), bookingChange({ guests_count: '4' }), 'keys-limit-0002')).status).toBe(200);
      await expectRejection(
        current().store,
        () => client.modifyBooking(current(), bookingChange({ guests_count: '5' }), 'keys-limit-0003'),
        403,
        errorBody(403, KEY_LIMIT_MESSAGE),
        {
          keys: ['keys-limit-0003'],
        },
      );
      expect((await current().store.findBooking('ACME', '1396'))?.fields.guests_count).toBe('4');
      const replay = await client.modifyBooking(current(), bookingChange({ guests_count: '3' }), 'keys-limit-0001');
      expect({ status: replay.status, replayed: replay.headers['idempotent-replayed'], body: replay.body }).toEqual({
        status: 200,
        replayed: 'true',
        body: first.body,
      });
      const others = await client.createToken(
        current(),
        tokenCreation({ share_secret: OTHER.share_secret, source_id: 'OTHER', destination_id: 'X1' }),
        'keys-limit-0004',
        'OTHER',
      );
      expect(others.status).toBe(200);
    });

    it('a request that fails for its own reason is refused for it, not for the key limit, and keeps no key', async () => {
      await client.modifyBooking(current(), bookingChange({ guests_count: '3' }), 'keys-limit-0005').expect(200);
      await client.modifyBooking(current(), bookingChange({ guests_count: '4' }), 'keys-limit-0006').expect(200);
      const missing = await client.modifyBooking(current(), bookingChange({ booking_id: 'nope' }), 'keys-limit-0007');
      expect({ status: missing.status, body: missing.body }).toEqual({ status: 404, body: errorBody(404, 'Booking not found') });
    });
  },
  { config: { quotas: { tokensPerAccount: 0, bookingsPerAccount: 0, keysPerAccount: 2 } } },
);
