import type { ServerResponse } from 'node:http';
import { sendJson, stateOf } from '../exchange';
import type { Store } from '../store/store';

/** What an operation's handler reports: whether it repeated an applied request, and what else the answer carries. */
export interface Answer {
  replayed: boolean;
  extra?: object;
}

const SUCCESS = { success: true, message: 'Success' } as const;
const SUCCESS_BODY = JSON.stringify(SUCCESS);
const REPLAYED_HEADERS = { 'Idempotent-Replayed': 'true' } as const;

function sendSuccess(res: ServerResponse, body: string, replayed: boolean): void {
  stateOf(res).replayed = replayed;
  sendJson(res, 200, body, replayed ? REPLAYED_HEADERS : undefined);
}

/**
 * Answers success. A signed notification's answer is recorded under its
 * webhook-id first, so that a repeated delivery gets these same bytes.
 */
export async function answer(res: ServerResponse, store: Store, { replayed, extra }: Answer): Promise<void> {
  const body = extra ? JSON.stringify({ ...SUCCESS, ...extra }) : SUCCESS_BODY;
  const { webhookId } = stateOf(res);
  if (webhookId) await store.recordWebhookDelivery({ webhookId, response: body, receivedAt: new Date() });
  sendSuccess(res, body, replayed);
}

/** A signed notification already answered 200 is answered again with the same bytes, and not applied again: true then. */
export async function replayWebhookDelivery(res: ServerResponse, store: Store): Promise<boolean> {
  const { webhookId } = stateOf(res);
  const delivered = webhookId === undefined ? undefined : await store.findWebhookDelivery(webhookId);
  if (!delivered) return false;
  sendSuccess(res, delivered.response, true);
  return true;
}
