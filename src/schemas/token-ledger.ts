/** The notifications that move money on a token: Withdraw, Loaded, Unloaded, Load Schedule and Refund. */
import { z } from 'zod';
import { amount, oneOf, positiveAmount, ruleClause, TRANSACTION_ID_PATTERN, transactionId } from './fields';
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

/** Loaded: the balance goes up by load_amount; the fee is the sender's and is only recorded. */
export const loadedSchema = z.object({
  ...tokenNotificationFields(readEvent([TOKEN_EVENTS.loaded])),
  transaction_id: transactionId,
  load_amount: positiveAmount,
  fee_amount: amount,
  token_balance: amount,
});

export type LoadedRequest = z.output<typeof loadedSchema>;

/** Unloaded: the published page names this event token.loaded_created, so its own route takes that name too. */
export const unloadedSchema = z.object({
  ...tokenNotificationFields(readEvent([TOKEN_EVENTS.unloaded, TOKEN_EVENTS.loaded])),
  transaction_id: transactionId,
  unload_amount: positiveAmount,
  token_balance: amount,
});

export type UnloadedRequest = z.output<typeof unloadedSchema>;

/** Refund: money the recipient had collected from the token comes back to it (contract section 9.10). */
export const refundSchema = z.object({
  ...tokenNotificationFields(readEvent([TOKEN_EVENTS.refund])),
  transaction_id: transactionId,
  refund_amount: positiveAmount,
  token_balance: amount,
});

export type RefundRequest = z.output<typeof refundSchema>;

export const SCHEDULE_STATUSES = ['credited', 'deleted', 'failure'] as const;

/** Load Schedule: credited carries the ledger row's transaction_id; deleted and failure an empty one. */
export const loadScheduleSchema = z
  .object({
    ...tokenNotificationFields(readEvent([TOKEN_EVENTS.loadSchedule])),
    schedule_status: oneOf(SCHEDULE_STATUSES),
    transaction_id: z
      .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string: 20 digits when credited, else ""') })
      .meta({
        description: '20 digits when schedule_status is credited (the ledger key), an empty string otherwise',
        examples: ['20240121000000000003'],
      }),
    token_balance: amount,
  })
  .superRefine((body, ctx) => {
    const credited = body.schedule_status === 'credited';
    if (credited && !transactionId.safeParse(body.transaction_id).success) {
      ctx.addIssue({ code: 'custom', path: ['transaction_id'], message: 'must be exactly 20 digits when schedule_status is "credited"' });
    }
    if (!credited && body.transaction_id !== '') {
      ctx.addIssue({ code: 'custom', path: ['transaction_id'], message: `must be "" when schedule_status is "${body.schedule_status}"` });
    }
  })
  .meta({
    if: ruleClause({ properties: { schedule_status: { const: 'credited' } }, required: ['schedule_status'] }),
    then: ruleClause({ properties: { transaction_id: { pattern: TRANSACTION_ID_PATTERN.source } } }),
    else: ruleClause({ properties: { transaction_id: { const: '' } } }),
  });

export type LoadScheduleRequest = z.output<typeof loadScheduleSchema>;
