import fc from 'fast-check';
import { formatAmount } from '../../src/domain/money';
import { MAX_BALANCE } from '../../src/services/token-ledger';
import { buildTestApp, storeKinds, type TestApp } from '../helpers/app';
import * as client from '../helpers/clients';
import { ACME } from '../helpers/fixtures';
import { tokenCreation } from '../helpers/payloads';
import { PROPERTY_TEST_TIMEOUT_MS, withinBudget } from '../helpers/property';

// Each test runs one long property (test/helpers/property.ts).
jest.setTimeout(PROPERTY_TEST_TIMEOUT_MS);

/**
 * Contract section 9.9: for any sequence of Load and Unload Token requests on a token, retried and sent as
 * concurrent copies under their keys, every applied request has a 20-digit transaction_id of its own, filed as
 * its ledger row; every copy and retry answers the same id; the balance is the opening balance plus loads less
 * unloads, each applied once.
 */

interface Step {
  event: 'load' | 'unload';
  amount: number;
  /** Send again the request of an earlier step (the same key and body), rather than a new one. */
  repeat: boolean;
  copies: number;
}

const steps = fc.array(
  fc.record<Step>({
    event: fc.constantFrom('load', 'unload'),
    amount: fc.oneof(fc.integer({ min: 1, max: 5_000 }), fc.integer({ min: 1, max: 200_000 })),
    repeat: fc.boolean(),
    copies: fc.constantFrom(1, 1, 2, 4),
  }),
  { minLength: 1, maxLength: 8 },
);

describe.each(storeKinds().map((kind) => [kind.name, kind] as const))('Load and Unload Token on the %s store', (storeName, kind) => {
  let t: TestApp;
  let keys = 0;
  beforeAll(async () => {
    t = await buildTestApp(kind);
  });
  afterAll(async () => {
    await t.store.close();
  });

  it('files each applied request once, under a 20-digit id of its own that every copy and retry answers', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 100_000 }), steps, async (opening, plan) => {
        keys += 1;
        const created = await client.createToken(
          t,
          tokenCreation({ load_amount: formatAmount(opening) }),
          `tcprop-${storeName}-${keys}-${Date.now()}`,
        );
        const tokenId = created.body.token.token_id as string;
        let balance = opening;
        const sent: Array<{ key: string; body: object; transactionId?: string }> = [];
        const applied = new Map<string, number>();
        for (const [index, step] of plan.entries()) {
          const earlier = step.repeat && sent.length > 0 ? sent[step.amount % sent.length] : undefined;
          const request = earlier ?? {
            key: `tcprop-${storeName}-${keys}-${index}`,
            body: {
              share_secret: ACME.share_secret,
              token_event: step.event,
              source_id: 'ACME',
              token_id: tokenId,
              [`${step.event}_amount`]: formatAmount(step.amount),
            },
          };
          if (!earlier) sent.push(request);
          const answers = await Promise.all(Array.from({ length: step.copies }, () => client.changeToken(t, request.body, request.key)));
          const statuses = new Set(answers.map((answer) => answer.status));
          expect(statuses.size).toBe(1);
          const [status] = statuses;
          if (status !== 200) {
            // Refused (over the balance or the largest balance): nothing is kept under the key, nothing moved.
            expect(status).toBe(422);
            continue;
          }
          const ids = new Set(answers.map((answer) => answer.body.transaction.transaction_id as string));
          expect(ids.size).toBe(1);
          const [transactionId] = ids;
          expect(transactionId).toMatch(/^\d{20}$/);
          if (request.transactionId === undefined) {
            // Applied now: once, whatever the copies; its id is new.
            expect(answers.filter((answer) => answer.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
            expect(applied.has(transactionId)).toBe(false);
            request.transactionId = transactionId;
            const moved = Number(answers[0].body.transaction.amount.replace('.', ''));
            balance += answers[0].body.transaction.kind === 'load' ? moved : -moved;
            applied.set(transactionId, moved);
          } else {
            expect(transactionId).toBe(request.transactionId);
            expect(answers.every((answer) => answer.headers['idempotent-replayed'] === 'true')).toBe(true);
          }
        }
        const ledger = await t.store.recentLedgerEntries(tokenId, 1000);
        expect(new Set(ledger.map((entry) => entry.transactionId))).toEqual(new Set(applied.keys()));
        expect((await t.store.findToken(tokenId))?.balance).toBe(balance);
        expect(balance).toBeLessThanOrEqual(MAX_BALANCE);
      }),
      withinBudget(storeName === 'memory' ? 100 : 30),
    );
  });
});
