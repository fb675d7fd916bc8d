import { describeOnEveryStore, FIXED_NOW } from '../helpers/app';
import * as client from '../helpers/clients';
import { OTHER, TOKENS } from '../helpers/fixtures';
import { errorBody, SUCCESS_BODY } from '../helpers/http';
import { expiryDate, loaded, refund, statusChange, withdrawal } from '../helpers/payloads';
import { expectRejection, readLedgerEntry, readToken } from '../helpers/state';

/** Refund (contract 9.10): money withdrawn comes back to the token, never more than was withdrawn less refunded. */
describeOnEveryStore('Refund', (current) => {
  const tokenOf = (tokenId: string = TOKENS.active.token_id) => readToken(current().store, tokenId);

  async function expectRejected(
    body: Record<string, unknown>,
    status: number,
    expectedBody: object,
    send: client.NotificationClient = client.refund,
  ) {
    await expectRejection(current().store, () => send(current(), body), status, expectedBody, {
      transactionIds: [body.transaction_id as string],
    });
  }

  /** The active token (1000.00) less a withdrawal of 100.00: 900.00, of which 100.00 can come back. */
  async function withdrawHundred(): Promise<void> {
    await client.withdraw(current(), withdrawal()).expect(200);
  }

  it('answers 200, adds refund_amount to the balance, files a refund row and lowers what can still be refunded', async () => {
    await withdrawHundred();
    const body = refund({ refund_amount: '40.00', token_balance: '940.00' });
    const response = await client.refund(current(), body);
    expect({ status: response.status, text: response.text, replayed: response.headers['idempotent-replayed'] }).toEqual({
      status: 200,
      text: '{"success":true,"message":"Success"}',
      replayed: undefined,
    });
    expect(await tokenOf()).toEqual({
      tokenId: TOKENS.active.token_id,
      sourceId: 'ACME',
      destinationId: 'D1',
      status: 'active',
      balance: 94000,
      refundable: 6000,
    });
    expect(await readLedgerEntry(current().store, body.transaction_id as string)).toEqual({
      kind: 'refund',
      transactionId: body.transaction_id,
      sourceId: 'ACME',
      destinationId: 'D1',
      tokenId: TOKENS.active.token_id,
      amount: 4000,
      fee: 0,
      tokenBalance: 94000,
      createdAt: FIXED_NOW,
    });
  });

  it('is served on POST /v1/events by its read_event', async () => {
    await withdrawHundred();
    await client.events(current(), refund({ refund_amount: '100', token_balance: '1000' })).expect(200, SUCCESS_BODY);
    expect(await tokenOf()).toMatchObject({ balance: 100000 });
    expect((await tokenOf())?.refundable).toBeUndefined();
  });

  it('422 stating the most when nothing was withdrawn, and nothing changes', async () => {
    await expectRejected(
      refund(),
      422,
      errorBody(422, 'refund_amount 40.00 is more than can be refunded: at most 0.00 (withdrawn from the token less refunded to it)'),
    );
  });

  it('gives back at most what was withdrawn less what was refunded before', async () => {
    await withdrawHundred();
    await client.refund(current(), refund({ refund_amount: '60.00', token_balance: '960.00' })).expect(200);
    await expectRejected(
      refund({ refund_amount: '40.01', token_balance: '1000.01' }),
      422,
      errorBody(422, 'refund_amount 40.01 is more than can be refunded: at most 40.00 (withdrawn from the token less refunded to it)'),
    );
    await client.refund(current(), refund({ refund_amount: '40.00', token_balance: '1000.00' })).expect(200);
    await expectRejected(
      refund({ refund_amount: '0.01', token_balance: '1000.01' }),
      422,
      errorBody(422, 'refund_amount 0.01 is more than can be refunded: at most 0.00 (withdrawn from the token less refunded to it)'),
    );
    // A new withdrawal makes room again.
    await client.withdraw(current(), withdrawal({ withdrawn_amount: '10.00', token_balance: '990.00' })).expect(200);
    await client.refund(current(), refund({ refund_amount: '10.00', token_balance: '1000.00' })).expect(200);
  });

  it('two refunds racing for the last cent: one wins, the other is a 422, and the cent comes back once', async () => {
    await withdrawHundred();
    await client.refund(current(), refund({ refund_amount: '99.99', token_balance: '999.99' })).expect(200);
    const racing = await Promise.all(
      [refund({ refund_amount: '0.01', token_balance: '1000.00' }), refund({ refund_amount: '0.01', token_balance: '1000.00' })].map(
        (body) => client.refund(current(), body),
      ),
    );
    expect(racing.map((response) => response.status).sort()).toEqual([200, 422]);
    expect(await tokenOf()).toMatchObject({ balance: 100000 });
    expect((await tokenOf())?.refundable).toBeUndefined();
  });

  it('refunds a frozen, disputed or expired token', async () => {
    await withdrawHundred();
    await client.statusChange(current(), statusChange({ tokes_status: 'freezed' })).expect(200);
    await client.refund(current(), refund({ refund_amount: '10', token_balance: '910' })).expect(200);
    await client.statusChange(current(), statusChange({ tokes_status: 'disputed' })).expect(200);
    await client.refund(current(), refund({ refund_amount: '10', token_balance: '920' })).expect(200);
    await client.statusChange(current(), statusChange({ tokes_status: 'active' })).expect(200);
    // FIXED_NOW is 02-01-2026: expired the day before.
    await client.expiryDate(current(), expiryDate({ expiry_date: '01-01-2026' })).expect(200);
    await client.refund(current(), refund({ refund_amount: '10', token_balance: '930' })).expect(200);
    expect(await tokenOf()).toMatchObject({ balance: 93000, refundable: 7000 });
  });

  it('409 for a deleted token', async () => {
    await withdrawHundred();
    await client.statusChange(current(), statusChange({ tokes_status: 'deleted' })).expect(200);
    await expectRejected(refund({ token_balance: '940.00' }), 409, errorBody(409, 'Token is deleted; a deleted token cannot be refunded'));
  });

  it('409 when token_balance is not the balance after the refund, stating it', async () => {
    await withdrawHundred();
    await expectRejected(
      refund({ token_balance: '1040.00' }),
      409,
      errorBody(409, 'token_balance 1040.00 does not match the ledger: expected 940.00'),
    );
  });

  it('422 when the balance would pass 9999999999.99', async () => {
    await withdrawHundred();
    await client.loaded(current(), loaded({ load_amount: '9999999099.99', fee_amount: '0', token_balance: '9999999999.99' })).expect(200);
    await expectRejected(
      refund({ refund_amount: '0.01', token_balance: '9999999999.99' }),
      422,
      errorBody(422, 'refund_amount 0.01 would take the token balance 9999999999.99 over 9999999999.99'),
    );
  });

  it('a repeat is a 200 replay that applies nothing; the same transaction_id for a withdrawal, or other fields, is a 422', async () => {
    await withdrawHundred();
    const body = refund({ token_balance: '940.00' });
    await client.refund(current(), body).expect(200);
    const repeat = await client.events(current(), { ...body, refund_amount: '40', token_balance: '940' });
    expect({ status: repeat.status, body: repeat.body, replayed: repeat.headers['idempotent-replayed'] }).toEqual({
      status: 200,
      body: SUCCESS_BODY,
      replayed: 'true',
    });
    expect(await tokenOf()).toMatchObject({ balance: 94000, refundable: 6000 });
    await expectRejected(
      { ...body, refund_amount: '30.00', token_balance: '930.00' },
      422,
      errorBody(422, 'transaction_id was already used for a different request'),
    );
    const withdrawalKey = withdrawal({ withdrawn_amount: '1', token_balance: '939' });
    await client.withdraw(current(), withdrawalKey).expect(200);
    await expectRejected(
      refund({ transaction_id: withdrawalKey.transaction_id, refund_amount: '1', token_balance: '940' }),
      422,
      errorBody(422, 'transaction_id was already used for a different request'),
    );
  });

  it("428 for another account's token, 413 for a destination not the caller's, 400 naming every bad field", async () => {
    await expectRejected(refund({ token_id: TOKENS.others.token_id }), 428, errorBody(428, "Token ID doesn't match"));
    await expectRejected(refund({ destination_id: OTHER.destinations[0] }), 413, errorBody(413, 'Destination ID Unknown'));
    await expectRejected(
      refund({ refund_amount: '0.00', token_balance: 5 }),
      400,
      errorBody(400, 'Invalid fields: refund_amount, token_balance', [
        { field: 'refund_amount', message: 'must be above zero' },
        { field: 'token_balance', message: 'is a JSON number: send it as a string, such as "100.00"' },
      ]),
    );
    await expectRejected(refund({ share_public: 'pk_wrong' }), 401, errorBody(401, 'Unauthorized'));
  });
});
