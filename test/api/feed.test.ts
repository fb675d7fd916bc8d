import type { AddressInfo } from 'node:net';
import request, { type Response } from 'supertest';
import { changeView } from '../../src/delivery/change-view';
import { MemoryStore } from '../../src/store/memory-store';
import { buildTestApp, describeOnEveryStore, memoryStoreKind, type TestApp } from '../helpers/app';
import * as client from '../helpers/clients';
import { ACME, fixtureSeed, OTHER, TOKENS } from '../helpers/fixtures';
import * as payloads from '../helpers/payloads';
import { waitFor } from '../helpers/wait';

const AT = '2026-01-02T03:04:05.678Z';
const CHANGE_ID = expect.stringMatching(/^chg_[0-9a-f-]{36}$/);
const UNAUTHORIZED = { success: 'false', errors: { code: '401', message: 'Unauthorized' } };
const EMPTY_PAGE = (after: number) => ({ changes: [], next_after: after, has_more: false });

/** Withdrawals of 100.00 from the active token, one after the other: the n-th states 1000.00 - n x 100.00. */
async function withdrawals(app: TestApp, count: number, first = 1): Promise<Response[]> {
  const answers: Response[] = [];
  for (let n = first; n < first + count; n += 1) {
    const balance = `${1000 - n * 100}.00`;
    answers.push(
      await client
        .withdraw(app, payloads.withdrawal({ transaction_id: `2024012100000000${String(n).padStart(4, '0')}`, token_balance: balance }))
        .expect(200),
    );
  }
  return answers;
}

const ADMIN_TOKEN = 'admin-feed-token-0123456789';

describeOnEveryStore(
  'The feed (contract section 13.2)',
  (current) => {
    const keptViews = async (after: number, limit: number) =>
      (await current().store.changesAfter(ACME.source_id, after, limit)).map(changeView);

    it("answers the account's own changes after `after`, oldest first, at most `limit`, with next_after and has_more", async () => {
      const [first, second] = await withdrawals(current(), 2);
      await client.createBooking(current(), payloads.bookingCreation(), 'key-feed-0001').expect(200);
      await client.statusChange(current(), payloads.otherAccountStatusChange()).expect(200);
      const withdrawn = (seq: number, response: Response, balance: string) => ({
        id: CHANGE_ID,
        source_id: 'ACME',
        seq,
        type: 'token.withdrawn',
        created_at: AT,
        token: { token_id: TOKENS.active.token_id, source_id: 'ACME', destination_id: 'D1', status: 'active', balance },
        ledger_entry: {
          transaction_id: `2024012100000000000${seq}`,
          kind: 'withdrawal',
          amount: '100.00',
          token_balance: balance,
          created_at: AT,
        },
        request: { operation: 'withdraw', request_id: response.headers['x-request-id'], transaction_id: `2024012100000000000${seq}` },
      });
      const page = await client.changes(current(), { limit: '2' }).expect(200);
      expect(page.body).toEqual({
        changes: [withdrawn(1, first, '900.00'), withdrawn(2, second, '800.00')],
        next_after: 2,
        has_more: true,
      });
      expect(page.body.changes).toEqual(await keptViews(0, 2));
      // In the order the views write them, on every store: a change is handed on as it was made.
      const [change] = page.body.changes as Array<Record<string, Record<string, unknown>>>;
      expect([Object.keys(change), Object.keys(change.token), Object.keys(change.ledger_entry), Object.keys(change.request)]).toEqual([
        ['id', 'source_id', 'seq', 'type', 'created_at', 'token', 'ledger_entry', 'request'],
        ['token_id', 'source_id', 'destination_id', 'status', 'balance'],
        ['transaction_id', 'kind', 'amount', 'token_balance', 'created_at'],
        ['operation', 'request_id', 'transaction_id'],
      ]);
      expect((await client.changes(current(), { after: '2' }).expect(200)).body).toEqual({
        changes: await keptViews(2, 1),
        next_after: 3,
        has_more: false,
      });
      expect((await client.changes(current(), { after: '3' }).expect(200)).body).toEqual(EMPTY_PAGE(3));
      // The other account's change is its own, at its own seq 1.
      const others = await client.changes(current(), {}, OTHER.source_id, OTHER.share_secret).expect(200);
      expect(others.body.changes.map((change: { seq: number; type: string }) => [change.seq, change.type])).toEqual([
        [1, 'token.status_changed'],
      ]);
    });

    it('with types, has_more is true only when a matching change follows the page', async () => {
      await withdrawals(current(), 1);
      await client.createBooking(current(), payloads.bookingCreation(), 'key-feed-0002').expect(200);
      await withdrawals(current(), 1, 2);
      const page = async (query: Record<string, string>) => {
        const { changes, next_after: nextAfter, has_more: hasMore } = (await client.changes(current(), query).expect(200)).body;
        return { seqs: changes.map((change: { seq: number }) => change.seq), nextAfter, hasMore };
      };
      expect(await page({ types: 'booking.created', limit: '1' })).toEqual({ seqs: [2], nextAfter: 2, hasMore: false });
      expect(await page({ types: 'token.withdrawn', limit: '1' })).toEqual({ seqs: [1], nextAfter: 1, hasMore: true });
      expect(await page({ types: 'token.withdrawn', after: '1', limit: '1' })).toEqual({ seqs: [3], nextAfter: 3, hasMore: false });
      expect(await page({ types: 'token.withdrawn,booking.created', limit: '2' })).toEqual({ seqs: [1, 2], nextAfter: 2, hasMore: true });
      expect(await page({ types: 'booking.cancelled' })).toEqual({ seqs: [], nextAfter: 0, hasMore: false });
    });

    it("/admin/changes shows any account's feed with the same parameters; source_id is required", async () => {
      await withdrawals(current(), 2);
      const asAdmin = (query: string) =>
        request(current().server).get(`/admin/changes${query}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`);
      expect((await asAdmin('?source_id=ACME&after=1').expect(200)).body).toEqual({
        changes: await keptViews(1, 1),
        next_after: 2,
        has_more: false,
      });
      expect((await asAdmin('?after=1').expect(400)).body.errors.details).toEqual([{ field: 'source_id', message: 'is required' }]);
      expect((await asAdmin('?source_id=ACME&after=9').expect(409)).body.errors.message).toMatch(/^Cursor ahead: after=9/);
    });
  },
  { config: { adminToken: ADMIN_TOKEN } },
);

