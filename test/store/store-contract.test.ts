import fc from 'fast-check';
import { BOOKING_FIELDS, type BookingFields } from '../../src/domain/bookings';
import type { LedgerEntry } from '../../src/domain/ledger';
import type { TokenStatus } from '../../src/domain/tokens';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/process/logger';
import { MemoryStore } from '../../src/store/memory-store';
import type { NewChange, Store } from '../../src/store/store';
import type { Token } from '../../src/domain/tokens';
import { storeKinds, type StoreKind } from '../helpers/app';
import { openEmptyPgStore, TEST_DATABASE_URL } from '../helpers/postgres';
import { fixtureSeed, TOKENS } from '../helpers/fixtures';
import { readDelivery, readLedgerEntry } from '../helpers/state';
import { PROPERTY_TEST_TIMEOUT_MS, withinBudget } from '../helpers/property';
import { waitFor } from '../helpers/wait';
import { HAS_PGBOUNCER, pooledStoreKind, startPooler, warnIfNoPgBouncer, type Pooler } from '../helpers/pgbouncer';

const ledgerRow = (transactionId: string, overrides: Partial<LedgerEntry> = {}): LedgerEntry => ({
  kind: 'withdrawal',
  transactionId,
  sourceId: 'ACME',
  destinationId: 'D1',
  tokenId: TOKENS.active.token_id,
  amount: 100,
  fee: 0,
  tokenBalance: 99900,
  createdAt: new Date('2026-01-01T00:00:00.000Z'),
  ...overrides,
});

// Contract section 12: the PostgreSQL store through PgBouncer in transaction mode passes the same contract.
warnIfNoPgBouncer();
let pooler: Pooler | undefined;
beforeAll(async () => {
  if (HAS_PGBOUNCER) pooler = await startPooler('contract_pooled');
});
afterAll(async () => {
  await pooler?.stop();
});
// Issue 29: units run alone (group commit off, the fallback path) keep the same contract, until that path is one.
const unitsAlone: StoreKind = { name: 'postgres, units alone', create: () => openEmptyPgStore({ groupCommit: false }) };
const kinds = [
  ...storeKinds(),
  ...(TEST_DATABASE_URL ? [unitsAlone] : []),
  ...(HAS_PGBOUNCER ? [pooledStoreKind(() => pooler as Pooler)] : []),
];

