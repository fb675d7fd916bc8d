import fc from 'fast-check';
import { formatAmount } from '../../src/domain/money';
import { MAX_BALANCE } from '../../src/services/token-ledger';
import type { LedgerKind } from '../../src/domain/ledger';
import { buildTestApp, storeKinds, type TestApp } from '../helpers/app';
import * as client from '../helpers/clients';
import { ACME } from '../helpers/fixtures';
import { tokenCreation } from '../helpers/payloads';
import { PROPERTY_TEST_TIMEOUT_MS, withinBudget } from '../helpers/property';

// Each test runs one long property (test/helpers/property.ts).
jest.setTimeout(PROPERTY_TEST_TIMEOUT_MS);

/**
 * Contract sections 4, 6 and 9: for any sequence of loads, unloads, credited schedules, withdrawals and refunds
 * on a token, with retries, concurrent copies and reused keys, the balance is always the opening balance plus
 * loads, credited schedules and refunds less withdrawals and unloads, within 0 and 9999999999.99; refunds never
 * give back more than withdrawals took (section 9.10); a rejected request changes nothing; a repeat applies
 * nothing. Each case runs on a token of its own, made by Create Token.
 */

type Move = 'withdrawal' | 'load' | 'unload' | 'schedule' | 'refund';

interface Step {
  move: Move;
  /** Minor units moved (a schedule's: what it adds). */
  amount: number;
  fee: number;
  /** How the stated token_balance relates to the right one. */
  stated: 'right' | 'off by one';
  /** Send an earlier request again: as it was, or with its amount changed (a reused key). */
  repeat: 'no' | 'same' | 'changed';
  /** Copies sent at once. */
  copies: number;
}

const CLIENT: Record<Move, client.NotificationClient> = {
  withdrawal: client.withdraw,
  load: client.loaded,
  unload: client.unloaded,
  schedule: client.loadSchedule,
  refund: client.refund,
};

const EVENT: Record<Move, string> = {
  withdrawal: 'token.withdrawn_created',
  load: 'token.loaded_created',
  unload: 'token.unloaded_created',
  schedule: 'token.load_schedule',
  refund: 'token.refund_available',
};

const steps = fc.array(
  fc.record<Step>({
    move: fc.constantFrom<Move>('withdrawal', 'load', 'unload', 'schedule', 'refund'),
    amount: fc.oneof(fc.integer({ min: 1, max: 5_000 }), fc.integer({ min: 1, max: 200_000 }), fc.constant(MAX_BALANCE)),
    fee: fc.integer({ min: 0, max: 300 }),
    stated: fc.constantFrom<Step['stated']>('right', 'right', 'right', 'off by one'),
    repeat: fc.constantFrom<Step['repeat']>('no', 'no', 'no', 'same', 'changed'),
    copies: fc.constantFrom(1, 1, 2, 3),
  }),
  { minLength: 1, maxLength: 10 },
);

/** Opening balances: small ones, and ones near the largest, so loads reach the ceiling. */
const openings = fc.oneof(fc.integer({ min: 1, max: 100_000 }), fc.integer({ min: MAX_BALANCE - 200_000, max: MAX_BALANCE }));

/** What the model expects of a request: applied (with the balance after), replayed, or rejected with a status. */
type Expected = { outcome: 'accepted'; after: number } | { outcome: 'replayed' } | { outcome: 'rejected'; status: number };

interface Sent {
  body: Record<string, unknown>;
  move: Move;
  amount: number;
  stated: number;
  /** Applied once: its key now answers repeats. */
  applied: boolean;
}

const SIGN: Record<LedgerKind, number> = { withdrawal: -1, load: 1, unload: -1, schedule: 1, refund: 1, load_token: 1, unload_token: -1 };

const outcomes: Record<string, number> = {};
const tally = (store: string, label: string) => {
  const key = `${store} ${label}`;
  outcomes[key] = (outcomes[key] ?? 0) + 1;
};