describe('The feed refuses, on the memory store', () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await buildTestApp();
  });
  afterEach(async () => {
    await app.store.close();
  });

  it.each<[string, Record<string, string> | string, Array<{ field: string; message: string }>]>([
    ['a negative after', { after: '-1' }, [{ field: 'after', message: 'must be a whole number, 0 or more' }]],
    ['a fractional after', { after: '1.5' }, [{ field: 'after', message: 'must be a whole number, 0 or more' }]],
    ['a limit of 0', { limit: '0' }, [{ field: 'limit', message: 'must be a whole number from 1 to 1000' }]],
    ['a limit over 1000', { limit: '1001' }, [{ field: 'limit', message: 'must be a whole number from 1 to 1000' }]],
    ['a wait over 30', { wait: '31' }, [{ field: 'wait', message: 'must be a whole number of seconds from 0 to 30' }]],
    ['a wait that is no number', { wait: 'soon' }, [{ field: 'wait', message: 'must be a whole number of seconds from 0 to 30' }]],
    [
      'an unknown type among known ones',
      { types: 'token.withdrawn,token.withdrew' },
      [
        {
          field: 'types',
          message:
            '"token.withdrew" is not a change type: the types are token.created, token.modified, token.status_changed, token.dates_changed, token.withdrawn, token.loaded, token.unloaded, token.refunded, token.schedule_credited, booking.created, booking.modified, booking.cancelled',
        },
      ],
    ],
    [
      'a parameter it does not take',
      { cursor: '3' },
      [{ field: 'cursor', message: 'is not a parameter of this route; it takes after, limit, types, wait' }],
    ],
    ['a parameter given twice', 'after=1&after=2', [{ field: 'after', message: 'must be given once' }]],
    [
      'every bad one at once',
      { limit: '0', wait: '31' },
      [
        { field: 'limit', message: 'must be a whole number from 1 to 1000' },
        { field: 'wait', message: 'must be a whole number of seconds from 0 to 30' },
      ],
    ],
  ])('%s is a 400 naming it, before the secret is looked at', async (_title, query, details) => {
    const answer = await client.changes(app, query, ACME.source_id, 'sk_wrong').expect(400);
    const fields = details.map((detail) => detail.field);
    expect(answer.body).toEqual({
      success: 'false',
      errors: { code: '400', message: `Invalid ${fields.length === 1 ? 'field' : 'fields'}: ${fields.join(', ')}`, details },
    });
  });

  it.each<[string, string, string | null, string | undefined]>([
    ['a wrong secret', ACME.source_id, 'sk_wrong', undefined],
    ['no Authorization header', ACME.source_id, null, undefined],
    ['another scheme', ACME.source_id, null, `Basic ${Buffer.from(`ACME:${ACME.share_secret}`).toString('base64')}`],
    ['the public key', ACME.source_id, ACME.share_public, undefined],
    ["another account's secret", ACME.source_id, OTHER.share_secret, undefined],
    ['an unknown account', 'NOBODY', ACME.share_secret, undefined],
  ])('%s is the 401 every failed authentication gets, with the bearer challenge', async (_title, sourceId, secret, authorization) => {
    const sent = client.changes(app, {}, sourceId, secret);
    const answer = await (authorization === undefined ? sent : sent.set('Authorization', authorization)).expect(401);
    expect(answer.body).toEqual(UNAUTHORIZED);
    expect(answer.headers['www-authenticate']).toBe('Bearer realm="changes"');
  });

  it('a disabled account (gone from the seed) is a 401 with its own secret', async () => {
    await client.changes(app, {}, OTHER.source_id, OTHER.share_secret).expect(200);
    const seed = fixtureSeed();
    await app.store.loadSeed({ ...seed, accounts: seed.accounts.filter((account) => account.sourceId !== OTHER.source_id) });
    expect((await client.changes(app, {}, OTHER.source_id, OTHER.share_secret).expect(401)).body).toEqual(UNAUTHORIZED);
  });

  it("401s count against the client address; the account's own requests against its rate limit", async () => {
    const limited = await buildTestApp(memoryStoreKind, { config: { rateLimitPerAddressPerMinute: 2, rateLimitPerMinute: 2 } });
    await client.changes(limited, {}).expect(200);
    await client.changes(limited, {}).expect(200);
    const overAccount = await client.changes(limited, {}).expect(429);
    expect(overAccount.headers.ratelimit).toMatch(/^"2-in-1min"; r=0; t=\d+$/);
    // The account's 429 was not a failure of the address: two 401s are its limit, and the third request is refused whatever it carries.
    await client.changes(limited, {}, ACME.source_id, 'sk_wrong').expect(401);
    await client.changes(limited, {}, ACME.source_id, 'sk_wrong').expect(401);
    const overAddress = await client.changes(limited, {}, OTHER.source_id, OTHER.share_secret).expect(429);
    expect(overAddress.headers['retry-after']).toMatch(/^\d+$/);
    await limited.store.close();
  });

  it("a cursor whose next changes the memory store dropped for MEMORY_CHANGES_PER_ACCOUNT is a 410 naming the oldest kept; one past the account's last change a 409", async () => {
    const store = new MemoryStore({ changesPerAccount: 2 });
    await store.loadSeed(fixtureSeed());
    const bounded = await buildTestApp(memoryStoreKind, { store });
    await withdrawals(bounded, 4);
    const expired = {
      success: 'false',
      errors: {
        code: '410',
        message: 'Cursor expired: the changes after seq 1 are no longer kept; the oldest seq still kept is 3 (read on with after=2)',
      },
    };
    expect((await client.changes(bounded, { after: '1' }).expect(410)).body).toEqual(expired);
    await client.changes(bounded, { after: '0', types: 'booking.created' }).expect(410);
    const kept = await client.changes(bounded, { after: '2' }).expect(200);
    expect(kept.body.changes.map((change: { seq: number }) => change.seq)).toEqual([3, 4]);
    expect((await client.changes(bounded, { after: '4' }).expect(200)).body).toEqual(EMPTY_PAGE(4));
    expect((await client.changes(bounded, { after: '5' }).expect(409)).body.errors.message).toBe(
      "Cursor ahead: after=5 is past the account's last change, seq 4; its changes were reset (a memory store restarted, or a database restored): read again from after=0",
    );
    // An account that has recorded nothing: its feed is empty, not expired.
    expect((await client.changes(bounded, {}, OTHER.source_id, OTHER.share_secret).expect(200)).body).toEqual(EMPTY_PAGE(0));
    await store.close();
  });
});

