import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { formatAmount } from '../../src/domain/money';
import { OPERATIONS, type KeyedOperation, type Operation, type TokenNotification } from '../../src/operations/catalogue';
import { applyOnce, type Answer, type DeliveryKey } from '../../src/services/apply-once';
import type { Quotas } from '../../src/services/keyed-requests';
import { MemoryStore } from '../../src/store/memory-store';
import type { PgStore } from '../../src/store/postgres/pg-store';
import type { Account, Store, StoreTransaction } from '../../src/store/store';
import { ACME, BOOKING, fixtureSeed, TOKENS } from '../helpers/fixtures';
import { bookingCancellation, bookingChange, bookingCreation, tokenCreation } from '../helpers/payloads';
import { emptyTables, openEmptyPgStore, TEST_DATABASE_URL, warnIfNoDatabase } from '../helpers/postgres';
import { PROPERTY_TEST_TIMEOUT_MS, withinBudget } from '../helpers/property';

// Each test runs one long property (test/helpers/property.ts).
jest.setTimeout(PROPERTY_TEST_TIMEOUT_MS);

warnIfNoDatabase();

/**
 * Issue 22: units that contend inside one batch. Every round's units reach the batched PostgreSQL store at once,
 * most of them on the same three tokens, two bookings, a few keys, webhook ids and the account's quota; the memory
 * store then runs the same units one after the other, in the order the batched store finished them (a unit holds
 * every row it read until it ends, so that order is one in which each saw the ones before it). Every answer,
 * refusals included, and then the tokens, their ledgers, the bookings and the account's holdings must agree.
 * group-commit.property.test.ts sends requests over HTTP, one per token or booking in a round; this one makes
 * them collide.
 */

const NOW = new Date('2026-01-02T03:04:05.678Z');
/** ACME starts with 9 tokens and 1 booking: two more of each fit, and the quota refuses the rest; six keys, then the key limit. */
const QUOTAS: Quotas = { tokensPerAccount: 11, bookingsPerAccount: 3, keysPerAccount: 6 };
const LEDGER_TOKENS = [TOKENS.active, TOKENS.atD2, TOKENS.small];
const STATUSES = ['active', 'freezed', 'disputed', 'deleted'] as const;
/** A key, booking id or webhook id drawn from a few, so that requests meet under them. */
const few = fc.integer({ min: 0, max: 2 });
/** Most requests unsigned; some delivered under a webhook id, which several may share. */
const signedAs = fc.option(few, { freq: 3 });

type Op = { signedAs: number | null } & (
  | { kind: 'withdraw' | 'unload' | 'load' | 'schedule' | 'refund'; token: number; amount: number; fee: number; off: boolean }
  | { kind: 'status'; token: number; status: (typeof STATUSES)[number] }
  | { kind: 'expiry' | 'available'; token: number; day: number }
  | { kind: 'create token'; amount: number; key: number }
  | { kind: 'create booking' | 'cancel booking'; booking: number; key: number }
  | { kind: 'modify booking'; booking: number; key: number; guests: number }
  | { kind: 'repeat'; earlier: number }
);

const token = fc.integer({ min: 0, max: LEDGER_TOKENS.length - 1 });
const amount = fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 20_000 }));
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constantFrom('withdraw' as const, 'unload' as const, 'load' as const, 'schedule' as const, 'refund' as const),
      token,
      amount,
      fee: fc.integer({ min: 0, max: 50 }),
      off: fc.boolean(),
      signedAs,
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('status' as const), token, status: fc.constantFrom(...STATUSES), signedAs }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constantFrom('expiry' as const, 'available' as const),
      token,
      day: fc.integer({ min: 1, max: 28 }),
      signedAs,
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('create token' as const), amount, key: few, signedAs }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constantFrom('create booking' as const, 'cancel booking' as const), booking: few, key: few, signedAs }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('modify booking' as const),
      booking: few,
      key: few,
      guests: fc.integer({ min: 1, max: 9 }),
      signedAs,
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('repeat' as const), earlier: fc.nat(), signedAs: fc.constant(null) }) },
);
const rounds = fc.array(fc.array(op, { minLength: 2, maxLength: 12 }), { minLength: 1, maxLength: 4 });

