import { grown, NameTable } from './memory-columns';
import { LEDGER_KINDS, type LedgerEntry, type LedgerKind } from '../domain/ledger';

const DIGIT_0 = 48;
const FIRST_CAPACITY = 1024;

/** A transaction id's 20 digits as two exact numbers of 10 digits each; undefined for anything else. */
function splitTransactionId(transactionId: string): [number, number] | undefined {
  if (transactionId.length !== 20) return undefined;
  let high = 0;
  let low = 0;
  for (let i = 0; i < 20; i += 1) {
    const digit = transactionId.charCodeAt(i) - DIGIT_0;
    if (digit < 0 || digit > 9) return undefined;
    if (i < 10) high = high * 10 + digit;
    else low = low * 10 + digit;
  }
  return [high, low];
}

function joinTransactionId(high: number, low: number): string {
  return String(high).padStart(10, '0') + String(low).padStart(10, '0');
}

function hashOf(high: number, low: number): number {
  const mixed =
    Math.imul((low % 0x40000000) ^ Math.floor(low / 0x40000000), 0x9e3779b1) ^
    Math.imul((high % 0x40000000) ^ Math.floor(high / 0x40000000), 0x85ebca6b);
  return (mixed ^ (mixed >>> 15)) >>> 0;
}

/** One ledger row as the memory store hands it in: the token by its row in the store's token table. */
export interface LedgerRow extends Omit<LedgerEntry, 'tokenId'> {
  tokenRow: number;
}

const KIND_CODES = new Map<LedgerKind, number>(LEDGER_KINDS.map((kind, code) => [kind, code]));

/** The column's code of a kind; anything else is refused rather than stored as another kind. */
function ledgerKindCode(kind: LedgerKind): number {
  const code = KIND_CODES.get(kind);
  if (code === undefined) throw new Error(`ledger kind ${kind} is not one of ${LEDGER_KINDS.join(', ')}`);
  return code;
}

/**
 * The memory store's ledger rows (every kind), in columns of typed arrays with an
 * open-addressing index on the transaction id (a row's key is its account and
 * transaction id: accounts' ids share a hash slot chain, never a row): about 70 bytes a row, where a
 * record object, its Date, its id string and a Map entry took about 420 (a
 * million applied withdrawals must fit in the service's memory budget; see
 * docs/BENCHMARKS.md). Rows are only ever appended. Each row links to its
 * token's previous row, so a token's latest withdrawals are a short walk.
 */
export class MemoryLedger {
  private rows = 0;
  private capacity = FIRST_CAPACITY;
  private idHigh = new Float64Array(FIRST_CAPACITY);
  private idLow = new Float64Array(FIRST_CAPACITY);
  private tokenRows = new Int32Array(FIRST_CAPACITY);
  private sourceRefs = new Int32Array(FIRST_CAPACITY);
  private destinationRefs = new Int32Array(FIRST_CAPACITY);
  private kinds = new Uint8Array(FIRST_CAPACITY);
  private amounts = new Float64Array(FIRST_CAPACITY);
  private fees = new Float64Array(FIRST_CAPACITY);
  private tokenBalances = new Float64Array(FIRST_CAPACITY);
  private createdAt = new Float64Array(FIRST_CAPACITY);
  private previousOfToken = new Int32Array(FIRST_CAPACITY);
  /** Row + 1 per slot, 0 when empty; at most half full. */
  private slots = new Int32Array(FIRST_CAPACITY * 2);
  /** Each token row's latest ledger row, or -1. */
  private latestOfToken = new Int32Array(FIRST_CAPACITY).fill(-1);
  private readonly names = new NameTable();

  get size(): number {
    return this.rows;
  }

