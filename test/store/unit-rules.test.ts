import type { LedgerEntry } from '../../src/domain/ledger';
import type { Store, StoreTransaction } from '../../src/store/store';
import { RULES, type Rule } from '../../src/store/unit/rules';
import { storeKinds } from '../helpers/app';
import { BOOKING, fixtureSeed, TOKENS } from '../helpers/fixtures';
import { readDelivery, readState } from '../helpers/state';

const ACTIVE = TOKENS.active.token_id;
const WRITTEN_ID = '00000000000000000001';
const KEPT_ID = '00000000000000000002';
const AT = new Date('2026-01-01T00:00:00.000Z');

const ledgerRow = (overrides: Partial<LedgerEntry> = {}): LedgerEntry => ({
  kind: 'withdrawal',
  transactionId: WRITTEN_ID,
  sourceId: 'ACME',
  destinationId: 'D1',
  tokenId: ACTIVE,
  amount: 100,
  fee: 0,
  tokenBalance: 99900,
  createdAt: AT,
  ...overrides,
});
const delivery = (overrides: Record<string, unknown> = {}) => ({
  sourceId: 'ACME',
  webhookId: 'msg_1',
  bodyDigest: Buffer.alloc(32, 1),
  response: '{}',
  receivedAt: AT,
  ...overrides,
});
const keyedRequest = { sourceId: 'ACME', key: 'k1', fingerprint: 'f', response: '{}', createdAt: AT };

async function activeToken(tx: StoreTransaction) {
  return (await tx.tokenForUpdate('ACME', ACTIVE))!;
}
async function seededBooking(tx: StoreTransaction) {
  return (await tx.bookingForUpdate('ACME', BOOKING.booking_id))!;
}

/** Each rule broken by one write, after the unit made a good write it must not apply (the token's balance). */
const BROKEN: Array<[Rule, string, (tx: StoreTransaction) => Promise<void>]> = [
  ['created_once', 'a token whose id the store holds', async (tx) => tx.createToken({ ...(await activeToken(tx)), balance: 1 })],
  [
    'created_once',
    'a ledger row whose transaction id the account holds',
    async (tx) => tx.recordLedgerEntry(ledgerRow({ transactionId: KEPT_ID })),
  ],
  ['created_once', 'a booking the account holds', async (tx) => tx.createBooking(await seededBooking(tx))],
  ['created_once', 'a request key the account holds', (tx) => tx.recordKeyedRequest({ ...keyedRequest, key: 'kept' })],
  ['created_once', 'a delivery the account holds', (tx) => tx.recordDelivery(delivery({ webhookId: 'kept' }))],
  ['saved_exists', 'a token the store does not hold', async (tx) => tx.saveToken({ ...(await activeToken(tx)), tokenId: '999' })],
  ['saved_exists', "another account's token", async (tx) => tx.saveToken({ ...(await activeToken(tx)), tokenId: TOKENS.others.token_id })],
  ['saved_exists', 'a booking the store does not hold', async (tx) => tx.saveBooking({ ...(await seededBooking(tx)), bookingId: '404' })],
  ['ledger_token_held', 'a ledger row of a token the store does not hold', (tx) => tx.recordLedgerEntry(ledgerRow({ tokenId: '999' }))],
  [
    'ledger_token_held',
    "a ledger row of another account's token",
    (tx) => tx.recordLedgerEntry(ledgerRow({ tokenId: TOKENS.others.token_id })),
  ],
  ['token_id', 'a token id with a leading zero', async (tx) => tx.createToken({ ...(await activeToken(tx)), tokenId: '0123' })],
  ['token_status', 'a status no token has', async (tx) => tx.saveToken({ ...(await activeToken(tx)), status: 'lost' as never })],
  ['balance', 'a balance below zero', async (tx) => tx.saveToken({ ...(await activeToken(tx)), balance: -1 })],
  ['balance', 'a balance past 999,999,999,999', async (tx) => tx.saveToken({ ...(await activeToken(tx)), balance: 1_000_000_000_000 })],
  ['balance', 'a balance in parts of a minor unit', async (tx) => tx.saveToken({ ...(await activeToken(tx)), balance: 1.5 })],
  ['refundable', 'a refundable amount below zero', async (tx) => tx.saveToken({ ...(await activeToken(tx)), refundable: -1 })],
  [
    'dates',
    'an expiry before the day the token is available',
    async (tx) => tx.saveToken({ ...(await activeToken(tx)), availableDay: 20_500, expiryDay: 20_499 }),
  ],
  ['transaction_id', 'a transaction id of 19 digits', (tx) => tx.recordLedgerEntry(ledgerRow({ transactionId: '0000000000000000001' }))],
  ['ledger_kind', 'a kind the ledger has not', (tx) => tx.recordLedgerEntry(ledgerRow({ kind: 'gift' as never }))],
  ['amount', 'a withdrawal of zero', (tx) => tx.recordLedgerEntry(ledgerRow({ amount: 0 }))],
  ['amount', 'a negative amount', (tx) => tx.recordLedgerEntry(ledgerRow({ amount: -5 }))],
  ['fee', 'a fee on a withdrawal', (tx) => tx.recordLedgerEntry(ledgerRow({ fee: 5 }))],
  ['fee', 'a negative fee on a load', (tx) => tx.recordLedgerEntry(ledgerRow({ kind: 'load', fee: -1 }))],
  ['token_balance', 'a stated balance below zero', (tx) => tx.recordLedgerEntry(ledgerRow({ tokenBalance: -1 }))],
  ['booking_status', 'a status no booking has', async (tx) => tx.saveBooking({ ...(await seededBooking(tx)), status: 'lost' as never })],
  ['webhook_id', 'an empty webhook id', (tx) => tx.recordDelivery(delivery({ webhookId: '' }))],
  ['webhook_id', 'a webhook id of 257 characters', (tx) => tx.recordDelivery(delivery({ webhookId: 'w'.repeat(257) }))],
  ['body_digest', 'a body digest of 31 bytes', (tx) => tx.recordDelivery(delivery({ bodyDigest: Buffer.alloc(31) }))],
];

