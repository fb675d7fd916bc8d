import type { z } from 'zod';
import { text, tokenId } from './fields';

/** What every token notification but Status Change starts with, in the interface specification's order. */
export function tokenNotificationFields<ReadEvent extends z.ZodType>(readEvent: ReadEvent) {
  return { share_public: text(), read_event: readEvent, source_id: text(), destination_id: text(), token_id: tokenId };
}
