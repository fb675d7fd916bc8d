import { z } from 'zod';
import { amount, eventName, positiveAmount, text, tokenId, transactionId } from './fields';

export const WITHDRAWN_EVENT = 'token.withdrawn_created';

/** Withdraw: every field required; amounts come out as integer minor units. */
export const withdrawSchema = z.object({
  share_public: text(),
  read_event: eventName(WITHDRAWN_EVENT),
  source_id: text(),
  destination_id: text(),
  token_id: tokenId,
  transaction_id: transactionId,
  withdrawn_amount: positiveAmount,
  token_balance: amount,
});

export type WithdrawRequest = z.output<typeof withdrawSchema>;
