import { hash } from 'node:crypto';
import type { RequestHandler } from 'express';
import { requestContext, type RequestContext } from '../middleware/request-context';
import { sendJson } from '../middleware/send-json';
import { applyOnce, type Answer, type Applied, type DeliveryKey, type KeysOfUnit, type Replay } from '../services/apply-once';
import type { Quotas } from '../services/keyed-requests';
import type { Store, StoreTransaction } from '../store/store';

const SUCCESS = { success: true, message: 'Success' } as const;
const SUCCESS_BODY = JSON.stringify(SUCCESS);
const REPLAYED_HEADERS = { 'Idempotent-Replayed': 'true' } as const;

/**
 * The one place an outcome becomes the answer's bytes: a replay's first answer when its key kept one, else the
 * success, with what `show` makes of the result (a keyed operation's token or booking) beside it.
 */
export function renderAnswer<Result>(outcome: Replay | Applied<Result>, show: ((result: Result) => object) | undefined): Answer {
  if (outcome.replayed) return { replayed: true, body: outcome.response ?? SUCCESS_BODY };
  return { replayed: false, body: show ? JSON.stringify({ ...SUCCESS, ...show(outcome.result) }) : SUCCESS_BODY };
}

/** A signed request's key: its account's webhook-id and the digest of the bytes signed. */
function signedDelivery(context: RequestContext): DeliveryKey | undefined {
  const { webhookId } = context.signature;
  if (webhookId === undefined) return undefined;
  return { sourceId: context.account.sourceId, webhookId, bodyDigest: hash('sha256', context.body.raw, 'buffer') };
}

/**
 * The last step of every operation's chain: its one service call, in one unit of work, applied once
 * (services/apply-once.ts: a signed request's delivery, a {randomkey}, a ledger key), then the answer rendered from
 * its outcome, whose bytes that unit keeps under the request's keys.
 */
export function applyInOneUnit<Result>(
  { store, now, quotas }: { store: Store; now: () => Date; quotas: Quotas },
  serve: (tx: StoreTransaction, context: RequestContext, keys: KeysOfUnit) => Promise<Replay | Applied<Result>>,
  show?: (result: Result) => object,
): RequestHandler {
  return async function applyInOneUnit(_req, res) {
    const context = requestContext(res);
    const delivery = signedDelivery(context);
    const answer = await store.transaction((tx) =>
      applyOnce(tx, now, delivery, quotas.keysPerAccount, async (keys) => renderAnswer(await serve(tx, context, keys), show)),
    );
    context.replayed = answer.replayed;
    sendJson(res, 200, answer.body, answer.replayed ? REPLAYED_HEADERS : undefined);
  };
}