function entryNamed<Kind extends Operation['kind']>(name: string, kind: Kind): Extract<Operation, { kind: Kind }> {
  const entry = OPERATIONS.find((candidate) => candidate.name === name);
  if (entry?.kind !== kind) throw new Error(`no ${kind} operation ${name}`);
  return entry as Extract<Operation, { kind: Kind }>;
}

const NOTIFICATIONS = {
  withdraw: entryNamed('withdraw', 'token notification'),
  unload: entryNamed('unloaded', 'token notification'),
  load: entryNamed('loaded', 'token notification'),
  schedule: entryNamed('load_schedule', 'token notification'),
  refund: entryNamed('refund', 'token notification'),
  status: entryNamed('status_change', 'token notification'),
  expiry: entryNamed('expiry_date', 'token notification'),
  available: entryNamed('available_date', 'token notification'),
};
const KEYED = {
  'create token': entryNamed('create_token', 'keyed'),
  'create booking': entryNamed('create_booking', 'keyed'),
  'modify booking': entryNamed('modify_booking', 'keyed'),
  'cancel booking': entryNamed('cancel_booking', 'keyed'),
};

/**
 * The catalogue's operations that run a service of their own (a dispatch runs one of these) and this property
 * does not send, each with why: a test below fails when the catalogue gains one that is in neither list.
 */
const NOT_SENT: Record<string, string> = {
  modify_token: 'its answer names a transaction id each store draws for itself; group-commit.property.test.ts sends it',
  load_token: 'its answer names a transaction id each store draws for itself; group-commit.property.test.ts sends it',
  unload_token: 'its answer names a transaction id each store draws for itself; group-commit.property.test.ts sends it',
};

describe('the operations the colliding units run', () => {
  it('are every operation of the catalogue with a service of its own, but those NOT_SENT says why', () => {
    const sent = [...Object.values(NOTIFICATIONS), ...Object.values(KEYED)].map((entry) => entry.name);
    const ofTheirOwn = OPERATIONS.filter((entry) => entry.kind === 'token notification' || entry.kind === 'keyed').map(
      (entry) => entry.name,
    );
    expect([...sent, ...Object.keys(NOT_SENT)].sort()).toEqual([...ofTheirOwn].sort());
  });
});

/** One request, validated as its route would: what its unit of work needs besides the store and the account. */
type Request = { delivery?: DeliveryKey } & (
  { notification: TokenNotification; input: unknown } | { keyed: KeyedOperation; key: string; input: unknown }
);

/** The request's unit of work, as the route runs it (routes/apply-in-one-unit.ts), the answer's body being what the service made. */
function unitOf(request: Request, account: Account): (tx: StoreTransaction) => Promise<Answer> {
  return (tx) =>
    applyOnce(
      tx,
      () => NOW,
      request.delivery,
      QUOTAS.keysPerAccount,
      async (keys) => {
        if ('notification' in request) {
          const outcome = await request.notification.service(tx, request.input as never, account, NOW);
          return { replayed: outcome.replayed, body: 'applied' };
        }
        const outcome = await request.keyed.service(tx, {
          partnerId: account.sourceId,
          key: request.key,
          body: request.input as never,
          account,
          now: NOW,
          quotas: QUOTAS,
          keys,
        });
        return { replayed: outcome.replayed, body: outcome.replayed ? outcome.response : JSON.stringify(outcome.result) };
      },
    );
}

const FIXTURE_TOKEN_IDS = new Set<string>(Object.values(TOKENS).map((t) => t.token_id));

/** An outcome both stores can show alike: a token made in the round has an id of its own in each. */
function comparable(outcome: PromiseSettledResult<Answer>): unknown {
  if (outcome.status === 'rejected') {
    const error = outcome.reason as Error & { reason?: string };
    return { refused: error.constructor.name, reason: error.reason, message: error.message };
  }
  return {
    replayed: outcome.value.replayed,
    body: outcome.value.body.replace(/"tokenId":"(\d+)"/g, (match, id: string) => (FIXTURE_TOKEN_IDS.has(id) ? match : '"tokenId":"new"')),
  };
}

