import type { RequestHandler, Response } from 'express';
import type { Store } from '../store/store';

const SUCCESS = { success: true, message: 'Success' } as const;

/** Written directly: res.send's content negotiation and freshness checks buy nothing for these answers. */
function sendJson(res: Response, body: string, replayed: boolean): void {
  if (replayed) res.setHeader('Idempotent-Replayed', 'true');
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * Answers success. A signed notification's answer is recorded under its
 * webhook-id first, so that a repeated delivery gets these same bytes.
 */
export async function answer(res: Response, store: Store, replayed: boolean, extra: object = {}): Promise<void> {
  const body = JSON.stringify({ ...SUCCESS, ...extra });
  const webhookId = res.locals.webhookId as string | undefined;
  if (webhookId) await store.recordWebhookDelivery({ webhookId, response: body, receivedAt: new Date() });
  sendJson(res, body, replayed);
}

/** A signed notification already answered 200 is answered again with the same bytes, and not applied again. */
export function replayWebhookDelivery(store: Store): RequestHandler {
  return async (_req, res, next) => {
    const webhookId = res.locals.webhookId as string | undefined;
    const delivered = webhookId === undefined ? undefined : await store.findWebhookDelivery(webhookId);
    if (delivered) sendJson(res, delivered.response, true);
    else next();
  };
}
