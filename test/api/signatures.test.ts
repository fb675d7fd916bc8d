import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { parseSecrets } from '../../src/middleware/webhooks';
import { describeOnEveryStore, type TestApp } from '../helpers/app';
import * as client from '../helpers/clients';
import { SIGNER, SIGNER_SECRET, TOKENS } from '../helpers/fixtures';
import { errorBody, SUCCESS_BODY } from '../helpers/http';
import { bookingChange, statusChange, withdrawal } from '../helpers/payloads';
import { readDelivery, readState, readToken } from '../helpers/state';

const OLD_SECRET = `whsec_${Buffer.from('old-signing-secret-0123456789abcd').toString('base64')}`;
const NEW_SECRET = `whsec_${Buffer.from('new-signing-secret-0123456789abcd').toString('base64')}`;

let deliveries = 0;

interface Signing {
  id?: string;
  secret?: string;
  /** Seconds added to now. */
  skew?: number;
  /** Sent instead of the signed text, to tamper with the bytes after signing. */
  sentText?: string;
}

/** Sends a body through an operation's client (`unsent`: the client called without one), signed the way a Standard Webhooks sender signs it, with the same package. */
function signed(unsent: request.Test, body: object, signing: Signing = {}) {
  deliveries += 1;
  const id = signing.id ?? `msg_${deliveries}`;
  const timestamp = new Date(Date.now() + (signing.skew ?? 0) * 1000);
  const text = JSON.stringify(body);
  const signature = new Webhook(signing.secret ?? NEW_SECRET).sign(id, timestamp, text);
  return unsent
    .set('Content-Type', 'application/json')
    .set('webhook-id', id)
    .set('webhook-timestamp', String(Math.floor(timestamp.getTime() / 1000)))
    .set('webhook-signature', signature)
    .send(signing.sentText ?? text);
}

