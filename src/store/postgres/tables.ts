/**
 * One descriptor per table that units of work read and write: its columns (and how each travels), its key, what
 * a save changes, and how a row becomes a record and a record its values. Every statement that reads or writes
 * these rows is made from them (table-statements.ts), so a new kind of record is one descriptor here plus its
 * store calls (unit/unit-of-work.ts).
 */
import { BOOKING_FIELDS, type Booking, type BookingFields, type BookingStatus } from '../../domain/bookings';
import type { LedgerEntry, LedgerKind } from '../../domain/ledger';
import type { Token, TokenStatus } from '../../domain/tokens';
import { accountKey } from '../records';
import {
  bigintArrayParameter,
  byteaArrayParameter,
  integerArrayParameter,
  jsonArrayParameter,
  jsonbArrayParameter,
  textArrayParameter,
  timestamptzArrayParameter,
} from './array-parameters';
import type { Change, ChangeType, Delivery, KeyedRequest, NewChange } from '../store';
import type { AccountHoldings } from '../unit/kinds';

/** How a column's values travel: the array type unnest takes them in, and, when the column is not the value itself, how it is read and written. */
export interface ColumnType {
  readonly array: string;
  /** The select-list item that reads `column` as records hold it, named as the column. */
  read?(column: string): string;
  /** The expression that stores `value` (an element of the array) in the column. */
  write?(value: string): string;
  /** The column's values as the one parameter a write sends: the array in binary form (array-parameters.ts). */
  parameter(values: unknown[]): Buffer;
}

const TEXT: ColumnType = { array: 'text[]', parameter: (values) => textArrayParameter(values as string[]) };
const BIGINT: ColumnType = { array: 'bigint[]', parameter: (values) => bigintArrayParameter(values as number[]) };
const JSONB: ColumnType = { array: 'jsonb[]', parameter: (values) => jsonbArrayParameter(values as string[]) };
/** JSON kept as its text, keys in the order written: what is handed on as it was made (migration 019). */
const JSON_TEXT: ColumnType = { array: 'json[]', parameter: (values) => jsonArrayParameter(values as string[]) };
const TIMESTAMPTZ: ColumnType = { array: 'timestamptz[]', parameter: (values) => timestamptzArrayParameter(values as Date[]) };
const BYTEA: ColumnType = { array: 'bytea[]', parameter: (values) => byteaArrayParameter(values as Uint8Array[]) };
/** A calendar date, held by records as its day number since 1970-01-01 (domain/calendar-days.ts). */
const DAY: ColumnType = {
  array: 'integer[]',
  parameter: (values) => integerArrayParameter(values as number[]),
  read: (column) => `${column} - DATE '1970-01-01' AS ${column}`,
  write: (value) => `DATE '1970-01-01' + ${value}`,
};

/** A row as the driver returns it: bigint as a string, jsonb parsed, timestamptz as a Date, bytea as a Buffer. */
export type Row = Record<string, unknown>;

export interface Table<Item> {
  readonly name: string;
  /** Every column the store reads and writes, in the order `values` gives them. */
  readonly columns: Readonly<Record<string, ColumnType>>;
  /**
   * The key columns, the account's first: every table is keyed within an account, which is how the data would be
   * split across databases (docs/POSTGRESQL.md, "Past one database"), and every write names it.
   */
  readonly key: readonly string[];
  /** The columns a save changes; none for a table whose rows are only ever inserted. */
  readonly changes: readonly string[];
  fromRow(row: Row): Item;
  values(item: Item): unknown[];
  /** The record's key as the batch files it: its key columns' values, joined (see accountKey()). */
  keyOf(item: Item): string;
}

function jsonOrNull(value: object | undefined): string | null {
  return value === undefined ? null : JSON.stringify(value);
}

export const TOKENS: Table<Token> = {
  name: 'tokens',
  columns: {
    source_id: TEXT,
    token_id: TEXT,
    destination_id: TEXT,
    status: TEXT,
    balance: BIGINT,
    refundable: BIGINT,
    available_date: DAY,
    expiry_date: DAY,
    destination_currency: TEXT,
    details: JSONB,
  },
  key: ['source_id', 'token_id'],
  changes: ['status', 'balance', 'refundable', 'available_date', 'expiry_date', 'details'],
  fromRow(row) {
    const token: Token = {
      tokenId: row.token_id as string,
      sourceId: row.source_id as string,
      destinationId: row.destination_id as string,
      status: row.status as TokenStatus,
      balance: Number(row.balance),
    };
    if (row.refundable !== '0') token.refundable = Number(row.refundable);
    if (row.available_date !== null) token.availableDay = row.available_date as number;
    if (row.expiry_date !== null) token.expiryDay = row.expiry_date as number;
    if (row.destination_currency !== null) token.currency = row.destination_currency as string;
    if (row.details !== null) token.details = row.details as Record<string, string>;
    return token;
  },
  values: (t) => [
    t.sourceId,
    t.tokenId,
    t.destinationId,
    t.status,
    t.balance,
    t.refundable ?? 0,
    t.availableDay ?? null,
    t.expiryDay ?? null,
    t.currency ?? null,
    jsonOrNull(t.details),
  ],
  keyOf: (t) => accountKey(t.sourceId, t.tokenId),
};

