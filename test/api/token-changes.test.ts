import { describeOnEveryStore, FIXED_NOW } from '../helpers/app';
import * as client from '../helpers/clients';
import { ACME, TOKENS } from '../helpers/fixtures';
import { errorBody } from '../helpers/http';
import { bookingChange, loaded, statusChange, tokenLoad, tokenModification, tokenUnload, unloaded, withdrawal } from '../helpers/payloads';
import { expectRejection, readLedgerEntry, readToken } from '../helpers/state';
import { dayNumber } from '../../src/domain/calendar-days';

/** The money fields none of the three operations takes (each refuses too the other's amount, or both for Modify Token). */
const OTHER_MONEY_FIELDS = ['amount', 'balance', 'token_balance', 'refund_amount', 'fee_amount', 'withdrawn_amount'];
const FOUNDING_BALANCE_MESSAGE = "is Create Token's: a token's founding balance is stated once, when the token is created";

/** Modify Token, Load Token and Unload Token (contract 9.8, 9.9): PATCH on the token path, keyed by {randomkey}. */
describeOnEveryStore('Token changes', (current) => {
  const tokenOf = (tokenId: string = TOKENS.active.token_id) => readToken(current().store, tokenId);
  let keyCounter = 0;
  const newKey = () => `change-key-${(keyCounter += 1)}`;

  async function expectRejected(body: object, status: number, expectedBody: object, key = newKey(), event?: string, partnerId?: string) {
    await expectRejection(current().store, () => client.changeToken(current(), body, key, event, partnerId), status, expectedBody, {
      keys: [key],
    });
  }

  const ACTIVE_VIEW = { token_id: TOKENS.active.token_id, source_id: 'ACME', destination_id: 'D1', status: 'active', balance: '1000.00' };

  describe('Modify Token', () => {
    it('answers 200 with the token after the change, and keeps it', async () => {
      const response = await client.changeToken(
        current(),
        tokenModification({ token_name: 'Guest card 7', expiry_date: '31-12-2026', room_count: '2' }),
        newKey(),
      );
      expect({ status: response.status, body: response.body }).toEqual({
        status: 200,
        body: {
          success: true,
          message: 'Success',
          token: { ...ACTIVE_VIEW, expiry_date: '31-12-2026', token_name: 'Guest card 7', room_count: '2' },
        },
      });
      expect(await tokenOf()).toEqual({
        tokenId: TOKENS.active.token_id,
        sourceId: 'ACME',
        destinationId: 'D1',
        status: 'active',
        balance: 100000,
        expiryDay: dayNumber('31-12-2026'),
        details: { token_name: 'Guest card 7', room_count: '2' },
      });
    });

    it('freezes and activates a token, as Status Change does; a disputed token may become active', async () => {
      await client.changeToken(current(), tokenModification({ token_status: 'freezed', token_name: undefined }), newKey()).expect(200);
      expect(await tokenOf()).toMatchObject({ status: 'freezed' });
      await client.changeToken(current(), tokenModification({ token_status: 'active', token_name: undefined }), newKey()).expect(200);
      expect(await tokenOf()).toMatchObject({ status: 'active' });
      await client
        .changeToken(
          current(),
          tokenModification({ token_id: TOKENS.disputed.token_id, token_status: 'active', token_name: undefined }),
          newKey(),
        )
        .expect(200);
      expect(await tokenOf(TOKENS.disputed.token_id)).toMatchObject({ status: 'active' });
    });

    it('is served on the published path with the event after the key', async () => {
      const response = await client.changeToken(current(), tokenModification({ customer_name: 'A. Guest' }), newKey(), 'modify');
      expect(response.body.token).toEqual({ ...ACTIVE_VIEW, token_name: 'Guest card 7', customer_name: 'A. Guest' });
    });

    it("400 when token_status is disputed or deleted: those are the platform's", async () => {
      const message = 'must be "active" or "freezed": disputed and deleted are set by the platform (Status Change), not by Modify Token';
      for (const status of ['disputed', 'deleted']) {
        await expectRejected(
          tokenModification({ token_status: status }),
          400,
          errorBody(400, 'Invalid field: token_status', [{ field: 'token_status', message }]),
        );
      }
    });

    it('400 for a misspelt status field (tokes_status, status), which a 200 would let its sender believe was applied', async () => {
      for (const field of ['tokes_status', 'status', 'Token_Stats']) {
        await expectRejected(
          tokenModification({ [field]: 'freezed' }),
          400,
          errorBody(400, `Invalid field: ${field}`, [{ field, message: 'is an unknown field: the status is token_status' }]),
        );
      }
    });

    it('400 naming a money field (load_amount, unload_amount, amount, balance, token_balance, refund_amount, fee_amount, withdrawn_amount): Modify Token moves no money, and a 200 would say it did', async () => {
      for (const field of [...OTHER_MONEY_FIELDS, 'load_amount', 'unload_amount']) {
        await expectRejected(
          tokenModification({ [field]: '50.00' }),
          400,
          errorBody(400, `Invalid field: ${field}`, [
            {
              field,
              message: 'is a money field: Modify Token moves no money; Load Token and Unload Token do, with load_amount or unload_amount',
            },
          ]),
        );
      }
      expect(await tokenOf()).toMatchObject({ balance: 100000 });
    });

    it("400 naming founding_balance: it is Create Token's, stated once when the token is made", async () => {
      await expectRejected(
        tokenModification({ founding_balance: '50.00' }),
        400,
        errorBody(400, 'Invalid field: founding_balance', [{ field: 'founding_balance', message: FOUNDING_BALANCE_MESSAGE }]),
      );
      expect(await tokenOf()).toMatchObject({ balance: 100000 });
    });

    it('400 without a field to change; email_token and email_settings are accepted and ignored', async () => {
      const fields =
        'token_status, available_date, expiry_date, token_name, token_reference, customer_name, booking_reference, check_in, check_out, room_count';
      await expectRejected(
        tokenModification({ token_name: undefined, email_token: 'true' }),
        400,
        errorBody(400, 'Invalid field: body', [{ field: 'body', message: `must carry at least one field to change: ${fields}` }]),
      );
      const response = await client.changeToken(
        current(),
        tokenModification({ email_token: 'true', email_settings: { language: 'en' } }),
        newKey(),
      );
      expect(response.body.token).toEqual({ ...ACTIVE_VIEW, token_name: 'Guest card 7' });
    });

    it('a retry that changed email_token or email_settings is a 422, not a replay; the same values in another key order replay', async () => {
      const key = newKey();
      const sent = tokenModification({ email_token: 'true', email_settings: { language: 'en', copy_to: ['a@example.com'] } });
      const first = await client.changeToken(current(), sent, key);
      expect(first.status).toBe(200);
      for (const changed of [
        { email_token: 'false' },
        { email_settings: { language: 'nl', copy_to: ['a@example.com'] } },
        { email_token: undefined },
      ]) {
        await expectRejected({ ...sent, ...changed }, 422, errorBody(422, 'randomkey was already used for a different request'), key);
      }
      const reordered = tokenModification({ email_settings: { copy_to: ['a@example.com'], language: 'en' }, email_token: 'true' });
      const retry = await client.changeToken(current(), reordered, key);
      expect({ status: retry.status, text: retry.text, replayed: retry.headers['idempotent-replayed'] }).toEqual({
        status: 200,
        text: first.text,
        replayed: 'true',
      });
    });

    it("400 when the token's text fields after the change would take more than 255 bytes a field together; the token is unchanged", async () => {
      const full = {
        token_name: 'n'.repeat(255),
        token_reference: 'r'.repeat(255),
        customer_name: 'c'.repeat(255),
        booking_reference: 'b'.repeat(255),
      };
      await client.changeToken(current(), tokenModification(full), newKey()).expect(200);
      const before = await tokenOf();
      await expectRejected(
        tokenModification({ token_name: '\u6f22'.repeat(86) }),
        400,
        errorBody(400, 'Invalid field: body', [
          {
            field: 'body',
            message: `token_name, token_reference, customer_name and booking_reference together must take at most 1020 bytes as JSON text in UTF-8 (255 a field: a character of plain ASCII is one byte, most others two or three); these take 1023`,
          },
        ]),
      );
      expect(await tokenOf()).toEqual(before);
    });

    it('a body that changes nothing is a 200 that changes nothing', async () => {
      await client.changeToken(current(), tokenModification(), newKey()).expect(200);
      const before = await tokenOf();
      const response = await client.changeToken(current(), tokenModification(), newKey());
      expect(response.body.token).toEqual({ ...ACTIVE_VIEW, token_name: 'Guest card 7' });
      expect(await tokenOf()).toEqual(before);
    });

    it('400 when the token after the change would expire before it is available, or check out before it checks in', async () => {
      await expectRejected(
        tokenModification({ token_id: TOKENS.dated.token_id, token_name: undefined, expiry_date: '31-12-2025' }),
        400,
        errorBody(400, 'Invalid field: expiry_date', [
          { field: 'expiry_date', message: 'must not be before the available date (01-01-2026)' },
        ]),
      );
      await client.changeToken(current(), tokenModification({ check_in: '10-01-2026' }), newKey()).expect(200);
      await expectRejected(
        tokenModification({ check_out: '09-01-2026' }),
        400,
        errorBody(400, 'Invalid field: check_out', [{ field: 'check_out', message: 'must not be before check_in (10-01-2026)' }]),
      );
    });

    it("409 for a deleted token; 428 for a token not at destination_id or not the caller's; 403 for another partner", async () => {
      await expectRejected(
        tokenModification({ token_id: TOKENS.deleted.token_id }),
        409,
        errorBody(409, 'Token is deleted; a deleted token cannot be modified'),
      );
      await expectRejected(tokenModification({ destination_id: 'D2' }), 428, errorBody(428, "Token ID doesn't match"));
      await expectRejected(tokenModification({ token_id: TOKENS.others.token_id }), 428, errorBody(428, "Token ID doesn't match"));
      await expectRejected(
        tokenModification(),
        403,
        errorBody(403, 'partnerid in the path does not match source_id'),
        newKey(),
        undefined,
        'OTHER',
      );
      await expectRejected(tokenModification({ share_secret: 'sk_wrong' }), 401, errorBody(401, 'Unauthorized'));
    });

    it('a retry under the same key replays the first answer byte for byte; the key with another request, or one a booking change used, is a 422', async () => {
      const key = newKey();
      const first = await client.changeToken(current(), tokenModification(), key);
      await client.changeToken(current(), tokenModification({ token_name: 'Renamed' }), newKey()).expect(200);
      const retry = await client.changeToken(current(), tokenModification({ token_id: Number(TOKENS.active.token_id) }), key);
      expect({ status: retry.status, text: retry.text, replayed: retry.headers['idempotent-replayed'] }).toEqual({
        status: 200,
        text: first.text,
        replayed: 'true',
      });
      expect(await tokenOf()).toMatchObject({ details: { token_name: 'Renamed' } });
      await expectRejected(
        tokenModification({ token_name: 'Other' }),
        422,
        errorBody(422, 'randomkey was already used for a different request'),
        key,
      );
      const bookingKey = newKey();
      await client.modifyBooking(current(), bookingChange(), bookingKey).expect(200);
      await expectRejected(tokenModification(), 422, errorBody(422, 'randomkey was already used for a different request'), bookingKey);
    });
  });

  describe('choosing the operation', () => {
    it('400 when token_event is missing, unknown or create on PATCH, or a change sent with POST', async () => {
      const listed = '"modify", "load", "unload"';
      await expectRejected(
        tokenModification({ token_event: undefined }),
        400,
        errorBody(400, 'Invalid field: token_event', [{ field: 'token_event', message: 'is required' }]),
      );
      await expectRejected(
        tokenModification({ token_event: 'rename' }),
        400,
        errorBody(400, 'Invalid field: token_event', [{ field: 'token_event', message: `must be one of ${listed}` }]),
      );
      await expectRejected(
        tokenModification({ token_event: 'create' }),
        400,
        errorBody(400, 'Invalid field: token_event', [
          { field: 'token_event', message: `is "create": use POST for create; PATCH takes ${listed}` },
        ]),
      );
      const key = newKey();
      await expectRejection(
        current().store,
        () => client.createToken(current(), tokenLoad(), key),
        400,
        errorBody(400, 'Invalid field: token_event', [
          { field: 'token_event', message: 'is "load": use PATCH for load; POST takes "create"' },
        ]),
        { keys: [key] },
      );
    });

    it("400 when the published path's last segment is not the body's token_event", async () => {
      await expectRejected(
        tokenLoad(),
        400,
        errorBody(400, 'Invalid field: token_event', [
          { field: 'token_event', message: 'is "load", but the path ends in /unload: they must be the same' },
        ]),
        newKey(),
        'unload',
      );
    });
  });

  describe('Load Token and Unload Token', () => {
    it('Load Token answers 200 with the token and the transaction the service filed under a 20-digit id it made', async () => {
      const response = await client.changeToken(
        current(),
        tokenLoad({ load_amount: '100.00', destination_id: 'D1', check_in: '03-01-2026', check_out: '05-01-2026' }),
        newKey(),
      );
      const transactionId = response.body.transaction?.transaction_id as string;
      expect(transactionId).toMatch(/^\d{20}$/);
      expect({ status: response.status, body: response.body }).toEqual({
        status: 200,
        body: {
          success: true,
          message: 'Success',
          token: { ...ACTIVE_VIEW, balance: '1100.00', check_in: '03-01-2026', check_out: '05-01-2026' },
          transaction: { transaction_id: transactionId, kind: 'load', amount: '100.00', token_balance: '1100.00' },
        },
      });
      expect(await tokenOf()).toMatchObject({ balance: 110000, details: { check_in: '03-01-2026', check_out: '05-01-2026' } });
      expect(await readLedgerEntry(current().store, transactionId)).toEqual({
        kind: 'load_token',
        transactionId,
        sourceId: 'ACME',
        destinationId: 'D1',
        tokenId: TOKENS.active.token_id,
        amount: 10000,
        fee: 0,
        tokenBalance: 110000,
        createdAt: FIXED_NOW,
      });
    });

    it('Unload Token takes the amount off, on a frozen token too, and files an unload row', async () => {
      const response = await client.changeToken(
        current(),
        tokenUnload({ token_id: TOKENS.freezed.token_id, unload_amount: '20' }),
        newKey(),
        'unload',
      );
      expect(response.body.token).toEqual({
        token_id: TOKENS.freezed.token_id,
        source_id: 'ACME',
        destination_id: 'D1',
        status: 'freezed',
        balance: '30.00',
      });
      expect(response.body.transaction).toEqual({
        transaction_id: expect.stringMatching(/^\d{20}$/),
        kind: 'unload',
        amount: '20.00',
        token_balance: '30.00',
      });
      expect(await readLedgerEntry(current().store, response.body.transaction.transaction_id)).toMatchObject({
        kind: 'unload_token',
        amount: 2000,
        tokenBalance: 3000,
      });
    });

    it('a retry under the same key answers the same bytes and the same transaction_id: money moves once', async () => {
      const key = newKey();
      const first = await client.changeToken(current(), tokenLoad(), key);
      const retry = await client.changeToken(current(), tokenLoad({ load_amount: '100' }), key, 'load');
      expect({ status: retry.status, text: retry.text, replayed: retry.headers['idempotent-replayed'] }).toEqual({
        status: 200,
        text: first.text,
        replayed: 'true',
      });
      expect(await tokenOf()).toMatchObject({ balance: 110000 });
      expect(await current().store.recentLedgerEntries(TOKENS.active.token_id, 10)).toHaveLength(1);
      await expectRejected(
        tokenLoad({ load_amount: '50.00' }),
        422,
        errorBody(422, 'randomkey was already used for a different request'),
        key,
      );
      await expectRejected(tokenUnload(), 422, errorBody(422, 'randomkey was already used for a different request'), key);
    });

    it('30 copies at once under one key move money once, and every copy answers the same transaction_id', async () => {
      const key = newKey();
      const answers = await Promise.all(Array.from({ length: 30 }, () => client.changeToken(current(), tokenLoad(), key)));
      expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
      expect(new Set(answers.map((answer) => answer.text)).size).toBe(1);
      expect(answers.filter((answer) => answer.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
      expect(await tokenOf()).toMatchObject({ balance: 110000 });
      expect(await current().store.recentLedgerEntries(TOKENS.active.token_id, 100)).toHaveLength(1);
    });

    it("the transaction_id it made is in the account's ledger key space: a notification reusing it is a 422, a Loaded with the same fields too", async () => {
      const { transaction } = (await client.changeToken(current(), tokenLoad(), newKey())).body;
      const reuse = withdrawal({ transaction_id: transaction.transaction_id, token_balance: '1000.00' });
      await expectRejection(
        current().store,
        () => client.withdraw(current(), reuse),
        422,
        errorBody(422, 'transaction_id was already used for a different request'),
      );
      // Another operation with the same fields by value is another request, not a replay (contract section 6).
      const sameFields = loaded({
        transaction_id: transaction.transaction_id,
        load_amount: '100.00',
        fee_amount: '0.00',
        token_balance: '1100.00',
      });
      await expectRejection(
        current().store,
        () => client.loaded(current(), sameFields),
        422,
        errorBody(422, 'transaction_id was already used for a different request'),
      );
      const { transaction: unloadTransaction } = (await client.changeToken(current(), tokenUnload(), newKey())).body;
      const sameUnload = unloaded({ transaction_id: unloadTransaction.transaction_id, unload_amount: '100.00', token_balance: '1000.00' });
      await expectRejection(
        current().store,
        () => client.unloaded(current(), sameUnload),
        422,
        errorBody(422, 'transaction_id was already used for a different request'),
      );
    });

    it('the rules of Loaded and Unloaded: 409 deleted or outside its dates, 422 past the balance or the largest balance', async () => {
      await expectRejected(
        tokenLoad({ token_id: TOKENS.deleted.token_id }),
        409,
        errorBody(409, 'Token is deleted; a deleted token cannot be loaded'),
      );
      await expectRejected(
        tokenUnload({ token_id: TOKENS.deleted.token_id }),
        409,
        errorBody(409, 'Token is deleted; a deleted token cannot be unloaded'),
      );
      await expectRejected(tokenLoad({ token_id: TOKENS.expired.token_id }), 409, errorBody(409, 'Token expired on 01-01-2026'));
      await expectRejected(
        tokenLoad({ load_amount: '9999999000.00' }),
        422,
        errorBody(422, 'load_amount 9999999000.00 would take the token balance 1000.00 over 9999999999.99'),
      );
      await expectRejected(
        tokenUnload({ unload_amount: '1000.01' }),
        422,
        errorBody(422, 'unload_amount 1000.01 is more than the token balance 1000.00'),
      );
    });

    it("428 when destination_id is not the token's, or the token not the caller's; 400 for an amount of zero or a stay out of order", async () => {
      await expectRejected(tokenLoad({ destination_id: 'D2' }), 428, errorBody(428, "Token ID doesn't match"));
      await expectRejected(tokenUnload({ token_id: TOKENS.others.token_id }), 428, errorBody(428, "Token ID doesn't match"));
      await expectRejected(
        tokenLoad({ load_amount: '0.00' }),
        400,
        errorBody(400, 'Invalid field: load_amount', [{ field: 'load_amount', message: 'must be above zero' }]),
      );
      await expectRejected(
        tokenLoad({ check_in: '05-01-2026', check_out: '04-01-2026' }),
        400,
        errorBody(400, 'Invalid field: check_out', [{ field: 'check_out', message: 'must not be before check_in (05-01-2026)' }]),
      );
    });

    it("400 naming the other operation's amount: Load Token with unload_amount, Unload Token with load_amount; no money moves", async () => {
      await expectRejected(
        tokenLoad({ unload_amount: '100.00' }),
        400,
        errorBody(400, 'Invalid field: unload_amount', [
          { field: 'unload_amount', message: "is Unload Token's amount: Load Token takes load_amount" },
        ]),
      );
      await expectRejected(
        tokenUnload({ load_amount: '100.00' }),
        400,
        errorBody(400, 'Invalid field: load_amount', [
          { field: 'load_amount', message: "is Load Token's amount: Unload Token takes unload_amount" },
        ]),
      );
      expect(await tokenOf()).toMatchObject({ balance: 100000 });
    });

    it.each([
      ['Load Token', tokenLoad, 'load_amount', 'Load Token'],
      ['Unload Token', tokenUnload, 'unload_amount', 'Unload Token'],
    ])(
      '%s: 400 naming every money field it does not use; the stated balance is not checked, so a 200 would mislead',
      async (_name, body, amountField, operation) => {
        for (const field of OTHER_MONEY_FIELDS) {
          await expectRejected(
            body({ [amountField]: '1.00', [field]: '7.00' }),
            400,
            errorBody(400, `Invalid field: ${field}`, [
              {
                field,
                message: `is a money field ${operation} does not use: it moves ${amountField} alone, and its answer states the balance after`,
              },
            ]),
          );
        }
        await expectRejected(
          body({ [amountField]: '1.00', founding_balance: '7.00' }),
          400,
          errorBody(400, 'Invalid field: founding_balance', [{ field: 'founding_balance', message: FOUNDING_BALANCE_MESSAGE }]),
        );
        expect(await tokenOf()).toMatchObject({ balance: 100000 });
      },
    );

    it('a status changed by Status Change and a load by Load Token act on the same token', async () => {
      await client.statusChange(current(), statusChange({ tokes_status: 'disputed' })).expect(200);
      const response = await client.changeToken(current(), tokenLoad(), newKey());
      expect(response.body.token).toMatchObject({ status: 'disputed', balance: '1100.00' });
      expect(ACME.source_id).toBe(response.body.token.source_id);
    });
  });
});
