import { z } from 'zod';
import { text, tokenId, tokenStatus } from './fields';
import { readEvent, TOKEN_EVENTS } from './token-event';

/** Status Change: `tokes_status` (sic) is the field; `token_status` is accepted as its alias. */
export const statusChangeSchema = z
  .object({
    share_public: text().optional(),
    read_event: readEvent([TOKEN_EVENTS.statusChanged]),
    source_id: text(),
    destination_id: text(),
    token_id: tokenId,
    tokes_status: tokenStatus.optional(),
    token_status: tokenStatus.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.tokes_status && body.token_status && body.tokes_status !== body.token_status) {
      ctx.addIssue({ code: 'custom', path: ['token_status'], message: 'must equal tokes_status when both are sent' });
    }
  })
  .transform(({ tokes_status, token_status, ...rest }) => ({ ...rest, status: tokes_status ?? token_status }));

export type StatusChangeRequest = z.output<typeof statusChangeSchema>;
