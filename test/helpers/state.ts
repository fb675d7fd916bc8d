import type { Booking, BookingChange, Store, Token, Withdrawal } from '../../src/store/store';
import { ACME, BOOKING, OTHERS_BOOKING, TOKENS } from './fixtures';

/** Reads of what the store holds, as a test checks it: no unit of work, no row lock. */
export async function readToken(store: Store, tokenId: string) {
  return store.findToken(tokenId);
}

export async function readWithdrawal(store: Store, transactionId: string, sourceId = ACME.source_id) {
  return store.findWithdrawal(sourceId, transactionId);
}

export async function readBooking(store: Store, bookingId = BOOKING.booking_id, sourceId = BOOKING.source_id) {
  return store.findBooking(sourceId, bookingId);
}

/**
 * Everything a request could have changed: every fixture token and booking,
 * and the ledger rows (of ACME) and booking keys the test's requests named.
 */
export async function readState(store: Store, transactionIds: string[] = [], bookingKeys: string[] = []) {
  const state = {
    tokens: [] as Array<Token | undefined>,
    bookings: [] as Array<Booking | undefined>,
    withdrawals: [] as Array<Withdrawal | undefined>,
    bookingChanges: [] as Array<BookingChange | undefined>,
  };
  for (const token of Object.values(TOKENS)) state.tokens.push(await store.findToken(token.token_id));
  for (const booking of [BOOKING, OTHERS_BOOKING]) state.bookings.push(await store.findBooking(booking.source_id, booking.booking_id));
  for (const id of transactionIds) state.withdrawals.push(await store.findWithdrawal(ACME.source_id, id));
  // Booking keys are read as a unit reads them: a plain lookup, no row is locked.
  for (const key of bookingKeys) state.bookingChanges.push(await store.transaction((tx) => tx.findBookingChange(BOOKING.source_id, key)));
  return state;
}
