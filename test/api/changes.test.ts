import type { Response, Test } from 'supertest';
import { Webhook } from 'standardwebhooks';
import { describeOnEveryStore } from '../helpers/app';
import * as client from '../helpers/clients';
import { ACME, BOOKING, OTHER, SIGNER, SIGNER_SECRET, TOKENS } from '../helpers/fixtures';
import * as payloads from '../helpers/payloads';
import { changeView } from '../../src/delivery/change-view';

const AT = '2026-01-02T03:04:05.678Z';
const CHANGE_ID = expect.stringMatching(/^chg_[0-9a-f-]{36}$/);
const { updated_at: _seeded, ...BOOKING_FIELDS } = BOOKING;

/** The active token's view as /admin/tokens shows it, with what a change made of it. */
const activeToken = (changed: Record<string, string> = {}) => ({
  token_id: TOKENS.active.token_id,
  source_id: 'ACME',
  destination_id: 'D1',
  status: 'active',
  balance: '1000.00',
  ...changed,
});
const booking = (changed: Record<string, string>) => ({ ...BOOKING_FIELDS, status: 'active', updated_at: AT, ...changed });
const entry = (transactionId: string, kind: string, amount: string, tokenBalance: string, fee?: string) => ({
  transaction_id: transactionId,
  kind,
  amount,
  ...(fee === undefined ? {} : { fee_amount: fee }),
  token_balance: tokenBalance,
  created_at: AT,
});

/** A change as it is kept, in the contract's shape (section 13.1). */

/** Signed the way a Standard Webhooks sender signs, with SIGNER's own secret. */
function signedBySigner(unsent: ReturnType<typeof client.withdraw>, body: object, id: string) {
  const text = JSON.stringify(body);
  const timestamp = new Date();
  return unsent
    .set('Content-Type', 'application/json')
    .set('webhook-id', id)
    .set('webhook-timestamp', String(Math.floor(timestamp.getTime() / 1000)))
    .set('webhook-signature', new Webhook(SIGNER_SECRET).sign(id, timestamp, text))
    .send(text);
}

