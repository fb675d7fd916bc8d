import { describeOnEveryStore } from '../helpers/app';
import * as client from '../helpers/clients';
import { ACME, OTHER } from '../helpers/fixtures';
import { errorBody } from '../helpers/http';
import { bookingChange, tokenCreation, withdrawal } from '../helpers/payloads';
import { expectRejection, readToken } from '../helpers/state';
import { dayNumber } from '../../src/domain/calendar-days';

/** Create Token (contract 9.5): the service assigns the token_id; idempotent by (source_id, randomkey). */
describeOnEveryStore('Create Token', (current) => {
  async function expectRejected(
    body: object,
    status: number,
    expectedBody: object,
    key = 'key-00000001',
    partnerId?: string,
    version?: string,
  ) {
    await expectRejection(current().store, () => client.createToken(current(), body, key, partnerId, version), status, expectedBody, {
      keys: [key],
    });
  }

  it('answers 200 with the new token: a 16-digit token_id, active, its opening balance, dates and the details sent', async () => {
    const response = await client.createToken(
      current(),
      tokenCreation({
        load_amount: '500',
        token_name: 'Guest card',
        room_count: '2',
        founding_balance: '500',
        check_in: '10-01-2026',
        check_out: '12-01-2026',
      }),
    );
    expect(response.status).toBe(200);
    const token = response.body.token;
    expect(token.token_id).toMatch(/^[1-9]\d{15}$/);
    expect(response.body).toEqual({
      success: true,
      message: 'Success',
      token: {
        token_id: token.token_id,
        source_id: 'ACME',
        destination_id: 'D1',
        status: 'active',
        balance: '500.00',
        destination_currency: 'EUR',
        available_date: '01-01-2026',
        expiry_date: '31-12-2026',
        founding_balance: '500.00',
        token_name: 'Guest card',
        check_in: '10-01-2026',
        check_out: '12-01-2026',
        room_count: '2',
      },
    });
    expect(response.text).not.toContain(ACME.share_secret);
    expect(await readToken(current().store, token.token_id)).toEqual({
      tokenId: token.token_id,
      sourceId: 'ACME',
      destinationId: 'D1',
      status: 'active',
      balance: 50000,
      availableDay: dayNumber('01-01-2026'),
      expiryDay: dayNumber('31-12-2026'),
      currency: 'EUR',
      details: { founding_balance: '500.00', token_name: 'Guest card', check_in: '10-01-2026', check_out: '12-01-2026', room_count: '2' },
    });
  });

  it('the new token takes notifications at once', async () => {
    const { token } = (await client.createToken(current(), tokenCreation())).body;
    await client.withdraw(current(), withdrawal({ token_id: token.token_id, withdrawn_amount: '20', token_balance: '480.00' })).expect(200);
    expect((await readToken(current().store, token.token_id))?.balance).toBe(48000);
  });

  it('a retry under the same key gets the first answer byte for byte, never a second token', async () => {
    const first = await client.createToken(current(), tokenCreation({ token_name: 'A' }));
    const retry = await client.createToken(current(), { token_name: 'A', ...tokenCreation(), load_amount: '500.0' });
    expect([retry.status, retry.headers['idempotent-replayed'], retry.text]).toEqual([200, 'true', first.text]);
    const another = await client.createToken(current(), tokenCreation({ token_name: 'A' }), 'key-00000002');
    expect(another.body.token.token_id).not.toBe(first.body.token.token_id);
  });

  it('422 when the key is reused for another token, or was used by a booking operation, and nothing is made', async () => {
    await client.createToken(current(), tokenCreation()).expect(200);
    await expectRejected(
      tokenCreation({ load_amount: '501.00' }),
      422,
      errorBody(422, 'randomkey was already used for a different request'),
    );
    await client.modifyBooking(current(), bookingChange(), 'key-booking-1').expect(200);
    await expectRejected(tokenCreation(), 422, errorBody(422, 'randomkey was already used for a different request'), 'key-booking-1');
  });

  it("another account's same key is its own", async () => {
    const mine = await client.createToken(current(), tokenCreation());
    const theirs = await client.createToken(
      current(),
      tokenCreation({ share_secret: OTHER.share_secret, source_id: 'OTHER', destination_id: 'X1' }),
      'key-00000001',
      'OTHER',
    );
    expect(theirs.status).toBe(200);
    expect(theirs.body.token.token_id).not.toBe(mine.body.token.token_id);
  });

  it('400 naming every bad field at once, the date order included', async () => {
    await expectRejected(
      {
        share_secret: ACME.share_secret,
        token_event: 'create',
        source_id: 'ACME',
        destination_id: 'D1',
        destination_currency: 'eur',
        load_amount: '0',
        available_date: '02-01-2026',
        expiry_date: '01-01-2026',
      },
      400,
      errorBody(400, 'Invalid fields: destination_currency, load_amount', [
        { field: 'destination_currency', message: 'must be an active ISO 4217 currency code in upper case (e.g. "EUR")' },
        { field: 'load_amount', message: 'must be above zero' },
      ]),
    );
    await expectRejected(
      tokenCreation({ available_date: '02-01-2026', expiry_date: '01-01-2026' }),
      400,
      errorBody(400, 'Invalid field: expiry_date', [{ field: 'expiry_date', message: 'must not be before available_date (02-01-2026)' }]),
    );
    await expectRejected(
      tokenCreation({ token_event: 'new' }),
      400,
      errorBody(400, 'Invalid field: token_event', [{ field: 'token_event', message: 'must be "create"' }]),
    );
  });

  it('400 when the text fields together take more than 255 bytes a field: 255 CJK characters in each are refused, 255 ASCII characters in each are kept', async () => {
    const cjk = '\u6f22'.repeat(255);
    const texts = (value: string) => ({ token_name: value, token_reference: value, customer_name: value, booking_reference: value });
    await expectRejected(
      tokenCreation(texts(cjk)),
      400,
      errorBody(400, 'Invalid field: body', [
        {
          field: 'body',
          message: `token_name, token_reference, customer_name and booking_reference together must take at most 1020 bytes as JSON text in UTF-8 (255 a field: a character of plain ASCII is one byte, most others two or three); these take 3060`,
        },
      ]),
    );
    const ascii = await client.createToken(current(), tokenCreation(texts('a'.repeat(255))), 'key-text-bytes');
    expect(ascii.status).toBe(200);
    expect(ascii.body.token.token_name).toBe('a'.repeat(255));
  });

  it('takes the currencies of ISO 4217 list one as it is now: XCG yes, the withdrawn ANG no', async () => {
    const created = await client.createToken(current(), tokenCreation({ destination_currency: 'XCG' }));
    expect({ status: created.status, currency: created.body.token?.destination_currency }).toEqual({ status: 200, currency: 'XCG' });
    await expectRejected(
      tokenCreation({ destination_currency: 'ANG' }),
      400,
      errorBody(400, 'Invalid field: destination_currency', [
        { field: 'destination_currency', message: 'must be an active ISO 4217 currency code in upper case (e.g. "EUR")' },
      ]),
      'key-00000002',
    );
  });

  it("401 for a wrong secret, 403 for another partner in the path, 413 for a destination not the account's, 404 for another version", async () => {
    await expectRejected(tokenCreation({ share_secret: ACME.share_public }), 401, errorBody(401, 'Unauthorized'));
    await expectRejected(tokenCreation(), 403, errorBody(403, 'partnerid in the path does not match source_id'), 'key-00000001', 'OTHER');
    await expectRejected(tokenCreation({ destination_id: 'X1' }), 413, errorBody(413, 'Destination ID Unknown'));
    await expectRejected(tokenCreation(), 404, errorBody(404, 'Unsupported API version'), 'key-00000001', 'ACME', 'v2');
    expect((await client.createToken(current(), tokenCreation(), 'key-00000001', 'ACME', 'V1')).status).toBe(200);
  });
});
