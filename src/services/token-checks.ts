/** The checks every token notification shares, in the contract's order: destination, token, status and dates. */
import { dayOf, formatDay } from '../domain/calendar-days';
import type { Token } from '../domain/tokens';
import { ConflictError, DestinationUnknownError, TokenMismatchError } from '../errors';
import type { Account, StoreTransaction } from '../store/store';

export function requireDestination(account: Account, destinationId: string): void {
  if (!account.destinations.has(destinationId)) throw new DestinationUnknownError();
}

/** The locked token must exist, be the caller's and be at the named destination (any of the caller's when none is named). */
export function requireCallerToken(token: Token | undefined, account: Account, destinationId: string | undefined): Token {
  if (!token || token.sourceId !== account.sourceId || (destinationId !== undefined && token.destinationId !== destinationId)) {
    throw new TokenMismatchError();
  }
  return token;
}

/** The first checks of a notification that moves no money: the destination (413), then the caller's token, locked (428). */
export async function lockCallerToken(
  tx: StoreTransaction,
  account: Account,
  request: { destination_id: string; token_id: string },
): Promise<Token> {
  requireDestination(account, request.destination_id);
  return requireCallerToken(await tx.tokenForUpdate(account.sourceId, request.token_id), account, request.destination_id);
}

/** `deleted` is final: a deleted token takes no money and changes nothing. */
export function requireNotDeleted(token: Token, what: string): void {
  if (token.status === 'deleted') throw new ConflictError(`Token is deleted; a deleted token ${what}`, 'token_deleted');
}

/** Dates are UTC calendar days: a token is usable from its available date to its expiry date, both included. */
export function requireWithinDates(token: Token, now: Date): void {
  const today = dayOf(now);
  if (token.availableDay !== undefined && today < token.availableDay) {
    throw new ConflictError(`Token is not available until ${formatDay(token.availableDay)}`, 'token_not_available');
  }
  if (token.expiryDay !== undefined && today > token.expiryDay) {
    throw new ConflictError(`Token expired on ${formatDay(token.expiryDay)}`, 'token_expired');
  }
}
