import { formatDay } from '../domain/calendar-days';
import { isoTime } from '../domain/iso-time';
import { formatAmount } from '../domain/money';
import type { LedgerEntry } from '../domain/ledger';
import type { Token } from '../domain/tokens';
import { TOKEN_DETAIL_FIELDS } from '../schemas/token-creation';

/** The token as its account sees it: identity, status, balance, currency and dates, then the details it was created with. */
export function tokenView(token: Token): Record<string, string> {
  const view: Record<string, string> = {
    token_id: token.tokenId,
    source_id: token.sourceId,
    destination_id: token.destinationId,
    status: token.status,
    balance: formatAmount(token.balance),
  };
  if (token.currency !== undefined) view.destination_currency = token.currency;
  if (token.availableDay !== undefined) view.available_date = formatDay(token.availableDay);
  if (token.expiryDay !== undefined) view.expiry_date = formatDay(token.expiryDay);
  for (const field of TOKEN_DETAIL_FIELDS) {
    const value = token.details?.[field];
    if (value !== undefined) view[field] = value;
  }
  return view;
}

/** A ledger row as /admin/tokens lists it, and as a change of money carries it (contract section 13.1). */
export function ledgerEntryView(entry: LedgerEntry): Record<string, string> {
  // Two literals, not a spread into one: a money change renders this on every request.
  const { transactionId: transaction_id, kind } = entry;
  const amount = formatAmount(entry.amount);
  const token_balance = formatAmount(entry.tokenBalance);
  const created_at = isoTime(entry.createdAt.getTime());
  if (kind === 'load') return { transaction_id, kind, amount, fee_amount: formatAmount(entry.fee), token_balance, created_at };
  return { transaction_id, kind, amount, token_balance, created_at };
}

/** Load Token's and Unload Token's answer: the token after the move, and the row filed under the id the service made. */
export function tokenMovementView({ token, entry }: { token: Token; entry: LedgerEntry }): {
  token: Record<string, string>;
  transaction: Record<string, string>;
} {
  return {
    token: tokenView(token),
    transaction: {
      transaction_id: entry.transactionId,
      kind: entry.kind === 'unload_token' ? 'unload' : 'load',
      amount: formatAmount(entry.amount),
      token_balance: formatAmount(entry.tokenBalance),
    },
  };
}
