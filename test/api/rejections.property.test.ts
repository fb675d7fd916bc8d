import fc from 'fast-check';
import { formatAmount, parseAmount } from '../../src/domain/money';
import { buildTestApp, storeKinds, type TestApp } from '../helpers/app';
import * as client from '../helpers/clients';
import { ACME, OTHER, TOKENS } from '../helpers/fixtures';
import { bookingChange, statusChange, withdrawal } from '../helpers/payloads';
import { readState } from '../helpers/state';
import { PROPERTY_TEST_TIMEOUT_MS, withinBudget } from '../helpers/property';

// Each test runs one long property (test/helpers/property.ts).
jest.setTimeout(PROPERTY_TEST_TIMEOUT_MS);

const tokenIds = Object.values(TOKENS).map((token) => token.token_id);

/** Mostly the valid value, sometimes a wrong one: so generated requests reach every check, not only the schema. */
function mostly<Value>(valid: Value, ...wrong: unknown[]) {
  return fc.oneof({ arbitrary: fc.constant(valid), weight: 6 }, { arbitrary: fc.constantFrom(...wrong), weight: 1 });
}

const CORRECT_BALANCE = 'correct';

const withdrawals = fc.record({
  share_public: mostly(ACME.share_public, OTHER.share_public, 'pk_wrong', 7),
  source_id: mostly('ACME', 'OTHER', 'NOBODY'),
  destination_id: mostly('D1', 'D2', 'X1', 'NOPE'),
  token_id: fc.oneof(
    { arbitrary: fc.constant(TOKENS.active.token_id), weight: 4 },
    { arbitrary: fc.constantFrom(...tokenIds), weight: 3 },
    { arbitrary: fc.constantFrom(999, '0', Number.MAX_SAFE_INTEGER + 2), weight: 1 },
  ),
  transaction_id: fc.oneof(
    { arbitrary: fc.stringMatching(/^\d{20}$/), weight: 4 },
    { arbitrary: fc.constant('00000000000000000001'), weight: 2 },
    { arbitrary: fc.constantFrom('123', 42), weight: 1 },
  ),
  withdrawn_amount: fc.oneof(
    { arbitrary: fc.constantFrom('0.10', '10', '25.50', '1000.01', '5000'), weight: 6 },
    { arbitrary: fc.constantFrom('0', '-1', 'x', 10), weight: 1 },
  ),
  token_balance: fc.oneof(
    { arbitrary: fc.constant(CORRECT_BALANCE), weight: 4 },
    { arbitrary: fc.constantFrom('0.00', '900.00', '1,0'), weight: 1 },
  ),
});

const statusChanges = fc.record({
  source_id: mostly('ACME', 'OTHER', 'NOBODY'),
  destination_id: mostly('D1', 'D2', 'X1'),
  token_id: fc.constantFrom(...tokenIds, 31337),
  tokes_status: fc.constantFrom('active', 'freezed', 'disputed', 'deleted', 'Active', undefined),
  token_status: mostly(undefined, 'active', 'deleted'),
  share_public: mostly(undefined, ACME.share_public, 'pk_wrong'),
});

const bookingChanges = fc.record({
  source_id: mostly('ACME', 'OTHER'),
  share_secret: mostly(ACME.share_secret, OTHER.share_secret, 'sk_wrong'),
  booking_id: mostly('1396', '77', 'nope'),
  check_in: fc.constantFrom('10-02-2024', '20-02-2024', '31-02-2024', undefined),
  check_out: fc.constantFrom('12-02-2024', '25-02-2024', undefined),
  transaction_margin: fc.constantFrom('50', '150.00', 'x', undefined),
  guests_count: mostly('3', '0', 3),
});

/** The balance the sender should state: the token's current balance less the amount, when both are known. */
async function correctBalance(t: TestApp, tokenId: unknown, amountText: unknown): Promise<string> {
  const token = (await readState(t.store)).tokens.find((candidate) => candidate?.tokenId === String(tokenId));
  if (!token || typeof amountText !== 'string') return '0.00';
  try {
    return formatAmount(Math.max(token.balance - parseAmount(amountText), 0));
  } catch {
    return '0.00';
  }
}

describe.each(storeKinds().map((kind) => [kind.name, kind] as const))(
  'property on the %s store: a rejected request leaves the store exactly as it was',
  (_name, kind) => {
    // Closed after each test, passed or not: an open pool would keep the worker alive.
    const opened: TestApp[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((t) => t.store.close()));
    });

    it('for withdrawals', async () => {
      const t = await buildTestApp(kind);
      opened.push(t);
      await fc.assert(
        fc.asyncProperty(withdrawals, async (fields) => {
          const tokenBalance =
            fields.token_balance === CORRECT_BALANCE
              ? await correctBalance(t, fields.token_id, fields.withdrawn_amount)
              : fields.token_balance;
          const body = withdrawal({ ...fields, token_balance: tokenBalance });
          const ids = typeof body.transaction_id === 'string' ? [body.transaction_id] : [];
          const before = await readState(t.store, ids);
          const response = await client.withdraw(t, body);
          if (response.status !== 200) expect(await readState(t.store, ids)).toEqual(before);
          else expect(response.body).toEqual({ success: true, message: 'Success' });
        }),
        withinBudget(300),
      );
    });

    it('for status changes', async () => {
      const t = await buildTestApp(kind);
      opened.push(t);
      await fc.assert(
        fc.asyncProperty(statusChanges, async (fields) => {
          const before = await readState(t.store);
          const response = await client.statusChange(t, statusChange(fields));
          if (response.status !== 200) expect(await readState(t.store)).toEqual(before);
        }),
        withinBudget(200),
      );
    });

    it('for booking changes', async () => {
      const t = await buildTestApp(kind);
      opened.push(t);
      let counter = 0;
      await fc.assert(
        fc.asyncProperty(bookingChanges, fc.boolean(), async (fields, reuseKey) => {
          counter += 1;
          const key = reuseKey ? 'key-shared-0001' : `key-${String(counter).padStart(8, '0')}`;
          const before = await readState(t.store, [], [key]);
          const response = await client.modifyBooking(t, bookingChange(fields), key, String(fields.source_id));
          if (response.status !== 200) expect(await readState(t.store, [], [key])).toEqual(before);
        }),
        withinBudget(200),
      );
    });
  },
);
