/**
 * A seed read on a worker thread, as it crosses to the thread that serves (see readSeedFileApart in file.ts).
 * Its tokens travel in columns: the typed arrays move without a copy, and reading them back makes one
 * short-lived Token at a time, so a million tokens never stand in the serving thread's heap as objects.
 */
import type { Token } from '../domain/tokens';
import { TOKEN_STATUSES } from '../domain/tokens';
import type { Account, SeedData } from '../store/store';
import type { EndpointConfig } from '../delivery/endpoints';

/** A day column's value for "no such date": below any calendar day a seed can state. */
const NO_DAY = -2_147_483_648;

/** A seed token's fields (a seed states no currency or details), one column each, rows in the seed's order. */
export interface TokenColumns {
  tokenIds: string[];
  /** Source and destination ids, each distinct one once; the ref columns hold indexes into it. */
  names: string[];
  sourceRefs: Int32Array;
  destinationRefs: Int32Array;
  /** Indexes into TOKEN_STATUSES. */
  statuses: Uint8Array;
  balances: Float64Array;
  /** Token.refundable; 0 where unset. */
  refundables: Float64Array;
  availableDays: Int32Array;
  expiryDays: Int32Array;
}

/**
 * A seed account's field that holds a value this repository publishes (compared as keys, not spellings), found
 * where the key texts still are, before they become hashes; whether it is one of the demo seed's own keys.
 */
export interface PublishedKey {
  sourceId: string;
  field: 'share_public' | 'share_secret' | 'signing_secrets';
  demoKey: boolean;
}

/** A seed as the serving thread takes it: the store's records, the published keys production refuses, the endpoints. */
export type ReadSeed = SeedData & { publishedKeys: readonly PublishedKey[]; endpoints: EndpointConfig[] };

/** A seed as it crosses threads: accounts and bookings as they are, tokens in columns. */
export interface TransferredSeed {
  accounts: Account[];
  bookings: SeedData['bookings'];
  tokens: TokenColumns;
  publishedKeys: readonly PublishedKey[];
  endpoints: EndpointConfig[];
}

/** What the seed's thread answers: the seed, or why it could not be read. */
/** The seed, or why not: a seed file's problems (the operator's to fix), or else a fault with its stack. */
export type SeedWorkerAnswer = { seed: TransferredSeed } | { error: string; problems?: readonly string[] };

export function toColumns(tokens: readonly Token[]): TokenColumns {
  const names: string[] = [];
  const refs = new Map<string, number>();
  const refOf = (name: string) => {
    let ref = refs.get(name);
    if (ref === undefined) refs.set(name, (ref = names.push(name) - 1));
    return ref;
  };
  const rows = tokens.length;
  const columns: TokenColumns = {
    tokenIds: new Array<string>(rows),
    names,
    sourceRefs: new Int32Array(rows),
    destinationRefs: new Int32Array(rows),
    statuses: new Uint8Array(rows),
    balances: new Float64Array(rows),
    refundables: new Float64Array(rows),
    availableDays: new Int32Array(rows),
    expiryDays: new Int32Array(rows),
  };
  tokens.forEach((token, row) => {
    columns.tokenIds[row] = token.tokenId;
    columns.sourceRefs[row] = refOf(token.sourceId);
    columns.destinationRefs[row] = refOf(token.destinationId);
    columns.statuses[row] = TOKEN_STATUSES.indexOf(token.status);
    columns.balances[row] = token.balance;
    columns.refundables[row] = token.refundable ?? 0;
    columns.availableDays[row] = token.availableDay ?? NO_DAY;
    columns.expiryDays[row] = token.expiryDay ?? NO_DAY;
  });
  return columns;
}

/** The tokens again, a new object per row each time they are iterated. */
export function tokensOf(columns: TokenColumns): Iterable<Token> {
  return {
    *[Symbol.iterator]() {
      const { tokenIds, names, sourceRefs, destinationRefs, statuses, balances, refundables, availableDays, expiryDays } = columns;
      for (let row = 0; row < tokenIds.length; row += 1) {
        const token: Token = {
          tokenId: tokenIds[row],
          sourceId: names[sourceRefs[row]],
          destinationId: names[destinationRefs[row]],
          status: TOKEN_STATUSES[statuses[row]],
          balance: balances[row],
        };
        if (refundables[row] !== 0) token.refundable = refundables[row];
        if (availableDays[row] !== NO_DAY) token.availableDay = availableDays[row];
        if (expiryDays[row] !== NO_DAY) token.expiryDay = expiryDays[row];
        yield token;
      }
    },
  };
}

/** The arrays that move to the other thread rather than being copied. */
export function movedBuffers(columns: TokenColumns): ArrayBuffer[] {
  return [
    columns.sourceRefs,
    columns.destinationRefs,
    columns.statuses,
    columns.balances,
    columns.refundables,
    columns.availableDays,
    columns.expiryDays,
  ].map((column) => column.buffer as ArrayBuffer);
}

/** A thread's message turns Buffers into plain Uint8Arrays: the key hashes are Buffers again here. */
export function receivedSeed(seed: TransferredSeed): ReadSeed {
  const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return {
    accounts: seed.accounts.map((account) => ({
      ...account,
      publicKeyHash: asBuffer(account.publicKeyHash),
      secretKeyHash: asBuffer(account.secretKeyHash),
    })),
    tokens: tokensOf(seed.tokens),
    bookings: seed.bookings,
    publishedKeys: seed.publishedKeys,
    endpoints: seed.endpoints,
  };
}