describeOnEveryStore(
  'signed notifications (WEBHOOK_SECRET set)',
  (current) => {
    it('accepts a correctly signed withdrawal, status change, event and booking change', async () => {
      for (const response of [
        await signed(client.withdraw(current()), withdrawal()),
        await signed(client.statusChange(current()), statusChange({ tokes_status: undefined })),
        await signed(client.events(current()), statusChange({ tokes_status: undefined })),
      ]) {
        expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: SUCCESS_BODY });
      }
      expect((await signed(client.modifyBooking(current()), bookingChange())).status).toBe(200);
      expect((await readToken(current().store, TOKENS.active.token_id))?.balance).toBe(90000);
    });

    it('accepts a signature made with either secret while rotating', async () => {
      expect((await signed(client.withdraw(current()), withdrawal(), { secret: OLD_SECRET })).status).toBe(200);
    });

    it.each([
      [
        'no signature headers',
        (t: TestApp) => client.withdraw(t, withdrawal()),
        'Missing webhook signature headers: webhook-id, webhook-timestamp and webhook-signature are required',
      ],
      [
        'a signature by an unknown secret',
        (t: TestApp) =>
          signed(client.withdraw(t), withdrawal(), {
            secret: `whsec_${Buffer.from('someone-else-entirely-0123456789').toString('base64')}`,
          }),
        'Invalid webhook signature',
      ],
      [
        'bytes changed after signing',
        (t: TestApp) => signed(client.withdraw(t), withdrawal(), { sentText: `${JSON.stringify(withdrawal())} ` }),
        'Invalid webhook signature',
      ],
      [
        'a timestamp 6 minutes old',
        (t: TestApp) => signed(client.withdraw(t), withdrawal(), { skew: -360 }),
        'Webhook timestamp is too old',
      ],
      [
        'a timestamp 6 minutes ahead',
        (t: TestApp) => signed(client.withdraw(t), withdrawal(), { skew: 360 }),
        'Webhook timestamp is too new',
      ],
      [
        'a timestamp that is not a number',
        (t: TestApp) =>
          client
            .withdraw(t)
            .set('webhook-id', 'msg_x')
            .set('webhook-timestamp', 'yesterday')
            .set('webhook-signature', 'v1,abc')
            .send(withdrawal()),
        'webhook-timestamp must be Unix seconds',
      ],
    ])('answers 401 for %s, and changes nothing', async (_what, send, message) => {
      const before = await readState(current().store);
      const response = await send(current());
      expect({ status: response.status, body: response.body }).toEqual({ status: 401, body: errorBody(401, message) });
      expect(await readState(current().store)).toEqual(before);
    });

    it('accepts a timestamp just inside the tolerance', async () => {
      expect((await signed(client.withdraw(current()), withdrawal(), { skew: -280 })).status).toBe(200);
    });

    it('parses the JSON before it checks the signature, as the contract orders them', async () => {
      const unsigned = await client.withdraw(current()).set('Content-Type', 'application/json').send('{"broken":');
      expect({ status: unsigned.status, body: unsigned.body }).toEqual({
        status: 400,
        body: errorBody(400, 'Malformed JSON body: it ends at line 1, column 11 before the JSON is complete'),
      });
      const unsignedButValid = await client.withdraw(current(), {});
      expect(unsignedButValid.status).toBe(401);
    });

    it('answers a signed but malformed body 400 when the signature covers it', async () => {
      deliveries += 1;
      const text = '{"broken":';
      const timestamp = new Date();
      const response = await client
        .withdraw(current())
        .set('Content-Type', 'application/json')
        .set('webhook-id', `msg_broken_${deliveries}`)
        .set('webhook-timestamp', String(Math.floor(timestamp.getTime() / 1000)))
        .set('webhook-signature', new Webhook(NEW_SECRET).sign(`msg_broken_${deliveries}`, timestamp, text))
        .send(text);
      expect({ status: response.status, body: response.body }).toEqual({
        status: 400,
        body: errorBody(400, 'Malformed JSON body: it ends at line 1, column 11 before the JSON is complete'),
      });
    });

    it('answers a repeated webhook-id with the first answer and does not apply it again', async () => {
      const freeze = await signed(client.statusChange(current()), statusChange({ tokes_status: 'freezed' }), { id: 'msg_freeze' });
      expect(freeze.status).toBe(200);
      await signed(client.statusChange(current()), statusChange({ tokes_status: 'active' }), { id: 'msg_activate' }).expect(200);
      const again = await signed(client.statusChange(current()), statusChange({ tokes_status: 'freezed' }), { id: 'msg_freeze' });
      expect({ status: again.status, text: again.text, replayed: again.headers['idempotent-replayed'] }).toEqual({
        status: 200,
        text: freeze.text,
        replayed: 'true',
      });
      expect((await readToken(current().store, TOKENS.active.token_id))?.status).toBe('active');
    });

    it('replays a booking change by webhook-id byte for byte', async () => {
      const first = await signed(client.modifyBooking(current(), undefined, 'key-signed-01'), bookingChange(), { id: 'msg_booking' });
      const again = await signed(client.modifyBooking(current(), undefined, 'key-signed-01'), bookingChange(), { id: 'msg_booking' });
      expect(again.text).toBe(first.text);
      expect(again.headers['idempotent-replayed']).toBe('true');
    });

    it('does not remember a delivery that failed: the same webhook-id is processed again', async () => {
      const body = statusChange({ token_id: TOKENS.deleted.token_id, tokes_status: 'active' });
      expect((await signed(client.statusChange(current()), body, { id: 'msg_fails' })).status).toBe(409);
      expect(await readDelivery(current().store, 'msg_fails', 'ACME')).toBeUndefined();
      expect((await signed(client.statusChange(current()), body, { id: 'msg_fails' })).status).toBe(409);
    });
  },
  { config: { webhook: { secrets: parseSecrets(`${OLD_SECRET} ${NEW_SECRET}`) }, signatureToleranceSeconds: 300 } },
);

/** A Status Change of SIGNER's own token, keyless unless a key is given. */
const signersStatusChange = (overrides: object = {}) =>
  statusChange({
    share_public: undefined,
    source_id: SIGNER.source_id,
    destination_id: 'S1',
    token_id: TOKENS.signers.token_id,
    tokes_status: 'disputed',
    ...overrides,
  });

/** A withdrawal of SIGNER's own token. */
const signersWithdrawal = (overrides: object = {}) =>
  withdrawal({
    share_public: SIGNER.share_public,
    source_id: SIGNER.source_id,
    destination_id: 'S1',
    token_id: TOKENS.signers.token_id,
    withdrawn_amount: '10.00',
    token_balance: '30.00',
    ...overrides,
  });

