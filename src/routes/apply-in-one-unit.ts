import { createHash } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { requestContext, type RequestContext } from '../middleware/request-context';
import { sendJson } from '../middleware/send-json';
import { applyOnce, type DeliveryKey, type KeysOfUnit } from '../services/apply-once';
import type { KeyedOutcome } from '../services/keyed-requests';
import type { StoreTransaction } from '../store/store';
import type { OperationRouterDeps } from './operation-deps';

/** What an operation's handler reports: whether it repeated an applied request, and what the answer carries. */
export interface Outcome {
  replayed: boolean;
  /** What the answer carries besides success and message (a booking, a token). */
  extra?: object;
  /** A replay's first answer, byte for byte, when its key kept it (operations keyed by {randomkey}). */
  response?: string;
}

/** A keyed operation's outcome as the answer: the first answer's bytes, or what it made, shown by `view`. */
export function keyedAnswer<Result>(outcome: KeyedOutcome<Result>, view: (result: Result) => object): Outcome {
  if (outcome.replayed) return { replayed: true, response: outcome.response };
  return { replayed: false, extra: view(outcome.result) };
}

const SUCCESS = { success: true, message: 'Success' } as const;
const SUCCESS_BODY = JSON.stringify(SUCCESS);
const REPLAYED_HEADERS = { 'Idempotent-Replayed': 'true' } as const;

/** A signed request's key: its account's webhook-id and the digest of the bytes signed. */
function signedDelivery(context: RequestContext): DeliveryKey | undefined {
  const { webhookId } = context.signature;
  if (webhookId === undefined) return undefined;
  return { sourceId: context.account.sourceId, webhookId, bodyDigest: createHash('sha256').update(context.body.raw).digest() };
}

/**
 * The last step of every operation's chain: its one service call, in one
 * unit of work, applied once (services/apply-once.ts: a signed request's
 * delivery, a {randomkey}, a ledger key), then the success answer, whose
 * bytes that unit keeps under the request's keys.
 */
export function applyInOneUnit(
  { store, now, quotas }: Pick<OperationRouterDeps, 'store' | 'now' | 'quotas'>,
  serve: (tx: StoreTransaction, res: Response, keys: KeysOfUnit) => Promise<Outcome>,
): RequestHandler {
  return async function applyInOneUnit(_req, res) {
    const context = requestContext(res);
    const delivery = signedDelivery(context);
    const answer = await store.transaction((tx) =>
      applyOnce(tx, now, delivery, quotas.keysPerAccount, async (keys) => {
        const { replayed, extra, response } = await serve(tx, res, keys);
        return { replayed, body: response ?? (extra ? JSON.stringify({ ...SUCCESS, ...extra }) : SUCCESS_BODY) };
      }),
    );
    context.replayed = answer.replayed;
    sendJson(res, 200, answer.body, answer.replayed ? REPLAYED_HEADERS : undefined);
  };
}

/** Names the operation a route serves, for metrics and the event log, before anything can refuse it. */
export function operation(name: string): RequestHandler {
  return function nameOperation(_req, res, next) {
    requestContext(res).operation = name;
    next();
  };
}
