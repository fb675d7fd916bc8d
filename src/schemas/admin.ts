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
