import type { Booking } from '../../src/domain/bookings';
import type { LedgerEntry } from '../../src/domain/ledger';
import type { Token } from '../../src/domain/tokens';
import { MemoryStore } from '../../src/store/memory-store';
import { PgStore } from '../../src/store/postgres/pg-store';
import type { Delivery, KeyedRequest, Store } from '../../src/store/store';
import { ACME, BOOKING, OTHERS_BOOKING, TOKENS } from './fixtures';
import { selectList } from '../../src/store/postgres/table-statements';
import { LEDGER, type Row } from '../../src/store/postgres/tables';

/** Reads of what the store holds, as a test checks it: no unit of work, no row lock. */
export async function readToken(store: Store, tokenId: string) {
  return store.findToken(tokenId);
}

/**
 * A ledger row by its account and transaction id. No operation reads one outside a unit of work, so the Store
 * interface has no such read: it is read from underneath, in the memory store's tables or by SQL on the
 * PostgreSQL store's own pool.
 */
export async function readLedgerEntry(store: Store, transactionId: string, sourceId = ACME.source_id): Promise<LedgerEntry | undefined> {
  if (store instanceof MemoryStore) {
    // Element access reaches a private member: the tables are the memory store's own, read here and nowhere else.
    const { ledger, tokens } = store['tables'];
    const row = ledger.find(sourceId, transactionId);
    return row < 0 ? undefined : ledger.read(row, (tokenRow) => tokens.idOf(tokenRow));
  }
  if (store instanceof PgStore) {
    // On the store's own pool, so a store on another database (through a pooler) is read where it writes.
    const query = store['query'].bind(store) as (text: string, values: unknown[]) => Promise<{ rows: Row[] }>;
    const { rows } = await query(`SELECT ${selectList(LEDGER)} FROM ledger WHERE source_id = $1 AND transaction_id = $2`, [
      sourceId,
      transactionId,
    ]);
    return rows[0] && LEDGER.fromRow(rows[0]);
  }
  throw new Error(`readLedgerEntry cannot read a ${store.constructor.name}`);
}

/** A signed request's delivery record, read as a unit of work reads it: a plain lookup, no row is locked. */
export async function readDelivery(store: Store, webhookId: string, sourceId = ACME.source_id): Promise<Delivery | undefined> {
  return store.transaction((tx) => tx.findDelivery(sourceId, webhookId));
}

export async function readBooking(store: Store, bookingId = BOOKING.booking_id, sourceId = BOOKING.source_id) {
  return store.findBooking(sourceId, bookingId);
}

/**
 * Everything a request could have changed: every fixture token and booking,
 * and the ledger rows (of ACME) and request keys the test's requests named.
 */
export async function readState(store: Store, transactionIds: string[] = [], bookingKeys: string[] = []) {
  const state = {
    tokens: [] as Array<Token | undefined>,
    bookings: [] as Array<Booking | undefined>,
    ledger: [] as Array<LedgerEntry | undefined>,
    keyedRequests: [] as Array<KeyedRequest | undefined>,
  };
  for (const token of Object.values(TOKENS)) state.tokens.push(await store.findToken(token.token_id));
  for (const booking of [BOOKING, OTHERS_BOOKING]) state.bookings.push(await store.findBooking(booking.source_id, booking.booking_id));
  for (const id of transactionIds) state.ledger.push(await readLedgerEntry(store, id));
  // Request keys are read as a unit reads them: a plain lookup, no row is locked.
  for (const key of bookingKeys) state.keyedRequests.push(await store.transaction((tx) => tx.findKeyedRequest(BOOKING.source_id, key)));
  return state;
}

/**
 * Sends a request that must fail and checks its exact status and body, and that it changed nothing readState
 * reads: the fixture tokens and bookings, and the ledger rows and request keys it named.
 */
export async function expectRejection(
  store: Store,
  send: () => Promise<{ status: number; body: unknown }>,
  status: number,
  expectedBody: object,
  named: { transactionIds?: string[]; keys?: string[] } = {},
) {
  const before = await readState(store, named.transactionIds, named.keys);
  const response = await send();
  expect({ status: response.status, body: response.body }).toEqual({ status, body: expectedBody });
  expect(await readState(store, named.transactionIds, named.keys)).toEqual(before);
}
