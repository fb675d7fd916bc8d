import request from 'supertest';
import { describeOnEveryStore, FIXED_NOW } from '../helpers/app';
import * as client from '../helpers/clients';
import { ACME, BOOKING, OTHER } from '../helpers/fixtures';
import { errorBody } from '../helpers/http';
import { bookingChange, bookingPath } from '../helpers/payloads';
import { expectRejection, readBooking, readState } from '../helpers/state';

const { updated_at: seededUpdatedAt, ...seededRecord } = BOOKING;

describeOnEveryStore('Modify Booking', (current) => {
  async function expectRejected(
    body: object,
    status: number,
    expectedBody: object,
    key = 'key-00000001',
    partnerId?: string,
    version?: string,
  ) {
    await expectRejection(current().store, () => client.modifyBooking(current(), body, key, partnerId, version), status, expectedBody, {
      keys: [key],
    });
  }

  describe('when a text field is not valid Unicode', () => {
    it.each([
      ['a lone high surrogate', '"Hotel \\ud800 Aurora"'],
      ['a lone low surrogate', '"\\udfff"'],
    ])('%s in property_name is a 400 from the schema, and nothing changes', async (_what, escaped) => {
      const key = 'key-surrogate1';
      const before = await readState(current().store, [], [key]);
      const raw = JSON.stringify(bookingChange()).replace(/}$/, `,"property_name":${escaped}}`);
      const response = await client.modifyBooking(current(), undefined, key).set('Content-Type', 'application/json').send(raw);
      expect({ status: response.status, body: response.body }).toEqual({
        status: 400,
        body: errorBody(400, 'Invalid field: property_name', [
          { field: 'property_name', message: 'must be valid Unicode text: it contains half of a surrogate pair (\\uD800 to \\uDFFF)' },
        ]),
      });
      expect(await readState(current().store, [], [key])).toEqual(before);
    });

    it('a whole surrogate pair (an emoji) is text like any other', async () => {
      const response = await client.modifyBooking(current(), bookingChange({ property_name: 'Hotel \u{1F3E8}' }));
      expect({ status: response.status, name: response.body.booking?.property_name }).toEqual({ status: 200, name: 'Hotel \u{1F3E8}' });
    });
  });

  describe('when the change is valid', () => {
    it('answers 200 with the full booking after the change, every field a string, and stores it', async () => {
      const response = await client.modifyBooking(
        current(),
        bookingChange({ guests_count: '3', check_out: '18-02-2024', transaction_amount: '500' }),
      );
      expect(response.status).toBe(200);
      const expectedBooking = {
        ...seededRecord,
        guests_count: '3',
        check_out: '18-02-2024',
        transaction_amount: '500.00',
        status: 'active',
        updated_at: FIXED_NOW.toISOString(),
      };
      expect(response.body).toEqual({ success: true, message: 'Success', booking: expectedBooking });
      const specificationOrder = [
        'source_id',
        'booking_id',
        'buyer_id',
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
        'status',
        'updated_at',
      ] as const;
      expect(Object.keys(response.body.booking)).toEqual(specificationOrder);
      const inOrder = Object.fromEntries(specificationOrder.map((key) => [key, expectedBooking[key]]));
      expect(response.text).toBe(JSON.stringify({ success: true, message: 'Success', booking: inOrder }));
      expect(response.text).not.toContain('share_secret');
      expect(response.text).not.toContain(ACME.share_secret);
      const stored = await readBooking(current().store);
      expect(stored?.fields.guests_count).toBe('3');
      expect(stored?.fields.transaction_amount).toBe('500.00');
      expect(stored?.updatedAt.toISOString()).toBe(FIXED_NOW.toISOString());
    });

    it('changes only the fields it carries', async () => {
      await client.modifyBooking(current(), bookingChange({ guests_count: undefined, buyer_id: 'B-9' })).expect(200);
      const stored = await readBooking(current().store);
      expect(stored?.fields).toEqual({
        ...Object.fromEntries(Object.entries(seededRecord).filter(([k]) => k !== 'source_id' && k !== 'booking_id')),
        buyer_id: 'B-9',
      });
    });

    it('with only values the booking already has, answers 200 and leaves updated_at as it was', async () => {
      const response = await client.modifyBooking(current(), bookingChange({ guests_count: '2', transaction_amount: '450' }));
      expect(response.status).toBe(200);
      expect(response.body.booking.updated_at).toBe(seededUpdatedAt);
      expect((await readBooking(current().store))?.updatedAt.toISOString()).toBe(seededUpdatedAt);
    });

    it('400 when the text fields of the booking after the change take more than 255 bytes a field together (control characters as their JSON escapes); the booking is unchanged', async () => {
      const before = await current().store.findBooking('ACME', '1396');
      const escaped = '\u0001'.repeat(255);
      await expectRejected(
        bookingChange({ buyer_id: escaped, property_name: escaped }),
        400,
        errorBody(400, 'Invalid field: body', [
          {
            field: 'body',
            message: `buyer_id, booking_category, supplier_id, property_name and auth_code together must take at most 1275 bytes as JSON text in UTF-8 (255 a field: a character of plain ASCII is one byte, most others two or three); these take 3076`,
          },
        ]),
      );
      expect(await current().store.findBooking('ACME', '1396')).toEqual(before);
    });

    it('accepts every field at once, with an empty buyer_id', async () => {
      const { booking_id: _id, source_id: _source, updated_at: _at, ...fields } = BOOKING;
      const response = await client.modifyBooking(
        current(),
        bookingChange({
          ...fields,
          buyer_id: '',
          property_country: 'DE',
          transaction_currency: 'CHF',
          margin_category: 'fixed',
          transaction_margin: '250.00',
        }),
      );
      expect(response.status).toBe(200);
      expect(response.body.booking.property_country).toBe('DE');
    });
  });

  describe('idempotency by (source_id, randomkey)', () => {
    it('a repeated request replays the first response byte for byte, with Idempotent-Replayed', async () => {
      const body = bookingChange();
      const first = await client.modifyBooking(current(), body);
      const replay = await client
        .modifyBooking(current())
        .set('Content-Type', 'application/json')
        .send(`  ${JSON.stringify({ unknown: 1, ...body })}  `);
      expect(replay.status).toBe(200);
      expect(replay.text).toBe(first.text);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(first.headers['idempotent-replayed']).toBeUndefined();
    });

    it('replays with the first answer even after the booking changed again under another key', async () => {
      const first = await client.modifyBooking(current(), bookingChange({ guests_count: '3' }));
      await client.modifyBooking(current(), bookingChange({ guests_count: '5' }), 'key-00000002').expect(200);
      const replay = await client.modifyBooking(current(), bookingChange({ guests_count: '3' }));
      expect(replay.text).toBe(first.text);
      expect((await readBooking(current().store))?.fields.guests_count).toBe('5');
    });

    it('compares by value: "450" and "450.00" are the same request', async () => {
      await client.modifyBooking(current(), bookingChange({ transaction_amount: '450' })).expect(200);
      const replay = await client.modifyBooking(current(), bookingChange({ transaction_amount: '450.00' }));
      expect(replay.headers['idempotent-replayed']).toBe('true');
    });

    it.each([
      ['another value', { guests_count: '4' }],
      ['another field', { guests_count: undefined, room_count: '1' }],
      ['an extra field', { room_count: '2' }],
    ])('422 when the key is reused with %s, and nothing changes', async (_what, change) => {
      await client.modifyBooking(current(), bookingChange()).expect(200);
      await expectRejected(bookingChange(change), 422, errorBody(422, 'randomkey was already used for a different request'));
    });

    it('the same key under another account is another key', async () => {
      await client.modifyBooking(current(), bookingChange()).expect(200);
      const response = await client.modifyBooking(
        current(),
        bookingChange({ source_id: OTHER.source_id, share_secret: OTHER.share_secret, booking_id: '77' }),
        'key-00000001',
        OTHER.source_id,
      );
      expect(response.status).toBe(200);
      expect(response.headers['idempotent-replayed']).toBeUndefined();
    });

    it('a failed request records nothing: its key stays free', async () => {
      await client.modifyBooking(current(), bookingChange({ check_out: '01-01-2024' })).expect(400);
      const response = await client.modifyBooking(current(), bookingChange());
      expect(response.status).toBe(200);
      expect(response.headers['idempotent-replayed']).toBeUndefined();
    });

    it('when 25 copies arrive at once, one applies and the others replay it', async () => {
      const responses = await Promise.all(Array.from({ length: 25 }, () => client.modifyBooking(current(), bookingChange())));
      expect(responses.map((r) => r.status)).toEqual(Array(25).fill(200));
      expect(responses.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(24);
      expect(new Set(responses.map((r) => r.text)).size).toBe(1);
    });
  });

  describe('errors', () => {
    it('401 for a wrong secret, an unknown account, or the public key sent as the secret', async () => {
      await expectRejected(bookingChange({ share_secret: 'sk_wrong' }), 401, errorBody(401, 'Unauthorized'));
      await expectRejected(bookingChange({ share_secret: 'pk_test_acme_1' }), 401, errorBody(401, 'Unauthorized'));
      await expectRejected(bookingChange({ source_id: 'NOBODY' }), 401, errorBody(401, 'Unauthorized'), 'key-00000001', 'NOBODY');
    });

    it("403 when {partnerid} is not the body's source_id", async () => {
      await expectRejected(bookingChange(), 403, errorBody(403, 'partnerid in the path does not match source_id'), 'key-00000001', 'OTHER');
    });

    it("404 Booking not found for a booking absent from the caller's account (including another account's)", async () => {
      await expectRejected(bookingChange({ booking_id: 'nope' }), 404, errorBody(404, 'Booking not found'));
      await expectRejected(bookingChange({ booking_id: '77' }), 404, errorBody(404, 'Booking not found'));
    });

    it.each(['v2', 'V2', 'v0'])('404 Unsupported API version for %s', async (version) => {
      await expectRejected(bookingChange(), 404, errorBody(404, 'Unsupported API version'), 'key-00000001', 'ACME', version);
    });

    it('takes the version in any case, as the rest of the path: /V1/BOOKING/… is a booking change', async () => {
      const response = await request(current().server)
        .patch(bookingPath('key-uppercase1', 'ACME', 'V1').replace('/booking/', '/BOOKING/'))
        .send(bookingChange());
      expect(response.status).toBe(200);
    });

    it('400 when check_out would be before the stored check_in', async () => {
      await expectRejected(
        bookingChange({ check_out: '13-02-2024' }),
        400,
        errorBody(400, 'Invalid field: check_out', [{ field: 'check_out', message: 'must not be before check_in (14-02-2024)' }]),
      );
    });

    it('400 when a percent margin would be above 100', async () => {
      await expectRejected(
        bookingChange({ transaction_margin: '100.01' }),
        400,
        errorBody(400, 'Invalid field: transaction_margin', [
          { field: 'transaction_margin', message: 'must be at most 100 when margin_category is "%"' },
        ]),
      );
      await client.modifyBooking(current(), bookingChange({ transaction_margin: '100.00' })).expect(200);
    });

    it('400 at the schema, before the booking is looked up, when the body itself sets a percent margin above 100', async () => {
      await expectRejected(
        bookingChange({ booking_id: 'nope', margin_category: '%', transaction_margin: '150' }),
        400,
        errorBody(400, 'Invalid field: transaction_margin', [
          { field: 'transaction_margin', message: 'must be at most 100 when margin_category is "%"' },
        ]),
      );
    });

    it('400 when there is no field to change', async () => {
      await expectRejected(
        bookingChange({ guests_count: undefined }),
        400,
        errorBody(400, 'Invalid field: body', [
          {
            field: 'body',
            message:
              'must carry at least one field to change: buyer_id, booking_date, booking_category, supplier_id, property_name, property_country, guests_count, room_count, check_in, check_out, transaction_currency, transaction_amount, margin_category, transaction_margin, nonrefundable_amount, refundable_amount, firstnight_amount, cancellation_days, auth_code, pre_auth',
          },
        ]),
      );
    });

    it('400 naming every bad field of body and path at once', async () => {
      await expectRejected(
        { booking_event: 'create', source_id: 'ACME', booking_id: 1396, guests_count: 4, check_in: '31-02-2024' },
        400,
        errorBody(400, 'Invalid fields: randomkey, share_secret, booking_event, booking_id, guests_count, check_in', [
          { field: 'randomkey', message: 'must be 8 to 64 characters of A-Z, a-z, 0-9, _ and -' },
          { field: 'share_secret', message: 'is required' },
          { field: 'booking_event', message: 'must be "modify"' },
          { field: 'booking_id', message: 'must be a string' },
          { field: 'guests_count', message: 'must be a string' },
          { field: 'check_in', message: 'must be a real calendar date written DD-MM-YYYY' },
        ]),
        'short',
      );
    });

    it.each([
      ['guests_count', '0'],
      ['guests_count', '1000'],
      ['guests_count', '04'],
      ['room_count', 'two'],
      ['cancellation_days', '-1'],
      ['booking_date', '2024-01-21'],
      ['booking_date', '29-02-2023'],
      ['check_in', '1-2-2024'],
      ['property_country', 'nl'],
      ['property_country', 'XX'],
      ['property_country', 'NLD'],
      ['transaction_currency', 'eur'],
      ['transaction_currency', 'ABC'],
      // Withdrawn from ISO 4217 list one: the Netherlands Antillean guilder (for XCG) and the lev (for the euro).
      ['transaction_currency', 'ANG'],
      ['transaction_currency', 'BGN'],
      ['transaction_amount', '12.345'],
      ['refundable_amount', '-5'],
      ['margin_category', 'percent'],
      ['pre_auth', 'yes'],
      ['pre_auth', true],
      ['auth_code', ''],
      ['property_name', 'x'.repeat(256)],
      ['buyer_id', null],
    ])('400 when %s is %p', async (field, value) => {
      const response = await client.modifyBooking(current(), bookingChange({ [field]: value }));
      expect(response.status).toBe(400);
      expect(response.body.errors.details.map((d: { field: string }) => d.field)).toEqual([field]);
    });

    it.each([
      ['booking_date', '29-02-2024'],
      ['cancellation_days', '0'],
      ['guests_count', '999'],
      ['property_country', 'JP'],
      ['transaction_currency', 'JPY'],
      // The Caribbean guilder, on list one since ISO 4217 amendment 176 (in use since 2025-03-31).
      ['transaction_currency', 'XCG'],
    ])('accepts %s = %p', async (field, value) => {
      await client.modifyBooking(current(), bookingChange({ [field]: value })).expect(200);
    });
  });

  describe('order of checks', () => {
    it('version (404) before content type (415)', async () => {
      const response = await client
        .modifyBooking(current(), undefined, 'key-00000001', 'ACME', 'v9')
        .set('Content-Type', 'text/plain')
        .send('x');
      expect(response.status).toBe(404);
    });
    it('schema (400) before secret (401)', async () => {
      expect((await client.modifyBooking(current(), bookingChange({ share_secret: 'wrong', guests_count: 'x' }))).status).toBe(400);
    });
    it('secret (401) before partnerid (403)', async () => {
      expect((await client.modifyBooking(current(), bookingChange({ share_secret: 'wrong' }), 'key-00000001', 'OTHER')).status).toBe(401);
    });
    it('partnerid (403) before booking (404)', async () => {
      expect((await client.modifyBooking(current(), bookingChange({ booking_id: 'nope' }), 'key-00000001', 'OTHER')).status).toBe(403);
    });
    it('booking (404) before key reuse (422)', async () => {
      await client.modifyBooking(current(), bookingChange()).expect(200);
      expect((await client.modifyBooking(current(), bookingChange({ booking_id: 'nope' }))).status).toBe(404);
    });
    it('key reuse (422) before rules on the stored booking (400)', async () => {
      await client.modifyBooking(current(), bookingChange()).expect(200);
      expect((await client.modifyBooking(current(), bookingChange({ check_out: '01-01-2024' }))).status).toBe(422);
    });
  });
});
