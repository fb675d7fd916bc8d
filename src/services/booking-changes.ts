/** Create, Modify and Cancel Booking: keyed by `{randomkey}`, in the contract's order of checks. */
import { BOOKING_FIELDS, BOOKING_TEXT_FIELDS, bookingRuleProblems, type Booking } from '../domain/bookings';
import { textBytesProblem } from '../domain/text-bytes';
import { ConflictError, NotFoundError } from '../errors';
import type { BookingChangeRequest, CancelBookingRequest, CreateBookingRequest } from '../schemas/booking';
import { validationError } from '../schemas/validate';
import type { StoreTransaction } from '../store/store';
import type { Outcome } from './apply-once';
import { fingerprintOf, requirePartner, requireRoomFor, type KeyedCall } from './keyed-requests';

/**
 * The steps Modify and Cancel share: partner (403), the booking locked (404), then its key: the first answer
 * on a replay, a 422 when the key was used for another request.
 */
async function lockBookingUnderKey(
  tx: StoreTransaction,
  { partnerId, key, account, keys }: KeyedCall<unknown>,
  bookingId: string,
  fingerprint: string,
): Promise<{ replay: string } | { booking: Booking }> {
  requirePartner(partnerId, account);
  const booking = await tx.bookingForUpdate(account.sourceId, bookingId);
  if (!booking) throw new NotFoundError('Booking not found', 'booking_not_found');
  const replay = await keys.underRandomKey({ sourceId: account.sourceId, key, fingerprint });
  return replay === undefined ? { booking } : { replay: replay.response };
}

/**
 * A booking the account does not have yet (409 when it does). The booking is read before the key: the create
 * that made it committed both at once, so when a retry (or a concurrent copy) sees the booking it also sees
 * the key, and is answered as the replay it is rather than as a 409.
 */
export async function createBooking(
  tx: StoreTransaction,
  { partnerId, key, body, account, now, quotas, keys }: KeyedCall<CreateBookingRequest>,
): Promise<Outcome<Booking>> {
  requirePartner(partnerId, account);
  const existing = await tx.bookingForUpdate(account.sourceId, body.booking_id);
  const replay = await keys.underRandomKey(
    { sourceId: account.sourceId, key, fingerprint: fingerprintOf('create_booking', body.booking_id, Object.entries(body.fields)) },
    () => {
      if (existing) throw new ConflictError(`Booking ${body.booking_id} already exists`, 'booking_exists');
    },
  );
  if (replay) return replay;
  await requireRoomFor(tx, account.sourceId, 'bookings', quotas);
  const booking: Booking = {
    sourceId: account.sourceId,
    bookingId: body.booking_id,
    fields: body.fields,
    status: 'active',
    updatedAt: now,
  };
  await tx.createBooking(booking);
  return { replayed: false, result: booking };
}

/** PATCH: only the fields sent change; a cancelled booking stays as it is (409); the whole booking must then still keep its rules (400). */
export async function modifyBooking(tx: StoreTransaction, call: KeyedCall<BookingChangeRequest>): Promise<Outcome<Booking>> {
  const { body, now } = call;
  const found = await lockBookingUnderKey(
    tx,
    call,
    body.booking_id,
    fingerprintOf('modify_booking', body.booking_id, Object.entries(body.changes)),
  );
  if ('replay' in found) return { replayed: true, response: found.replay };
  const { booking } = found;
  if (booking.status === 'cancelled')
    throw new ConflictError('Booking is cancelled; a cancelled booking cannot be modified', 'booking_cancelled');
  const fields = { ...booking.fields, ...body.changes };
  const tooLong = textBytesProblem(fields, BOOKING_TEXT_FIELDS);
  const problems = [...bookingRuleProblems(fields), ...(tooLong ? [tooLong] : [])];
  if (problems.length > 0) throw validationError(problems, 'booking_rule');
  const changed = BOOKING_FIELDS.some((field) => fields[field] !== booking.fields[field]);
  const result: Booking = { ...booking, fields, updatedAt: changed ? now : booking.updatedAt };
  if (changed) await tx.saveBooking(result);
  return { replayed: false, result };
}

/** The booking becomes cancelled; cancelling a cancelled booking changes nothing and answers 200. */
export async function cancelBooking(tx: StoreTransaction, call: KeyedCall<CancelBookingRequest>): Promise<Outcome<Booking>> {
  const found = await lockBookingUnderKey(tx, call, call.body.booking_id, fingerprintOf('cancel_booking', call.body.booking_id));
  if ('replay' in found) return { replayed: true, response: found.replay };
  const { booking } = found;
  if (booking.status === 'cancelled') return { replayed: false, result: booking };
  const result: Booking = { ...booking, status: 'cancelled', updatedAt: call.now };
  await tx.saveBooking(result);
  return { replayed: false, result };
}
