/**
 * Applying a request once (contract section 6), for its three kinds of key:
 *
 * - a ledger key, (source_id, transaction_id), one key space for every kind of ledger row; the row is the record,
 *   written by the change itself, and a repeat is told from a reuse by the fields, compared by value;
 * - a `{randomkey}`, (source_id, randomkey), for the booking operations and Create Token; a repeat is told from a
 *   reuse by the request's fingerprint, and the answer's bytes are kept under the key;
 * - a signed delivery, (source_id, webhook-id), told apart by the digest of its body; its answer's bytes are kept
 *   under its id.
 *
 * The rule is the same for all three: an earlier answer under the key is replayed when the request is the same,
 * and refused (422, without revealing the other request) when it is not; otherwise the request applies, and what
 * is remembered of it is written in the same unit of work as the change, so neither is ever kept without the
 * other. Services say what their key is, where the contract's order of checks reaches it; they record nothing.
 */
import type { LedgerEntry } from '../domain/ledger';
import { KeyLimitError, UnprocessableError } from '../errors';
import type { Delivery, KeyedRequest, StoreTransaction } from '../store/store';

/** A `{randomkey}` as a keyed operation declares it: the account's key and the request by value. */
export type RandomKey = Pick<KeyedRequest, 'sourceId' | 'key' | 'fingerprint'>;

/** A signed delivery's key: its account's webhook-id and the digest of the bytes signed. */
export type DeliveryKey = Pick<Delivery, 'sourceId' | 'webhookId' | 'bodyDigest'>;

/** A request that repeats one applied under its key: nothing is applied again; a `{randomkey}` kept the first answer's bytes. */
export interface Replay {
  replayed: true;
  response?: string;
}

/**
 * What a service did with a request, the one shape that crosses from the services to the route: it repeated one
 * applied under its key (a Replay), or it applied it now, making or changing `result`. An operation with a result to
 * show is keyed by `{randomkey}`, which keeps the first answer's bytes for its replays; a token notification shows
 * none, and its ledger key keeps a row, so its replay is answered with the plain success.
 */
export type Outcome<Result = undefined> = [Result] extends [undefined] ? Replay | Applied<undefined> : Required<Replay> | Applied<Result>;

/** A request applied now, making or changing `result`. */
export interface Applied<Result> {
  replayed: false;
  result: Result;
}

/** A request applied now, with nothing to show but success: a token notification's outcome. */
export const APPLIED: Outcome = { replayed: false, result: undefined };

/** The answer to a request, rendered from its Outcome: whether it was a replay, and its bytes, which its keys keep. */
export interface Answer {
  replayed: boolean;
  body: string;
}

/**
 * A ledger key's earlier row, found with the token's lock (the ledger operations find both in one step): the same
 * request (`isSameRequest`, by value) is a replay, anything else under the key a 422. Undefined when the key is free.
 */
export function ledgerReplay(recorded: LedgerEntry | undefined, isSameRequest: (recorded: LedgerEntry) => boolean): Replay | undefined {
  if (!recorded) return undefined;
  if (isSameRequest(recorded)) return { replayed: true };
  throw new UnprocessableError('transaction_id was already used for a different request', 'key_reused');
}

function randomKeyReused(): UnprocessableError {
  return new UnprocessableError('randomkey was already used for a different request', 'key_reused');
}

/**
 * Contract section 11: what an account makes the service keep is bounded, request keys and deliveries too. Checked
 * where the keys are recorded, against the account's count locked in the same unit, so two instances cannot both
 * take the last slot; past it a 403 and nothing applies. A replay records nothing and is never refused here.
 */
async function requireRoomForKeys(tx: StoreTransaction, sourceId: string, newKeys: number, limit: number, now: Date): Promise<void> {
  if ((await tx.holdingsForUpdate(sourceId, now)).keys + newKeys > limit) throw new KeyLimitError(limit);
}

/** The keys of one request's unit of work: what its services declared, to be recorded with its answer. */
export class KeysOfUnit {
  #randomKey: RandomKey | undefined;

  constructor(private readonly tx: StoreTransaction) {}

  /**
   * The request's `{randomkey}`: the first answer when the same request was applied under it, a 422 when another
   * was; otherwise the key is kept with this request's answer when the unit applies. `beforeReuse` runs between
   * the two, for a check that comes before a reused key (Create Booking's "already exists": a replay is not a 409).
   */
  async underRandomKey(key: RandomKey, beforeReuse?: () => void): Promise<Required<Replay> | undefined> {
    const earlier = await this.tx.findKeyedRequest(key.sourceId, key.key);
    if (earlier !== undefined && earlier.fingerprint === key.fingerprint) return { replayed: true, response: earlier.response };
    beforeReuse?.();
    if (earlier) throw randomKeyReused();
    this.#randomKey = key;
    return undefined;
  }

  /** The `{randomkey}` a request applied under, when it did. */
  get randomKey(): RandomKey | undefined {
    return this.#randomKey;
  }
}

/**
 * One request, once, in the unit `tx`: a signed delivery already answered is answered again with the first bytes
 * (the same body) or refused (another body) before anything else is checked; otherwise `apply` runs the operation,
 * whose services declare their keys to `keys`, and the answer's bytes are recorded under the `{randomkey}` it
 * applied under and under the delivery's id, in the same unit.
 */
export async function applyOnce(
  tx: StoreTransaction,
  now: () => Date,
  delivery: DeliveryKey | undefined,
  maxKeysPerAccount: number,
  apply: (keys: KeysOfUnit) => Promise<Answer>,
): Promise<Answer> {
  const earlier = delivery && (await tx.findDelivery(delivery.sourceId, delivery.webhookId));
  if (earlier) {
    if (!earlier.bodyDigest.equals(delivery.bodyDigest)) {
      throw new UnprocessableError('webhook-id was already used for a different request', 'webhook_id_reused');
    }
    return { replayed: true, body: earlier.response };
  }
  const keys = new KeysOfUnit(tx);
  const answer = await apply(keys);
  const randomKey = answer.replayed ? undefined : keys.randomKey;
  const newKeys = (randomKey ? 1 : 0) + (delivery ? 1 : 0);
  const sourceId = randomKey?.sourceId ?? delivery?.sourceId;
  if (sourceId !== undefined && maxKeysPerAccount > 0) await requireRoomForKeys(tx, sourceId, newKeys, maxKeysPerAccount, now());
  if (randomKey) await tx.recordKeyedRequest({ ...randomKey, response: answer.body, createdAt: now() });
  if (delivery) await tx.recordDelivery({ ...delivery, response: answer.body, receivedAt: now() });
  return answer;
}
