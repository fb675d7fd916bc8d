import { ConflictError, DestinationUnknownError, TokenMismatchError, UnprocessableError } from '../errors';
import { formatAmount } from '../money';
import { formatDay, type TokenStatus } from '../schemas/fields';
import type { StatusChangeRequest } from '../schemas/status-change';
import type { WithdrawRequest } from '../schemas/withdraw';
import type { Account, StoreTransaction, Token, Withdrawal } from '../store/store';

export interface OperationOutcome {
  /** True when the request repeated one already applied: nothing was applied again. */
  replayed: boolean;
}

function requireDestination(account: Account, destinationId: string): void {
  if (!account.destinations.has(destinationId)) throw new DestinationUnknownError();
}

/** The locked token must exist, be the caller's and be at the named destination. */
function requireCallerToken(token: Token | undefined, account: Account, destinationId: string): Token {
  if (!token || token.sourceId !== account.sourceId || token.destinationId !== destinationId) {
    throw new TokenMismatchError();
  }
  return token;
}

const DAY_MS = 86_400_000;

/** Dates are UTC calendar days: a token is usable from its available date to its expiry date, both included. */
function requireWithinDates(token: Token, now: Date): void {
  const today = Math.floor(now.getTime() / DAY_MS);
  if (token.availableDay !== undefined && today < token.availableDay) {
    throw new ConflictError(`Token is not available until ${formatDay(token.availableDay)}`, 'token_not_available');
  }
  if (token.expiryDay !== undefined && today > token.expiryDay) {
    throw new ConflictError(`Token expired on ${formatDay(token.expiryDay)}`, 'token_expired');
  }
}

/** `deleted` is final; any other status may move to any status. */
function canChangeStatus(from: TokenStatus, to: TokenStatus): boolean {
  return from === to || from !== 'deleted';
}

export async function changeTokenStatus(tx: StoreTransaction, request: StatusChangeRequest, account: Account): Promise<OperationOutcome> {
  requireDestination(account, request.destination_id);
  const token = requireCallerToken(await tx.tokenForUpdate(request.token_id), account, request.destination_id);
  const target = request.status;
  if (target === undefined || target === token.status) return { replayed: false };
  if (!canChangeStatus(token.status, target)) {
    throw new ConflictError(`Token is deleted; a deleted token cannot become ${target}`, 'status_final');
  }
  await tx.saveToken({ ...token, status: target });
  return { replayed: false };
}

/** Same key, same withdrawal: every field the sender controls, compared by value. */
function sameWithdrawal(recorded: Withdrawal, request: WithdrawRequest): boolean {
  return (
    recorded.sourceId === request.source_id &&
    recorded.destinationId === request.destination_id &&
    recorded.tokenId === request.token_id &&
    recorded.amount === request.withdrawn_amount &&
    recorded.tokenBalance === request.token_balance
  );
}

export async function withdraw(tx: StoreTransaction, request: WithdrawRequest, account: Account, now: Date): Promise<OperationOutcome> {
  requireDestination(account, request.destination_id);
  const [locked, recorded] = await tx.lockTokenAndFindWithdrawal(request.token_id, account.sourceId, request.transaction_id);
  const token = requireCallerToken(locked, account, request.destination_id);
  if (recorded) {
    if (sameWithdrawal(recorded, request)) return { replayed: true };
    throw new UnprocessableError('transaction_id was already used for a different withdrawal', 'key_reused');
  }
  if (token.status !== 'active') {
    throw new ConflictError(`Token is ${token.status}; only an active token can be withdrawn from`, 'token_not_active');
  }
  requireWithinDates(token, now);
  if (request.withdrawn_amount > token.balance) {
    throw new UnprocessableError(
      `withdrawn_amount ${formatAmount(request.withdrawn_amount)} is more than the token balance ${formatAmount(token.balance)}`,
      'over_balance',
    );
  }
  const balanceAfter = token.balance - request.withdrawn_amount;
  if (request.token_balance !== balanceAfter) {
    throw new ConflictError(
      `token_balance ${formatAmount(request.token_balance)} does not match the ledger: expected ${formatAmount(balanceAfter)}`,
      'balance_mismatch',
    );
  }
  await tx.saveToken({ ...token, balance: balanceAfter });
  // The token's own strings, equal to the request's: a million ledger rows then share them.
  await tx.recordWithdrawal({
    transactionId: request.transaction_id,
    sourceId: token.sourceId,
    destinationId: token.destinationId,
    tokenId: token.tokenId,
    amount: request.withdrawn_amount,
    tokenBalance: request.token_balance,
    createdAt: now,
  });
  return { replayed: false };
}
