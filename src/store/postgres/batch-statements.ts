/**
 * The statements of a batch (batch.ts): its reads, one per kind of row however many units ask, and its writes,
 * each for any number of rows through unnest; and how rows become domain records under their keys.
 */
import type { Booking } from '../../domain/bookings';
import type { LedgerEntry } from '../../domain/ledger';
import type { Token } from '../../domain/tokens';
import type { Delivery, Holdings, KeyedRequest } from '../store';
import { statement, type Call } from './connection';
import {
  toBooking,
  toDelivery,
  toHoldings,
  toLedgerEntry,
  toToken,
  LEDGER_COLUMNS,
  VALUES,
  TOKEN_COLUMNS,
  type BookingRow,
  type DeliveryRow,
  type HoldingsRow,
  type LedgerRow,
  type TokenRow,
} from './rows';

/**
 * The reads of a round trip, one statement per kind however many units ask. Rows are locked in key order, so
 * two batches (of this instance or another) lock shared rows in the same order. Each key is looked up on its
 * own (OFFSET 0 keeps the planner from turning the lookups into one join): as a join, a table that was empty
 * when the statement was planned was read whole for every batch, 1.8 of a batch's 2.9 ms (docs/BENCHMARKS.md).
 */
export const READ = {
  tokens: statement(
    'batch_lock_tokens',
    `SELECT t.* FROM unnest($1::text[], $2::text[]) AS k (token_id, source_id),
       LATERAL (SELECT ${TOKEN_COLUMNS} FROM tokens WHERE token_id = k.token_id AND source_id = k.source_id OFFSET 0) AS t
      ORDER BY t.token_id FOR UPDATE`,
  ),
  takenTokenIds: statement('batch_taken_token_ids', 'SELECT token_id FROM tokens WHERE token_id = ANY($1::text[])'),
  ledgerEntries: statement(
    'batch_find_ledger_entries',
    `SELECT l.* FROM unnest($1::text[], $2::text[]) AS k (source_id, transaction_id),
       LATERAL (SELECT ${LEDGER_COLUMNS} FROM ledger WHERE source_id = k.source_id AND transaction_id = k.transaction_id OFFSET 0) AS l`,
  ),
  holdings: statement(
    'batch_lock_holdings',
    'SELECT source_id, tokens, bookings, keys FROM account_holdings WHERE source_id = ANY($1::text[]) ORDER BY source_id FOR UPDATE',
  ),
  bookings: statement(
    'batch_lock_bookings',
    `SELECT b.* FROM unnest($1::text[], $2::text[]) AS k (source_id, booking_id),
       LATERAL (SELECT source_id, booking_id, fields, status, updated_at FROM bookings WHERE source_id = k.source_id AND booking_id = k.booking_id OFFSET 0) AS b
      ORDER BY b.source_id, b.booking_id FOR UPDATE`,
  ),
  keyedRequests: statement(
    'batch_find_keyed_requests',
    `SELECT r.* FROM unnest($1::text[], $2::text[]) AS k (source_id, key),
       LATERAL (SELECT source_id, key, fingerprint, response, created_at FROM keyed_requests WHERE source_id = k.source_id AND key = k.key OFFSET 0) AS r`,
  ),
  deliveries: statement(
    'batch_find_deliveries',
    `SELECT d.* FROM unnest($1::text[], $2::text[]) AS k (source_id, webhook_id),
       LATERAL (SELECT source_id, webhook_id, body_digest, response, received_at FROM deliveries WHERE source_id = k.source_id AND webhook_id = k.webhook_id OFFSET 0) AS d`,
  ),
};

/** The writes of a batch, each for any number of rows (arrays through unnest), sent as one statement (see combined()). */
const WRITE = {
  createTokens: statement(
    'batch_create_tokens',
    `INSERT INTO tokens (token_id, source_id, destination_id, status, balance, available_date, expiry_date, destination_currency, details)
     SELECT token_id, source_id, destination_id, status, balance, DATE '1970-01-01' + available_day, DATE '1970-01-01' + expiry_day, currency, details
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::integer[], $7::integer[], $8::text[], $9::jsonb[])
         AS t (token_id, source_id, destination_id, status, balance, available_day, expiry_day, currency, details)`,
  ),
  saveTokens: statement(
    'batch_save_tokens',
    `UPDATE tokens SET status = t.status, balance = t.balance,
       available_date = DATE '1970-01-01' + t.available_day, expiry_date = DATE '1970-01-01' + t.expiry_day, refundable = t.refundable, details = t.details
       FROM unnest($1::text[], $2::text[], $3::bigint[], $4::integer[], $5::integer[], $6::bigint[], $7::jsonb[])
         AS t (token_id, status, balance, available_day, expiry_day, refundable, details)
      WHERE tokens.token_id = t.token_id`,
  ),
  recordLedgerEntries: statement(
    'batch_record_ledger_entries',
    `INSERT INTO ledger (${LEDGER_COLUMNS})
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[], $9::timestamptz[])`,
  ),
  countHoldings: statement(
    'batch_count_holdings',
    `UPDATE account_holdings SET tokens = account_holdings.tokens + h.tokens, bookings = account_holdings.bookings + h.bookings,
            keys = account_holdings.keys + h.keys
       FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[]) AS h (source_id, tokens, bookings, keys)
      WHERE account_holdings.source_id = h.source_id`,
  ),
  createBookings: statement(
    'batch_create_bookings',
    'INSERT INTO bookings (source_id, booking_id, fields, status, updated_at) SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::text[], $5::timestamptz[])',
  ),
  saveBookings: statement(
    'batch_save_bookings',
    `UPDATE bookings SET fields = b.fields, status = b.status, updated_at = b.updated_at
       FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::text[], $5::timestamptz[]) AS b (source_id, booking_id, fields, status, updated_at)
      WHERE bookings.source_id = b.source_id AND bookings.booking_id = b.booking_id`,
  ),
  recordKeyedRequests: statement(
    'batch_record_keyed_requests',
    'INSERT INTO keyed_requests (source_id, key, fingerprint, response, created_at) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[])',
  ),
  recordDeliveries: statement(
    'batch_record_deliveries',
    'INSERT INTO deliveries (source_id, webhook_id, body_digest, response, received_at) SELECT * FROM unnest($1::text[], $2::text[], $3::bytea[], $4::text[], $5::timestamptz[])',
  ),
};

