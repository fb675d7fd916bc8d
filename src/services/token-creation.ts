/** Create Token: the service assigns a new 16-digit token_id; a retry under the same `{randomkey}` gets the same token. */
import { randomInt } from 'node:crypto';
import { dayNumber } from '../domain/calendar-days';
import type { Token } from '../domain/tokens';
import type { CreateTokenRequest } from '../schemas/token-creation';
import type { StoreTransaction } from '../store/store';
import type { Outcome } from './apply-once';
import { fingerprintOf, requirePartner, requireRoomFor, type KeyedCall } from './keyed-requests';
import { requireDestination } from './token-checks';

const FIRST_16_DIGIT = 1_000_000_000_000_000;
const PAST_16_DIGITS = 10_000_000_000_000_000;
/** Ids are drawn from 9 × 10^15; meeting a taken one even once is rare, so a few draws always suffice. */
const MAX_DRAWS = 5;

/** A random 16-digit id (no leading zero); crypto.randomInt takes ranges up to 2^48, so it is drawn in two parts. */
function randomTokenId(): string {
  const high = randomInt(FIRST_16_DIGIT / 1e8, PAST_16_DIGITS / 1e8);
  const low = randomInt(0, 1e8);
  return `${high}${String(low).padStart(8, '0')}`;
}

async function newTokenId(tx: StoreTransaction): Promise<string> {
  for (let draw = 1; ; draw += 1) {
    const tokenId = randomTokenId();
    if (!(await tx.isTokenIdTaken(tokenId))) return tokenId;
    if (draw === MAX_DRAWS) throw new Error(`no free token_id in ${MAX_DRAWS} draws`);
  }
}

export async function createToken(
  tx: StoreTransaction,
  { partnerId, key, body: request, account, quotas, keys }: KeyedCall<CreateTokenRequest>,
): Promise<Outcome<Token>> {
  requirePartner(partnerId, account);
  requireDestination(account, request.destination_id);
  const replay = await keys.underRandomKey({
    sourceId: account.sourceId,
    key,
    fingerprint: fingerprintOf(
      'create_token',
      request.destination_id,
      request.currency,
      request.balance,
      request.available_date,
      request.expiry_date,
      Object.entries(request.details),
    ),
  });
  if (replay) return replay;
  await requireRoomFor(tx, account.sourceId, 'tokens', quotas);
  const token: Token = {
    tokenId: await newTokenId(tx),
    sourceId: account.sourceId,
    destinationId: request.destination_id,
    status: 'active',
    balance: request.balance,
    availableDay: dayNumber(request.available_date),
    expiryDay: dayNumber(request.expiry_date),
    currency: request.currency,
    details: request.details,
  };
  await tx.createToken(token);
  return { replayed: false, result: token };
}
