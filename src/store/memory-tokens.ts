import { TOKEN_STATUSES, type Token, type TokenDetails, type TokenStatus } from '../domain/tokens';
import { grown, NameTable } from './memory-columns';
import { TokenIdIndex } from './memory-token-ids';

const FIRST_CAPACITY = 1024;
/** A day column's value for "no such date". */
const NO_DAY = -2_147_483_648;
const STATUS_CODES = new Map<TokenStatus, number>(TOKEN_STATUSES.map((status, code) => [status, code]));

/** The column's code of a status; anything else is refused rather than stored as another status. */
function statusCode(status: TokenStatus): number {
  const code = STATUS_CODES.get(status);
  if (code === undefined) throw new Error(`token status ${status} is not one of ${TOKEN_STATUSES.join(', ')}`);
  return code;
}

/**
 * The memory store's tokens, in columns: a million tokens as objects were
 * about 140 MB of V8 heap and a million objects for every full collection to
 * trace; here a token is its id's bytes in a typed-array index (TokenIdIndex,
 * about 29 bytes for 13 digits) and 33 bytes of typed arrays
 * (docs/BENCHMARKS.md). Reads hand out new Token objects.
 */
export class MemoryTokenTable {
  private readonly ids = new TokenIdIndex();
  private capacity = FIRST_CAPACITY;
  private statuses = new Uint8Array(FIRST_CAPACITY);
  private balances = new Float64Array(FIRST_CAPACITY);
  /** Token.refundable: what Refund may still give back. */
  private refundables = new Float64Array(FIRST_CAPACITY);
  private sourceRefs = new Int32Array(FIRST_CAPACITY);
  private destinationRefs = new Int32Array(FIRST_CAPACITY);
  private availableDays = new Int32Array(FIRST_CAPACITY);
  private expiryDays = new Int32Array(FIRST_CAPACITY);
  private readonly names = new NameTable();
  /** Currency and details by row, for the tokens that have them (those made by Create Token). */
  private readonly detailsOfRow = new Map<number, TokenDetails>();

  /** The token's row, or undefined when the store does not hold it. */
  rowOf(tokenId: string): number | undefined {
    return this.ids.rowOf(tokenId);
  }

  idOf(row: number): string {
    return this.ids.idOf(row);
  }

  read(row: number): Token {
    const token: Token = {
      tokenId: this.ids.idOf(row),
      sourceId: this.names.nameOf(this.sourceRefs[row]),
      destinationId: this.names.nameOf(this.destinationRefs[row]),
      status: TOKEN_STATUSES[this.statuses[row]],
      balance: this.balances[row],
    };
    if (this.refundables[row] !== 0) token.refundable = this.refundables[row];
    if (this.availableDays[row] !== NO_DAY) token.availableDay = this.availableDays[row];
    if (this.expiryDays[row] !== NO_DAY) token.expiryDay = this.expiryDays[row];
    const details = this.detailsOfRow.get(row);
    if (details?.currency !== undefined) token.currency = details.currency;
    if (details?.details !== undefined) token.details = details.details;
    return token;
  }

  /** Writes the token into its row (`knownRow`, when the caller has it), adding a row for a token the table does not hold yet. */
  put(token: Token, knownRow?: number): void {
    const status = statusCode(token.status);
    let row = knownRow ?? this.ids.rowOf(token.tokenId);
    if (row === undefined) {
      row = this.ids.add(token.tokenId);
      if (row === this.capacity) this.grow();
    }
    this.statuses[row] = status;
    this.balances[row] = token.balance;
    this.refundables[row] = token.refundable ?? 0;
    this.sourceRefs[row] = this.names.refOf(token.sourceId);
    this.destinationRefs[row] = this.names.refOf(token.destinationId);
    this.availableDays[row] = token.availableDay ?? NO_DAY;
    this.expiryDays[row] = token.expiryDay ?? NO_DAY;
    if (token.currency !== undefined || token.details !== undefined) {
      this.detailsOfRow.set(row, { currency: token.currency, details: token.details && { ...token.details } });
    }
  }

  private grow(): void {
    this.capacity *= 2;
    this.statuses = grown(this.statuses, this.capacity);
    this.balances = grown(this.balances, this.capacity);
    this.refundables = grown(this.refundables, this.capacity);
    this.sourceRefs = grown(this.sourceRefs, this.capacity);
    this.destinationRefs = grown(this.destinationRefs, this.capacity);
    this.availableDays = grown(this.availableDays, this.capacity);
    this.expiryDays = grown(this.expiryDays, this.capacity);
  }
}
