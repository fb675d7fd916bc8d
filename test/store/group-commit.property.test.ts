import fc from 'fast-check';
import type { Response } from 'supertest';
import { formatAmount } from '../../src/domain/money';
import { OPERATIONS } from '../../src/operations/catalogue';
import type { PgStore } from '../../src/store/postgres/pg-store';
import { buildTestApp, memoryStoreKind, postgresStoreKind, type TestApp } from '../helpers/app';
import * as client from '../helpers/clients';
import { ACME } from '../helpers/fixtures';
import { bookingChange, bookingCancellation, bookingCreation, tokenCreation } from '../helpers/payloads';
import { TEST_DATABASE_URL, warnIfNoDatabase } from '../helpers/postgres';
import { PROPERTY_TEST_TIMEOUT_MS, withinBudget } from '../helpers/property';

// Each test runs one long property (test/helpers/property.ts).
jest.setTimeout(PROPERTY_TEST_TIMEOUT_MS);

warnIfNoDatabase();

/**
 * Issues 22 and 28: random rounds of every operation, each round sent at once to the PostgreSQL store, where the
 * requests share batches, and one after the other to the memory store. Within a round each request names a
 * token or booking of its own (or makes a new one), so every order of a round gives the same answers: the
 * answers, and then every token's balance, status, dates and ledger and every booking, must be the same.
 */

const TOKENS = 3;
const BOOKINGS = 2;
const STATUSES = ['active', 'freezed', 'disputed', 'deleted'] as const;

type Op =
  | { kind: 'withdraw' | 'unload'; token: number; amount: number; off: boolean }
  | { kind: 'load'; token: number; amount: number; fee: number; off: boolean }
  | { kind: 'schedule' | 'refund'; token: number; amount: number; off: boolean }
  | { kind: 'load token' | 'unload token'; token: number; amount: number }
  | { kind: 'modify token'; token: number; status: 'active' | 'freezed'; day: number }
  | { kind: 'status'; token: number; status: (typeof STATUSES)[number] }
  | { kind: 'expiry' | 'available'; token: number; day: number }
  | { kind: 'modify'; booking: number; guests: number }
  | { kind: 'cancel'; booking: number }
  | { kind: 'create token'; amount: number }
  | { kind: 'create booking' }
  | { kind: 'repeat'; earlier: number };

/** The catalogue operation each kind of request runs (through its own path or a dispatch): a test below checks they are all. */
const OPERATION_OF: Record<Exclude<Op['kind'], 'repeat'>, string> = {
  withdraw: 'withdraw',
  unload: 'unloaded',
  load: 'loaded',
  schedule: 'load_schedule',
  refund: 'refund',
  'load token': 'load_token',
  'unload token': 'unload_token',
  'modify token': 'modify_token',
  status: 'status_change',
  expiry: 'expiry_date',
  available: 'available_date',
  modify: 'modify_booking',
  cancel: 'cancel_booking',
  'create token': 'create_token',
  'create booking': 'create_booking',
};

describe('the requests of the rounds', () => {
  it('run every operation of the catalogue with a service of its own (a dispatch runs one of these)', () => {
    const ofTheirOwn = OPERATIONS.filter((entry) => entry.kind === 'token notification' || entry.kind === 'keyed').map(
      (entry) => entry.name,
    );
    expect([...new Set(Object.values(OPERATION_OF))].sort()).toEqual([...ofTheirOwn].sort());
  });
});

const token = fc.integer({ min: 0, max: TOKENS - 1 });
const amount = fc.oneof(fc.integer({ min: 1, max: 2_000 }), fc.integer({ min: 1, max: 60_000 }));
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constantFrom('withdraw' as const, 'unload' as const), token, amount, off: fc.boolean() }),
  fc.record({ kind: fc.constant('load' as const), token, amount, fee: fc.integer({ min: 0, max: 300 }), off: fc.boolean() }),
  fc.record({ kind: fc.constantFrom('schedule' as const, 'refund' as const), token, amount, off: fc.boolean() }),
  fc.record({ kind: fc.constantFrom('load token' as const, 'unload token' as const), token, amount }),
  fc.record({
    kind: fc.constant('modify token' as const),
    token,
    status: fc.constantFrom('active' as const, 'freezed' as const),
    day: fc.integer({ min: 1, max: 28 }),
  }),
  fc.record({ kind: fc.constant('status' as const), token, status: fc.constantFrom(...STATUSES) }),
  fc.record({ kind: fc.constantFrom('expiry' as const, 'available' as const), token, day: fc.integer({ min: 1, max: 28 }) }),
  fc.record({
    kind: fc.constant('modify' as const),
    booking: fc.integer({ min: 0, max: BOOKINGS - 1 }),
    guests: fc.integer({ min: 1, max: 9 }),
  }),
  fc.record({ kind: fc.constant('cancel' as const), booking: fc.integer({ min: 0, max: BOOKINGS - 1 }) }),
  fc.record({ kind: fc.constant('create token' as const), amount }),
  fc.record({ kind: fc.constant('create booking' as const) }),
  fc.record({ kind: fc.constant('repeat' as const), earlier: fc.nat() }),
);
const rounds = fc.array(fc.array(op, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 6 });

