import { z } from 'zod';
import { amount, positiveAmount, transactionId } from './fields';
import { tokenNotificationFields } from './token-notification';
import { readEvent, TOKEN_EVENTS } from './token-event';

/** Withdraw: every field required; amounts come out as integer minor units. */
export const withdrawSchema = z.object({
  ...tokenNotificationFields(readEvent([TOKEN_EVENTS.withdrawn])),
  transaction_id: transactionId,
  withdrawn_amount: positiveAmount,
  token_balance: amount,
});

export type WithdrawRequest = z.output<typeof withdrawSchema>;