describeOnEveryStore(
  'accounts that sign their own requests (signing_secrets), beside an upstream sender (WEBHOOK_SECRET)',
  (current) => {
    it('must sign every request naming them with their own secret: unsigned, or signed by the upstream sender, is a 401', async () => {
      const before = await readState(current().store);
      const unsigned = await client.withdraw(current(), signersWithdrawal());
      expect({ status: unsigned.status, body: unsigned.body }).toEqual({
        status: 401,
        body: errorBody(401, 'Missing webhook signature headers: webhook-id, webhook-timestamp and webhook-signature are required'),
      });
      const byUpstream = await signed(client.withdraw(current()), signersWithdrawal(), { secret: NEW_SECRET });
      expect({ status: byUpstream.status, body: byUpstream.body }).toEqual({
        status: 401,
        body: errorBody(401, 'Invalid webhook signature'),
      });
      expect(await readState(current().store)).toEqual(before);
      const own = await signed(client.withdraw(current()), signersWithdrawal(), { secret: SIGNER_SECRET });
      expect({ status: own.status, body: own.body }).toEqual({ status: 200, body: SUCCESS_BODY });
    });

    it("an account's own secret signs for it alone: a request naming another account, signed with it, is a 401", async () => {
      const response = await signed(client.withdraw(current()), withdrawal(), { secret: SIGNER_SECRET });
      expect({ status: response.status, body: response.body }).toEqual({ status: 401, body: errorBody(401, 'Invalid webhook signature') });
    });

    it("a Status Change signed with the account's own secret may leave out share_public; signed by the upstream sender it may not", async () => {
      const own = await signed(client.statusChange(current()), signersStatusChange(), { secret: SIGNER_SECRET });
      expect({ status: own.status, body: own.body }).toEqual({ status: 200, body: SUCCESS_BODY });
      expect((await readToken(current().store, TOKENS.signers.token_id))?.status).toBe('disputed');
      const upstream = await signed(client.statusChange(current()), statusChange({ share_public: undefined, tokes_status: 'deleted' }), {
        secret: NEW_SECRET,
      });
      expect({ status: upstream.status, body: upstream.body }).toEqual({ status: 401, body: errorBody(401, 'Unauthorized') });
      expect((await readToken(current().store, TOKENS.active.token_id))?.status).toBe('active');
    });

    it("deliveries are per account: another account's genuine request under a webhook-id already used is applied, not replayed", async () => {
      const first = await signed(client.withdraw(current()), withdrawal(), { id: 'msg_shared', secret: NEW_SECRET });
      expect(first.status).toBe(200);
      const second = await signed(client.withdraw(current()), signersWithdrawal(), { id: 'msg_shared', secret: SIGNER_SECRET });
      expect({ status: second.status, replayed: second.headers['idempotent-replayed'] }).toEqual({ status: 200, replayed: undefined });
      expect((await readToken(current().store, TOKENS.signers.token_id))?.balance).toBe(3000);
      expect((await readToken(current().store, TOKENS.active.token_id))?.balance).toBe(90000);
    });

    it('the same webhook-id with another body is a 422 that applies nothing; with the same body, the first answer again', async () => {
      const body = signersWithdrawal();
      const first = await signed(client.withdraw(current()), body, { id: 'msg_twice', secret: SIGNER_SECRET });
      expect(first.status).toBe(200);
      const again = await signed(client.withdraw(current()), body, { id: 'msg_twice', secret: SIGNER_SECRET });
      expect({ status: again.status, text: again.text, replayed: again.headers['idempotent-replayed'] }).toEqual({
        status: 200,
        text: first.text,
        replayed: 'true',
      });
      const before = await readState(current().store, [String(body.transaction_id)]);
      const other = await signed(client.withdraw(current()), signersWithdrawal({ withdrawn_amount: '5.00', token_balance: '25.00' }), {
        id: 'msg_twice',
        secret: SIGNER_SECRET,
      });
      expect({ status: other.status, body: other.body }).toEqual({
        status: 422,
        body: errorBody(422, 'webhook-id was already used for a different request'),
      });
      expect(await readState(current().store, [String(body.transaction_id)])).toEqual(before);
    });

    it("a repeat is answered only after authentication: a signed body naming no account gets a 400, never another's answer", async () => {
      const first = await signed(client.modifyBooking(current(), undefined, 'key-replayed-1'), bookingChange(), {
        id: 'msg_booking_1',
        secret: NEW_SECRET,
      });
      expect(first.status).toBe(200);
      const probe = await signed(
        client.modifyBooking(current(), undefined, 'key-replayed-1'),
        {},
        { id: 'msg_booking_1', secret: NEW_SECRET },
      );
      expect(probe.status).toBe(400);
      expect(probe.text).not.toContain('"booking"');
      const wrongKey = await signed(
        client.modifyBooking(current(), undefined, 'key-replayed-1'),
        bookingChange({ share_secret: 'sk_guess' }),
        { id: 'msg_booking_1', secret: NEW_SECRET },
      );
      expect({ status: wrongKey.status, body: wrongKey.body }).toEqual({ status: 401, body: errorBody(401, 'Unauthorized') });
    });

    it('a webhook-id over 256 characters is a 401 before anything is looked up or applied', async () => {
      const before = await readState(current().store);
      const response = await signed(client.withdraw(current()), withdrawal(), { id: `msg_${'x'.repeat(6000)}`, secret: NEW_SECRET });
      expect({ status: response.status, body: response.body }).toEqual({
        status: 401,
        body: errorBody(401, 'webhook-id must be 1 to 256 printable ASCII characters'),
      });
      expect(await readState(current().store)).toEqual(before);
    });
  },
  { config: { webhook: { secrets: parseSecrets(NEW_SECRET) }, signatureToleranceSeconds: 300 } },
);
