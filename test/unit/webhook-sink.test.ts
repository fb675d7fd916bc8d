import { Webhook } from 'standardwebhooks';
import { changeView } from '../../src/delivery/change-view';
import type { EndpointConfig } from '../../src/delivery/endpoints';
import { WebhookSink } from '../../src/delivery/webhook-sink';
import { SERVICE_VERSION } from '../../src/process/version';
import type { Change } from '../../src/store/store';
import { waitFor } from '../helpers/wait';
import { WebhookReceiver } from '../helpers/webhook-receiver';

const FIRST_SECRET = `whsec_${Buffer.from('first-endpoint-secret-0123456789').toString('base64')}`;
const SECOND_SECRET = `whsec_${Buffer.from('second-endpoint-secret-012345678').toString('base64')}`;
/** The sinks' clock: whole seconds, so an HTTP date names it exactly; now, so standardwebhooks' window takes it. */
const NOW = new Date(Math.floor(Date.now() / 1000) * 1000);

/** A change as the store keeps it: a withdrawal from a token, or a booking's creation. */
function change(overrides: Partial<Change> = {}): Change {
  return {
    id: 'chg_7a1c6f0e-6d0b-4c43-9d0c-2f8b3c1e5a10',
    sourceId: 'PDR28',
    seq: 42,
    type: 'token.withdrawn',
    createdAt: new Date('2026-11-27T09:59:58.123Z'),
    body: {
      token: { token_id: '2908926013012565', destination_id: 'ID001', status: 'active', balance: '900.00' },
      ledger_entry: { transaction_id: '20240121000000000001', kind: 'withdrawal', amount: '100.00', token_balance: '900.00' },
      request: { operation: 'withdraw', request_id: 'req-1', transaction_id: '20240121000000000001' },
    },
    ...overrides,
  };
}

const bookingChange = (bookingId: string, sourceId = 'PDR28'): Change =>
  change({ sourceId, type: 'booking.created', body: { booking: { source_id: sourceId, booking_id: bookingId }, request: {} } });

