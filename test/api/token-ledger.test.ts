import { describeOnEveryStore, FIXED_NOW } from '../helpers/app';
import * as client from '../helpers/clients';
import { ACME, OTHER, TOKENS } from '../helpers/fixtures';
import { errorBody, SUCCESS_BODY } from '../helpers/http';
import { loaded, loadSchedule, newTransactionId, unloaded, withdrawal } from '../helpers/payloads';
import { expectRejection, readLedgerEntry, readState, readToken } from '../helpers/state';

/** Loaded, Unloaded and Load Schedule (contract 9.1 to 9.3): one ledger per token, one key space per account. */
describeOnEveryStore('Ledger notifications', (current) => {
  const balanceOf = async (tokenId: string = TOKENS.active.token_id) => (await readToken(current().store, tokenId))?.balance;

  /** Sends a request that must fail and checks it changed nothing, its transaction id included. */
  async function expectRejected(send: client.NotificationClient, body: Record<string, unknown>, status: number, expectedBody: object) {
    const transactionIds = typeof body.transaction_id === 'string' && body.transaction_id !== '' ? [body.transaction_id] : [];
    await expectRejection(current().store, () => send(current(), body), status, expectedBody, { transactionIds });
  }

  const row = (
    kind: string,
    body: Record<string, unknown>,
    amount: number,
    fee: number,
    tokenBalance: number,
    token: { token_id: string; destination_id: string } = TOKENS.active,
  ) => ({
    kind,
    transactionId: body.transaction_id,
    sourceId: ACME.source_id,
    destinationId: token.destination_id,
    tokenId: token.token_id,
    amount,
    fee,
    tokenBalance,
    createdAt: FIXED_NOW,
  });

  describe('POST /v1/tokens/loaded', () => {
    const send = client.loaded;

    it("answers 200, adds load_amount to the balance (the fee is the sender's) and records a load row with its fee", async () => {
      const body = loaded({ load_amount: '100.00', fee_amount: '2.50', token_balance: '1100.00' });
      const response = await send(current(), body);
      expect({ status: response.status, text: response.text, replayed: response.headers['idempotent-replayed'] }).toEqual({
        status: 200,
        text: '{"success":true,"message":"Success"}',
        replayed: undefined,
      });
      expect(await balanceOf()).toBe(110000);
      expect(await readLedgerEntry(current().store, body.transaction_id as string)).toEqual(row('load', body, 10000, 250, 110000));
    });

    it('takes a zero fee, and the token_id as a JSON number', async () => {
      await send(current(), loaded({ fee_amount: '0', token_id: Number(TOKENS.small.token_id), token_balance: '100.30' })).expect(200);
      expect(await balanceOf(TOKENS.small.token_id)).toBe(10030);
    });

    it('loads a frozen or disputed token: only a deleted token, or one outside its dates, refuses money', async () => {
      for (const token of [TOKENS.freezed, TOKENS.disputed]) {
        await send(current(), loaded({ token_id: token.token_id, load_amount: '5', token_balance: '55.00' })).expect(200);
        expect(await balanceOf(token.token_id)).toBe(5500);
      }
    });

    it('a repeat with the same fields by value is a 200 replay that applies nothing, even after the token changed', async () => {
      const body = loaded();
      await send(current(), body).expect(200);
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
      const repeat = await send(current(), {
        ...body,
        token_id: Number(body.token_id),
        load_amount: '100',
        fee_amount: '2.5',
        token_balance: '1100',
      });
      expect({ status: repeat.status, body: repeat.body, replayed: repeat.headers['idempotent-replayed'] }).toEqual({
        status: 200,
        body: SUCCESS_BODY,
        replayed: 'true',
      });
      expect(await balanceOf()).toBe(110000);
    });

    it.each([
      ['another fee_amount', { fee_amount: '3.00' }],
      ['another load_amount', { load_amount: '50.00', token_balance: '1050.00' }],
    ])('422 when the transaction_id is reused with %s, and nothing changes', async (_what, change) => {
      const body = loaded();
      await send(current(), body).expect(200);
      await expectRejected(send, { ...body, ...change }, 422, errorBody(422, 'transaction_id was already used for a different request'));
    });

    it('409 for a deleted token', async () => {
      await expectRejected(
        send,
        loaded({ token_id: TOKENS.deleted.token_id, token_balance: '150.00' }),
        409,
        errorBody(409, 'Token is deleted; a deleted token cannot be loaded'),
      );
    });

    it.each([
      ['expired', TOKENS.expired.token_id, 'Token expired on 01-01-2026'],
      ['not yet available', TOKENS.notYetAvailable.token_id, 'Token is not available until 03-01-2026'],
    ])('409 for a token %s, naming the date', async (_what, tokenId, message) => {
      await expectRejected(send, loaded({ token_id: tokenId, token_balance: '160.00' }), 409, errorBody(409, message));
    });

    it('422 when the balance would go over 9999999999.99', async () => {
      await send(current(), loaded({ load_amount: '9999998999.99', token_balance: '9999999999.99', fee_amount: '0' })).expect(200);
      await expectRejected(
        send,
        loaded({ load_amount: '0.01', token_balance: '9999999999.99' }),
        422,
        errorBody(422, 'load_amount 0.01 would take the token balance 9999999999.99 over 9999999999.99'),
      );
    });

    it('409 when token_balance is not the balance plus load_amount, stating the expected balance', async () => {
      await expectRejected(
        send,
        loaded({ token_balance: '1097.50' }),
        409,
        errorBody(409, 'token_balance 1097.50 does not match the ledger: expected 1100.00'),
      );
    });

    it('checks in the contract order: status before the amount, the amount before token_balance', async () => {
      await expectRejected(
        send,
        loaded({ token_id: TOKENS.deleted.token_id, load_amount: '9999999999.99', token_balance: '1' }),
        409,
        errorBody(409, 'Token is deleted; a deleted token cannot be loaded'),
      );
      await expectRejected(
        send,
        loaded({ load_amount: '9999999999.99', token_balance: '1' }),
        422,
        errorBody(422, 'load_amount 9999999999.99 would take the token balance 1000.00 over 9999999999.99'),
      );
    });

    it.each([
      ['a zero load_amount', { load_amount: '0.00' }, 'load_amount', 'must be above zero'],
      [
        'a negative fee',
        { fee_amount: '-1' },
        'fee_amount',
        'must be a decimal amount: 1 to 10 digits, optionally a point and 1 or 2 decimals (e.g. "100.00")',
      ],
      ['no fee_amount', { fee_amount: undefined }, 'fee_amount', 'is required'],
      ['no share_public', { share_public: undefined }, 'share_public', 'is required'],
      ['a load_amount as a JSON number', { load_amount: 100 }, 'load_amount', 'is a JSON number: send it as a string, such as "100.00"'],
      ['a short transaction_id', { transaction_id: '123' }, 'transaction_id', 'must be exactly 20 digits'],
    ])('400 for %s, and nothing changes', async (_what, change, field, message) => {
      await expectRejected(send, loaded(change), 400, errorBody(400, `Invalid field: ${field}`, [{ field, message }]));
    });

    it("401 for a wrong key, 413 for a destination not the account's, 428 for another account's token", async () => {
      await expectRejected(send, loaded({ share_public: 'pk_wrong' }), 401, errorBody(401, 'Unauthorized'));
      await expectRejected(send, loaded({ destination_id: 'X1' }), 413, errorBody(413, 'Destination ID Unknown'));
      await expectRejected(send, loaded({ token_id: TOKENS.others.token_id }), 428, errorBody(428, "Token ID doesn't match"));
    });
  });

  describe('POST /v1/tokens/unloaded', () => {
    const send = client.unloaded;

    it('answers 200, takes unload_amount off the balance and records an unload row', async () => {
      const body = unloaded();
      expect((await send(current(), body)).body).toEqual(SUCCESS_BODY);
      expect(await balanceOf()).toBe(90000);
      expect(await readLedgerEntry(current().store, body.transaction_id as string)).toEqual(row('unload', body, 10000, 0, 90000));
    });

    it("also takes the published page's name for the event, token.loaded_created, as an unload", async () => {
      await send(current(), unloaded({ read_event: 'token.loaded_created' })).expect(200);
      expect(await balanceOf()).toBe(90000);
    });

    it('unloads a frozen, disputed or expired token: the sender takes its money back', async () => {
      for (const token of [TOKENS.freezed, TOKENS.disputed, TOKENS.expired]) {
        await send(
          current(),
          unloaded({ token_id: token.token_id, unload_amount: '10', token_balance: token === TOKENS.expired ? '50.00' : '40.00' }),
        ).expect(200);
      }
      expect([await balanceOf(TOKENS.freezed.token_id), await balanceOf(TOKENS.expired.token_id)]).toEqual([4000, 5000]);
    });

    it('409 for a deleted token', async () => {
      await expectRejected(
        send,
        unloaded({ token_id: TOKENS.deleted.token_id, unload_amount: '1', token_balance: '49.00' }),
        409,
        errorBody(409, 'Token is deleted; a deleted token cannot be unloaded'),
      );
    });

    it('422 for more than the balance, 409 for a token_balance that is not the balance less the amount', async () => {
      await expectRejected(
        send,
        unloaded({ unload_amount: '1000.01', token_balance: '0' }),
        422,
        errorBody(422, 'unload_amount 1000.01 is more than the token balance 1000.00'),
      );
      await expectRejected(
        send,
        unloaded({ token_balance: '1000.00' }),
        409,
        errorBody(409, 'token_balance 1000.00 does not match the ledger: expected 900.00'),
      );
    });

    it("400 for another notification's read_event, naming the route that takes it", async () => {
      await expectRejected(
        send,
        unloaded({ read_event: 'token.withdrawn_created' }),
        400,
        errorBody(400, 'Invalid field: read_event', [
          {
            field: 'read_event',
            message:
              'is "token.withdrawn_created", which POST /v1/tokens/withdraw (or POST /v1/events) takes; this route takes "token.unloaded_created" or "token.loaded_created"',
          },
        ]),
      );
    });
  });

  describe('POST /v1/tokens/load-schedule', () => {
    const send = client.loadSchedule;

    it('credited: the balance becomes token_balance and the difference is a schedule row', async () => {
      const body = loadSchedule({ token_balance: '1250.00' });
      expect((await send(current(), body)).body).toEqual(SUCCESS_BODY);
      expect(await balanceOf()).toBe(125000);
      expect(await readLedgerEntry(current().store, body.transaction_id as string)).toEqual(row('schedule', body, 25000, 0, 125000));
    });

    it('credited with the balance already there: a 200 and a schedule row of zero that keeps its transaction_id', async () => {
      const body = loadSchedule({ token_balance: '1000' });
      await send(current(), body).expect(200);
      expect(await balanceOf()).toBe(100000);
      expect(await readLedgerEntry(current().store, body.transaction_id as string)).toEqual(row('schedule', body, 0, 0, 100000));
    });

    it('credited: a repeat is a replay, even once the balance moved on', async () => {
      const body = loadSchedule();
      await send(current(), body).expect(200);
      await client.withdraw(current(), withdrawal({ withdrawn_amount: '50', token_balance: '1200.00' })).expect(200);
      const repeat = await send(current(), body);
      expect([repeat.status, repeat.headers['idempotent-replayed']]).toEqual([200, 'true']);
      expect(await balanceOf()).toBe(120000);
    });

    it("credited: 409 when token_balance is below the balance, for a deleted token, or outside the token's dates", async () => {
      await expectRejected(
        send,
        loadSchedule({ token_balance: '999.99' }),
        409,
        errorBody(409, 'token_balance 999.99 is below the token balance 1000.00: a credited schedule only adds'),
      );
      await expectRejected(
        send,
        loadSchedule({ token_id: TOKENS.deleted.token_id, token_balance: '60' }),
        409,
        errorBody(409, 'Token is deleted; a deleted token cannot be loaded'),
      );
      await expectRejected(
        send,
        loadSchedule({ token_id: TOKENS.expired.token_id, token_balance: '70' }),
        409,
        errorBody(409, 'Token expired on 01-01-2026'),
      );
    });

    it.each(['deleted', 'failure'])('%s: a 200 that changes nothing when token_balance is the balance, else a 409', async (status) => {
      const before = await readState(current().store);
      await send(current(), loadSchedule({ schedule_status: status, transaction_id: '', token_balance: '1000.00' })).expect(200);
      expect(await readState(current().store)).toEqual(before);
      await expectRejected(
        send,
        loadSchedule({ schedule_status: status, transaction_id: '', token_balance: '1250.00' }),
        409,
        errorBody(409, 'token_balance 1250.00 does not match the ledger: expected 1000.00'),
      );
    });

    it.each([
      [
        'credited without a transaction_id',
        { transaction_id: '' },
        'transaction_id',
        'must be exactly 20 digits when schedule_status is "credited"',
      ],
      ['failure with a transaction_id', { schedule_status: 'failure' }, 'transaction_id', 'must be "" when schedule_status is "failure"'],
      ['a status in the wrong case', { schedule_status: 'Credited' }, 'schedule_status', 'must be "credited" or "deleted" or "failure"'],
    ])('400 for %s', async (_what, change, field, message) => {
      await expectRejected(send, loadSchedule(change), 400, errorBody(400, `Invalid field: ${field}`, [{ field, message }]));
    });
  });

  describe('one key space per account for every kind', () => {
    it.each([
      ['a withdrawal', client.withdraw, withdrawal],
      ['an unload', client.unloaded, unloaded],
      ['a credited schedule', client.loadSchedule, loadSchedule],
    ])("a load's transaction_id reused by %s is a 422 that does not say what it was used for", async (_what, send, payload) => {
      const transactionId = newTransactionId();
      await client.loaded(current(), loaded({ transaction_id: transactionId })).expect(200);
      const reuse = payload({
        transaction_id: transactionId,
        token_balance: '1100.00',
        withdrawn_amount: undefined,
        unload_amount: undefined,
      });
      const body =
        send === client.withdraw
          ? { ...reuse, withdrawn_amount: '1.00', token_balance: '1099.00' }
          : send === client.unloaded
            ? { ...reuse, unload_amount: '1.00', token_balance: '1099.00' }
            : { ...reuse, token_balance: '1100.00' };
      await expectRejected(send, body, 422, errorBody(422, 'transaction_id was already used for a different request'));
    });

    it("another account's same transaction_id is its own key", async () => {
      const transactionId = newTransactionId();
      await client.loaded(current(), loaded({ transaction_id: transactionId })).expect(200);
      const others = {
        share_public: OTHER.share_public,
        source_id: OTHER.source_id,
        destination_id: 'X1',
        token_id: TOKENS.others.token_id,
        transaction_id: transactionId,
      };
      await client.unloaded(current(), unloaded({ ...others, unload_amount: '7', token_balance: '63.00' })).expect(200);
      expect(await balanceOf(TOKENS.others.token_id)).toBe(6300);
    });
  });
});
