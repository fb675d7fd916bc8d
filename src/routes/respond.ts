import type { Response } from 'express';

export const SUCCESS = { success: true, message: 'Success' } as const;

/** Success, marking an answer that repeats an earlier accepted request. */
export function sendSuccess(res: Response, replayed: boolean, extra: object = {}): void {
  if (replayed) res.set('Idempotent-Replayed', 'true');
  res.status(200).json({ ...SUCCESS, ...extra });
}
