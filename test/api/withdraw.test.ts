import request from 'supertest';
import { describeOnEveryStore, FIXED_NOW } from '../helpers/app';
import * as client from '../helpers/clients';
import { ACME, OTHER, TOKENS } from '../helpers/fixtures';
import { errorBody, SUCCESS_BODY } from '../helpers/http';
import { newTransactionId, withdrawal } from '../helpers/payloads';
import { expectRejection, readLedgerEntry, readState, readToken } from '../helpers/state';

describeOnEveryStore('Withdraw', (current) => {
  /** Sends a request that must fail and checks it changed nothing. */
  async function expectRejected(body: Record<string, unknown>, status: number, expectedBody: object) {
    const transactionIds = typeof body.transaction_id === 'string' ? [body.transaction_id] : [];
    await expectRejection(current().store, () => client.withdraw(current(), body), status, expectedBody, { transactionIds });
  }

  describe('when the withdrawal is valid', () => {
    it('answers 200 with the exact success body, debits the balance and records the ledger row', async () => {
      const body = withdrawal();
      const response = await client.withdraw(current(), body);
      expect(response.status).toBe(200);
      expect(response.text).toBe('{"success":true,"message":"Success"}');
      expect(response.headers['idempotent-replayed']).toBeUndefined();
      expect((await readToken(current().store, TOKENS.active.token_id))?.balance).toBe(90000);
      expect(await readLedgerEntry(current().store, body.transaction_id as string)).toEqual({
        kind: 'withdrawal',
        transactionId: body.transaction_id,
        sourceId: ACME.source_id,
        destinationId: TOKENS.active.destination_id,
        tokenId: TOKENS.active.token_id,
        amount: 10000,
        fee: 0,
        tokenBalance: 90000,
        createdAt: FIXED_NOW,
      });
    });

    it('accepts GET with a JSON body, as the published samples send it', async () => {
      const response = await request(current().server).get('/v1/tokens/withdraw').send(withdrawal());
      expect(response.status).toBe(200);
      expect(response.body).toEqual(SUCCESS_BODY);
      expect((await readToken(current().store, TOKENS.active.token_id))?.balance).toBe(90000);
    });

    it('accepts token_id as a JSON integer and amounts without decimals', async () => {
      const response = await client.withdraw(current(), withdrawal({ token_id: 1010, withdrawn_amount: '0.1', token_balance: '0.2' }));
      expect(response.status).toBe(200);
      expect((await readToken(current().store, '1010'))?.balance).toBe(20);
    });

    it('accepts a charset=utf-8 parameter on the content type', async () => {
      const response = await client
        .withdraw(current())
        .set('Content-Type', 'application/json; charset=utf-8')
        .send(JSON.stringify(withdrawal()));
      expect(response.status).toBe(200);
    });

    it('computes money exactly: three withdrawals of 0.10 from 0.30 leave 0.00', async () => {
      for (const balanceAfter of ['0.20', '0.10', '0.00']) {
        const response = await client.withdraw(
          current(),
          withdrawal({ token_id: '1010', withdrawn_amount: '0.10', token_balance: balanceAfter }),
        );
        expect(response.status).toBe(200);
      }
      expect((await readToken(current().store, '1010'))?.balance).toBe(0);
      await expectRejected(
        withdrawal({ token_id: '1010', withdrawn_amount: '0.01', token_balance: '0.00' }),
        422,
        errorBody(422, 'withdrawn_amount 0.01 is more than the token balance 0.00'),
      );
    });

    it('allows withdrawing the whole balance', async () => {
      const response = await client.withdraw(current(), withdrawal({ withdrawn_amount: '1000', token_balance: '0' }));
      expect(response.status).toBe(200);
      expect((await readToken(current().store, TOKENS.active.token_id))?.balance).toBe(0);
    });
  });

  describe('idempotency by transaction_id', () => {
    it('when the same withdrawal is sent again, answers 200 with Idempotent-Replayed and debits once', async () => {
      const body = withdrawal();
      await client.withdraw(current(), body).expect(200);
      const replay = await client.withdraw(current(), body);
      expect(replay.status).toBe(200);
      expect(replay.body).toEqual(SUCCESS_BODY);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect((await readToken(current().store, TOKENS.active.token_id))?.balance).toBe(90000);
    });

    it('compares fields by value, whichever route and method carried them', async () => {
      const body = withdrawal();
      await client.withdraw(current(), body).expect(200);
      const sameByValue = { ...body, token_id: Number(TOKENS.active.token_id), withdrawn_amount: '100', token_balance: '900.0' };
      const replay = await request(current().server).get('/v1/tokens/withdraw').send(sameByValue);
      expect(replay.status).toBe(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      const viaEvents = await client.events(current(), body);
      expect(viaEvents.headers['idempotent-replayed']).toBe('true');
      expect((await readToken(current().store, TOKENS.active.token_id))?.balance).toBe(90000);
    });

    it('replays even when the token changed since (here: frozen after the withdrawal)', async () => {
      const body = withdrawal();
      await client.withdraw(current(), body).expect(200);
      await client
        .statusChange(current(), {
          share_public: ACME.share_public,
          read_event: 'token.status_changed',
          source_id: 'ACME',
          destination_id: 'D1',
          token_id: TOKENS.active.token_id,
          tokes_status: 'freezed',
        })
        .expect(200);
      const replay = await client.withdraw(current(), body);
      expect(replay.status).toBe(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
    });

    it.each([
      ['withdrawn_amount', { withdrawn_amount: '50.00', token_balance: '850.00' }],
      ['token_balance', { token_balance: '800.00' }],
      ['token_id', { token_id: TOKENS.atD2.token_id, destination_id: 'D2', withdrawn_amount: '10.00', token_balance: '70.00' }],
    ])('when the key is reused with another %s, answers 422 and overwrites nothing', async (_field, change) => {
      const body = withdrawal();
      await client.withdraw(current(), body).expect(200);
      const before = await readState(current().store, [body.transaction_id as string]);
      const response = await client.withdraw(current(), { ...body, ...change });
      expect(response.status).toBe(422);
      expect(response.body).toEqual(errorBody(422, 'transaction_id was already used for a different request'));
      expect(await readState(current().store, [body.transaction_id as string])).toEqual(before);
    });

    it("when another account sends the same transaction_id on its own token, it is that account's own key: applied, and the first untouched", async () => {
      const body = withdrawal();
      await client.withdraw(current(), body).expect(200);
      const others = withdrawal({
        transaction_id: body.transaction_id,
        source_id: OTHER.source_id,
        share_public: OTHER.share_public,
        destination_id: 'X1',
        token_id: TOKENS.others.token_id,
        withdrawn_amount: '10.00',
        token_balance: '60.00',
      });
      const response = await client.withdraw(current(), others);
      expect({ status: response.status, body: response.body, replayed: response.headers['idempotent-replayed'] }).toEqual({
        status: 200,
        body: SUCCESS_BODY,
        replayed: undefined,
      });
      expect((await readLedgerEntry(current().store, String(body.transaction_id)))?.amount).toBe(10000);
      expect((await readLedgerEntry(current().store, String(body.transaction_id), OTHER.source_id))?.amount).toBe(1000);
      expect((await readToken(current().store, TOKENS.others.token_id))?.balance).toBe(6000);
    });

    it('when a request failed, its transaction_id stays free for a corrected retry', async () => {
      const body = withdrawal({ token_balance: '123.00' });
      await client.withdraw(current(), body).expect(409);
      const corrected = await client.withdraw(current(), { ...body, token_balance: '900.00' });
      expect(corrected.status).toBe(200);
      expect(corrected.headers['idempotent-replayed']).toBeUndefined();
    });

    it('when 25 copies of one withdrawal arrive at once, exactly one applies', async () => {
      const body = withdrawal();
      const responses = await Promise.all(Array.from({ length: 25 }, () => client.withdraw(current(), body)));
      expect(responses.map((r) => r.status)).toEqual(Array(25).fill(200));
      expect(responses.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(24);
      expect((await readToken(current().store, TOKENS.active.token_id))?.balance).toBe(90000);
    });

    it('when 10 distinct withdrawals race on one token, each applies once against the balance before it', async () => {
      const bodies = Array.from({ length: 10 }, (_, i) => withdrawal({ withdrawn_amount: '10.00', token_balance: `${990 - 10 * i}.00` }));
      const responses = [];
      for (const body of bodies) responses.push(client.withdraw(current(), body));
      const statuses = (await Promise.all(responses)).map((r) => r.status);
      expect(statuses.filter((s) => s === 200).length + statuses.filter((s) => s === 409).length).toBe(10);
      const applied = statuses.filter((s) => s === 200).length;
      expect((await readToken(current().store, TOKENS.active.token_id))?.balance).toBe(100000 - applied * 1000);
    });
  });

  describe('errors', () => {
    it('401 for an unknown source_id and for a wrong key, with the same message', async () => {
      await expectRejected(withdrawal({ source_id: 'NOBODY' }), 401, errorBody(401, 'Unauthorized'));
      await expectRejected(withdrawal({ share_public: 'pk_wrong' }), 401, errorBody(401, 'Unauthorized'));
      await expectRejected(withdrawal({ source_id: 'acme' }), 401, errorBody(401, 'Unauthorized'));
      await expectRejected(withdrawal({ share_public: OTHER.share_public }), 401, errorBody(401, 'Unauthorized'));
    });

    it("413 Destination ID Unknown when the destination is not the caller's", async () => {
      await expectRejected(withdrawal({ destination_id: 'X1' }), 413, errorBody(413, 'Destination ID Unknown'));
      await expectRejected(withdrawal({ destination_id: 'NOPE' }), 413, errorBody(413, 'Destination ID Unknown'));
    });

    it.each([
      ['does not exist', { token_id: '999' }],
      ['belongs to another account', { token_id: TOKENS.others.token_id }],
      ['is at another destination of the caller', { token_id: TOKENS.atD2.token_id }],
    ])('428 when the token %s', async (_situation, change) => {
      await expectRejected(withdrawal(change), 428, errorBody(428, "Token ID doesn't match"));
    });

    it.each(['freezed', 'disputed', 'deleted'] as const)('409 when the token is %s, and the balance is unchanged', async (status) => {
      await expectRejected(
        withdrawal({ token_id: TOKENS[status].token_id, withdrawn_amount: '10.00', token_balance: '40.00' }),
        409,
        errorBody(409, `Token is ${status}; only an active token can be withdrawn from`),
      );
    });

    it('422 when the amount is larger than the balance', async () => {
      await expectRejected(
        withdrawal({ withdrawn_amount: '1000.01', token_balance: '0.00' }),
        422,
        errorBody(422, 'withdrawn_amount 1000.01 is more than the token balance 1000.00'),
      );
    });

    it('409 when token_balance disagrees with the ledger, stating the expected balance', async () => {
      await expectRejected(
        withdrawal({ token_balance: '899.99' }),
        409,
        errorBody(409, 'token_balance 899.99 does not match the ledger: expected 900.00'),
      );
    });

    it('400 naming every missing field at once', async () => {
      await expectRejected(
        {},
        400,
        errorBody(
          400,
          'Invalid fields: share_public, read_event, source_id, destination_id, token_id, transaction_id, withdrawn_amount, token_balance',
          [
            { field: 'share_public', message: 'is required' },
            { field: 'read_event', message: 'is required' },
            { field: 'source_id', message: 'is required' },
            { field: 'destination_id', message: 'is required' },
            { field: 'token_id', message: 'is required' },
            { field: 'transaction_id', message: 'is required' },
            { field: 'withdrawn_amount', message: 'is required' },
            { field: 'token_balance', message: 'is required' },
          ],
        ),
      );
    });

    /** Sends the body with some values as bare JSON numbers, digits exactly as written. */
    async function postWithRawNumbers(body: Record<string, unknown>, rawNumbers: Record<string, string>) {
      const before = await readState(current().store);
      const json = JSON.stringify({ ...body, ...Object.fromEntries(Object.keys(rawNumbers).map((field) => [field, `@${field}@`])) });
      const raw = Object.entries(rawNumbers).reduce((text, [field, digits]) => text.replace(`"@${field}@"`, digits), json);
      const response = await client.withdraw(current()).set('Content-Type', 'application/json').send(raw);
      expect(await readState(current().store)).toEqual(before);
      return response;
    }

    it('400 when a string field arrives as a JSON number (a 20-digit transaction_id has already lost digits)', async () => {
      const response = await postWithRawNumbers(withdrawal(), {
        transaction_id: '12345678901234567890',
        withdrawn_amount: '100',
        token_balance: '900',
      });
      expect({ status: response.status, body: response.body }).toEqual({
        status: 400,
        body: errorBody(400, 'Invalid fields: transaction_id, withdrawn_amount, token_balance', [
          { field: 'transaction_id', message: 'must be a string of 20 digits' },
          { field: 'withdrawn_amount', message: 'is a JSON number: send it as a string, such as "100.00"' },
          { field: 'token_balance', message: 'is a JSON number: send it as a string, such as "100.00"' },
        ]),
      });
    });

    it('400 telling the caller to send a token_id above 2^53 - 1 as a string', async () => {
      const response = await postWithRawNumbers(withdrawal(), { token_id: '9007199254740993' });
      expect({ status: response.status, body: response.body }).toEqual({
        status: 400,
        body: errorBody(400, 'Invalid field: token_id', [
          { field: 'token_id', message: 'is above 2^53 - 1 and loses digits as a JSON number: send it as a string' },
        ]),
      });
    });

    it.each([
      ['token_id', '0123'],
      ['token_id', ''],
      ['token_id', 1.5],
      ['token_id', -4],
      ['token_id', '1'.repeat(33)],
      ['transaction_id', '1234567890123456789'],
      ['transaction_id', '1234567890123456789a'],
      ['withdrawn_amount', '0.00'],
      ['withdrawn_amount', '-1.00'],
      ['withdrawn_amount', '1.234'],
      ['withdrawn_amount', '1e3'],
      ['withdrawn_amount', '1,000.00'],
      ['withdrawn_amount', ' 10.00'],
      ['withdrawn_amount', '12345678901.00'],
      ['token_balance', '.5'],
      ['read_event', 'token.status_changed'],
      ['source_id', ''],
      ['share_public', null],
    ])('400 when %s is %p', async (field, value) => {
      const response = await client.withdraw(current(), withdrawal({ [field]: value }));
      expect(response.status).toBe(400);
      expect(response.body.errors.details.map((d: { field: string }) => d.field)).toEqual([field]);
    });

    it('ignores fields the specification does not list', async () => {
      const response = await client.withdraw(current(), withdrawal({ currency: 'EUR', note: { nested: true } }));
      expect(response.status).toBe(200);
    });
  });

  describe('order of checks: the first failure answers', () => {
    it('schema (400) before account (401)', async () => {
      const response = await client.withdraw(current(), withdrawal({ source_id: 'NOBODY', withdrawn_amount: 'x' }));
      expect(response.status).toBe(400);
    });
    it('account (401) before destination (413)', async () => {
      const response = await client.withdraw(current(), withdrawal({ share_public: 'wrong', destination_id: 'NOPE' }));
      expect(response.status).toBe(401);
    });
    it('destination (413) before token (428)', async () => {
      const response = await client.withdraw(current(), withdrawal({ destination_id: 'NOPE', token_id: '999' }));
      expect(response.status).toBe(413);
    });
    it('token (428) before replay', async () => {
      const body = withdrawal();
      await client.withdraw(current(), body).expect(200);
      const response = await client.withdraw(current(), { ...body, token_id: '999' });
      expect(response.status).toBe(428);
    });
    it('replay before status (409): a key reused on a since-deleted token answers 422, not 409', async () => {
      const body = withdrawal();
      await client.withdraw(current(), body).expect(200);
      await client
        .statusChange(current(), {
          share_public: ACME.share_public,
          read_event: 'token.status_changed',
          source_id: 'ACME',
          destination_id: 'D1',
          token_id: TOKENS.active.token_id,
          tokes_status: 'deleted',
        })
        .expect(200);
      expect((await client.withdraw(current(), { ...body, withdrawn_amount: '5.00', token_balance: '895.00' })).status).toBe(422);
    });
    it.each([
      ['expired the day before', TOKENS.expired.token_id, 'Token expired on 01-01-2026'],
      ['available only from the next day', TOKENS.notYetAvailable.token_id, 'Token is not available until 03-01-2026'],
    ])('409 naming the date for a token %s, and nothing changes', async (_what, tokenId, message) => {
      const body = withdrawal({ token_id: tokenId, withdrawn_amount: '10.00', token_balance: '50.00' });
      const before = await readState(current().store, [String(body.transaction_id)]);
      const response = await client.withdraw(current(), body);
      expect({ status: response.status, body: response.body }).toEqual({ status: 409, body: errorBody(409, message) });
      expect(await readState(current().store, [String(body.transaction_id)])).toEqual(before);
    });
    it('on its available date and on its expiry date (UTC calendar days, both included), a token can be withdrawn from', async () => {
      const response = await client.withdraw(
        current(),
        withdrawal({ token_id: TOKENS.dated.token_id, withdrawn_amount: '10.00', token_balance: '50.00' }),
      );
      expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: SUCCESS_BODY });
      expect((await readToken(current().store, TOKENS.dated.token_id))?.balance).toBe(5000);
    });
    it('dates (409) before amount over balance (422)', async () => {
      const response = await client.withdraw(
        current(),
        withdrawal({ token_id: TOKENS.expired.token_id, withdrawn_amount: '999.00', token_balance: '0.00' }),
      );
      expect(response.status).toBe(409);
    });
    it('status (409) before amount over balance (422)', async () => {
      const response = await client.withdraw(
        current(),
        withdrawal({ token_id: TOKENS.freezed.token_id, withdrawn_amount: '999.00', token_balance: '0.00' }),
      );
      expect(response.status).toBe(409);
    });
    it('amount over balance (422) before token_balance mismatch (409)', async () => {
      const response = await client.withdraw(current(), withdrawal({ withdrawn_amount: '2000.00', token_balance: '5.00' }));
      expect(response.status).toBe(422);
    });
  });

  it('a transaction_id helper never repeats within a run', () => {
    expect(new Set(Array.from({ length: 1000 }, newTransactionId)).size).toBe(1000);
  });
});