/** The id of the token an outcome made, when it made one. */
function madeTokenId(outcome: PromiseSettledResult<Answer>): string | undefined {
  if (outcome.status !== 'fulfilled' || outcome.value.replayed) return undefined;
  const id = /"tokenId":"(\d+)"/.exec(outcome.value.body)?.[1];
  return id && !FIXTURE_TOKEN_IDS.has(id) ? id : undefined;
}

/** Each unit's place in `finished` (units that ran again count by their last run): the order to replay them in. */
function replayOrder(finished: number[], count: number): number[] {
  const last = new Map<number, number>();
  finished.forEach((unit, place) => last.set(unit, place));
  return Array.from({ length: count }, (_, unit) => unit).sort((a, b) => (last.get(a) ?? 0) - (last.get(b) ?? 0));
}

let transactions = 0;
let cases = 0;

(TEST_DATABASE_URL ? describe : describe.skip)('group commit: colliding units against the memory store', () => {
  let batched: PgStore;
  beforeAll(async () => {
    batched = await openEmptyPgStore();
  });
  afterAll(async () => {
    process.stdout.write(`group commit colliding units, batches by size (upper bound: count): ${JSON.stringify(batched.batchSizes())}\n`);
    await batched.close();
  });

  it('answers every unit as the memory store does in the order the batches finished them, and ends in the same state', async () => {
    await fc.assert(
      fc.asyncProperty(rounds, async (plan) => {
        const caseId = (cases += 1);
        await emptyTables();
        await batched.loadSeed(fixtureSeed());
        const memory = new MemoryStore();
        await memory.loadSeed(fixtureSeed());
        const [batchedAccount, memoryAccount] = (await Promise.all([batched.findAccount('ACME'), memory.findAccount('ACME')])) as [
          Account,
          Account,
        ];
        const bookingIds = [BOOKING.booking_id, `GC-${caseId}-1`, `GC-${caseId}-2`];
        const sent: Request[] = [];
        const madeTokens: Array<[string, string]> = [];

        /** The request of `op`; a ledger request states the balance it leaves when the requests of its round before it applied. */
        const requestOf = (planned: Exclude<Op, { kind: 'repeat' }>, balances: number[]): Request | undefined => {
          const signed = (body: unknown, key = ''): DeliveryKey | undefined =>
            planned.signedAs === null
              ? undefined
              : {
                  sourceId: 'ACME',
                  webhookId: `msg-${caseId}-${planned.signedAs}`,
                  bodyDigest: createHash('sha256')
                    .update(JSON.stringify([body, key]))
                    .digest(),
                };
          const keyed = (name: keyof typeof KEYED, body: Record<string, unknown>, key: number): Request => {
            const entry = KEYED[name];
            const randomKey = `key-${caseId}-${key}`;
            return { keyed: entry, key: randomKey, input: entry.schema.parse(body), delivery: signed(body, randomKey) };
          };
          switch (planned.kind) {
            case 'withdraw':
            case 'unload':
            case 'load':
            case 'schedule':
            case 'refund': {
              const target = LEDGER_TOKENS[planned.token];
              transactions += 1;
              const moved = planned.amount;
              const after =
                planned.kind === 'withdraw' || planned.kind === 'unload'
                  ? balances[planned.token] - moved
                  : balances[planned.token] + moved;
              if (!planned.off && after >= 0) balances[planned.token] = after;
              const body = {
                share_public: ACME.share_public,
                read_event: NOTIFICATIONS[planned.kind].event,
                source_id: 'ACME',
                destination_id: target.destination_id,
                token_id: target.token_id,
                transaction_id: `7${String(transactions).padStart(19, '0')}`,
                token_balance: formatAmount(Math.max(0, after + (planned.off ? 1 : 0))),
                ...(planned.kind === 'withdraw' && { withdrawn_amount: formatAmount(moved) }),
                ...(planned.kind === 'unload' && { unload_amount: formatAmount(moved) }),
                ...(planned.kind === 'load' && { load_amount: formatAmount(moved), fee_amount: formatAmount(planned.fee) }),
                ...(planned.kind === 'schedule' && { schedule_status: 'credited' }),
                ...(planned.kind === 'refund' && { refund_amount: formatAmount(moved) }),
              };
              return {
                notification: NOTIFICATIONS[planned.kind],
                input: NOTIFICATIONS[planned.kind].schema.parse(body),
                delivery: signed(body),
              };
            }
            case 'status':
            case 'expiry':
            case 'available': {
              const target = LEDGER_TOKENS[planned.token];
              const entry = NOTIFICATIONS[planned.kind];
              const day = 'day' in planned ? String(planned.day).padStart(2, '0') : '';
              const body = {
                share_public: ACME.share_public,
                read_event: entry.event,
                source_id: 'ACME',
                destination_id: target.destination_id,
                token_id: target.token_id,
                ...(planned.kind === 'status' && { tokes_status: planned.status }),
                ...(planned.kind === 'expiry' && { expiry_date: `${day}-06-2026` }),
                ...(planned.kind === 'available' && { available_date: `${day}-01-2026` }),
              };
              return { notification: entry, input: entry.schema.parse(body), delivery: signed(body) };
            }
            case 'create token':
              return keyed('create token', tokenCreation({ load_amount: formatAmount(planned.amount) }), planned.key);
            case 'create booking':
              return keyed('create booking', bookingCreation({ booking_id: bookingIds[planned.booking] }), planned.key);
            case 'cancel booking':
              return keyed('cancel booking', bookingCancellation({ booking_id: bookingIds[planned.booking] }), planned.key);
            case 'modify booking':
              return keyed(
                'modify booking',
                bookingChange({ booking_id: bookingIds[planned.booking], guests_count: String(planned.guests) }),
                planned.key,
              );
          }
        };

        for (const round of plan) {
          const balances = await Promise.all(LEDGER_TOKENS.map(async (t) => (await memory.findToken(t.token_id))?.balance ?? 0));
          const requests = round.flatMap((planned) => {
            const request = planned.kind === 'repeat' ? sent[planned.earlier % Math.max(sent.length, 1)] : requestOf(planned, balances);
            return request ? [request] : [];
          });
          const finished: number[] = [];
          // A unit in flight first, so that the round's units queue behind it and form one batch.
          const opener = batched.transaction(async () => undefined);
          const units = requests.map((request, index) =>
            batched.transaction(async (tx) => {
              try {
                return await unitOf(request, batchedAccount)(tx);
              } finally {
                finished.push(index);
              }
            }),
          );
          const [, batchedOutcomes] = await Promise.all([opener, Promise.allSettled(units)]);
          const memoryOutcomes: Array<PromiseSettledResult<Answer>> = [];
          for (const index of replayOrder(finished, requests.length)) {
            [memoryOutcomes[index]] = await Promise.allSettled([memory.transaction(unitOf(requests[index], memoryAccount))]);
          }
          expect(batchedOutcomes.map(comparable)).toEqual(memoryOutcomes.map(comparable));
          batchedOutcomes.forEach((outcome, index) => {
            const made = madeTokenId(outcome);
            const madeInMemory = madeTokenId(memoryOutcomes[index]);
            if (made && madeInMemory) madeTokens.push([made, madeInMemory]);
          });
          sent.push(...requests);
        }

        for (const { token_id: tokenId } of LEDGER_TOKENS) {
          expect(await batched.findToken(tokenId)).toEqual(await memory.findToken(tokenId));
          expect(await batched.recentLedgerEntries(tokenId, 1_000)).toEqual(await memory.recentLedgerEntries(tokenId, 1_000));
        }
        for (const [inBatched, inMemory] of madeTokens) {
          expect({ ...(await batched.findToken(inBatched)), tokenId: 'new' }).toEqual({
            ...(await memory.findToken(inMemory)),
            tokenId: 'new',
          });
        }
        for (const bookingId of bookingIds)
          expect(await batched.findBooking('ACME', bookingId)).toEqual(await memory.findBooking('ACME', bookingId));
        const holdings = (store: Store) => store.transaction((tx) => tx.holdingsForUpdate('ACME'));
        expect(await holdings(batched)).toEqual(await holdings(memory));
        await memory.close();
      }),
      withinBudget(40),
    );
    // The rounds did share batches: a property of batches that never batched would prove nothing.
    expect(batched.batchSizes()?.largest).toBeGreaterThan(4);
  });
});
