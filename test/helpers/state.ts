import type { Booking, BookingChange, Store, Token, Withdrawal } from '../../src/store/store';
import { BOOKING, OTHERS_BOOKING, TOKENS } from './fixtures';

export async function readToken(store: Store, tokenId: string) {
  return store.transaction((tx) => tx.tokenForUpdate(tokenId));
}

export async function readWithdrawal(store: Store, transactionId: string) {
  return store.transaction((tx) => tx.findWithdrawal(transactionId));
}

export async function readBooking(store: Store, bookingId = BOOKING.booking_id, sourceId = BOOKING.source_id) {
  return store.transaction((tx) => tx.bookingForUpdate(sourceId, bookingId));
}

/**
 * Everything a request could have changed: every fixture token and booking,
 * and the ledger rows and booking keys the test's requests named.
 */
export async function readState(store: Store, transactionIds: string[] = [], bookingKeys: string[] = []) {
  return store.transaction(async (tx) => {
    // One after the other: a database transaction runs one statement at a time.
    const state = {
      tokens: [] as Array<Token | undefined>,
      bookings: [] as Array<Booking | undefined>,
      withdrawals: [] as Array<Withdrawal | undefined>,
      bookingChanges: [] as Array<BookingChange | undefined>,
    };
    for (const token of Object.values(TOKENS)) state.tokens.push(await tx.tokenForUpdate(token.token_id));
    for (const booking of [BOOKING, OTHERS_BOOKING]) state.bookings.push(await tx.bookingForUpdate(booking.source_id, booking.booking_id));
    for (const id of transactionIds) state.withdrawals.push(await tx.findWithdrawal(id));
    for (const key of bookingKeys) state.bookingChanges.push(await tx.findBookingChange(BOOKING.source_id, key));
    return state;
  });
}