export const LEDGER: Table<LedgerEntry> = {
  name: 'ledger',
  columns: {
    source_id: TEXT,
    transaction_id: TEXT,
    kind: TEXT,
    destination_id: TEXT,
    token_id: TEXT,
    amount: BIGINT,
    fee: BIGINT,
    token_balance: BIGINT,
    created_at: TIMESTAMPTZ,
  },
  key: ['source_id', 'transaction_id'],
  changes: [],
  fromRow: (row) => ({
    kind: row.kind as LedgerKind,
    transactionId: row.transaction_id as string,
    sourceId: row.source_id as string,
    destinationId: row.destination_id as string,
    tokenId: row.token_id as string,
    amount: Number(row.amount),
    fee: Number(row.fee),
    tokenBalance: Number(row.token_balance),
    createdAt: row.created_at as Date,
  }),
  values: (e) => [e.sourceId, e.transactionId, e.kind, e.destinationId, e.tokenId, e.amount, e.fee, e.tokenBalance, e.createdAt],
  keyOf: (e) => accountKey(e.sourceId, e.transactionId),
};

/** JSON objects come back in any key order; the booking's fields are put back in the specification's. */
function bookingFields(stored: Record<string, string>): BookingFields {
  return Object.fromEntries(BOOKING_FIELDS.map((field) => [field, stored[field]])) as BookingFields;
}

export const BOOKINGS: Table<Booking> = {
  name: 'bookings',
  columns: { source_id: TEXT, booking_id: TEXT, fields: JSONB, status: TEXT, updated_at: TIMESTAMPTZ },
  key: ['source_id', 'booking_id'],
  changes: ['fields', 'status', 'updated_at'],
  fromRow: (row) => ({
    sourceId: row.source_id as string,
    bookingId: row.booking_id as string,
    fields: bookingFields(row.fields as Record<string, string>),
    status: row.status as BookingStatus,
    updatedAt: row.updated_at as Date,
  }),
  values: (b) => [b.sourceId, b.bookingId, JSON.stringify(b.fields), b.status, b.updatedAt],
  keyOf: (b) => accountKey(b.sourceId, b.bookingId),
};

export const KEYED_REQUESTS: Table<KeyedRequest> = {
  name: 'keyed_requests',
  columns: { source_id: TEXT, key: TEXT, fingerprint: TEXT, response: TEXT, created_at: TIMESTAMPTZ },
  key: ['source_id', 'key'],
  changes: [],
  fromRow: (row) => ({
    sourceId: row.source_id as string,
    key: row.key as string,
    fingerprint: row.fingerprint as string,
    response: row.response as string,
    createdAt: row.created_at as Date,
  }),
  values: (r) => [r.sourceId, r.key, r.fingerprint, r.response, r.createdAt],
  keyOf: (r) => accountKey(r.sourceId, r.key),
};

export const DELIVERIES: Table<Delivery> = {
  name: 'deliveries',
  columns: { source_id: TEXT, webhook_id: TEXT, body_digest: BYTEA, response: TEXT, received_at: TIMESTAMPTZ },
  key: ['source_id', 'webhook_id'],
  changes: [],
  fromRow: (row) => ({
    sourceId: row.source_id as string,
    webhookId: row.webhook_id as string,
    bodyDigest: row.body_digest as Buffer,
    response: row.response as string,
    receivedAt: row.received_at as Date,
  }),
  values: (d) => [d.sourceId, d.webhookId, d.bodyDigest, d.response, d.receivedAt],
  keyOf: (d) => accountKey(d.sourceId, d.webhookId),
};

/**
 * Changes (migration 017; the body json since 019, so it reads back with its keys in the order the views made them),
 * inserted only. `seq` is not sent: the insert takes it from the account's counter row, which it locks until COMMIT
 * (table-statements.ts, numberedInsert).
 */
export const CHANGES: Table<NewChange> = {
  name: 'changes',
  columns: { source_id: TEXT, change_id: TEXT, type: TEXT, created_at: TIMESTAMPTZ, body: JSON_TEXT },
  key: ['source_id', 'change_id'],
  changes: [],
  fromRow: (row) => changeFromRow(row),
  values: (c) => [c.sourceId, c.id, c.type, c.createdAt, JSON.stringify(c.body)],
  keyOf: (c) => accountKey(c.sourceId, c.id),
};

/** An account's changes after seq $2, oldest first, at most $3: what delivery reads (PgStore's pool, or its own). */
export const CHANGES_AFTER =
  'SELECT source_id, seq, change_id, type, created_at, body FROM changes WHERE source_id = $1 AND seq > $2 ORDER BY seq LIMIT $3';

/** A kept change, read with its seq. */
export function changeFromRow(row: Row): Change {
  return {
    sourceId: row.source_id as string,
    seq: Number(row.seq),
    id: row.change_id as string,
    type: row.type as ChangeType,
    createdAt: row.created_at as Date,
    body: row.body as Record<string, unknown>,
  };
}

/** An account's counts (migrations/011, 012), by the account; a save adds to them (see table-statements.ts). */
export const HOLDINGS: Table<AccountHoldings> = {
  name: 'account_holdings',
  columns: { source_id: TEXT, tokens: BIGINT, bookings: BIGINT, keys: BIGINT },
  key: ['source_id'],
  changes: ['tokens', 'bookings', 'keys'],
  fromRow: (row) => ({
    sourceId: row.source_id as string,
    tokens: Number(row.tokens),
    bookings: Number(row.bookings),
    keys: Number(row.keys),
  }),
  values: (h) => [h.sourceId, h.tokens, h.bookings, h.keys],
  keyOf: (h) => h.sourceId,
};
