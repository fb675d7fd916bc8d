import type { Booking } from '../../src/domain/bookings';
import type { LedgerEntry } from '../../src/domain/ledger';
import type { Token } from '../../src/domain/tokens';
import type { KeyedRequest, Store } from '../../src/store/store';
import { ACME, BOOKING, OTHERS_BOOKING, TOKENS } from './fixtures';

/** Reads of what the store holds, as a test checks it: no unit of work, no row lock. */
export async function readToken(store: Store, tokenId: string) {
  return store.findToken(tokenId);
}

export async function readLedgerEntry(store: Store, transactionId: string, sourceId = ACME.source_id) {
  return store.findLedgerEntry(sourceId, transactionId);
}

export async function readBooking(store: Store, bookingId = BOOKING.booking_id, sourceId = BOOKING.source_id) {
  return store.findBooking(sourceId, bookingId);
}

/**
 * Everything a request could have changed: every fixture token and booking,
 * and the ledger rows (of ACME) and request keys the test's requests named.
 */
export async function readState(store: Store, transactionIds: string[] = [], bookingKeys: string[] = []) {
  const state = {
    tokens: [] as Array<Token | undefined>,
    bookings: [] as Array<Booking | undefined>,
    ledger: [] as Array<LedgerEntry | undefined>,
    keyedRequests: [] as Array<KeyedRequest | undefined>,
  };
  for (const token of Object.values(TOKENS)) state.tokens.push(await store.findToken(token.token_id));
  for (const booking of [BOOKING, OTHERS_BOOKING]) state.bookings.push(await store.findBooking(booking.source_id, booking.booking_id));
  for (const id of transactionIds) state.ledger.push(await store.findLedgerEntry(ACME.source_id, id));
  // Request keys are read as a unit reads them: a plain lookup, no row is locked.
  for (const key of bookingKeys) state.keyedRequests.push(await store.transaction((tx) => tx.findKeyedRequest(BOOKING.source_id, key)));
  return state;
}

/**
 * Sends a request that must fail and checks its exact status and body, and that it changed nothing readState
 * reads: the fixture tokens and bookings, and the ledger rows and request keys it named.
 */
export async function expectRejection(
  store: Store,
  send: () => Promise<{ status: number; body: unknown }>,
  status: number,
  expectedBody: object,
  named: { transactionIds?: string[]; keys?: string[] } = {},
) {
  const before = await readState(store, named.transactionIds, named.keys);
  const response = await send();
  expect({ status: response.status, body: response.body }).toEqual({ status, body: expectedBody });
  expect(await readState(store, named.transactionIds, named.keys)).toEqual(before);
}
