import { z } from 'zod';
import { text, tokenIdText } from './fields';

/** Query of GET /admin/events; the filters are optional. */
export const eventQuerySchema = z.object({
  source_id: text().optional(),
  token_id: tokenIdText.optional(),
  outcome: z.enum(['accepted', 'replayed', 'rejected'], { error: 'must be accepted, replayed or rejected' }).optional(),
  limit: z
    .string()
    .regex(/^(?:[1-9]\d{0,2}|1000)$/, 'must be a whole number from 1 to 1000')
    .transform(Number)
    .default(100),
});

/** Query of GET /admin/endpoints/{id}/attempts: a page, newest first, optionally before an attempt's id. */
export const attemptsQuerySchema = z.object({
  limit: z
    .string()
    .regex(/^(?:[1-9]\d?|100)$/, 'must be a whole number from 1 to 100')
    .transform(Number)
    .default(50),
  before: z
    .string()
    .regex(/^[1-9]\d{0,14}$/, 'must be the id of an attempt, a whole number from 1')
    .transform(Number)
    .optional(),
});

/** Body of POST /admin/endpoints/{id}/replay: the account whose changes after `after` are sent again. */
export const replaySchema = z.strictObject({
  source_id: text(),
  after: z
    .number({ error: 'must be a whole number, 0 or more' })
    .int('must be a whole number, 0 or more')
    .min(0, 'must be a whole number, 0 or more'),
});
