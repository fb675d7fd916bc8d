/** Create, Modify and Cancel Booking: keyed by `{randomkey}`, in the contract's order of checks. */
import { ConflictError, NotFoundError } from '../errors';
import { BOOKING_FIELDS, bookingRuleProblems, type BookingChangeRequest, type CancelBookingRequest, type CreateBookingRequest } from '../schemas/booking';
import { validationError } from '../schemas/validate';
import type { Account, Booking, StoreTransaction } from '../store/store';
import { earlierAnswer, fingerprintOf, isReplayOf, keyReused, requirePartner, type KeyedOutcome, type RequestKey } from './keyed-requests';

function orderedFields(fields: Partial<Booking['fields']>): Array<[string, string]> {
  return BOOKING_FIELDS.filter((field) => fields[field] !== undefined).map((field) => [field, fields[field] as string]);
}

async function lockExistingBooking(tx: StoreTransaction, account: Account, bookingId: string): Promise<Booking> {
  const booking = await tx.bookingForUpdate(account.sourceId, bookingId);
  if (!booking) throw new NotFoundError('Booking not found', 'booking_not_found');
  return booking;
}

/**
 * A booking the account does not have yet (409 when it does). A retry of the create that made it is a replay:
 * the key is looked at first for that, so the booking it created does not turn the retry into a 409.
 */
export async function createBooking(
  tx: StoreTransaction,
  partnerId: string,
  key: string,
  request: CreateBookingRequest,
  account: Account,
  now: Date,
): Promise<KeyedOutcome<Booking>> {
  requirePartner(partnerId, account);
  const requestKey: RequestKey = { sourceId: account.sourceId, key, fingerprint: fingerprintOf('create_booking', request.booking_id, orderedFields(request.fields)) };
  const earlier = await tx.findKeyedRequest(account.sourceId, key);
  if (isReplayOf(earlier, requestKey)) return { replayed: true, response: earlier.response };
  if (await tx.bookingForUpdate(account.sourceId, request.booking_id)) {
    throw new ConflictError(`Booking ${request.booking_id} already exists`, 'booking_exists');
  }
  if (earlier) throw keyReused();
  const booking: Booking = { sourceId: account.sourceId, bookingId: request.booking_id, fields: request.fields, status: 'active', updatedAt: now };
  await tx.createBooking(booking);
  return { replayed: false, result: booking, requestKey };
}

/** PATCH: only the fields sent change; the whole booking must then still keep its rules (400); a cancelled booking stays as it is (409). */
export async function modifyBooking(
  tx: StoreTransaction,
  partnerId: string,
  key: string,
  request: BookingChangeRequest,
  account: Account,
  now: Date,
): Promise<KeyedOutcome<Booking>> {
  requirePartner(partnerId, account);
  const booking = await lockExistingBooking(tx, account, request.booking_id);
  const requestKey: RequestKey = { sourceId: account.sourceId, key, fingerprint: fingerprintOf('modify_booking', request.booking_id, orderedFields(request.changes)) };
  const response = earlierAnswer(await tx.findKeyedRequest(account.sourceId, key), requestKey);
  if (response !== undefined) return { replayed: true, response };
  if (booking.status === 'cancelled') throw new ConflictError('Booking is cancelled; a cancelled booking cannot be modified', 'booking_cancelled');
  const fields = { ...booking.fields, ...request.changes };
  const problems = bookingRuleProblems(fields);
  if (problems.length > 0) throw validationError(problems, 'booking_rule');
  const changed = BOOKING_FIELDS.some((field) => fields[field] !== booking.fields[field]);
  const result: Booking = { ...booking, fields, updatedAt: changed ? now : booking.updatedAt };
  if (changed) await tx.saveBooking(result);
  return { replayed: false, result, requestKey };
}

/** The booking becomes cancelled; cancelling a cancelled booking changes nothing and answers 200. */
export async function cancelBooking(
  tx: StoreTransaction,
  partnerId: string,
  key: string,
  request: CancelBookingRequest,
  account: Account,
  now: Date,
): Promise<KeyedOutcome<Booking>> {
  requirePartner(partnerId, account);
  const booking = await lockExistingBooking(tx, account, request.booking_id);
  const requestKey: RequestKey = { sourceId: account.sourceId, key, fingerprint: fingerprintOf('cancel_booking', request.booking_id) };
  const response = earlierAnswer(await tx.findKeyedRequest(account.sourceId, key), requestKey);
  if (response !== undefined) return { replayed: true, response };
  if (booking.status === 'cancelled') return { replayed: false, result: booking, requestKey };
  const result: Booking = { ...booking, status: 'cancelled', updatedAt: now };
  await tx.saveBooking(result);
  return { replayed: false, result, requestKey };
}
