import { ForbiddenError, NotFoundError, UnprocessableError } from '../errors';
import { BOOKING_FIELDS, bookingRuleProblems, type BookingChangeRequest } from '../schemas/booking';
import { validationError } from '../schemas/validate';
import type { Account, Booking, StoreTransaction } from '../store/store';

export interface BookingChangeOutcome {
  booking: Booking;
  replayed: boolean;
}

/** The request by value: fields in a fixed order, values already normalised by the schema. */
function fingerprint(request: BookingChangeRequest): string {
  const changes = BOOKING_FIELDS.filter((field) => request.changes[field] !== undefined).map((field) => [
    field,
    request.changes[field],
  ]);
  return JSON.stringify([request.booking_id, changes]);
}

export async function modifyBooking(
  tx: StoreTransaction,
  partnerId: string,
  key: string,
  request: BookingChangeRequest,
  account: Account,
  now: Date,
): Promise<BookingChangeOutcome> {
  if (partnerId !== account.sourceId) throw new ForbiddenError('partnerid in the path does not match source_id');
  const booking = await tx.bookingForUpdate(account.sourceId, request.booking_id);
  if (!booking) throw new NotFoundError('Booking not found', 'booking_not_found');
  const requestFingerprint = fingerprint(request);
  const earlier = await tx.findBookingChange(account.sourceId, key);
  if (earlier) {
    if (earlier.fingerprint === requestFingerprint) return { booking: earlier.result, replayed: true };
    throw new UnprocessableError('randomkey was already used for a different booking change', 'key_reused');
  }
  const fields = { ...booking.fields, ...request.changes };
  const problems = bookingRuleProblems(fields);
  if (problems.length > 0) throw validationError(problems, 'booking_rule');
  const changed = BOOKING_FIELDS.some((field) => fields[field] !== booking.fields[field]);
  const result: Booking = { ...booking, fields, updatedAt: changed ? now : booking.updatedAt };
  if (changed) await tx.saveBooking(result);
  await tx.recordBookingChange({ sourceId: account.sourceId, key, fingerprint: requestFingerprint, result, createdAt: now });
  return { booking: result, replayed: false };
}
