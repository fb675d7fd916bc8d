/**
 * Modify Token, Load Token and Unload Token (contract sections 9.8, 9.9): a partner changes its own token, keyed by
 * `{randomkey}`. The token is locked before the key is looked up, so copies of one request (on one instance or
 * several) run one after the other and every copy after the first finds the first's answer under the key.
 */
import { randomInt } from 'node:crypto';
import { formatDay, isBeforeDate } from '../domain/calendar-days';
import type { FieldProblem } from '../domain/field-problem';
import { textBytesProblem } from '../domain/text-bytes';
import type { LedgerEntry } from '../domain/ledger';
import { TOKEN_TEXT_FIELDS, type Token } from '../domain/tokens';
import type { ModifyTokenRequest, MoneyMoveRequest } from '../schemas/token-change';
import { validationError } from '../schemas/validate';
import type { StoreTransaction } from '../store/store';
import type { Outcome } from './apply-once';
import { fingerprintOf, requirePartner, type KeyedCall } from './keyed-requests';
import { requireCallerToken, requireNotDeleted, requireWithinDates } from './token-checks';
import { addedTo, recordMovement, takenOff } from './token-ledger';

/** What Load and Unload Token made: the token after the move, and the ledger row filed under the id the service drew. */
export interface TokenMovement {
  token: Token;
  entry: LedgerEntry;
}

/** Ids are drawn from 10^20 per account; meeting a taken one even once is rare, so a few draws always suffice. */
const MAX_DRAWS = 5;

/** 20 random digits, leading zeros allowed as the contract's format allows them: two draws of ten (randomInt takes up to 2^48). */
function randomTransactionId(): string {
  return `${String(randomInt(0, 1e10)).padStart(10, '0')}${String(randomInt(0, 1e10)).padStart(10, '0')}`;
}

/** Rules across fields, on the token as it would be after the change (400): what the schema cannot see alone. */
function ruleProblems(token: Token): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (token.availableDay !== undefined && token.expiryDay !== undefined && token.expiryDay < token.availableDay) {
    problems.push({ field: 'expiry_date', message: `must not be before the available date (${formatDay(token.availableDay)})` });
  }
  const { check_in: checkIn, check_out: checkOut } = token.details ?? {};
  if (isBeforeDate(checkOut, checkIn)) {
    problems.push({ field: 'check_out', message: `must not be before check_in (${checkIn})` });
  }
  const tooLong = textBytesProblem(token.details ?? {}, TOKEN_TEXT_FIELDS);
  if (tooLong) problems.push(tooLong);
  return problems;
}

function requireRules(token: Token): void {
  const problems = ruleProblems(token);
  if (problems.length > 0) throw validationError(problems, 'token_rule');
}

/** Details the request carries over the token's own. */
function withDetails(token: Token, details: Readonly<Record<string, string>>): Token {
  return Object.keys(details).length === 0 ? token : { ...token, details: { ...token.details, ...details } };
}

/**
 * Modify Token: partner (403), the token locked (428), its key (replay, 422), deleted (409), then the rules on the
 * token after the change (400). The status moves along section 4's transitions, as by Status Change; a body whose
 * every field is what the token has is a 200 that changes nothing.
 */
export async function modifyToken(
  tx: StoreTransaction,
  { partnerId, key, body, account, keys }: KeyedCall<ModifyTokenRequest>,
): Promise<Outcome<Token>> {
  requirePartner(partnerId, account);
  const token = requireCallerToken(await tx.tokenForUpdate(account.sourceId, body.token_id), account, body.destination_id);
  const fingerprint = fingerprintOf(
    'modify_token',
    body.token_id,
    body.destination_id,
    body.status,
    body.availableDay,
    body.expiryDay,
    Object.entries(body.details),
    ...(body.emailFields === undefined ? [] : [body.emailFields]),
  );
  const replay = await keys.underRandomKey({ sourceId: account.sourceId, key, fingerprint });
  if (replay) return replay;
  requireNotDeleted(token, 'cannot be modified');
  const changed: Token = withDetails(
    {
      ...token,
      // Active and frozen move to each other, and disputed to either, as by Status Change; deleted was refused above.
      status: body.status ?? token.status,
      availableDay: body.availableDay ?? token.availableDay,
      expiryDay: body.expiryDay ?? token.expiryDay,
    },
    body.details,
  );
  requireRules(changed);
  if (JSON.stringify(changed) !== JSON.stringify(token)) await tx.saveToken(changed);
  return { replayed: false, result: changed };
}

/**
 * Load Token and Unload Token: partner (403), the token locked with a fresh transaction_id looked up in the account's
 * ledger key space (428), the request's key (replay, 422), the kind's own rules (409, 422), then the token and the
 * ledger row under that id, in the unit that keeps the answer under the key: a retry gets the same transaction_id.
 */
async function moveMoney(
  tx: StoreTransaction,
  { partnerId, key, body, account, now, keys }: KeyedCall<MoneyMoveRequest>,
  kind: 'load' | 'unload',
  balanceAfter: (token: Token) => number,
): Promise<Outcome<TokenMovement>> {
  requirePartner(partnerId, account);
  let transactionId = randomTransactionId();
  const [locked, drawnTaken] = await tx.lockTokenAndFindLedgerEntry(account.sourceId, body.token_id, transactionId);
  const token = requireCallerToken(locked, account, body.destination_id);
  const fingerprint = fingerprintOf(`${kind}_token`, body.token_id, body.destination_id, body.amount, Object.entries(body.details));
  const replay = await keys.underRandomKey({ sourceId: account.sourceId, key, fingerprint });
  if (replay) return replay;
  for (let draw = 1, taken = drawnTaken !== undefined; taken; draw += 1) {
    if (draw === MAX_DRAWS) throw new Error(`no free transaction_id in ${MAX_DRAWS} draws`);
    transactionId = randomTransactionId();
    // The token's lock is already this unit's: only the ledger key is looked up again.
    taken = (await tx.lockTokenAndFindLedgerEntry(account.sourceId, body.token_id, transactionId))[1] !== undefined;
  }
  const balance = balanceAfter(token);
  const changed = withDetails(token, body.details);
  requireRules(changed);
  const entry = await recordMovement(tx, token, { kind: `${kind}_token`, transactionId, balance, fee: 0 }, now, {
    details: changed.details,
  });
  return { replayed: false, result: { token: { ...changed, balance }, entry } };
}

/** The rules of Loaded (section 9.1): not deleted nor outside its dates (409), not past the largest balance (422). */
export function loadToken(tx: StoreTransaction, call: KeyedCall<MoneyMoveRequest>): Promise<Outcome<TokenMovement>> {
  return moveMoney(tx, call, 'load', (token) => {
    requireNotDeleted(token, 'cannot be loaded');
    requireWithinDates(token, call.now);
    return addedTo(token, call.body.amount, 'load_amount');
  });
}

/** The rules of Unloaded (section 9.2): not deleted (409), not more than the balance (422). */
export function unloadToken(tx: StoreTransaction, call: KeyedCall<MoneyMoveRequest>): Promise<Outcome<TokenMovement>> {
  return moveMoney(tx, call, 'unload', (token) => {
    requireNotDeleted(token, 'cannot be unloaded');
    return takenOff(token, call.body.amount, 'unload_amount');
  });
}
