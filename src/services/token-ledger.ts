/**
 * The notifications that move money on a token: Withdraw, Loaded, Unloaded, a credited Load Schedule and Refund. Each
 * is one ledger row, keyed by the account and its transaction_id across every kind, so a retry applies nothing
 * again and a key reused for anything else is refused without revealing what it was used for.
 */
import type { LedgerEntry, LedgerKind } from '../domain/ledger';
import { formatAmount, type MinorUnits } from '../domain/money';
import type { Token } from '../domain/tokens';
import { ConflictError, UnprocessableError } from '../errors';
import type { LoadedRequest, LoadScheduleRequest, RefundRequest, UnloadedRequest, WithdrawRequest } from '../schemas/token-ledger';
import type { Account, StoreTransaction } from '../store/store';
import { APPLIED, ledgerReplay, type Outcome } from './apply-once';
import { lockCallerToken, requireCallerToken, requireDestination, requireNotDeleted, requireWithinDates } from './token-checks';

/** The largest balance an amount can state: 9999999999.99. */
export const MAX_BALANCE: MinorUnits = 999_999_999_999;

/** A ledger request as every kind states it; a credited schedule states no amount (it is the difference). */
interface LedgerRequest {
  kind: LedgerKind;
  destinationId: string;
  tokenId: string;
  transactionId: string;
  amount?: MinorUnits;
  fee: MinorUnits;
  tokenBalance: MinorUnits;
}

/** The balance the sender states must be the ledger's (409), which the message states. */
function requireStatedBalance(stated: MinorUnits, expected: MinorUnits): void {
  if (stated !== expected) {
    throw new ConflictError(
      `token_balance ${formatAmount(stated)} does not match the ledger: expected ${formatAmount(expected)}`,
      'balance_mismatch',
    );
  }
}

/** Same key, same request: the kind and every field the sender controls, compared by value. */
function sameRequest(recorded: LedgerEntry, request: LedgerRequest): boolean {
  return (
    recorded.kind === request.kind &&
    recorded.destinationId === request.destinationId &&
    recorded.tokenId === request.tokenId &&
    (request.amount === undefined || recorded.amount === request.amount) &&
    recorded.fee === request.fee &&
    recorded.tokenBalance === request.tokenBalance
  );
}

/**
 * The steps every ledger operation shares, in the contract's order: destination (413), token (428), replay or
 * key reuse (422), then the kind's own rules, which return the balance after the row (409, 422), then
 * token_balance against it (409). On success the token and its row are written in the caller's unit.
 */
async function applyLedgerRequest(
  tx: StoreTransaction,
  request: LedgerRequest,
  account: Account,
  now: Date,
  balanceAfter: (token: Token) => MinorUnits,
): Promise<Outcome> {
  requireDestination(account, request.destinationId);
  const [locked, recorded] = await tx.lockTokenAndFindLedgerEntry(account.sourceId, request.tokenId, request.transactionId);
  const token = requireCallerToken(locked, account, request.destinationId);
  const replay = ledgerReplay(recorded, (entry) => sameRequest(entry, request));
  if (replay) return replay;
  const after = balanceAfter(token);
  requireStatedBalance(request.tokenBalance, after);
  await recordMovement(tx, token, { kind: request.kind, transactionId: request.transactionId, balance: after, fee: request.fee }, now);
  return APPLIED;
}

/** Refund gives back what withdrawals took, no more: each withdrawal adds to what it may give, each refund takes off. */
function refundableAfter(token: Token, kind: LedgerKind, moved: MinorUnits): MinorUnits {
  const refundable = token.refundable ?? 0;
  if (kind === 'withdrawal') return refundable + moved;
  // Refunds give back what the recipient collected; loads and unloads, the platform's or the partner's, do not count.
  if (kind === 'refund') return refundable - moved;
  return refundable;
}

/** A movement of money as its ledger row states it: what kind, under which key, the balance after it and the fee. */
interface Movement {
  kind: LedgerKind;
  transactionId: string;
  balance: MinorUnits;
  fee: MinorUnits;
}

/**
 * The token with its new balance (and what Refund may still give back), and the ledger row that explains it, in the
 * caller's unit; the row as written.
 */
export async function recordMovement(
  tx: StoreTransaction,
  token: Token,
  movement: Movement,
  now: Date,
  changes: Partial<Token> = {},
): Promise<LedgerEntry> {
  const moved = Math.abs(movement.balance - token.balance);
  await tx.saveToken({ ...token, ...changes, balance: movement.balance, refundable: refundableAfter(token, movement.kind, moved) });
  // The token's own strings, equal to the request's: a million ledger rows then share them.
  const entry: LedgerEntry = {
    kind: movement.kind,
    transactionId: movement.transactionId,
    sourceId: token.sourceId,
    destinationId: token.destinationId,
    tokenId: token.tokenId,
    amount: moved,
    fee: movement.fee,
    tokenBalance: movement.balance,
    createdAt: now,
  };
  await tx.recordLedgerEntry(entry);
  return entry;
}

/** An amount taken off the balance must be there (422). */
export function takenOff(token: Token, amount: MinorUnits, field: string): MinorUnits {
  if (amount > token.balance) {
    throw new UnprocessableError(
      `${field} ${formatAmount(amount)} is more than the token balance ${formatAmount(token.balance)}`,
      'over_balance',
    );
  }
  return token.balance - amount;
}

