import { describeOnEveryStore } from '../helpers/app';
import * as client from '../helpers/clients';
import { TOKENS } from '../helpers/fixtures';
import { errorBody, SUCCESS_BODY } from '../helpers/http';
import { availableDate, expiryDate, withdrawal } from '../helpers/payloads';
import { expectRejection, readState, readToken } from '../helpers/state';
import { dayNumber } from '../../src/domain/calendar-days';

/** Expiry Date and Available Date (contract 9.4): UTC calendar days, idempotent by nature. FIXED_NOW is 02-01-2026. */
describeOnEveryStore('Token dates', (current) => {
  const datesOf = async (tokenId: string) => {
    const token = await readToken(current().store, tokenId);
    return { availableDay: token?.availableDay, expiryDay: token?.expiryDay };
  };

  async function expectRejected(send: client.NotificationClient, body: object, status: number, expectedBody: object) {
    await expectRejection(current().store, () => send(current(), body), status, expectedBody);
  }

  describe('POST /v1/tokens/expiry-date', () => {
    const send = client.expiryDate;

    it('sets the expiry date; a withdrawal after it is then a 409 naming it', async () => {
      expect((await send(current(), expiryDate({ expiry_date: '01-01-2026' }))).body).toEqual(SUCCESS_BODY);
      expect(await datesOf(TOKENS.active.token_id)).toEqual({ availableDay: undefined, expiryDay: dayNumber('01-01-2026') });
      const refused = await client.withdraw(current(), withdrawal());
      expect({ status: refused.status, body: refused.body }).toEqual({ status: 409, body: errorBody(409, 'Token expired on 01-01-2026') });
    });

    it('extends an expired token, which can then be withdrawn from again', async () => {
      await send(current(), expiryDate({ token_id: TOKENS.expired.token_id, expiry_date: '31-12-2026' })).expect(200);
      await client
        .withdraw(current(), withdrawal({ token_id: TOKENS.expired.token_id, withdrawn_amount: '10', token_balance: '50.00' }))
        .expect(200);
    });

    it('without expiry_date, a 200 that changes nothing; the same date again too', async () => {
      const before = await readState(current().store);
      await send(current(), expiryDate({ expiry_date: undefined })).expect(200);
      await send(current(), expiryDate({ token_id: TOKENS.dated.token_id, expiry_date: '02-01-2026' })).expect(200);
      expect(await readState(current().store)).toEqual(before);
    });

    it("400 for an expiry before the token's available date, naming it", async () => {
      await expectRejected(
        send,
        expiryDate({ token_id: TOKENS.dated.token_id, expiry_date: '31-12-2025' }),
        400,
        errorBody(400, 'Invalid field: expiry_date', [
          { field: 'expiry_date', message: "must not be before the token's available date (01-01-2026)" },
        ]),
      );
    });

    it('409 for a deleted token, whose dates cannot change', async () => {
      await expectRejected(
        send,
        expiryDate({ token_id: TOKENS.deleted.token_id }),
        409,
        errorBody(409, 'Token is deleted; a deleted token keeps its dates'),
      );
    });

    it.each([
      ['not a real date', '31-02-2026'],
      ['in another format', '2026-12-31'],
    ])('400 for a date %s', async (_what, date) => {
      await expectRejected(
        send,
        expiryDate({ expiry_date: date }),
        400,
        errorBody(400, 'Invalid field: expiry_date', [
          { field: 'expiry_date', message: 'must be a real calendar date written DD-MM-YYYY' },
        ]),
      );
    });

    it('413, 428 and 401 as every token notification', async () => {
      await expectRejected(send, expiryDate({ destination_id: 'X1' }), 413, errorBody(413, 'Destination ID Unknown'));
      await expectRejected(send, expiryDate({ token_id: TOKENS.others.token_id }), 428, errorBody(428, "Token ID doesn't match"));
      await expectRejected(send, expiryDate({ share_public: 'pk_wrong' }), 401, errorBody(401, 'Unauthorized'));
    });
  });

  describe('POST /v1/tokens/available-date', () => {
    const send = client.availableDate;

    it('sets the available date; a withdrawal before it is a 409 naming it', async () => {
      await send(current(), availableDate({ available_date: '03-01-2026' })).expect(200);
      expect(await datesOf(TOKENS.active.token_id)).toEqual({ availableDay: dayNumber('03-01-2026'), expiryDay: undefined });
      const refused = await client.withdraw(current(), withdrawal());
      expect({ status: refused.status, body: refused.body }).toEqual({
        status: 409,
        body: errorBody(409, 'Token is not available until 03-01-2026'),
      });
    });

    it('makes a token available sooner', async () => {
      await send(current(), availableDate({ token_id: TOKENS.notYetAvailable.token_id, available_date: '02-01-2026' })).expect(200);
      await client
        .withdraw(current(), withdrawal({ token_id: TOKENS.notYetAvailable.token_id, withdrawn_amount: '10', token_balance: '50.00' }))
        .expect(200);
    });

    it("400 for an available date after the token's expiry date, or none at all", async () => {
      await expectRejected(
        send,
        availableDate({ token_id: TOKENS.dated.token_id, available_date: '03-01-2026' }),
        400,
        errorBody(400, 'Invalid field: available_date', [
          { field: 'available_date', message: "must not be after the token's expiry date (02-01-2026)" },
        ]),
      );
      await expectRejected(
        send,
        availableDate({ available_date: undefined }),
        400,
        errorBody(400, 'Invalid field: available_date', [{ field: 'available_date', message: 'is required' }]),
      );
    });

    it('409 for a deleted token', async () => {
      await expectRejected(
        send,
        availableDate({ token_id: TOKENS.deleted.token_id }),
        409,
        errorBody(409, 'Token is deleted; a deleted token keeps its dates'),
      );
    });
  });
});
