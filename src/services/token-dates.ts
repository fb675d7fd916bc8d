/** Expiry Date and Available Date: a token's dates, as UTC calendar days. Idempotent by nature: a date the token has changes nothing. */
import { formatDay } from '../domain/calendar-days';
import type { Token } from '../domain/tokens';
import type { AvailableDateRequest, ExpiryDateRequest } from '../schemas/token-dates';
import { validationError } from '../schemas/validate';
import type { Account, StoreTransaction } from '../store/store';
import { APPLIED, type Outcome } from './apply-once';
import { lockCallerToken, requireNotDeleted } from './token-checks';

/** A date the token already has changes nothing; a deleted token's dates cannot change; the expiry is never before the available date. */
async function setTokenDates(tx: StoreTransaction, token: Token, dates: Pick<Token, 'availableDay' | 'expiryDay'>): Promise<Outcome> {
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

export async function changeExpiryDate(tx: StoreTransaction, request: ExpiryDateRequest, account: Account): Promise<Outcome> {
  const token = await lockCallerToken(tx, account, request);
  if (request.expiry_date === undefined) return APPLIED;
  return setTokenDates(tx, token, { expiryDay: request.expiry_date });
}

export async function changeAvailableDate(tx: StoreTransaction, request: AvailableDateRequest, account: Account): Promise<Outcome> {
  const token = await lockCallerToken(tx, account, request);
  return setTokenDates(tx, token, { availableDay: request.available_date });
}