describeOnEveryStore('Changes (contract section 13.1)', (current) => {
  const changesOf = async (sourceId = ACME.source_id) => (await current().store.changesAfter(sourceId, 0, 1000)).map(changeView);
  const requestIdOf = (response: Response) => response.headers['x-request-id'] as string;

  const cases: Array<[string, () => Test, (requestId: string) => object]> = [
    [
      'a withdrawal records token.withdrawn with its ledger entry',
      () => client.withdraw(current(), payloads.withdrawal({ transaction_id: '20240121000000000001' })),
      (requestId) => ({
        type: 'token.withdrawn',
        token: activeToken({ balance: '900.00' }),
        ledger_entry: entry('20240121000000000001', 'withdrawal', '100.00', '900.00'),
        request: { operation: 'withdraw', request_id: requestId, transaction_id: '20240121000000000001' },
      }),
    ],
    [
      'a status change records token.status_changed',
      () => client.statusChange(current(), payloads.statusChange()),
      (requestId) => ({
        type: 'token.status_changed',
        token: activeToken({ status: 'freezed' }),
        request: { operation: 'status_change', request_id: requestId },
      }),
    ],
    [
      'an expiry date records token.dates_changed',
      () => client.expiryDate(current(), payloads.expiryDate()),
      (requestId) => ({
        type: 'token.dates_changed',
        token: activeToken({ expiry_date: '31-12-2026' }),
        request: { operation: 'expiry_date', request_id: requestId },
      }),
    ],
    [
      'an available date records token.dates_changed',
      () => client.availableDate(current(), payloads.availableDate({ token_id: TOKENS.notYetAvailable.token_id })),
      (requestId) => ({
        type: 'token.dates_changed',
        token: { ...TOKENS.notYetAvailable, available_date: '01-01-2026' },
        request: { operation: 'available_date', request_id: requestId },
      }),
    ],
    [
      'a Loaded notification records token.loaded with its fee',
      () => client.loaded(current(), payloads.loaded({ transaction_id: '20240121000000000002' })),
      (requestId) => ({
        type: 'token.loaded',
        token: activeToken({ balance: '1100.00' }),
        ledger_entry: entry('20240121000000000002', 'load', '100.00', '1100.00', '2.50'),
        request: { operation: 'loaded', request_id: requestId, transaction_id: '20240121000000000002' },
      }),
    ],
    [
      'an Unloaded notification records token.unloaded',
      () => client.unloaded(current(), payloads.unloaded({ transaction_id: '20240121000000000003' })),
      (requestId) => ({
        type: 'token.unloaded',
        token: activeToken({ balance: '900.00' }),
        ledger_entry: entry('20240121000000000003', 'unload', '100.00', '900.00'),
        request: { operation: 'unloaded', request_id: requestId, transaction_id: '20240121000000000003' },
      }),
    ],
    [
      'a credited load schedule records token.schedule_credited',
      () => client.loadSchedule(current(), payloads.loadSchedule({ transaction_id: '20240121000000000004' })),
      (requestId) => ({
        type: 'token.schedule_credited',
        token: activeToken({ balance: '1250.00' }),
        ledger_entry: entry('20240121000000000004', 'schedule', '250.00', '1250.00'),
        request: { operation: 'load_schedule', request_id: requestId, transaction_id: '20240121000000000004' },
      }),
    ],
    [
      'Modify Token records token.modified under its randomkey',
      () => client.changeToken(current(), payloads.tokenModification(), 'key-modify-1'),
      (requestId) => ({
        type: 'token.modified',
        token: activeToken({ token_name: 'Guest card 7' }),
        request: { operation: 'modify_token', request_id: requestId, randomkey: 'key-modify-1' },
      }),
    ],
    [
      'Create Booking records booking.created',
      () => client.createBooking(current(), payloads.bookingCreation(), 'key-booking-1'),
      (requestId) => ({
        type: 'booking.created',
        booking: booking({ booking_id: 'B-2001' }),
        request: { operation: 'create_booking', request_id: requestId, randomkey: 'key-booking-1' },
      }),
    ],
    [
      'Modify Booking records booking.modified',
      () => client.modifyBooking(current(), payloads.bookingChange(), 'key-booking-2'),
      (requestId) => ({
        type: 'booking.modified',
        booking: booking({ guests_count: '3' }),
        request: { operation: 'modify_booking', request_id: requestId, randomkey: 'key-booking-2' },
      }),
    ],
    [
      'Cancel Booking records booking.cancelled',
      () => client.cancelBooking(current(), payloads.bookingCancellation(), 'key-booking-3'),
      (requestId) => ({
        type: 'booking.cancelled',
        booking: booking({ status: 'cancelled' }),
        request: { operation: 'cancel_booking', request_id: requestId, randomkey: 'key-booking-3' },
      }),
    ],
  ];

  it.each(cases)('%s, as seq 1 of the account, with the exact body', async (_title, send, expected) => {
    const response = await send().expect(200);
    expect(await changesOf()).toEqual([{ id: CHANGE_ID, source_id: 'ACME', seq: 1, created_at: AT, ...expected(requestIdOf(response)) }]);
  });

  it('Create Token records token.created with the token it drew', async () => {
    const response = await client.createToken(current(), payloads.tokenCreation(), 'key-create-1').expect(200);
    const token = (response.body as { token: Record<string, string> }).token;
    expect(await changesOf()).toEqual([
      {
        id: CHANGE_ID,
        source_id: 'ACME',
        seq: 1,
        type: 'token.created',
        created_at: AT,
        token: {
          token_id: token.token_id,
          source_id: 'ACME',
          destination_id: 'D1',
          status: 'active',
          balance: '500.00',
          destination_currency: 'EUR',
          available_date: '01-01-2026',
          expiry_date: '31-12-2026',
        },
        request: { operation: 'create_token', request_id: requestIdOf(response), randomkey: 'key-create-1' },
      },
    ]);
  });

  it.each([
    ['Load Token records token.loaded', payloads.tokenLoad(), 'token.loaded', 'load_token', '1100.00'],
    ['Unload Token records token.unloaded', payloads.tokenUnload(), 'token.unloaded', 'unload_token', '900.00'],
  ])('%s with the row under the id it drew', async (_title, body, type, operation, balance) => {
    const response = await client.changeToken(current(), body, 'key-move-1').expect(200);
    const { transaction_id: transactionId } = (response.body as { transaction: { transaction_id: string } }).transaction;
    expect(await changesOf()).toEqual([
      {
        id: CHANGE_ID,
        source_id: 'ACME',
        seq: 1,
        type,
        created_at: AT,
        token: activeToken({ balance }),
        ledger_entry: entry(transactionId, operation, '100.00', balance),
        request: { operation, request_id: requestIdOf(response), randomkey: 'key-move-1' },
      },
    ]);
  });

  it('a refund records token.refunded, numbered after the withdrawal it refunds', async () => {
    await client.withdraw(current(), payloads.withdrawal({ transaction_id: '20240121000000000005' })).expect(200);
    const response = await client
      .refund(current(), payloads.refund({ transaction_id: '20240121000000000006', token_balance: '940.00' }))
      .expect(200);
    const [withdrawn, refunded] = await changesOf();
    expect(withdrawn).toMatchObject({ seq: 1, type: 'token.withdrawn' });
    expect(refunded).toEqual({
      id: CHANGE_ID,
      source_id: 'ACME',
      seq: 2,
      type: 'token.refunded',
      created_at: AT,
      token: activeToken({ balance: '940.00' }),
      ledger_entry: entry('20240121000000000006', 'refund', '40.00', '940.00'),
      request: { operation: 'refund', request_id: requestIdOf(response), transaction_id: '20240121000000000006' },
    });
  });

  it('a signed delivery names its webhook_id in the change; its redelivery records none', async () => {
    const body = payloads.withdrawal({
      share_public: SIGNER.share_public,
      source_id: SIGNER.source_id,
      destination_id: TOKENS.signers.destination_id,
      token_id: TOKENS.signers.token_id,
      transaction_id: '20240121000000000007',
      withdrawn_amount: '10.00',
      token_balance: '30.00',
    });
    const response = await signedBySigner(client.withdraw(current()), body, 'msg_change_1').expect(200);
    await signedBySigner(client.withdraw(current()), body, 'msg_change_1').expect(200);
    expect((await changesOf(SIGNER.source_id)).map((change) => change.request)).toEqual([
      { operation: 'withdraw', request_id: requestIdOf(response), transaction_id: '20240121000000000007', webhook_id: 'msg_change_1' },
    ]);
  });

  it('the seed records no change', async () => {
    expect(await changesOf(ACME.source_id)).toEqual([]);
    expect(await changesOf(OTHER.source_id)).toEqual([]);
  });

  it('replays, refusals and requests that change nothing record no change', async () => {
    const withdrawal = payloads.withdrawal({ transaction_id: '20240121000000000008' });
    await client.withdraw(current(), withdrawal).expect(200);
    await client.withdraw(current(), withdrawal).expect(200);
    await client.withdraw(current(), payloads.withdrawal({ withdrawn_amount: '5000.00', token_balance: '0.00' })).expect(422);
    await client.withdraw(current(), { ...withdrawal, withdrawn_amount: '1.00', token_balance: '899.00' }).expect(422);
    await client.statusChange(current(), payloads.statusChange({ tokes_status: 'active' })).expect(200);
    await client.expiryDate(current(), payloads.expiryDate({ token_id: TOKENS.dated.token_id, expiry_date: '02-01-2026' })).expect(200);
    await client.createBooking(current(), payloads.bookingCreation(), 'key-booking-9').expect(200);
    await client.createBooking(current(), payloads.bookingCreation(), 'key-booking-9').expect(200);
    await client.cancelBooking(current(), payloads.bookingCancellation({ share_secret: 'sk_wrong' }), 'key-booking-10').expect(401);
    expect((await changesOf()).map(({ seq, type }) => [seq, type])).toEqual([
      [1, 'token.withdrawn'],
      [2, 'booking.created'],
    ]);
  });

  it('concurrent requests, duplicates among them, number the account 1..N once each, and leave other accounts at none', async () => {
    const distinct = Array.from({ length: 10 }, (_, i) => `202401210000000001${String(i).padStart(2, '0')}`);
    const sends = [...distinct, ...distinct.slice(0, 5)].map((transactionId) =>
      client.loaded(
        current(),
        payloads.loaded({ transaction_id: transactionId, load_amount: '1.00', fee_amount: '0.00', token_balance: '1001.00' }),
      ),
    );
    const statuses = (await Promise.all(sends)).map((response) => response.status);
    expect(statuses.every((status) => status === 200 || status === 409)).toBe(true);
    const kept = await changesOf();
    expect(kept.map((change) => change.seq)).toEqual(kept.map((_, i) => i + 1));
    expect(await changesOf(OTHER.source_id)).toEqual([]);
  });

  it('no change holds any key or secret the requests used', async () => {
    await client.withdraw(current(), payloads.withdrawal()).expect(200);
    await client.changeToken(current(), payloads.tokenModification(), 'key-modify-2').expect(200);
    await client.createBooking(current(), payloads.bookingCreation(), 'key-booking-11').expect(200);
    const text = JSON.stringify(await changesOf());
    for (const secret of [ACME.share_public, ACME.share_secret, SIGNER.share_public, SIGNER.share_secret, SIGNER_SECRET]) {
      expect(text).not.toContain(secret);
    }
  });
});
