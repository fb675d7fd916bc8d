import type { Change } from '../store/store';

/**
 * A change as everything that hands it on shows it (contract section 13): the feed's page, a webhook's body and a
 * NATS message. One function, so the three never differ; a re-send serialises the same stored change to the same bytes.
 */
export function changeView(change: Change): Record<string, unknown> {
  return {
    id: change.id,
    source_id: change.sourceId,
    seq: change.seq,
    type: change.type,
    created_at: change.createdAt.toISOString(),
    ...change.body,
  };
}
