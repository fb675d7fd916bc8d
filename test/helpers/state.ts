import type { Store } from '../../src/store/store';
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
  return store.transaction(async (tx) => ({
    tokens: await Promise.all(Object.values(TOKENS).map((token) => tx.tokenForUpdate(token.token_id))),
    bookings: await Promise.all([BOOKING, OTHERS_BOOKING].map((b) => tx.bookingForUpdate(b.source_id, b.booking_id))),
    withdrawals: await Promise.all(transactionIds.map((id) => tx.findWithdrawal(id))),
    bookingChanges: await Promise.all(bookingKeys.map((key) => tx.findBookingChange(BOOKING.source_id, key))),
  }));
}
