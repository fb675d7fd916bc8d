/** Expiry Date and Available Date: a token's dates, as UTC calendar days. */
import { z } from 'zod';
import { calendarDay } from './fields';
import { tokenNotificationFields } from './token-notification';
import { readEvent, TOKEN_EVENTS } from './token-event';

/** Without expiry_date the notification changes nothing. */
export const expiryDateSchema = z.object({
  ...tokenNotificationFields(readEvent([TOKEN_EVENTS.expiryUpdated])),
  expiry_date: calendarDay.optional(),
});

export type ExpiryDateRequest = z.output<typeof expiryDateSchema>;

export const availableDateSchema = z.object({
  ...tokenNotificationFields(readEvent([TOKEN_EVENTS.availableUpdated])),
  available_date: calendarDay,
});

export type AvailableDateRequest = z.output<typeof availableDateSchema>;