export function withdraw(tx: StoreTransaction, request: WithdrawRequest, account: Account, now: Date): Promise<Outcome> {
  const ledgerRequest: LedgerRequest = {
    kind: 'withdrawal',
    destinationId: request.destination_id,
    tokenId: request.token_id,
    transactionId: request.transaction_id,
    amount: request.withdrawn_amount,
    fee: 0,
    tokenBalance: request.token_balance,
  };
  return applyLedgerRequest(tx, ledgerRequest, account, now, (token) => {
    if (token.status !== 'active') {
      throw new ConflictError(`Token is ${token.status}; only an active token can be withdrawn from`, 'token_not_active');
    }
    requireWithinDates(token, now);
    return takenOff(token, request.withdrawn_amount, 'withdrawn_amount');
  });
}

/** A load may not take the balance past what an amount can state (422). */
export function addedTo(token: Token, amount: MinorUnits, field: string): MinorUnits {
  if (token.balance + amount > MAX_BALANCE) {
    throw new UnprocessableError(
      `${field} ${formatAmount(amount)} would take the token balance ${formatAmount(token.balance)} over ${formatAmount(MAX_BALANCE)}`,
      'over_maximum',
    );
  }
  return token.balance + amount;
}

/** The fee is the sender's: recorded with the row, never taken from the token. */
export function load(tx: StoreTransaction, request: LoadedRequest, account: Account, now: Date): Promise<Outcome> {
  const ledgerRequest: LedgerRequest = {
    kind: 'load',
    destinationId: request.destination_id,
    tokenId: request.token_id,
    transactionId: request.transaction_id,
    amount: request.load_amount,
    fee: request.fee_amount,
    tokenBalance: request.token_balance,
  };
  return applyLedgerRequest(tx, ledgerRequest, account, now, (token) => {
    requireNotDeleted(token, 'cannot be loaded');
    requireWithinDates(token, now);
    return addedTo(token, request.load_amount, 'load_amount');
  });
}

/** The sender takes its money back: allowed on a frozen, disputed or expired token, never on a deleted one. */
export function unload(tx: StoreTransaction, request: UnloadedRequest, account: Account, now: Date): Promise<Outcome> {
  const ledgerRequest: LedgerRequest = {
    kind: 'unload',
    destinationId: request.destination_id,
    tokenId: request.token_id,
    transactionId: request.transaction_id,
    amount: request.unload_amount,
    fee: 0,
    tokenBalance: request.token_balance,
  };
  return applyLedgerRequest(tx, ledgerRequest, account, now, (token) => {
    requireNotDeleted(token, 'cannot be unloaded');
    return takenOff(token, request.unload_amount, 'unload_amount');
  });
}

/**
 * A credited schedule sets the balance to token_balance, never lower than it is (409): the difference is its
 * ledger row, checked as a load. Deleted and failed schedules change nothing, and their token_balance must be
 * the balance, so a sender out of step learns it (409).
 */
export async function settleLoadSchedule(
  tx: StoreTransaction,
  request: LoadScheduleRequest,
  account: Account,
  now: Date,
): Promise<Outcome> {
  if (request.schedule_status !== 'credited') {
    const token = await lockCallerToken(tx, account, request);
    requireStatedBalance(request.token_balance, token.balance);
    return APPLIED;
  }
  const ledgerRequest: LedgerRequest = {
    kind: 'schedule',
    destinationId: request.destination_id,
    tokenId: request.token_id,
    transactionId: request.transaction_id,
    fee: 0,
    tokenBalance: request.token_balance,
  };
  return applyLedgerRequest(tx, ledgerRequest, account, now, (token) => {
    requireNotDeleted(token, 'cannot be loaded');
    requireWithinDates(token, now);
    if (request.token_balance < token.balance) {
      throw new ConflictError(
        `token_balance ${formatAmount(request.token_balance)} is below the token balance ${formatAmount(token.balance)}: a credited schedule only adds`,
        'balance_below_current',
      );
    }
    return request.token_balance;
  });
}

/**
 * Money the recipient had collected comes back to the token: allowed unless it is deleted (a frozen, disputed or
 * expired token can be refunded); never more than withdrawals took from it less what was refunded before (422,
 * stating the most), nor past the largest balance (422).
 */
export function refund(tx: StoreTransaction, request: RefundRequest, account: Account, now: Date): Promise<Outcome> {
  const ledgerRequest: LedgerRequest = {
    kind: 'refund',
    destinationId: request.destination_id,
    tokenId: request.token_id,
    transactionId: request.transaction_id,
    amount: request.refund_amount,
    fee: 0,
    tokenBalance: request.token_balance,
  };
  return applyLedgerRequest(tx, ledgerRequest, account, now, (token) => {
    requireNotDeleted(token, 'cannot be refunded');
    const refundable = token.refundable ?? 0;
    if (request.refund_amount > refundable) {
      throw new UnprocessableError(
        `refund_amount ${formatAmount(request.refund_amount)} is more than can be refunded: at most ${formatAmount(refundable)} (withdrawn from the token less refunded to it)`,
        'over_refundable',
      );
    }
    return addedTo(token, request.refund_amount, 'refund_amount');
  });
}