it('every rule of the unit of work is tried below', () => {
  expect(new Set(BROKEN.map(([rule]) => rule))).toEqual(new Set(RULES));
});

describe.each(storeKinds().map((kind) => [kind.name, kind] as const))('the rules of the unit of work: %s', (_name, kind) => {
  let store: Store;
  beforeAll(async () => {
    store = await kind.create();
    await store.loadSeed(fixtureSeed());
    await store.transaction(async (tx) => {
      await tx.recordLedgerEntry(ledgerRow({ transactionId: KEPT_ID }));
      await tx.recordKeyedRequest({ ...keyedRequest, key: 'kept' });
      await tx.recordDelivery(delivery({ webhookId: 'kept' }));
    });
  });
  afterAll(() => store.close());

  const state = async () => ({
    ...(await readState(store, [WRITTEN_ID, KEPT_ID], ['k1', 'kept'])),
    deliveries: [await readDelivery(store, 'msg_1'), await readDelivery(store, '')],
    holdings: await store.transaction((tx) => tx.holdingsForUpdate('ACME')),
  });

  it.each(BROKEN)('refuses %s: %s, and applies nothing of the unit', async (rule, _write, breakIt) => {
    const before = await state();
    await expect(
      store.transaction(async (tx) => {
        await tx.saveToken({ ...(await activeToken(tx)), balance: 1 });
        await breakIt(tx);
      }),
    ).rejects.toMatchObject({ name: 'RefusedWrite', rule });
    expect(await state()).toEqual(before);
  });

  it('takes a schedule that moved nothing, and a load with its fee', async () => {
    await store.transaction(async (tx) => {
      await tx.recordLedgerEntry(ledgerRow({ transactionId: '00000000000000000003', kind: 'schedule', amount: 0 }));
      await tx.recordLedgerEntry(ledgerRow({ transactionId: '00000000000000000004', kind: 'load', fee: 25 }));
    });
  });
});

describe.each(storeKinds().map((kind) => [kind.name, kind] as const))('the unit of work names the account first: %s', (_name, kind) => {
  let store: Store;
  beforeAll(async () => {
    store = await kind.create();
    await store.loadSeed(fixtureSeed());
    await store.transaction((tx) => tx.recordLedgerEntry(ledgerRow({ transactionId: KEPT_ID })));
  });
  afterAll(() => store.close());

  it('lockTokenAndFindLedgerEntry takes the account, then the token, as tokenForUpdate does', async () => {
    const [token, entry] = await store.transaction((tx) => tx.lockTokenAndFindLedgerEntry('ACME', ACTIVE, KEPT_ID));
    expect([token?.tokenId, entry?.transactionId]).toEqual([ACTIVE, KEPT_ID]);
  });
});
