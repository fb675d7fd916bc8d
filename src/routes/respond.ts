import { createHash } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { UnprocessableError } from '../errors';
import { authenticatedAccount } from '../middleware/authenticate';
import { sendJson } from '../middleware/send-json';
import type { KeyedOutcome, RequestKey } from '../services/keyed-requests';
import type { Delivery, Store, StoreTransaction } from '../store/store';

/** What an operation's handler reports: whether it repeated an applied request, and what the answer carries. */
export interface Answer {
  replayed: boolean;
  /** What the answer carries besides success and message (a booking, a token). */
  extra?: object;
  /** A replay's first answer, byte for byte, when its key kept it (operations keyed by {randomkey}). */
  response?: string;
  /** The {randomkey} under which the answer is kept, in the unit of the change. */
  requestKey?: RequestKey;
}

/** A keyed operation's outcome as the answer: the first answer's bytes, or what it made, shown by `view`. */
export function keyedAnswer<Result>(outcome: KeyedOutcome<Result>, view: (result: Result) => object): Answer {
  if (outcome.replayed) return { replayed: true, response: outcome.response };
  return { replayed: false, extra: view(outcome.result), requestKey: outcome.requestKey };
}

const SUCCESS = { success: true, message: 'Success' } as const;
const SUCCESS_BODY = JSON.stringify(SUCCESS);
const REPLAYED_HEADERS = { 'Idempotent-Replayed': 'true' } as const;

/** A signed request's identity: its account's webhook-id and the digest of the bytes signed. */
function signedDelivery(res: Response): Omit<Delivery, 'response' | 'receivedAt'> | undefined {
  const { webhookId, rawBody } = res.locals;
  if (webhookId === undefined || rawBody === undefined) return undefined;
  return { sourceId: authenticatedAccount(res).sourceId, webhookId, bodyDigest: createHash('sha256').update(rawBody).digest() };
}

/**
 * The last step of every operation's chain: its one service call, in one
 * unit of work, then the success answer. A request keyed by {randomkey} is
 * kept with its answer in that unit. A signed request is remembered in
 * that same unit, under its account's webhook-id with a digest of its body:
 * a repeat with the same body gets the first answer's bytes and applies
 * nothing; the same id with another body is a 422. A change is never kept
 * without its delivery record, nor the other way round.
 */
export function respond(store: Store, now: () => Date, serve: (tx: StoreTransaction, res: Response) => Promise<Answer>): RequestHandler {
  return async function respond(_req, res) {
    const delivery = signedDelivery(res);
    const answer = await store.transaction(async (tx) => {
      const earlier = delivery && (await tx.findDelivery(delivery.sourceId, delivery.webhookId));
      if (earlier) {
        if (!earlier.bodyDigest.equals(delivery.bodyDigest)) {
          throw new UnprocessableError('webhook-id was already used for a different request', 'webhook_id_reused');
        }
        return { replayed: true, body: earlier.response };
      }
      const { replayed, extra, response, requestKey } = await serve(tx, res);
      const body = response ?? (extra ? JSON.stringify({ ...SUCCESS, ...extra }) : SUCCESS_BODY);
      if (requestKey) await tx.recordKeyedRequest({ ...requestKey, response: body, createdAt: now() });
      if (delivery) await tx.recordDelivery({ ...delivery, response: body, receivedAt: now() });
      return { replayed, body };
    });
    res.locals.replayed = answer.replayed;
    sendJson(res, 200, answer.body, answer.replayed ? REPLAYED_HEADERS : undefined);
  };
}

/** Names the operation a route serves, for metrics and the event log, before anything can refuse it. */
export function operation(name: string): RequestHandler {
  return function nameOperation(_req, res, next) {
    res.locals.operation = name;
    next();
  };
}
