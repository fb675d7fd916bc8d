import { z } from 'zod';
import { TOKEN_STATUSES } from '../domain/tokens';
import { ruleClause, text, tokenId, tokenStatus } from './fields';
import { readEvent, TOKEN_EVENTS } from './token-event';

const STATUS_FIELDS: readonly string[] = ['tokes_status', 'token_status'];
/**
 * "stat" in a field's name, in any case: "status" and the contract's own example of a typo, "token_stats". One
 * pattern for the JSON Schema (which has no flags) and the check.
 */
const STATUS_IN_NAME = '[Ss][Tt][Aa][Tt]';
const statusInName = new RegExp(STATUS_IN_NAME);

/**
 * Where a body may set a token's status, an unknown field whose name says stat(us) is a typo of the status field: a
 * 200 would tell its sender the status changed. Each such field is a 400 naming the field the service reads.
 */
export function refuseStatusTypos(body: object, ctx: z.RefinementCtx, statusFields: readonly string[], statusIs: string): void {
  for (const field of Object.keys(body)) {
    if (statusInName.test(field) && !statusFields.includes(field)) {
      ctx.addIssue({ code: 'custom', path: [field], message: `is an unknown field: the status is ${statusIs}` });
    }
  }
}

/** The same rule in the JSON Schema: a property name with stat in it is one of the status fields. */
export function statusTyposRule(statusFields: readonly string[]) {
  return { propertyNames: { anyOf: [{ not: { pattern: STATUS_IN_NAME } }, { enum: statusFields }] } };
}

/**
 * Status Change: `tokes_status` (sic) is the field; `token_status` is accepted as its alias. Other unknown fields
 * are ignored, but one whose name says stat(us) is a typo of the status field: a 200 would tell its sender the status
 * changed. The JSON Schema states both rules as the checks below make them.
 */
export const statusChangeSchema = z
  .looseObject({
    share_public: text().optional(),
    read_event: readEvent([TOKEN_EVENTS.statusChanged]),
    source_id: text(),
    destination_id: text(),
    token_id: tokenId,
    tokes_status: tokenStatus.optional(),
    token_status: tokenStatus.optional(),
  })
  .superRefine((body, ctx) => {
    refuseStatusTypos(body, ctx, STATUS_FIELDS, 'tokes_status (or its alias token_status)');
    if (body.tokes_status && body.token_status && body.tokes_status !== body.token_status) {
      ctx.addIssue({ code: 'custom', path: ['token_status'], message: 'must equal tokes_status when both are sent' });
    }
  })
  // Other unknown fields are ignored, as JSON Schema's default says without zod's `additionalProperties: {}`, which
  // client generators turn into an index signature that lets any misspelt field through.
  .meta({
    additionalProperties: undefined,
    ...statusTyposRule(STATUS_FIELDS),
    if: ruleClause({
      properties: { tokes_status: { type: 'string' }, token_status: { type: 'string' } },
      required: ['tokes_status', 'token_status'],
    }),
    then: {
      anyOf: TOKEN_STATUSES.map((status) =>
        ruleClause({ properties: { tokes_status: { const: status }, token_status: { const: status } } }),
      ),
    },
  })
  .transform(({ share_public, read_event, source_id, destination_id, token_id, tokes_status, token_status }) => ({
    share_public,
    read_event,
    source_id,
    destination_id,
    token_id,
    status: tokes_status ?? token_status,
  }));

export type StatusChangeRequest = z.output<typeof statusChangeSchema>;
