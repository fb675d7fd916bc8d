import { hash, randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { requestContext, type RequestContext } from '../middleware/request-context';
import { sendJson } from '../middleware/send-json';
import { applyOnce, type Answer, type Applied, type DeliveryKey, type KeysOfUnit, type Replay } from '../services/apply-once';
import type { Quotas } from '../services/keyed-requests';
import type { ChangeType, Store, StoreTransaction } from '../store/store';
import { bookingView } from './booking-view';
import { ledgerEntryView, tokenView } from './token-view';

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
 * The request's one change (contract section 13.1), recorded in its unit when the unit wrote anything: a request
 * that changed nothing (a status or dates set to what the token has) records none. It shows the token, ledger row
 * or booking as the unit leaves them, and the request by its operation, request id and keys: never an account's
 * key or secret, which no view here carries.
 */
async function recordChange(
  tx: StoreTransaction,
  type: ChangeType,
  context: RequestContext,
  delivery: DeliveryKey | undefined,
  keys: KeysOfUnit,
  now: Date,
) {
  const { token, ledgerEntry, booking } = tx.lastWritten();
  if (!token && !ledgerEntry && !booking) return;
  const { sourceId } = context.account;
  const body: Record<string, unknown> = {};
  if (token) body.token = tokenView(token);
  if (ledgerEntry) body.ledger_entry = ledgerEntryView(ledgerEntry);
  if (booking) body.booking = bookingView(booking);
  const transactionId = (context.input.body as { transaction_id?: unknown }).transaction_id;
  const request: Record<string, string | undefined> = { operation: context.operation, request_id: context.requestId };
  if (typeof transactionId === 'string') request.transaction_id = transactionId;
  if (keys.randomKey) request.randomkey = keys.randomKey.key;
  if (delivery) request.webhook_id = delivery.webhookId;
  body.request = request;
  await tx.recordChange({ sourceId, id: `chg_${randomUUID()}`, type, createdAt: now, body });
}

/**
 * The last step of every operation's chain: its one service call, in one unit of work, applied once
 * (services/apply-once.ts: a signed request's delivery, a {randomkey}, a ledger key), then the answer rendered from
 * its outcome, whose bytes that unit keeps under the request's keys, with the request's change.
 */
export function applyInOneUnit<Result>(
  { store, now, quotas }: { store: Store; now: () => Date; quotas: Quotas },
  change: ChangeType,
  serve: (tx: StoreTransaction, context: RequestContext, keys: KeysOfUnit) => Promise<Replay | Applied<Result>>,
  show?: (result: Result) => object,
): RequestHandler {
  return async function applyInOneUnit(_req, res) {
    const context = requestContext(res);
    const delivery = signedDelivery(context);
    const answer = await store.transaction((tx) =>
      applyOnce(tx, now, delivery, quotas.keysPerAccount, async (keys) => {
        const outcome = await serve(tx, context, keys);
        if (!outcome.replayed) await recordChange(tx, change, context, delivery, keys, now());
        return renderAnswer(outcome, show);
      }),
    );
    context.replayed = answer.replayed;
    sendJson(res, 200, answer.body, answer.replayed ? REPLAYED_HEADERS : undefined);
  };
}
