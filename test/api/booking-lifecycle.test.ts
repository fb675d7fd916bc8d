import { describeOnEveryStore, FIXED_NOW } from '../helpers/app';
import * as client from '../helpers/clients';
import { ACME, BOOKING, OTHER } from '../helpers/fixtures';
import { errorBody } from '../helpers/http';
import { bookingCancellation, bookingChange, bookingCreation } from '../helpers/payloads';
import { expectRejection, readBooking } from '../helpers/state';

const { updated_at: seededUpdatedAt, ...seededRecord } = BOOKING;

type BookingClient = typeof client.createBooking;

/** Each method's booking operation, for the tests that run over all three. */
const CLIENT_OF_METHOD: Readonly<Record<'post' | 'patch' | 'delete', BookingClient>> = {
  post: client.createBooking,
  patch: client.modifyBooking,
  delete: client.cancelBooking,
};

/** Create Booking and Cancel Booking (contract 9.6, 9.7), and a cancelled booking's place in Modify Booking. */
describeOnEveryStore('Booking lifecycle', (current) => {
  /** Sends a request through `operation` that must fail, and checks it changed nothing, its key included. */
  async function expectRejected(
    operation: BookingClient,
    body: object,
    status: number,
    expectedBody: object,
    key = 'key-00000001',
    partnerId?: string,
  ) {
    await expectRejection(current().store, () => operation(current(), body, key, partnerId), status, expectedBody, { keys: [key] });
  }

  describe('Create Booking (POST)', () => {
    it('answers 200 with the new booking, active, buyer_id empty when left out, and stores it', async () => {
      const response = await client.createBooking(current(), bookingCreation({ buyer_id: undefined, transaction_amount: '450' }));
      const expected = { ...seededRecord, booking_id: 'B-2001', buyer_id: '', status: 'active', updated_at: FIXED_NOW.toISOString() };
      expect({ status: response.status, body: response.body }).toEqual({
        status: 200,
        body: { success: true, message: 'Success', booking: expected },
      });
      expect(response.text).not.toContain(ACME.share_secret);
      expect(await readBooking(current().store, 'B-2001')).toEqual({
        sourceId: 'ACME',
        bookingId: 'B-2001',
        fields: {
          ...Object.fromEntries(Object.entries(seededRecord).filter(([field]) => !['source_id', 'booking_id'].includes(field))),
          buyer_id: '',
        },
        status: 'active',
        updatedAt: FIXED_NOW,
      });
    });

    it("409 for a booking_id the account already has; another account's same id is no conflict", async () => {
      await expectRejected(
        client.createBooking,
        bookingCreation({ booking_id: BOOKING.booking_id }),
        409,
        errorBody(409, 'Booking 1396 already exists'),
      );
      const theirs = bookingCreation({ share_secret: OTHER.share_secret, source_id: 'OTHER', booking_id: BOOKING.booking_id });
      expect((await client.createBooking(current(), theirs, 'key-00000001', 'OTHER')).status).toBe(200);
    });

    it('a retry under the same key is the first answer byte for byte, though the booking now exists', async () => {
      const first = await client.createBooking(current(), bookingCreation());
      const retry = await client.createBooking(current(), bookingCreation());
      expect([retry.status, retry.headers['idempotent-replayed'], retry.text]).toEqual([200, 'true', first.text]);
    });

    it('422 when the key is reused for another booking that does not exist yet', async () => {
      await client.createBooking(current(), bookingCreation()).expect(200);
      await expectRejected(
        client.createBooking,
        bookingCreation({ booking_id: 'B-2002' }),
        422,
        errorBody(422, 'randomkey was already used for a different request'),
      );
    });

    it('400 for a booking_id past 255 bytes as JSON text, and for text fields past 255 bytes a field together; nothing is made', async () => {
      await expectRejected(
        client.createBooking,
        bookingCreation({ booking_id: '\u6f22'.repeat(255) }),
        400,
        errorBody(400, 'Invalid field: booking_id', [
          {
            field: 'booking_id',
            message:
              'must take at most 255 bytes as JSON text in UTF-8 (a character of plain ASCII is one byte, most others two or three); it takes 765',
          },
        ]),
      );
      const cjk = '\u6f22'.repeat(255);
      const tooLong = await client.createBooking(current(), bookingCreation({ supplier_id: cjk, property_name: cjk }), 'key-00000002');
      expect({ status: tooLong.status, field: tooLong.body.errors.details[0].field }).toEqual({ status: 400, field: 'body' });
      expect(await current().store.findBooking('ACME', 'B-2001')).toBeUndefined();
    });

    it('400 naming every field left out but buyer_id, and a check_out before check_in', async () => {
      const response = await client.createBooking(current(), {
        share_secret: ACME.share_secret,
        booking_event: 'new',
        source_id: 'ACME',
        booking_id: 'B-1',
      });
      expect(response.status).toBe(400);
      expect(response.body.errors.details.map((detail: { field: string }) => detail.field)).toEqual([
        'booking_date',
        'booking_category',
        'supplier_id',
        'property_name',
        'property_country',
        'guests_count',
        'room_count',
        'check_in',
        'check_out',
        'transaction_currency',
        'transaction_amount',
        'margin_category',
        'transaction_margin',
        'nonrefundable_amount',
        'refundable_amount',
        'firstnight_amount',
        'cancellation_days',
        'auth_code',
        'pre_auth',
      ]);
      await expectRejected(
        client.createBooking,
        bookingCreation({ check_out: '13-02-2024' }),
        400,
        errorBody(400, 'Invalid field: check_out', [{ field: 'check_out', message: 'must not be before check_in (14-02-2024)' }]),
      );
      await expectRejected(
        client.createBooking,
        bookingCreation({ booking_event: 'renew' }),
        400,
        errorBody(400, 'Invalid field: booking_event', [{ field: 'booking_event', message: 'must be "new"' }]),
      );
    });

    it.each([
      ['post', 'modify', 'PATCH', 'POST', 'new'],
      ['post', 'cancel', 'DELETE', 'POST', 'new'],
      ['patch', 'new', 'POST', 'PATCH', 'modify'],
      ['delete', 'modify', 'PATCH', 'DELETE', 'cancel'],
    ] as const)(
      '%s with booking_event %j is a 400 that names the method for it, not the fields that operation lacks',
      async (method, event, itsMethod, thisMethod, thisEvent) => {
        await expectRejected(
          CLIENT_OF_METHOD[method],
          { share_secret: ACME.share_secret, booking_event: event, source_id: 'ACME', booking_id: BOOKING.booking_id, guests_count: '3' },
          400,
          errorBody(400, 'Invalid field: booking_event', [
            { field: 'booking_event', message: `is "${event}": use ${itsMethod} for ${event}; ${thisMethod} takes "${thisEvent}"` },
          ]),
        );
      },
    );

    it.each(['', 'x', '1.234', '-1'])(
      'a %% margin of %j is the 400 that names transaction_margin, not a crash of the rule across fields',
      async (margin) => {
        await expectRejected(
          client.createBooking,
          bookingCreation({ margin_category: '%', transaction_margin: margin }),
          400,
          errorBody(400, 'Invalid field: transaction_margin', [
            {
              field: 'transaction_margin',
              message: 'must be a decimal amount: 1 to 10 digits, optionally a point and 1 or 2 decimals (e.g. "100.00")',
            },
          ]),
        );
      },
    );

    it('401 for a wrong secret, 403 for another partner in the path', async () => {
      await expectRejected(client.createBooking, bookingCreation({ share_secret: 'sk_wrong' }), 401, errorBody(401, 'Unauthorized'));
      await expectRejected(
        client.createBooking,
        bookingCreation(),
        403,
        errorBody(403, 'partnerid in the path does not match source_id'),
        'key-00000001',
        'OTHER',
      );
    });
  });

  describe('Cancel Booking (DELETE)', () => {
    it('answers 200 with the booking cancelled, and stores it', async () => {
      const response = await client.cancelBooking(current(), bookingCancellation());
      expect({ status: response.status, body: response.body }).toEqual({
        status: 200,
        body: { success: true, message: 'Success', booking: { ...seededRecord, status: 'cancelled', updated_at: FIXED_NOW.toISOString() } },
      });
      expect((await readBooking(current().store))?.status).toBe('cancelled');
    });

    it('cancelling a cancelled booking is a 200 that changes nothing', async () => {
      await client.cancelBooking(current(), bookingCancellation()).expect(200);
      const before = await readBooking(current().store);
      const again = await client.cancelBooking(current(), bookingCancellation(), 'key-00000002');
      expect([again.status, again.headers['idempotent-replayed'], again.body.booking.status]).toEqual([200, undefined, 'cancelled']);
      expect(await readBooking(current().store)).toEqual(before);
    });

    it('a cancelled booking cannot be modified (409); a retry of a change made before is still its first answer', async () => {
      const change = await client.modifyBooking(current(), bookingChange(), 'key-change-1');
      await client.cancelBooking(current(), bookingCancellation()).expect(200);
      await expectRejected(
        client.modifyBooking,
        bookingChange(),
        409,
        errorBody(409, 'Booking is cancelled; a cancelled booking cannot be modified'),
        'key-change-2',
      );
      const retry = await client.modifyBooking(current(), bookingChange(), 'key-change-1');
      expect([retry.status, retry.text]).toEqual([200, change.text]);
    });

    it("404 for a booking the account does not have, another account's included", async () => {
      await expectRejected(client.cancelBooking, bookingCancellation({ booking_id: 'nope' }), 404, errorBody(404, 'Booking not found'));
      await expectRejected(client.cancelBooking, bookingCancellation({ booking_id: '77' }), 404, errorBody(404, 'Booking not found'));
    });

    it('422 when a key used to modify is reused to cancel', async () => {
      await client.modifyBooking(current(), bookingChange()).expect(200);
      await expectRejected(
        client.cancelBooking,
        bookingCancellation(),
        422,
        errorBody(422, 'randomkey was already used for a different request'),
      );
    });

    it('400 for a wrong booking_event, 401 for a wrong secret', async () => {
      await expectRejected(
        client.cancelBooking,
        bookingCancellation({ booking_event: 'cancelled' }),
        400,
        errorBody(400, 'Invalid field: booking_event', [{ field: 'booking_event', message: 'must be "cancel"' }]),
      );
      await expectRejected(client.cancelBooking, bookingCancellation({ share_secret: 'sk_wrong' }), 401, errorBody(401, 'Unauthorized'));
    });
  });

  it("keeps the seeded booking's updated_at until a change", async () => {
    expect((await readBooking(current().store))?.updatedAt.toISOString()).toBe(seededUpdatedAt);
  });
});