/** A record's key within its account, as every table but tokens keys it. */
export function within(sourceId: string, id: string): string {
  return `${sourceId}\u0000${id}`;
}

export type ReadKind = keyof typeof READ;

/** The writes of a batch, or of one unit before it is merged: rows created, saved and recorded, by key where one row may be written twice. */
export interface BatchWrites {
  readonly createdTokens: Map<string, Token>;
  readonly savedTokens: Map<string, Token>;
  readonly ledgerEntries: LedgerEntry[];
  readonly holdings: Map<string, Holdings>;
  readonly createdBookings: Map<string, Booking>;
  readonly savedBookings: Map<string, Booking>;
  readonly keyedRequests: KeyedRequest[];
  readonly deliveries: Delivery[];
}

/** A read's rows as domain records under the keys the batch files them by (takenTokenIds: the ids found). */
export function rowsByKey(kind: ReadKind, rows: Array<Record<string, unknown>>): Map<string, unknown> {
  switch (kind) {
    case 'tokens':
      return new Map((rows as unknown as TokenRow[]).map((row) => [within(row.source_id, row.token_id), toToken(row)]));
    case 'takenTokenIds':
      return new Map((rows as Array<{ token_id: string }>).map((row) => [row.token_id, true]));
    case 'ledgerEntries':
      return new Map((rows as unknown as LedgerRow[]).map((row) => [within(row.source_id, row.transaction_id), toLedgerEntry(row)]));
    case 'holdings':
      return new Map(
        (rows as unknown as Array<{ source_id: string } & HoldingsRow>).map((row) => [row.source_id, toHoldings(row)]),
      );
    case 'bookings':
      return new Map((rows as unknown as BookingRow[]).map((row) => [within(row.source_id, row.booking_id), toBooking(row)]));
    case 'keyedRequests':
      return new Map(
        (rows as Array<{ source_id: string; key: string; fingerprint: string; response: string; created_at: Date }>).map((row) => [
          within(row.source_id, row.key),
          { sourceId: row.source_id, key: row.key, fingerprint: row.fingerprint, response: row.response, createdAt: row.created_at },
        ]),
      );
    case 'deliveries':
      return new Map(
        (rows as unknown as Array<DeliveryRow & { source_id: string; webhook_id: string }>).map((row) => [
          within(row.source_id, row.webhook_id),
          toDelivery(row.source_id, row.webhook_id, row),
        ]),
      );
  }
}

/** Rows of values as columns, one array per position: what unnest takes. */
export function columnsOf(rows: unknown[][]): unknown[][] {
  const width = rows[0]?.length ?? 0;
  return Array.from({ length: width }, (_, column) => rows.map((row) => row[column]));
}

export function writeCalls(writes: BatchWrites): Call[] {
  const calls: Call[] = [];
  const add = <Row>(statementOf: Call['statement'], rows: Iterable<Row>, values: (row: Row) => unknown[]) => {
    const list = [...rows];
    if (list.length > 0) calls.push({ statement: statementOf, values: columnsOf(list.map(values)) });
  };
  add(WRITE.createTokens, writes.createdTokens.values(), VALUES.createdToken);
  add(WRITE.saveTokens, writes.savedTokens.values(), VALUES.savedToken);
  add(WRITE.recordLedgerEntries, writes.ledgerEntries, VALUES.ledgerEntry);
  add(WRITE.countHoldings, writes.holdings.entries(), ([sourceId, added]) => [sourceId, added.tokens, added.bookings, added.keys]);
  add(WRITE.createBookings, writes.createdBookings.values(), VALUES.booking);
  add(WRITE.saveBookings, writes.savedBookings.values(), VALUES.booking);
  add(WRITE.recordKeyedRequests, writes.keyedRequests, VALUES.keyedRequest);
  add(WRITE.recordDeliveries, writes.deliveries, VALUES.delivery);
  return calls;
}

