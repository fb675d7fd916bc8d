import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { parseSecrets } from '../../src/webhooks';
import { describeOnEveryStore, type TestApp } from '../helpers/app';
import { TOKENS } from '../helpers/fixtures';
import { errorBody, SUCCESS_BODY } from '../helpers/http';
import { bookingChange, bookingPath, statusChange, withdrawal } from '../helpers/payloads';
import { readState, readToken } from '../helpers/state';
import { checkCapturedTraffic } from '../helpers/traffic-checks';

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

/** Sends a body signed the way a Standard Webhooks sender signs it, with the same package. */
function signed(t: TestApp, method: 'post' | 'patch', path: string, body: object, signing: Signing = {}) {
  deliveries += 1;
  const id = signing.id ?? `msg_${deliveries}`;
  const timestamp = new Date(Date.now() + (signing.skew ?? 0) * 1000);
  const text = JSON.stringify(body);
  const signature = new Webhook(signing.secret ?? NEW_SECRET).sign(id, timestamp, text);
  const agent = request(t.server);
  return agent[method](path)
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
        await signed(current(), 'post', '/v1/tokens/withdraw', withdrawal()),
        await signed(current(), 'post', '/v1/tokens/status-change', statusChange({ tokes_status: undefined })),
        await signed(current(), 'post', '/v1/events', statusChange({ tokes_status: undefined })),
      ]) {
        expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: SUCCESS_BODY });
      }
      expect((await signed(current(), 'patch', bookingPath(), bookingChange())).status).toBe(200);
      expect((await readToken(current().store, TOKENS.active.token_id))?.balance).toBe(90000);
    });

    it('accepts a signature made with either secret while rotating', async () => {
      expect((await signed(current(), 'post', '/v1/tokens/withdraw', withdrawal(), { secret: OLD_SECRET })).status).toBe(200);
    });

    it.each([
      ['no signature headers', (t: TestApp) => request(t.server).post('/v1/tokens/withdraw').send(withdrawal()), 'Missing webhook signature headers: webhook-id, webhook-timestamp and webhook-signature are required'],
      ['a signature by an unknown secret', (t: TestApp) => signed(t, 'post', '/v1/tokens/withdraw', withdrawal(), { secret: `whsec_${Buffer.from('someone-else-entirely-0123456789').toString('base64')}` }), 'Invalid webhook signature'],
      ['bytes changed after signing', (t: TestApp) => signed(t, 'post', '/v1/tokens/withdraw', withdrawal(), { sentText: `${JSON.stringify(withdrawal())} ` }), 'Invalid webhook signature'],
      ['a timestamp 6 minutes old', (t: TestApp) => signed(t, 'post', '/v1/tokens/withdraw', withdrawal(), { skew: -360 }), 'Webhook timestamp is too old'],
      ['a timestamp 6 minutes ahead', (t: TestApp) => signed(t, 'post', '/v1/tokens/withdraw', withdrawal(), { skew: 360 }), 'Webhook timestamp is too new'],
      [
        'a timestamp that is not a number',
        (t: TestApp) => request(t.server).post('/v1/tokens/withdraw').set('webhook-id', 'msg_x').set('webhook-timestamp', 'yesterday').set('webhook-signature', 'v1,abc').send(withdrawal()),
        'webhook-timestamp must be Unix seconds',
      ],
    ])('answers 401 for %s, and changes nothing', async (_what, send, message) => {
      const before = await readState(current().store);
      const response = await send(current());
      expect({ status: response.status, body: response.body }).toEqual({ status: 401, body: errorBody(401, message) });
      expect(await readState(current().store)).toEqual(before);
    });

    it('accepts a timestamp just inside the tolerance', async () => {
      expect((await signed(current(), 'post', '/v1/tokens/withdraw', withdrawal(), { skew: -280 })).status).toBe(200);
    });

    it('parses the JSON before it checks the signature, as the contract orders them', async () => {
      const unsigned = await request(current().server).post('/v1/tokens/withdraw').set('Content-Type', 'application/json').send('{"broken":');
      expect({ status: unsigned.status, body: unsigned.body }).toEqual({ status: 400, body: errorBody(400, 'Malformed JSON body: it ends at line 1, column 11 before the JSON is complete') });
      const unsignedButValid = await request(current().server).post('/v1/tokens/withdraw').send({});
      expect(unsignedButValid.status).toBe(401);
    });

    it('answers a signed but malformed body 400 when the signature covers it', async () => {
      deliveries += 1;
      const text = '{"broken":';
      const timestamp = new Date();
      const response = await request(current().server)
        .post('/v1/tokens/withdraw')
        .set('Content-Type', 'application/json')
        .set('webhook-id', `msg_broken_${deliveries}`)
        .set('webhook-timestamp', String(Math.floor(timestamp.getTime() / 1000)))
        .set('webhook-signature', new Webhook(NEW_SECRET).sign(`msg_broken_${deliveries}`, timestamp, text))
        .send(text);
      expect({ status: response.status, body: response.body }).toEqual({ status: 400, body: errorBody(400, 'Malformed JSON body: it ends at line 1, column 11 before the JSON is complete') });
    });

    it('answers a repeated webhook-id with the first answer and does not apply it again', async () => {
      const freeze = await signed(current(), 'post', '/v1/tokens/status-change', statusChange({ tokes_status: 'freezed' }), { id: 'msg_freeze' });
      expect(freeze.status).toBe(200);
      await signed(current(), 'post', '/v1/tokens/status-change', statusChange({ tokes_status: 'active' }), { id: 'msg_activate' }).expect(200);
      const again = await signed(current(), 'post', '/v1/tokens/status-change', statusChange({ tokes_status: 'freezed' }), { id: 'msg_freeze' });
      expect({ status: again.status, text: again.text, replayed: again.headers['idempotent-replayed'] }).toEqual({
        status: 200,
        text: freeze.text,
        replayed: 'true',
      });
      expect((await readToken(current().store, TOKENS.active.token_id))?.status).toBe('active');
    });

    it('replays a booking change by webhook-id byte for byte', async () => {
      const first = await signed(current(), 'patch', bookingPath('key-signed-01'), bookingChange(), { id: 'msg_booking' });
      const again = await signed(current(), 'patch', bookingPath('key-signed-01'), bookingChange(), { id: 'msg_booking' });
      expect(again.text).toBe(first.text);
      expect(again.headers['idempotent-replayed']).toBe('true');
    });

    it('does not remember a delivery that failed: the same webhook-id is processed again', async () => {
      const body = statusChange({ token_id: TOKENS.deleted.token_id, tokes_status: 'active' });
      expect((await signed(current(), 'post', '/v1/tokens/status-change', body, { id: 'msg_fails' })).status).toBe(409);
      expect(await current().store.findWebhookDelivery('msg_fails')).toBeUndefined();
      expect((await signed(current(), 'post', '/v1/tokens/status-change', body, { id: 'msg_fails' })).status).toBe(409);
    });
  },
  { config: { webhook: { secrets: parseSecrets(`${OLD_SECRET} ${NEW_SECRET}`), toleranceSeconds: 300 } } },
);

checkCapturedTraffic();