/** A feed request on a listening server, by fetch: it can be aborted as a client that goes away. */
async function feedFetch(
  base: string,
  query: string,
  signal?: AbortSignal,
): Promise<{ status: number; body: unknown; retryAfter: string | null }> {
  const answer = await fetch(`${base}/v1/accounts/ACME/changes?${query}`, {
    headers: { Authorization: `Bearer ${ACME.share_secret}` },
    signal,
  });
  return { status: answer.status, body: await answer.json(), retryAfter: answer.headers.get('retry-after') };
}

describe('The feed waits, on the memory store', () => {
  let app: TestApp;
  let base: string;
  let reads: number;
  let drain: AbortController;
  beforeEach(async () => {
    drain = new AbortController();
    app = await buildTestApp(memoryStoreKind, { drainStarted: drain.signal });
    // Every read the feed makes, counted once it answered: a waiting request has made its first.
    const read = app.store.readChanges.bind(app.store);
    reads = 0;
    app.store.readChanges = async (...args) => {
      const result = await read(...args);
      reads += 1;
      return result;
    };
    await new Promise<void>((resolve) => app.server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    app.server.closeAllConnections();
    await new Promise((resolve) => app.server.close(resolve));
    await app.store.close();
  });

  it('answers the next matching change as it commits, woken by it; a change of another type wakes it but is not answered', async () => {
    const waiting = feedFetch(base, 'types=booking.created&wait=30');
    await waitFor(async () => reads >= 1);
    await withdrawals(app, 1);
    await waitFor(async () => reads >= 2);
    const booked = await client.createBooking(app, payloads.bookingCreation(), 'key-feed-0003').expect(200);
    const committed = performance.now();
    const answer = await waiting;
    process.stdout.write(`memory store: a waiting feed answered ${(performance.now() - committed).toFixed(1)} ms after the change's 200\n`);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ changes: [changeView((await app.store.changesAfter('ACME', 1, 1))[0])], next_after: 2, has_more: false });
    expect((answer.body as { changes: Array<{ request: { request_id: string } }> }).changes[0].request.request_id).toBe(
      booked.headers['x-request-id'],
    );
    expect(reads).toBe(3);
  });

  it('with nothing to answer, the page is empty once wait has passed', async () => {
    expect(await feedFetch(base, 'after=0&wait=1')).toEqual({ status: 200, body: EMPTY_PAGE(0), retryAfter: null });
  });

  it('the 5th waiting request of an account is a 429 with Retry-After; a client that goes frees its slot at once; the drain ends the waits with empty pages', async () => {
    const goneClient = new AbortController();
    const first = feedFetch(base, 'wait=30', goneClient.signal).catch((error: Error) => error.name);
    const others = Array.from({ length: 3 }, () => feedFetch(base, 'wait=30'));
    await waitFor(async () => reads >= 4);
    const fifth = await feedFetch(base, 'wait=30');
    expect(fifth).toEqual({
      status: 429,
      body: {
        success: 'false',
        errors: {
          code: '429',
          message:
            'Too Many Requests: 4 feed requests of this account already wait for changes on this instance, the most MAX_WAITING_FEEDS_PER_ACCOUNT allows',
        },
      },
      retryAfter: expect.stringMatching(/^([1-9]|[12]\d|30)$/),
    });
    // Answered at once: no more than the four waits began.
    expect(reads).toBe(5);
    goneClient.abort();
    expect(await first).toBe('AbortError');
    // Its slot is free once the service sees the connection close: a request that waits its second, not a 429.
    await waitFor(async () => (await feedFetch(base, 'wait=1')).status === 200);
    const before = reads;
    const replacing = feedFetch(base, 'wait=30');
    await waitFor(async () => reads > before);
    drain.abort();
    for (const answer of await Promise.all([...others, replacing]))
      expect(answer).toEqual({ status: 200, body: EMPTY_PAGE(0), retryAfter: null });
  });
});
