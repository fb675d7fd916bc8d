import type { RequestHandler, Response } from 'express';
import { sendJson } from '../middleware/send-json';
import type { Store, StoreTransaction } from '../store/store';

/** What an operation's handler reports: whether it repeated an applied request, and what else the answer carries. */
export interface Answer {
  replayed: boolean;
  extra?: object;
}

const SUCCESS = { success: true, message: 'Success' } as const;
const SUCCESS_BODY = JSON.stringify(SUCCESS);
const REPLAYED_HEADERS = { 'Idempotent-Replayed': 'true' } as const;

function sendSuccess(res: Response, body: string, replayed: boolean): void {
  res.locals.replayed = replayed;
  sendJson(res, 200, body, replayed ? REPLAYED_HEADERS : undefined);
}

/**
 * The last step of every operation's chain: runs its one service call in one
 * unit of work and answers success. A signed notification's answer is
 * recorded under its webhook-id first, so that a repeated delivery gets these
 * same bytes.
 */
export function respond(store: Store, serve: (tx: StoreTransaction, res: Response) => Promise<Answer>): RequestHandler {
  return async function respond(_req, res) {
    const { replayed, extra } = await store.transaction((tx) => serve(tx, res));
    const body = extra ? JSON.stringify({ ...SUCCESS, ...extra }) : SUCCESS_BODY;
    const { webhookId } = res.locals;
    if (webhookId) await store.recordWebhookDelivery({ webhookId, response: body, receivedAt: new Date() });
    sendSuccess(res, body, replayed);
  };
}

/** A signed notification already answered 200 is answered again with the same bytes, and not applied again. */
export function replaySignedDelivery(store: Store): RequestHandler {
  return async function replaySignedDelivery(_req, res, next) {
    const { webhookId } = res.locals;
    const delivered = webhookId === undefined ? undefined : await store.findWebhookDelivery(webhookId);
    if (!delivered) return next();
    sendSuccess(res, delivered.response, true);
  };
}

/** Names the operation a route serves, for metrics and the event log, before anything can refuse it. */
export function operation(name: string): RequestHandler {
  return function nameOperation(_req, res, next) {
    res.locals.operation = name;
    next();
  };
}
