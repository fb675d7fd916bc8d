import { z } from 'zod';
import { text, tokenId } from './fields';

/** Query of GET /admin/events; the filters are optional. */
export const eventQuerySchema = z.object({
  source_id: text().optional(),
  token_id: tokenId.optional(),
  outcome: z.enum(['accepted', 'replayed', 'rejected'], { error: 'must be accepted, replayed or rejected' }).optional(),
  limit: z
    .string()
    .regex(/^\d{1,4}$/, 'must be a whole number from 1 to 1000')
    .transform(Number)
    .refine((n) => n >= 1 && n <= 1000, 'must be a whole number from 1 to 1000')
    .default(100),
});