  /** The row of an account's transaction id, or -1. */
  find(sourceId: string, transactionId: string): number {
    const split = splitTransactionId(transactionId);
    const sourceRef = this.names.knownRefOf(sourceId);
    if (!split || sourceRef < 0) return -1;
    const [high, low] = split;
    const mask = this.slots.length - 1;
    for (let slot = hashOf(high, low) & mask; ; slot = (slot + 1) & mask) {
      const row = this.slots[slot] - 1;
      if (row < 0) return -1;
      if (this.idHigh[row] === high && this.idLow[row] === low && this.sourceRefs[row] === sourceRef) return row;
    }
  }

  /** Appends a row; the caller has checked that the account's transaction id is new. */
  append(entry: LedgerRow): void {
    const split = splitTransactionId(entry.transactionId);
    if (!split) throw new Error(`transaction_id ${entry.transactionId} is not 20 digits`);
    const [high, low] = split;
    if (this.rows === this.capacity) this.grow();
    const row = this.rows;
    this.idHigh[row] = high;
    this.idLow[row] = low;
    this.tokenRows[row] = entry.tokenRow;
    this.sourceRefs[row] = this.names.refOf(entry.sourceId);
    this.destinationRefs[row] = this.names.refOf(entry.destinationId);
    this.kinds[row] = ledgerKindCode(entry.kind);
    this.amounts[row] = entry.amount;
    this.fees[row] = entry.fee;
    this.tokenBalances[row] = entry.tokenBalance;
    this.createdAt[row] = entry.createdAt.getTime();
    if (entry.tokenRow >= this.latestOfToken.length) {
      const latest = new Int32Array(Math.max(entry.tokenRow + 1, this.latestOfToken.length * 2)).fill(-1);
      latest.set(this.latestOfToken);
      this.latestOfToken = latest;
    }
    this.previousOfToken[row] = this.latestOfToken[entry.tokenRow];
    this.latestOfToken[entry.tokenRow] = row;
    this.rows += 1;
    this.index(row);
  }

  read(row: number, tokenIdOf: (tokenRow: number) => string): LedgerEntry {
    return {
      kind: LEDGER_KINDS[this.kinds[row]],
      transactionId: joinTransactionId(this.idHigh[row], this.idLow[row]),
      sourceId: this.names.nameOf(this.sourceRefs[row]),
      destinationId: this.names.nameOf(this.destinationRefs[row]),
      tokenId: tokenIdOf(this.tokenRows[row]),
      amount: this.amounts[row],
      fee: this.fees[row],
      tokenBalance: this.tokenBalances[row],
      createdAt: new Date(this.createdAt[row]),
    };
  }

  /** A token's latest rows, newest first. */
  latestRows(tokenRow: number, limit: number): number[] {
    const found: number[] = [];
    let row = tokenRow < this.latestOfToken.length ? this.latestOfToken[tokenRow] : -1;
    while (row >= 0 && found.length < limit) {
      found.push(row);
      row = this.previousOfToken[row];
    }
    return found;
  }

  private index(row: number): void {
    const mask = this.slots.length - 1;
    let slot = hashOf(this.idHigh[row], this.idLow[row]) & mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
    this.slots[slot] = row + 1;
  }

  private grow(): void {
    this.capacity *= 2;
    this.idHigh = grown(this.idHigh, this.capacity);
    this.idLow = grown(this.idLow, this.capacity);
    this.tokenRows = grown(this.tokenRows, this.capacity);
    this.sourceRefs = grown(this.sourceRefs, this.capacity);
    this.destinationRefs = grown(this.destinationRefs, this.capacity);
    this.kinds = grown(this.kinds, this.capacity);
    this.amounts = grown(this.amounts, this.capacity);
    this.fees = grown(this.fees, this.capacity);
    this.tokenBalances = grown(this.tokenBalances, this.capacity);
    this.createdAt = grown(this.createdAt, this.capacity);
    this.previousOfToken = grown(this.previousOfToken, this.capacity);
    this.slots = new Int32Array(this.capacity * 2);
    for (let row = 0; row < this.rows; row += 1) this.index(row);
  }
}