describe.each(storeKinds().map((kind) => [kind.name, kind] as const))('ledger invariants on the %s store', (storeName, kind) => {
  let t: TestApp;
  let tokenCounter = 0;
  let transactionCounter = 0;
  beforeAll(async () => {
    t = await buildTestApp(kind);
  });
  afterAll(async () => {
    await t.store.close();
  });

  const balanceOf = async (tokenId: string) => (await t.store.findToken(tokenId))?.balance as number;

  /** The body of a move on the token, stating `tokenBalance`. */
  function bodyOf(
    move: Move,
    tokenId: string,
    transactionId: string,
    amount: number,
    fee: number,
    tokenBalance: number,
  ): Record<string, unknown> {
    const common = {
      share_public: ACME.share_public,
      read_event: EVENT[move],
      source_id: 'ACME',
      destination_id: 'D1',
      token_id: tokenId,
      transaction_id: transactionId,
    };
    const balance = formatAmount(tokenBalance);
    if (move === 'withdrawal') return { ...common, withdrawn_amount: formatAmount(amount), token_balance: balance };
    if (move === 'load') return { ...common, load_amount: formatAmount(amount), fee_amount: formatAmount(fee), token_balance: balance };
    if (move === 'unload') return { ...common, unload_amount: formatAmount(amount), token_balance: balance };
    if (move === 'refund') return { ...common, refund_amount: formatAmount(amount), token_balance: balance };
    return { ...common, schedule_status: 'credited', token_balance: balance };
  }

  /**
   * What a new request leads to on this balance and what refunds may still give back, in the contract's order of
   * checks: amount (422), then token_balance (409).
   */
  function judge(move: Move, balance: number, refundable: number, amount: number, stated: number): Expected {
    if (move === 'schedule') return stated < balance ? { outcome: 'rejected', status: 409 } : { outcome: 'accepted', after: stated };
    if (move === 'refund' && amount > refundable) return { outcome: 'rejected', status: 422 };
    const after = move === 'load' || move === 'refund' ? balance + amount : balance - amount;
    if (after < 0 || after > MAX_BALANCE) return { outcome: 'rejected', status: 422 };
    return stated === after ? { outcome: 'accepted', after } : { outcome: 'rejected', status: 409 };
  }

  it('keeps the balance equal to the ledger, within bounds, whatever arrives', async () => {
    await fc.assert(
      fc.asyncProperty(openings, steps, async (opening, plan) => {
        tokenCounter += 1;
        const created = await client.createToken(
          t,
          tokenCreation({ load_amount: formatAmount(opening) }),
          `prop-${storeName}-${tokenCounter}-${Date.now()}`,
        );
        expect(created.status).toBe(200);
        const tokenId = created.body.token.token_id as string;
        let balance = opening;
        /** Withdrawn less refunded: the most a refund may give back. */
        let refundable = 0;
        const sent: Sent[] = [];
        for (const step of plan) {
          const earlier = sent.length > 0 && step.repeat !== 'no' ? sent[(step.amount + step.fee) % sent.length] : undefined;
          let sending: Sent;
          let expected: Expected;
          if (earlier && step.repeat === 'changed' && earlier.applied) {
            // The same key with token_balance changed: another request under a used key.
            const other = earlier.stated === 0 ? 1 : 0;
            sending = { ...earlier, body: { ...earlier.body, token_balance: formatAmount(other) }, stated: other, applied: false };
            expected = { outcome: 'rejected', status: 422 };
          } else if (earlier && step.repeat === 'same') {
            // Applied: a replay. Refused: it recorded nothing, so it is judged again on today's balance.
            sending = earlier;
            expected = earlier.applied ? { outcome: 'replayed' } : judge(earlier.move, balance, refundable, earlier.amount, earlier.stated);
          } else {
            transactionCounter += 1;
            const transactionId = `7${String(transactionCounter).padStart(19, '0')}`;
            // A refund of at most what was withdrawn, half the time, so that refunds apply as well as fail.
            const amount = step.move === 'refund' && step.fee % 2 === 0 && refundable > 0 ? 1 + (step.amount % refundable) : step.amount;
            const right = step.move === 'withdrawal' || step.move === 'unload' ? balance - amount : balance + amount;
            const stated = Math.min(Math.max(step.stated === 'right' ? right : right + 1, 0), MAX_BALANCE);
            sending = {
              body: bodyOf(step.move, tokenId, transactionId, amount, step.fee, stated),
              move: step.move,
              amount,
              stated,
              applied: false,
            };
            sent.push(sending);
            expected = judge(step.move, balance, refundable, amount, stated);
          }
          const ledgerBefore = (await t.store.recentLedgerEntries(tokenId, 1000)).length;
          const balanceBefore = balance;
          const responses = await Promise.all(Array.from({ length: step.copies }, () => CLIENT[sending.move](t, sending.body)));
          const statuses = responses.map((response) => response.status);
          if (expected.outcome === 'rejected') {
            const status = expected.status;
            expect(statuses).toEqual(statuses.map(() => status));
            expect(await balanceOf(tokenId)).toBe(balanceBefore);
            expect((await t.store.recentLedgerEntries(tokenId, 1000)).length).toBe(ledgerBefore);
            tally(storeName, `rejected ${status}`);
          } else if (expected.outcome === 'replayed') {
            expect(statuses.every((s) => s === 200)).toBe(true);
            expect(responses.every((response) => response.headers['idempotent-replayed'] === 'true')).toBe(true);
            expect(await balanceOf(tokenId)).toBe(balanceBefore);
            tally(storeName, 'replayed');
          } else {
            // Concurrent copies: exactly one applies, the others are its replays.
            expect(statuses.every((s) => s === 200)).toBe(true);
            expect(responses.filter((response) => response.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
            if (sending.move === 'withdrawal') refundable += balance - expected.after;
            if (sending.move === 'refund') refundable -= expected.after - balance;
            balance = expected.after;
            sending.applied = true;
            expect(await balanceOf(tokenId)).toBe(balance);
            tally(storeName, step.copies > 1 ? 'accepted (with concurrent copies replayed)' : 'accepted');
          }
        }
        // The invariant, read from the store alone: the opening balance plus the ledger's signed amounts.
        const ledger = await t.store.recentLedgerEntries(tokenId, 1000);
        const stored = await balanceOf(tokenId);
        expect(stored).toBe(opening + ledger.reduce((sum, entry) => sum + SIGN[entry.kind] * entry.amount, 0));
        expect(stored).toBeGreaterThanOrEqual(0);
        expect(stored).toBeLessThanOrEqual(MAX_BALANCE);
        expect(stored).toBe(balance);
        // Refunds gave back no more than withdrawals took, and the token's cap is what is left.
        const total = (kind: LedgerKind) => ledger.filter((entry) => entry.kind === kind).reduce((sum, entry) => sum + entry.amount, 0);
        expect(total('withdrawal') - total('refund')).toBe(refundable);
        expect((await t.store.findToken(tokenId))?.refundable ?? 0).toBe(refundable);
      }),
      withinBudget(storeName === 'memory' ? 150 : 40),
    );
  });
});

afterAll(() => {
  const lines = Object.entries(outcomes)
    .sort()
    .map(([label, count]) => `  ${label}: ${count}`);
  process.stdout.write(`ledger property test, requests by outcome:\n${lines.join('\n')}\n`);
});
