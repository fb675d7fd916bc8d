/** The token notifications that change no money: Status Change, Expiry Date and Available Date. Idempotent by nature. */
import { formatDay } from '../domain/calendar-days';
import { canChangeStatus, type Token } from '../domain/tokens';
import { ConflictError } from '../errors';
import type { StatusChangeRequest } from '../schemas/status-change';
import type { AvailableDateRequest, ExpiryDateRequest } from '../schemas/token-dates';
import { validationError } from '../schemas/validate';
import type { Account, StoreTransaction } from '../store/store';
import { APPLIED, lockCallerToken, requireNotDeleted, type OperationOutcome } from './token-checks';

export async function changeTokenStatus(tx: StoreTransaction, request: StatusChangeRequest, account: Account): Promise<OperationOutcome> {
  const token = await lockCallerToken(tx, account, request);
  const target = request.status;
  if (target === undefined || target === token.status) return APPLIED;
  if (!canChangeStatus(token.status, target)) {
    throw new ConflictError(`Token is deleted; a deleted token cannot become ${target}`, 'status_final');
  }
  await tx.saveToken({ ...token, status: target });
  return APPLIED;
}

/** A date the token already has changes nothing; a deleted token's dates cannot change; the expiry is never before the available date. */
async function setTokenDates(tx: StoreTransaction, token: Token, dates: Pick<Token, 'availableDay' | 'expiryDay'>): Promise<OperationOutcome> {
  const changed = { ...token, ...dates };
  if (changed.availableDay === token.availableDay && changed.expiryDay === token.expiryDay) return APPLIED;
  requireNotDeleted(token, 'keeps its dates');
  if (changed.availableDay !== undefined && changed.expiryDay !== undefined && changed.expiryDay < changed.availableDay) {
    const problem =
      dates.expiryDay === undefined
        ? { field: 'available_date', message: `must not be after the token's expiry date (${formatDay(changed.expiryDay)})` }
        : { field: 'expiry_date', message: `must not be before the token's available date (${formatDay(changed.availableDay)})` };
    throw validationError([problem], 'dates_out_of_order');
  }
  await tx.saveToken(changed);
  return APPLIED;
}

export async function changeExpiryDate(tx: StoreTransaction, request: ExpiryDateRequest, account: Account): Promise<OperationOutcome> {
  const token = await lockCallerToken(tx, account, request);
  if (request.expiry_date === undefined) return APPLIED;
  return setTokenDates(tx, token, { expiryDay: request.expiry_date });
}

export async function changeAvailableDate(tx: StoreTransaction, request: AvailableDateRequest, account: Account): Promise<OperationOutcome> {
  const token = await lockCallerToken(tx, account, request);
  return setTokenDates(tx, token, { availableDay: request.available_date });
}