describe('a webhook sink (contract section 13.3), against a real endpoint', () => {
  let receiver: WebhookReceiver;
  const sinks: WebhookSink[] = [];
  const sinkFor = (endpoint: Partial<EndpointConfig> = {}, settings = { timeoutMs: 30_000, concurrency: 8 }) => {
    const url = endpoint.url ?? receiver.url();
    const sink = new WebhookSink({ id: 'erp', secrets: [FIRST_SECRET], ...endpoint, url }, settings, () => NOW);
    sinks.push(sink);
    return sink;
  };
  const send = (sink: WebhookSink, sent = change()) => sink.send(sent, new AbortController().signal);

  beforeEach(async () => {
    receiver = await WebhookReceiver.start();
  });
  afterEach(async () => {
    await Promise.all(sinks.splice(0).map((sink) => sink.close()));
    await receiver.stop();
  });

  it('POSTs the change as the feed shows it, signed with each secret, and a re-send carries the same id and bytes', async () => {
    const sink = sinkFor({ secrets: [FIRST_SECRET, SECOND_SECRET] });
    expect(await send(sink)).toEqual({ result: 'delivered', status: 204, durationMs: expect.any(Number) });
    expect(await send(sink)).toMatchObject({ result: 'delivered' });

    const [first, again] = receiver.received;
    expect(first.method).toBe('POST');
    expect(first.path).toBe('/hooks');
    expect(first.body.toString()).toBe(JSON.stringify(changeView(change())));
    expect(first.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': `token-booking-receiver/${SERVICE_VERSION}`,
      'webhook-id': change().id,
      'webhook-timestamp': String(NOW.getTime() / 1000),
    });
    expect((first.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
    const headers = first.headers as Record<string, string>;
    for (const secret of [FIRST_SECRET, SECOND_SECRET])
      expect(new Webhook(secret).verify(first.body, headers)).toEqual(changeView(change()));
    const stranger = `whsec_${Buffer.from('a-secret-the-endpoint-never-had').toString('base64')}`;
    expect(() => new Webhook(stranger).verify(first.body, headers)).toThrow('No matching signature found');

    expect(again.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(again.body.equals(first.body)).toBe(true);
  });

  it("accepts its accounts' and types' changes only, and orders a token's changes and a booking's by their own key", () => {
    const sink = sinkFor({ sourceIds: ['PDR28'], types: ['token.withdrawn', 'booking.created'] });
    expect(
      [change(), change({ sourceId: 'HTL07' }), change({ type: 'token.loaded' }), bookingChange('B1')].map((c) => sink.accepts(c)),
    ).toEqual([true, false, false, true]);
    expect(sinkFor().accepts(change({ sourceId: 'HTL07', type: 'token.loaded' }))).toBe(true);
    const token = change().body.token as object;
    const keys = [
      change(),
      change({ type: 'token.loaded', body: { token, request: {} } }),
      change({ body: { token: { ...token, token_id: '2908926013012572' } } }),
      bookingChange('B1'),
      bookingChange('B1', 'HTL07'),
      bookingChange('B2'),
    ].map((c) => sink.orderKey(c));
    expect(keys[0]).toBe(keys[1]);
    expect(new Set(keys).size).toBe(5);
  });

  it.each([
    [
      'a redirect is not followed: failed, the Location named',
      302,
      { location: '/elsewhere' },
      { result: 'failed', status: 302, error: 'HTTP 302 (redirects are not followed; Location: /elsewhere)' },
    ],
    ['410 disables the endpoint: gone', 410, {}, { result: 'gone', status: 410, error: 'HTTP 410: endpoint removed' }],
    [
      "503 with Retry-After in seconds: failed, with the endpoint's wait",
      503,
      { 'retry-after': '120' },
      { result: 'failed', status: 503, error: 'HTTP 503: endpoint removed', retryAfterMs: 120_000 },
    ],
    [
      '429 with Retry-After as an HTTP date: failed, with the wait until then',
      429,
      { 'retry-after': new Date(NOW.getTime() + 30_000).toUTCString() },
      { result: 'failed', status: 429, error: 'HTTP 429: endpoint removed', retryAfterMs: 30_000 },
    ],
    [
      'a 500 with Retry-After: failed, the Retry-After not read',
      500,
      { 'retry-after': '120' },
      { result: 'failed', status: 500, error: 'HTTP 500: endpoint removed' },
    ],
  ])('%s', async (_title, status, headers, outcome) => {
    receiver.answer = (_request, response) => response.writeHead(status, headers).end(status === 302 ? '' : ' endpoint\n removed ');
    expect(await send(sinkFor())).toEqual({ ...outcome, durationMs: expect.any(Number) });
    expect(receiver.received.map((request) => request.path)).toEqual(['/hooks']);
  });

  it.each([
    [200, { result: 'delivered', status: 200 }],
    [500, { result: 'failed', status: 500, error: `HTTP 500: ${'x'.repeat(200)}` }],
  ])('an endless answer (%i) is read to 4 KB, then its connection dropped, the outcome by its status', async (status, outcome) => {
    receiver.answer = (_request, response) => {
      response.writeHead(status);
      // Endless: 16 KB at a time for as long as the connection is open, so only the sink's 4 KB bound ends it.
      const more = () => {
        while (!response.destroyed) {
          if (!response.write('x'.repeat(16 * 1024))) {
            response.once('drain', more);
            return;
          }
        }
      };
      more();
    };
    // A time limit far past the test's own: settled by the 4 KB read, not by the clock.
    expect(await send(sinkFor({}, { timeoutMs: 600_000, concurrency: 1 }))).toEqual({ ...outcome, durationMs: expect.any(Number) });
    await waitFor(async () => receiver.connectionsClosed === 1);
  });

  it('an endpoint that never answers, or stops in the middle of its answer, is cut at the time limit', async () => {
    receiver.answer = () => undefined;
    expect(await send(sinkFor({}, { timeoutMs: 300, concurrency: 1 }))).toEqual({
      result: 'failed',
      error: 'no answer within 300 ms',
      durationMs: expect.any(Number),
    });
    receiver.answer = (_request, response) => response.writeHead(503, { 'retry-after': '60' }).write('overloa');
    expect(await send(sinkFor({}, { timeoutMs: 300, concurrency: 1 }))).toEqual({
      result: 'failed',
      status: 503,
      error: 'HTTP 503: overloa',
      retryAfterMs: 60_000,
      durationMs: expect.any(Number),
    });
    await waitFor(async () => receiver.connectionsClosed === 2);
  });

  it('a refused connection fails with a short error; an aborted attempt fails at once', async () => {
    const gone = receiver.url();
    await receiver.stop();
    const refused = await send(sinkFor({ url: gone }));
    expect(refused).toEqual({
      result: 'failed',
      error: expect.stringMatching(/^connect ECONNREFUSED 127\.0\.0\.1:\d+$/),
      durationMs: expect.any(Number),
    });

    receiver = await WebhookReceiver.start();
    receiver.answer = () => undefined;
    const aborting = new AbortController();
    const attempt = sinkFor().send(change(), aborting.signal);
    await waitFor(async () => receiver.received.length === 1);
    aborting.abort();
    expect(await attempt).toEqual({
      result: 'failed',
      error: 'aborted: the instance stops or no longer holds the endpoint',
      durationMs: expect.any(Number),
    });
  });

  it('holds at most `concurrency` connections to the endpoint, and keeps them alive between attempts', async () => {
    receiver.answer = (_request, response) => setImmediate(() => response.writeHead(200).end('ok'));
    const sink = sinkFor({}, { timeoutMs: 30_000, concurrency: 2 });
    const outcomes = await Promise.all(Array.from({ length: 6 }, (_, i) => send(sink, change({ id: `chg_${i}` }))));
    expect(outcomes.map((outcome) => outcome.result)).toEqual(Array(6).fill('delivered'));
    expect(receiver.maxInFlight).toBeLessThanOrEqual(2);
    expect(receiver.connectionsOpened).toBeLessThanOrEqual(2);
  });
});