/** A request as both stores get it: which client, its body and key, and what it names (a token or booking, or nothing of before). */
interface Request {
  send: (app: TestApp, tokenIds: string[]) => Promise<Response>;
  resource: string;
}

let cases = 0;
let transactions = 0;

(TEST_DATABASE_URL ? describe : describe.skip)('group commit against the memory store', () => {
  let batched: TestApp;
  let memory: TestApp;
  beforeAll(async () => {
    [batched, memory] = await Promise.all([buildTestApp(postgresStoreKind), buildTestApp(memoryStoreKind)]);
  });
  afterAll(async () => {
    const sizes = (batched.store as PgStore).batchSizes();
    process.stdout.write(`group commit property test, batches by size (upper bound: count): ${JSON.stringify(sizes)}\n`);
    await Promise.all([batched.store.close(), memory.store.close()]);
  });

  /** A request that names a token: its body made with the id of the token in the store it goes to. */
  function onToken(index: number, send: (app: TestApp, tokenId: string) => PromiseLike<Response>): Request {
    return { send: async (app, tokenIds) => send(app, tokenIds[index]), resource: `token ${index}` };
  }

  function notification(tokenId: string, readEvent: string, fields: Record<string, unknown>) {
    return {
      share_public: ACME.share_public,
      read_event: readEvent,
      source_id: 'ACME',
      destination_id: 'D1',
      token_id: tokenId,
      ...fields,
    };
  }

  /** The request of `op`, stating balances as the memory store holds them now (both stores hold the same before a round). */
  async function requestOf(op: Exclude<Op, { kind: 'repeat' }>, caseId: number): Promise<Request> {
    const balanceOf = async (tokenIds: string[], index: number) => (await memory.store.findToken(tokenIds[index]))?.balance ?? 0;
    const ledger = async (
      kind: 'withdraw' | 'unload' | 'load' | 'schedule' | 'refund',
      index: number,
      moved: number,
      fee: number,
      off: boolean,
    ) => {
      transactions += 1;
      const transactionId = `6${String(transactions).padStart(19, '0')}`;
      // Stated once, so that a repeat is the same request byte for byte.
      const before = await balanceOf(memoryTokenIds, index);
      const right = kind === 'withdraw' || kind === 'unload' ? before - moved : before + moved;
      const stated = formatAmount(Math.max(0, right + (off ? 1 : 0)));
      return onToken(index, (app, tokenId) => {
        if (kind === 'withdraw')
          return client.withdraw(
            app,
            notification(tokenId, 'token.withdrawn_created', {
              transaction_id: transactionId,
              withdrawn_amount: formatAmount(moved),
              token_balance: stated,
            }),
          );
        if (kind === 'unload')
          return client.unloaded(
            app,
            notification(tokenId, 'token.unloaded_created', {
              transaction_id: transactionId,
              unload_amount: formatAmount(moved),
              token_balance: stated,
            }),
          );
        if (kind === 'load') {
          return client.loaded(
            app,
            notification(tokenId, 'token.loaded_created', {
              transaction_id: transactionId,
              load_amount: formatAmount(moved),
              fee_amount: formatAmount(fee),
              token_balance: stated,
            }),
          );
        }
        if (kind === 'refund')
          return client.refund(
            app,
            notification(tokenId, 'token.refund_available', {
              transaction_id: transactionId,
              refund_amount: formatAmount(moved),
              token_balance: stated,
            }),
          );
        return client.loadSchedule(
          app,
          notification(tokenId, 'token.load_schedule', {
            transaction_id: transactionId,
            schedule_status: 'credited',
            token_balance: stated,
          }),
        );
      });
    };
    /** A token change under a key of its own: the same key and body on both stores. */
    const tokenChange = (index: number, fields: Record<string, unknown>) => {
      const key = `gcprop-tc-${caseId}-${(transactions += 1)}`;
      return onToken(index, (app, tokenId) =>
        client.changeToken(app, { share_secret: ACME.share_secret, source_id: 'ACME', token_id: tokenId, ...fields }, key),
      );
    };
    switch (op.kind) {
      case 'withdraw':
      case 'unload':
      case 'schedule':
      case 'refund':
        return ledger(op.kind, op.token, op.amount, 0, op.off);
      case 'load token':
        return tokenChange(op.token, { token_event: 'load', load_amount: formatAmount(op.amount) });
      case 'unload token':
        return tokenChange(op.token, { token_event: 'unload', unload_amount: formatAmount(op.amount), destination_id: 'D1' });
      case 'modify token':
        return tokenChange(op.token, {
          token_event: 'modify',
          destination_id: 'D1',
          token_status: op.status,
          expiry_date: `${String(op.day).padStart(2, '0')}-07-2026`,
        });
      case 'load':
        return ledger('load', op.token, op.amount, op.fee, op.off);
      case 'status':
        return onToken(op.token, (app, tokenId) =>
          client.statusChange(app, notification(tokenId, 'token.status_changed', { tokes_status: op.status })),
        );
      case 'expiry':
        return onToken(op.token, (app, tokenId) =>
          client.expiryDate(
            app,
            notification(tokenId, 'token.expiry_updated', { expiry_date: `${String(op.day).padStart(2, '0')}-06-2026` }),
          ),
        );
      case 'available':
        return onToken(op.token, (app, tokenId) =>
          client.availableDate(
            app,
            notification(tokenId, 'token.available_updated', { available_date: `${String(op.day).padStart(2, '0')}-01-2026` }),
          ),
        );
      case 'modify': {
        const key = `gcprop-m-${caseId}-${(transactions += 1)}`;
        const body = bookingChange({ booking_id: bookingIdOf(caseId, op.booking), guests_count: String(op.guests) });
        return { send: async (app) => client.modifyBooking(app, body, key), resource: `booking ${op.booking}` };
      }
      case 'cancel': {
        const key = `gcprop-c-${caseId}-${(transactions += 1)}`;
        const body = bookingCancellation({ booking_id: bookingIdOf(caseId, op.booking) });
        return { send: async (app) => client.cancelBooking(app, body, key), resource: `booking ${op.booking}` };
      }
      case 'create token': {
        const key = `gcprop-t-${caseId}-${(transactions += 1)}`;
        const body = tokenCreation({ load_amount: formatAmount(op.amount) });
        return { send: async (app) => client.createToken(app, body, key), resource: `new ${key}` };
      }
      case 'create booking': {
        const key = `gcprop-b-${caseId}-${(transactions += 1)}`;
        const body = bookingCreation({ booking_id: `NEW-${key}` });
        return { send: async (app) => client.createBooking(app, body, key), resource: `new ${key}` };
      }
    }
  }

  const bookingIdOf = (caseId: number, index: number) => `GP-${caseId}-${index}`;
  let batchedTokenIds: string[] = [];
  let memoryTokenIds: string[] = [];
  /** The transaction ids Load and Unload Token made: each store draws its own, so they compare as "made". */
  const madeTransactionIds = new Set<string>();

  /** An answer with the store's own token ids named by their place, so both stores' answers compare. */
  function comparable(response: Response, tokenIds: string[]) {
    let text = JSON.stringify(response.body);
    tokenIds.forEach((id, index) => {
      text = text.split(`"${id}"`).join(`"token ${index}"`);
    });
    // A token made in the round has an id of its own in each store, and so has a ledger row a token change filed.
    text = text.replace(/"token_id":"\d+"/g, '"token_id":"new"');
    const made = (response.body as { transaction?: { transaction_id: string } }).transaction?.transaction_id;
    if (made !== undefined) {
      madeTransactionIds.add(made);
      text = text.replace(`"transaction_id":"${made}"`, '"transaction_id":"made"');
    }
    return { status: response.status, replayed: response.headers['idempotent-replayed'], body: JSON.parse(text) as unknown };
  }

  it('answers every round as the memory store does, and ends with the same tokens, ledgers, bookings and changes (numbered without a gap)', async () => {
    await fc.assert(
      fc.asyncProperty(rounds, fc.array(amount, { minLength: TOKENS, maxLength: TOKENS }), async (plan, openings) => {
        const caseId = (cases += 1);
        const setUp = async (app: TestApp) => {
          const ids: string[] = [];
          for (const [index, opening] of openings.entries()) {
            const created = await client.createToken(
              app,
              tokenCreation({ load_amount: formatAmount(opening) }),
              `gcprop-s-${caseId}-${index}`,
            );
            expect(created.status).toBe(200);
            ids.push(created.body.token.token_id as string);
          }
          for (let index = 0; index < BOOKINGS; index += 1) {
            await client
              .createBooking(app, bookingCreation({ booking_id: bookingIdOf(caseId, index) }), `gcprop-sb-${caseId}-${index}`)
              .expect(200);
          }
          return ids;
        };
        [batchedTokenIds, memoryTokenIds] = await Promise.all([setUp(batched), setUp(memory)]);
        const changesAfter = async (app: TestApp, after: number) => app.store.changesAfter('ACME', after, 1_000_000);
        const lastSeq = async (app: TestApp) => (await changesAfter(app, 0)).at(-1)?.seq ?? 0;
        const [batchedBefore, memoryBefore] = await Promise.all([lastSeq(batched), lastSeq(memory)]);
        /** The request ids of the answers that applied their request (200, not a replay), by store. */
        const applied = { batched: new Set<string>(), memory: new Set<string>() };
        const noteApplied = (answers: Response[], into: Set<string>) => {
          for (const answer of answers)
            if (answer.status === 200 && answer.headers['idempotent-replayed'] === undefined)
              into.add(answer.headers['x-request-id'] as string);
        };
        const sent: Request[] = [];
        for (const round of plan) {
          const requests: Request[] = [];
          for (const planned of round) {
            const request = planned.kind === 'repeat' ? sent[planned.earlier % Math.max(sent.length, 1)] : await requestOf(planned, caseId);
            // One request per token or booking in a round: any order of the round then gives the same answers.
            if (!request || requests.some((other) => other.resource === request.resource)) continue;
            requests.push(request);
          }
          const batchedAnswers = await Promise.all(requests.map((request) => request.send(batched, batchedTokenIds)));
          const memoryAnswers: Response[] = [];
          for (const request of requests) memoryAnswers.push(await request.send(memory, memoryTokenIds));
          expect(batchedAnswers.map((answer) => comparable(answer, batchedTokenIds))).toEqual(
            memoryAnswers.map((answer) => comparable(answer, memoryTokenIds)),
          );
          noteApplied(batchedAnswers, applied.batched);
          noteApplied(memoryAnswers, applied.memory);
          sent.push(...requests);
        }
        // Contract section 13.1: each store numbered the round's changes on from where it was, without a gap, one per
        // request that applied something (a request that changed nothing has none), and both recorded the same ones.
        const changesOf = async (app: TestApp, before: number, appliedIds: Set<string>) => {
          const changes = await changesAfter(app, before);
          expect(changes.map((change) => change.seq)).toEqual(changes.map((_, i) => before + i + 1));
          const requestIds = changes.map((change) => (change.body.request as { request_id: string }).request_id);
          expect(new Set(requestIds).size).toBe(changes.length);
          expect(requestIds.filter((id) => !appliedIds.has(id))).toEqual([]);
          return changes.map((change) => change.type).sort();
        };
        expect(await changesOf(batched, batchedBefore, applied.batched)).toEqual(await changesOf(memory, memoryBefore, applied.memory));
        for (let index = 0; index < TOKENS; index += 1) {
          const [inBatched, inMemory] = await Promise.all([
            batched.store.findToken(batchedTokenIds[index]),
            memory.store.findToken(memoryTokenIds[index]),
          ]);
          expect({ ...inBatched, tokenId: index }).toEqual({ ...inMemory, tokenId: index });
          const ledgerOf = async (app: TestApp, tokenId: string) =>
            (await app.store.recentLedgerEntries(tokenId, 1000)).map(({ kind, transactionId, amount: moved, fee, tokenBalance }) => ({
              kind,
              transactionId: madeTransactionIds.has(transactionId) ? 'made' : transactionId,
              moved,
              fee,
              tokenBalance,
            }));
          expect(await ledgerOf(batched, batchedTokenIds[index])).toEqual(await ledgerOf(memory, memoryTokenIds[index]));
        }
        for (let index = 0; index < BOOKINGS; index += 1) {
          const id = bookingIdOf(caseId, index);
          expect(await batched.store.findBooking('ACME', id)).toEqual(await memory.store.findBooking('ACME', id));
        }
      }),
      withinBudget(25),
    );
    // The rounds did share batches: a test of batches that never batched would prove nothing.
    expect((batched.store as PgStore).batchSizes()?.largest).toBeGreaterThan(1);
  });
});
