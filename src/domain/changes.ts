/** What a change says happened (contract section 13.1), one per applied request; the feed filters by these names. */
export const CHANGE_TYPES = [
  'token.created',
  'token.modified',
  'token.status_changed',
  'token.dates_changed',
  'token.withdrawn',
  'token.loaded',
  'token.unloaded',
  'token.refunded',
  'token.schedule_credited',
  'booking.created',
  'booking.modified',
  'booking.cancelled',
] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];