describe.each(kinds.map((kind) => [kind.name, kind] as const))('Store contract: %s', (_name, kind) => {
  let store: Store;
  beforeEach(async () => {
    store = await kind.create();
    await store.loadSeed(fixtureSeed());
  });
  afterEach(async () => {
    await store.close();
  });

  const balance = async () => (await store.transaction((tx) => tx.tokenForUpdate('ACME', TOKENS.active.token_id)))?.balance;

  it('finds seeded accounts with their destinations and key hashes', async () => {
    const account = await store.findAccount('ACME');
    expect(account?.destinations).toEqual(new Set(['D1', 'D2']));
    expect(account?.publicKeyHash).toHaveLength(32);
    expect(await store.findAccount('acme')).toBeUndefined();
  });

  it('commits every write of a unit together', async () => {
    await store.transaction(async (tx) => {
      const token = await tx.tokenForUpdate('ACME', TOKENS.active.token_id);
      await tx.saveToken({ ...token!, balance: 99900 });
      await tx.recordLedgerEntry(ledgerRow('00000000000000000001'));
    });
    expect(await balance()).toBe(99900);
    expect(await readLedgerEntry(store, '00000000000000000001', 'ACME')).toEqual(ledgerRow('00000000000000000001'));
  });

  it('applies nothing of a unit that throws', async () => {
    await expect(
      store.transaction(async (tx) => {
        const token = await tx.tokenForUpdate('ACME', TOKENS.active.token_id);
        await tx.saveToken({ ...token!, balance: 1 });
        await tx.recordLedgerEntry(ledgerRow('00000000000000000002'));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await balance()).toBe(100000);
    expect(await readLedgerEntry(store, '00000000000000000002', 'ACME')).toBeUndefined();
  });

  it('a unit that saves the same token twice keeps the last', async () => {
    await store.transaction(async (tx) => {
      const token = await tx.tokenForUpdate('ACME', TOKENS.active.token_id);
      await tx.saveToken({ ...token!, balance: 1 });
      await tx.saveToken({ ...token!, balance: 2, status: 'freezed' });
    });
    expect(await store.findToken(TOKENS.active.token_id)).toMatchObject({ balance: 2, status: 'freezed' });
  });

  it('refuses a token status it cannot hold, and applies nothing of that unit', async () => {
    await expect(
      store.transaction(async (tx) => {
        const token = await tx.tokenForUpdate('ACME', TOKENS.active.token_id);
        await tx.recordLedgerEntry(ledgerRow('00000000000000000004'));
        await tx.saveToken({ ...token!, balance: 1, status: 'closed' as TokenStatus });
      }),
    ).rejects.toThrow();
    expect(await store.findToken(TOKENS.active.token_id)).toMatchObject({ balance: 100000, status: 'active' });
    expect(await readLedgerEntry(store, '00000000000000000004', 'ACME')).toBeUndefined();
  });

  it.each([
    ['a transaction id the ledger cannot hold', ledgerRow('123')],
    ['a token the store does not hold', ledgerRow('00000000000000000005', { tokenId: '999' })],
  ])('a unit that fails at commit leaves nothing applied: %s', async (_case, row) => {
    await expect(
      store.transaction(async (tx) => {
        const token = await tx.tokenForUpdate('ACME', TOKENS.active.token_id);
        await tx.saveToken({ ...token!, balance: 99900 });
        await tx.recordLedgerEntry(row);
      }),
    ).rejects.toThrow();
    expect(await store.findToken(TOKENS.active.token_id)).toMatchObject({ balance: 100000, status: 'active' });
    expect(await store.recentLedgerEntries(TOKENS.active.token_id, 5)).toEqual([]);
    expect(await readLedgerEntry(store, row.transactionId, row.sourceId)).toBeUndefined();
  });

  it(
    'gives back awkward strings unchanged: quotes, backslashes, dollars, semicolons, any Unicode, very long',
    async () => {
      const booking = (await store.transaction((tx) => tx.bookingForUpdate('ACME', '1396')))!;
      let run = 0;
      const roundTrip = async (text: string, other: string) => {
        run += 1;
        const fields = Object.fromEntries(BOOKING_FIELDS.map((field, i) => [field, i % 2 === 0 ? text : other])) as BookingFields;
        const changed = { ...booking, fields };
        const key = `key-${run}-${text}`;
        await store.transaction(async (tx) => {
          await tx.saveBooking(changed);
          await tx.recordKeyedRequest({ sourceId: 'ACME', key, fingerprint: other, response: text, createdAt: booking.updatedAt });
        });
        expect((await store.findBooking('ACME', '1396'))?.fields).toEqual(fields);
        expect(await store.transaction((tx) => tx.findKeyedRequest('ACME', key))).toMatchObject({
          key,
          fingerprint: other,
          response: text,
        });
        const webhookId = `msg-${run}`;
        await store.transaction((tx) =>
          tx.recordDelivery({
            sourceId: other,
            webhookId,
            bodyDigest: Buffer.alloc(32, run),
            response: text,
            receivedAt: booking.updatedAt,
          }),
        );
        expect((await readDelivery(store, webhookId, other))?.response).toBe(text);
      };
      // NUL is left out: PostgreSQL cannot store it, and the API refuses it with a 400 before the store.
      const awkward = fc
        .oneof(
          fc.string({ unit: fc.constantFrom("'", "''", '\\', '"', '$', '$$', ';', '--', '\n', 'E', '\u00e9', '\ud83d\ude00') }),
          fc.string({ unit: 'grapheme' }),
          fc.string({ unit: 'binary' }),
        )
        .map((text) => text.replaceAll('\u0000', ''));
      await fc.assert(fc.asyncProperty(awkward, awkward, roundTrip), withinBudget(100));
      await roundTrip("'\\".repeat(30_000), '\ud83d\ude00$$'.repeat(20_000));
    },
    PROPERTY_TEST_TIMEOUT_MS,
  );

  it('keys ledger rows by account: the same transaction id of another account is another row', async () => {
    const id = '00000000000000000005';
    await store.transaction((tx) => tx.recordLedgerEntry(ledgerRow(id)));
    expect(await readLedgerEntry(store, id, 'OTHER')).toBeUndefined();
    const others = { ...ledgerRow(id), sourceId: 'OTHER', destinationId: 'X1', tokenId: TOKENS.others.token_id, amount: 7 };
    await store.transaction((tx) => tx.recordLedgerEntry(others));
    expect((await readLedgerEntry(store, id, 'ACME'))?.amount).toBe(100);
    expect(await readLedgerEntry(store, id, 'OTHER')).toEqual(others);
  });

  it('refuses a second ledger row with the same transaction id', async () => {
    await store.transaction((tx) => tx.recordLedgerEntry(ledgerRow('00000000000000000003')));
    await expect(store.transaction((tx) => tx.recordLedgerEntry(ledgerRow('00000000000000000003', { amount: 5 })))).rejects.toThrow();
    expect((await readLedgerEntry(store, '00000000000000000003', 'ACME'))?.amount).toBe(100);
  });

  it('runs concurrent read-modify-write units on one token one after the other (no lost update)', async () => {
    await Promise.all(
      Array.from({ length: 20 }, () =>
        store.transaction(async (tx) => {
          const token = await tx.tokenForUpdate('ACME', TOKENS.active.token_id);
          await new Promise((resolve) => setImmediate(resolve));
          await tx.saveToken({ ...token!, balance: token!.balance - 10 });
        }),
      ),
    );
    expect(await balance()).toBe(100000 - 200);
  });

  it('loading the seed again inserts nothing twice and overwrites nothing operations changed', async () => {
    await store.transaction(async (tx) => {
      const token = await tx.tokenForUpdate('ACME', TOKENS.active.token_id);
      await tx.saveToken({ ...token!, balance: 12345, status: 'freezed' });
    });
    await store.loadSeed(fixtureSeed());
    expect(await store.transaction((tx) => tx.tokenForUpdate('ACME', TOKENS.active.token_id))).toMatchObject({
      balance: 12345,
      status: 'freezed',
    });
  });

  it('returns copies: changing a value read does not change the store', async () => {
    const token = await store.transaction((tx) => tx.tokenForUpdate('ACME', TOKENS.active.token_id));
    token!.balance = 1;
    expect(await balance()).toBe(100000);
  });

  it('keeps request keys for at least 24 hours, per account; a second record of one key is refused', async () => {
    const at = (iso: string) => new Date(iso);
    const record = (key: string, createdAt: Date, sourceId = 'ACME') =>
      store.transaction((tx) => tx.recordKeyedRequest({ sourceId, key, fingerprint: key, response: `{"key":"${key}"}`, createdAt }));
    await record('key-first-0001', at('2026-01-01T00:00:00.000Z'));
    await record('key-later-0002', at('2026-01-01T23:59:59.000Z'));
    await record('key-first-0001', at('2026-01-01T23:59:59.000Z'), 'OTHER');
    await expect(record('key-first-0001', at('2026-01-01T23:59:59.000Z'))).rejects.toThrow();
    expect(await store.transaction((tx) => tx.findKeyedRequest('ACME', 'key-first-0001'))).toEqual({
      sourceId: 'ACME',
      key: 'key-first-0001',
      fingerprint: 'key-first-0001',
      response: '{"key":"key-first-0001"}',
      createdAt: at('2026-01-01T00:00:00.000Z'),
    });
  });

  it('records every kind of ledger row with its fee, in one key space per account', async () => {
    const load = ledgerRow('00000000000000000011', { kind: 'load', amount: 500, fee: 25, tokenBalance: 100500 });
    const credited = ledgerRow('00000000000000000012', { kind: 'schedule', amount: 0, tokenBalance: 100500 });
    const unload = ledgerRow('00000000000000000013', { kind: 'unload', amount: 500, tokenBalance: 100000 });
    const refund = ledgerRow('00000000000000000014', { kind: 'refund', amount: 300, tokenBalance: 100300 });
    for (const row of [load, credited, unload, refund]) await store.transaction((tx) => tx.recordLedgerEntry(row));
    expect(await readLedgerEntry(store, load.transactionId, 'ACME')).toEqual(load);
    expect(await readLedgerEntry(store, refund.transactionId, 'ACME')).toEqual(refund);
    expect((await store.recentLedgerEntries(TOKENS.active.token_id, 5)).map((row) => row.kind)).toEqual([
      'refund',
      'unload',
      'schedule',
      'load',
    ]);
    await expect(
      store.transaction((tx) => tx.recordLedgerEntry({ ...ledgerRow(load.transactionId), kind: 'withdrawal' })),
    ).rejects.toThrow();
    expect(await readLedgerEntry(store, load.transactionId, 'ACME')).toEqual(load);
  });

  it('creates tokens and bookings it does not hold, with their details; creating one it holds fails the unit', async () => {
    const created = {
      tokenId: '4000000000000001',
      sourceId: 'ACME',
      destinationId: 'D1',
      status: 'active' as const,
      balance: 5000,
      availableDay: 20454,
      expiryDay: 20819,
      currency: 'EUR',
      details: { token_name: 'Guest\'s "card"', room_count: '2' },
    };
    await store.transaction((tx) => tx.createToken(created));
    expect(await store.findToken(created.tokenId)).toEqual(created);
    await expect(store.transaction((tx) => tx.createToken({ ...created, balance: 1 }))).rejects.toThrow();
    expect((await store.findToken(created.tokenId))?.balance).toBe(5000);
    await store.transaction(async (tx) =>
      tx.saveToken({ ...(await tx.tokenForUpdate(created.sourceId, created.tokenId))!, expiryDay: undefined, availableDay: 20500 }),
    );
    expect(await store.findToken(created.tokenId)).toEqual({ ...created, expiryDay: undefined, availableDay: 20500 });

    const booking = (await store.findBooking('ACME', '1396'))!;
    const fresh = { ...booking, bookingId: 'new-1', status: 'active' as const };
    await store.transaction((tx) => tx.createBooking(fresh));
    expect(await store.findBooking('ACME', 'new-1')).toEqual(fresh);
    await expect(store.transaction((tx) => tx.createBooking({ ...fresh, status: 'cancelled' }))).rejects.toThrow();
    await store.transaction((tx) => tx.saveBooking({ ...fresh, status: 'cancelled' }));
    expect((await store.findBooking('ACME', 'new-1'))?.status).toBe('cancelled');
  });

  it('saves what a token change sets, details and what Refund may still give back, and every read of the token returns it', async () => {
    const seeded = (await store.findToken(TOKENS.active.token_id))!;
    expect(seeded.refundable).toBeUndefined();
    const changed = { ...seeded, balance: 90000, refundable: 10000, details: { token_name: 'Guest card 7', check_in: '10-01-2026' } };
    await store.transaction((tx) => tx.saveToken(changed));
    expect(await store.findToken(seeded.tokenId)).toEqual(changed);
    expect(await store.transaction((tx) => tx.tokenForUpdate('ACME', seeded.tokenId))).toEqual(changed);
    expect(await store.transaction((tx) => tx.lockTokenAndFindLedgerEntry('ACME', seeded.tokenId, '00000000000000000099'))).toEqual([
      changed,
      undefined,
    ]);
    // Details merged by the service are saved whole; a refundable of zero reads back as none.
    const later = { ...changed, refundable: 0, details: { ...changed.details, room_count: '2' } };
    await store.transaction((tx) => tx.saveToken(later));
    expect(await store.findToken(seeded.tokenId)).toEqual({ ...later, refundable: undefined });
  });

  it('inspection reads return the token, its latest ledger rows newest first, and a booking, without a unit of work', async () => {
    for (let i = 1; i <= 25; i += 1) {
      const id = String(i).padStart(20, '0');
      await store.transaction((tx) => tx.recordLedgerEntry(ledgerRow(id, { amount: i })));
    }
    expect(await store.findToken(TOKENS.active.token_id)).toMatchObject({
      tokenId: TOKENS.active.token_id,
      balance: 100000,
      status: 'active',
    });
    expect(await store.findToken('999')).toBeUndefined();
    const recent = await store.recentLedgerEntries(TOKENS.active.token_id, 5);
    expect(recent.map((w) => w.amount)).toEqual([25, 24, 23, 22, 21]);
    expect(await store.recentLedgerEntries(TOKENS.others.token_id, 5)).toEqual([]);
    expect((await store.findBooking('ACME', '1396'))?.fields.guests_count).toBe('2');
    expect(await store.findBooking('OTHER', '1396')).toBeUndefined();
  });

  it('keeps deliveries per account, written with the unit; a second record of one id is refused, the first stands', async () => {
    const at = new Date('2026-01-01T00:00:00.000Z');
    const first = { sourceId: 'ACME', webhookId: 'msg_1', bodyDigest: Buffer.alloc(32, 1), response: '{"first":true}', receivedAt: at };
    await store.transaction((tx) => tx.recordDelivery(first));
    await expect(store.transaction((tx) => tx.recordDelivery({ ...first, response: '{"second":true}' }))).rejects.toThrow();
    expect(await readDelivery(store, 'msg_1', 'ACME')).toEqual(first);
    expect(await readDelivery(store, 'msg_1', 'OTHER')).toBeUndefined();
    await expect(
      store.transaction(async (tx) => {
        await tx.recordDelivery({ ...first, webhookId: 'msg_2' });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await readDelivery(store, 'msg_2', 'ACME')).toBeUndefined();
  });

  it('sets accounts from a seed loaded again: keys, signing secrets and destinations as the file now says', async () => {
    const seed = fixtureSeed();
    const rotated = {
      ...seed.accounts[0],
      publicKeyHash: Buffer.alloc(32, 7),
      signingSecrets: ['whsec_cm90YXRlZC1zZWNyZXQ='],
      destinations: new Set(['D1', 'D9']),
    };
    await store.loadSeed({ ...seed, accounts: [rotated, ...seed.accounts.slice(1)] });
    expect(await store.findAccount(rotated.sourceId)).toEqual(rotated);
    expect((await store.findToken(TOKENS.atD2.token_id))?.destinationId).toBe('D2');
  });

  it("looks a token up within the caller's account: another account's token is not found, locked or read", async () => {
    const [token, entry] = await store.transaction((tx) =>
      tx.lockTokenAndFindLedgerEntry('OTHER', TOKENS.active.token_id, '00000000000000000001'),
    );
    expect(token).toBeUndefined();
    expect(entry).toBeUndefined();
    expect(await store.transaction((tx) => tx.tokenForUpdate('OTHER', TOKENS.active.token_id))).toBeUndefined();
    expect(await store.transaction((tx) => tx.isTokenIdTaken(TOKENS.active.token_id))).toBe(true);
    expect(await store.transaction((tx) => tx.isTokenIdTaken('999999999'))).toBe(false);
  });

  it('disables an account a seed loaded again no longer lists, keeping its tokens and bookings, and enables it when it is back', async () => {
    const seed = fixtureSeed();
    await store.loadSeed({ accounts: seed.accounts.filter((a) => a.sourceId !== 'ACME'), tokens: [], bookings: [] });
    expect(await store.findAccount('ACME')).toBeUndefined();
    expect(await store.findAccount('OTHER')).toBeDefined();
    expect(await store.findToken(TOKENS.active.token_id)).toMatchObject({ sourceId: 'ACME', balance: 100000 });
    expect(await store.findBooking('ACME', '1396')).toBeDefined();
    await store.loadSeed(seed);
    expect(await store.findAccount('ACME')).toEqual(seed.accounts.find((a) => a.sourceId === 'ACME'));
  });

  const change = (id: string, sourceId = 'ACME', createdAt = new Date('2026-01-01T00:00:00.000Z')): NewChange => ({
    sourceId,
    id,
    type: 'token.withdrawn',
    createdAt,
    body: { request: { operation: 'withdraw' } },
  });
  const seqs = async (sourceId = 'ACME') => (await store.changesAfter(sourceId, 0, 1000)).map((kept) => [kept.seq, kept.id]);

  it('numbers changes 1, 2, 3 within each account, and pages them from a seq', async () => {
    await store.transaction((tx) => tx.recordChange(change('chg_a1')));
    await store.transaction((tx) => tx.recordChange(change('chg_o1', 'OTHER')));
    await store.transaction((tx) => tx.recordChange(change('chg_a2')));
    await store.transaction((tx) => tx.recordChange(change('chg_a3')));
    expect(await seqs()).toEqual([
      [1, 'chg_a1'],
      [2, 'chg_a2'],
      [3, 'chg_a3'],
    ]);
    expect(await seqs('OTHER')).toEqual([[1, 'chg_o1']]);
    expect((await store.changesAfter('ACME', 1, 1)).map((kept) => kept.id)).toEqual(['chg_a2']);
    expect(await store.changesAfter('ACME', 3, 10)).toEqual([]);
  });

  it("reads an account's changes by type, exactly a page, with its last and oldest kept seq, in one read", async () => {
    const typed = (id: string, type: NewChange['type'], sourceId = 'ACME'): NewChange => ({ ...change(id, sourceId), type });
    for (const [id, type] of [
      ['chg_w1', 'token.withdrawn'],
      ['chg_b1', 'booking.created'],
      ['chg_w2', 'token.withdrawn'],
      ['chg_l1', 'token.loaded'],
      ['chg_w3', 'token.withdrawn'],
    ] as const)
      await store.transaction((tx) => tx.recordChange(typed(id, type)));
    await store.transaction((tx) => tx.recordChange(typed('chg_o1', 'booking.created', 'OTHER')));
    const read = async (after: number, limit: number, types?: NewChange['type'][]) => {
      const { changes, lastSeq, oldestSeq } = await store.readChanges('ACME', { after, limit, types });
      return { seqs: changes.map((kept) => [kept.seq, kept.id]), lastSeq, oldestSeq };
    };
    expect(await read(0, 2)).toEqual({
      seqs: [
        [1, 'chg_w1'],
        [2, 'chg_b1'],
      ],
      lastSeq: 5,
      oldestSeq: 1,
    });
    expect((await read(1, 2, ['token.withdrawn'])).seqs).toEqual([
      [3, 'chg_w2'],
      [5, 'chg_w3'],
    ]);
    expect((await read(0, 10, ['booking.created', 'token.loaded'])).seqs).toEqual([
      [2, 'chg_b1'],
      [4, 'chg_l1'],
    ]);
    expect(await read(4, 10, ['booking.created'])).toEqual({ seqs: [], lastSeq: 5, oldestSeq: 1 });
    expect(await store.readChanges('NOBODY', { after: 0, limit: 10 })).toEqual({ changes: [], lastSeq: 0, oldestSeq: undefined });
    // The same changes as changesAfter keeps them, whole.
    expect((await store.readChanges('ACME', { after: 0, limit: 10 })).changes).toEqual(await store.changesAfter('ACME', 0, 10));
  });

  // Through a pooler without a direct connection, by the poll: the listener's last seq read (0) is behind the counter.
  it('tells a change listener of an account whose change committed', async () => {
    const told: string[] = [];
    const stop = store.watchChanges({ watched: () => new Map([['ACME', 0]]), changed: (sourceId) => told.push(sourceId) });
    try {
      await store.transaction((tx) => tx.recordChange(change('chg_first')));
      // PostgreSQL may tell at once that it now listens for the account (a change may have committed before): so
      // once told of the first, a second change is what is told.
      await waitFor(async () => told.includes('ACME'));
      told.length = 0;
      await store.transaction((tx) => tx.recordChange(change('chg_second')));
      await waitFor(async () => told.includes('ACME'));
    } finally {
      stop();
    }
  });

  it('a unit that fails after recording its change leaves no hole, however many units run beside it', async () => {
    const units = Array.from({ length: 20 }, (_, i) =>
      store.transaction(async (tx) => {
        const token = (await tx.tokenForUpdate('ACME', TOKENS.active.token_id)) as Token;
        await tx.saveToken({ ...token, balance: token.balance - 1 });
        await tx.recordChange(change(`chg_${i}`));
        if (i % 3 === 0) throw new Error('the unit fails after recording its change');
      }),
    );
    const results = await Promise.allSettled(units);
    const kept = await store.changesAfter('ACME', 0, 1000);
    expect(kept.map((c) => c.seq)).toEqual(kept.map((_, i) => i + 1));
    expect(kept.map((c) => c.id).sort()).toEqual(
      results.flatMap((result, i) => (result.status === 'fulfilled' ? [`chg_${i}`] : [])).sort(),
    );
    expect(await balance()).toBe(100000 - kept.length);
  });

  it('answers ping while open and rejects after close', async () => {
    await expect(store.ping()).resolves.toBeUndefined();
    await store.close();
    await expect(store.ping()).rejects.toThrow('Service Unavailable');
  });
});

/** The memory store forgets what is past retention as newer records arrive; PostgreSQL sweeps (postgres-retention.test.ts). */
describe('MemoryStore retention', () => {
  it('forgets deliveries older than 24 hours as newer ones arrive', async () => {
    const store = new MemoryStore();
    const record = (webhookId: string, receivedAt: string) =>
      store.transaction((tx) =>
        tx.recordDelivery({ sourceId: 'ACME', webhookId, bodyDigest: Buffer.alloc(32), response: '{}', receivedAt: new Date(receivedAt) }),
      );
    await record('msg_old', '2026-01-01T00:00:00.000Z');
    await record('msg_day', '2026-01-01T23:00:00.000Z');
    expect(await readDelivery(store, 'msg_old', 'ACME')).toBeDefined();
    await record('msg_new', '2026-01-02T00:00:00.001Z');
    expect(await readDelivery(store, 'msg_old', 'ACME')).toBeUndefined();
    expect(await readDelivery(store, 'msg_day', 'ACME')).toBeDefined();
  });

  it('forgets request keys older than the retention once newer keys arrive', async () => {
    const store = new MemoryStore({ retentionMs: 60_000 });
    await store.loadSeed(fixtureSeed());
    const record = (key: string, createdAt: string) =>
      store.transaction((tx) =>
        tx.recordKeyedRequest({ sourceId: 'ACME', key, fingerprint: key, response: '{}', createdAt: new Date(createdAt) }),
      );
    await record('key-old-00001', '2026-01-01T00:00:00.000Z');
    await record('key-new-00002', '2026-01-01T00:01:00.001Z');
    expect(await store.transaction((tx) => tx.findKeyedRequest('ACME', 'key-old-00001'))).toBeUndefined();
    expect(await store.transaction((tx) => tx.findKeyedRequest('ACME', 'key-new-00002'))).toBeDefined();
  });
});

/** Contract section 13.1: the memory store keeps each account's newest MEMORY_CHANGES_PER_ACCOUNT changes within their retention. */
describe('MemoryStore changes', () => {
  const record = (store: MemoryStore, id: string, sourceId: string, createdAt: string) =>
    store.transaction((tx) => tx.recordChange({ sourceId, id, type: 'token.withdrawn', createdAt: new Date(createdAt), body: {} }));

  it("keeps at most the bound of an account's newest changes, numbering on, and never evicts another account's", async () => {
    const store = new MemoryStore({ changesPerAccount: 3 });
    await record(store, 'chg_other', 'OTHER', '2026-01-01T00:00:00.000Z');
    for (let i = 1; i <= 5; i += 1) await record(store, `chg_${i}`, 'ACME', '2026-01-01T00:00:00.000Z');
    expect((await store.changesAfter('ACME', 0, 10)).map((c) => [c.seq, c.id])).toEqual([
      [3, 'chg_3'],
      [4, 'chg_4'],
      [5, 'chg_5'],
    ]);
    expect((await store.changesAfter('ACME', 3, 10)).map((c) => c.seq)).toEqual([4, 5]);
    expect((await store.changesAfter('OTHER', 0, 10)).map((c) => c.id)).toEqual(['chg_other']);
  });

  it('logs what it drops for the bound at the 1st, 10th, 100th drop of an account, with the count', async () => {
    const lines: string[] = [];
    const logger = createLogger('info', new Writable({ write: (chunk, _encoding, done) => done(void lines.push(String(chunk))) }));
    const store = new MemoryStore({ changesPerAccount: 2, logger });
    for (let i = 1; i <= 14; i += 1) await record(store, `chg_${i}`, 'ACME', '2026-01-01T00:00:00.000Z');
    const drops = lines.map((line) => JSON.parse(line) as { msg: string; dropped: number; dropped_total: number });
    expect(drops.map(({ msg, dropped, dropped_total: total }) => [msg, dropped, total])).toEqual([
      ["memory store dropped an account's oldest changes past MEMORY_CHANGES_PER_ACCOUNT", 1, 1],
      ["memory store dropped an account's oldest changes past MEMORY_CHANGES_PER_ACCOUNT", 10, 10],
    ]);
  });

  it('forgets changes past their retention as the account records newer ones', async () => {
    const store = new MemoryStore({ changeRetentionMs: 60_000 });
    await record(store, 'chg_old', 'ACME', '2026-01-01T00:00:00.000Z');
    await record(store, 'chg_minute', 'ACME', '2026-01-01T00:00:59.000Z');
    await record(store, 'chg_new', 'ACME', '2026-01-01T00:01:00.001Z');
    expect((await store.changesAfter('ACME', 0, 10)).map((c) => [c.seq, c.id])).toEqual([
      [2, 'chg_minute'],
      [3, 'chg_new'],
    ]);
  });
});

/** The memory store's unit remembers the row of the token it last looked up; a row it had not yet is no answer. */
describe('MemoryStore token rows within a unit', () => {
  it('a unit that looks a token up, creates it and records its ledger row files the row under that token', async () => {
    const store = new MemoryStore();
    await store.loadSeed(fixtureSeed());
    const tokenId = '4000000000000002';
    await store.transaction(async (tx) => {
      expect(await tx.tokenForUpdate('ACME', tokenId)).toBeUndefined();
      await tx.createToken({ tokenId, sourceId: 'ACME', destinationId: 'D1', status: 'active', balance: 5000 });
      await tx.recordLedgerEntry(ledgerRow('00000000000000000031', { tokenId, tokenBalance: 4900 }));
    });
    expect((await store.recentLedgerEntries(tokenId, 5)).map((entry) => entry.transactionId)).toEqual(['00000000000000000031']);
    expect(await store.recentLedgerEntries(TOKENS.active.token_id, 5)).toEqual([]);
  });

  it('a unit that works on two tokens files each ledger row under its own token', async () => {
    const store = new MemoryStore();
    await store.loadSeed(fixtureSeed());
    const other = { tokenId: '4000000000000003', sourceId: 'ACME', destinationId: 'D1', status: 'active' as const, balance: 5000 };
    await store.transaction((tx) => tx.createToken(other));
    await store.transaction(async (tx) => {
      await tx.tokenForUpdate('ACME', TOKENS.active.token_id);
      await tx.tokenForUpdate('ACME', other.tokenId);
      await tx.recordLedgerEntry(ledgerRow('00000000000000000032'));
      await tx.recordLedgerEntry(ledgerRow('00000000000000000033', { tokenId: other.tokenId }));
    });
    expect((await store.recentLedgerEntries(TOKENS.active.token_id, 5)).map((entry) => entry.transactionId)).toEqual([
      '00000000000000000032',
    ]);
    expect((await store.recentLedgerEntries(other.tokenId, 5)).map((entry) => entry.transactionId)).toEqual(['00000000000000000033']);
  });
});
