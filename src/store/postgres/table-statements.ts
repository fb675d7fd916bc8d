/**
 * The statements made from the tables' descriptors (tables.ts): the batch's reads, one per kind of row however
 * many units ask, and its writes, each for any number of rows through unnest; the seed's inserts; the store's
 * reads outside a unit of work.
 */
import { WRITTEN, type ReadKind, type ReadRecords, type WrittenKind } from '../unit/kinds';
import type { StagedWrites } from '../unit/staged-writes';
import { textArrayParameter } from './array-parameters';
import { statement, type Call, type Statement, type WriteCall } from './statements';
import { BOOKINGS, CHANGES, DELIVERIES, HOLDINGS, KEYED_REQUESTS, LEDGER, TOKENS, type ColumnType, type Row, type Table } from './tables';

/** The columns of a table as its records are made from them. */
export function selectList(table: Table<unknown>): string {
  return Object.entries(table.columns)
    .map(([column, type]) => type.read?.(column) ?? column)
    .join(', ');
}

/** The columns' arrays as rows `v`, the columns named as they are; with `ordinal`, each row's place too, under that name. */
function unnestOf(columns: ReadonlyArray<[string, ColumnType]>, ordinal?: string): string {
  const names = [...columns.map(([column]) => column), ...(ordinal ? [ordinal] : [])].join(', ');
  return `unnest(${columns.map(([, type], i) => `$${i + 1}::${type.array}`).join(', ')})${ordinal ? ' WITH ORDINALITY' : ''} AS v (${names})`;
}

/** What an insert stores of each row `v` of unnestOf, in the columns' order. */
function storedValues(columns: ReadonlyArray<[string, ColumnType]>): string {
  return columns.map(([column, type]) => type.write?.(`v.${column}`) ?? `v.${column}`).join(', ');
}

/**
 * How a read locks its rows: not at all; in key order, waiting for each (`FOR UPDATE`); or only those no other
 * transaction holds, without waiting (`FOR UPDATE SKIP LOCKED`: a batch's rows out of its lock order, batch.ts).
 */
type Locking = 'none' | 'inOrder' | 'ifFree';

/**
 * The rows of many keys, each key's columns in an array of its own. Each key is looked up on its own (OFFSET 0
 * keeps the planner from turning the lookups into one join): as a join, a table that was empty when the
 * statement was planned was read whole for every batch, 1.8 of a batch's 2.9 ms (docs/BENCHMARKS.md). Rows
 * locked in order are locked in key order by byte (COLLATE "C", as compareKeys orders them), so two batches (of
 * this instance or another) lock shared rows in one order.
 */
function lookup(name: string, table: Table<unknown>, locking: Locking): Statement {
  const { key } = table;
  const keys = `unnest(${key.map((_, i) => `$${i + 1}::text[]`).join(', ')}) AS k (${key.join(', ')})`;
  const match = key.map((column) => `${column} = k.${column}`).join(' AND ');
  const lock = {
    none: '',
    inOrder: ` ORDER BY ${key.map((column) => `r.${column} COLLATE "C"`).join(', ')} FOR UPDATE`,
    ifFree: ' FOR UPDATE SKIP LOCKED',
  }[locking];
  return statement(
    name,
    `SELECT r.* FROM ${keys}, LATERAL (SELECT ${selectList(table)} FROM ${table.name} WHERE ${match} OFFSET 0) AS r${lock}`,
  );
}

/** Two keys' parts (each key's columns in order) in the order PostgreSQL sorts them under COLLATE "C": by code point. */
export function compareKeys(a: readonly string[], b: readonly string[]): number {
  for (let part = 0; part < Math.min(a.length, b.length); part += 1) {
    const [x, y] = [a[part], b[part]];
    if (x === y) continue;
    for (let i = 0; i < Math.min(x.length, y.length); i += 1) {
      const [cx, cy] = [x.codePointAt(i) as number, y.codePointAt(i) as number];
      if (cx !== cy) return cx - cy;
      if (cx > 0xffff) i += 1;
    }
    return x.length - y.length;
  }
  return a.length - b.length;
}

/** New rows; `ifNew` leaves rows that exist as they are (the seed's). */
export function insert(name: string, table: Table<unknown>, ifNew = false): Statement {
  const columns = Object.entries(table.columns);
  return statement(
    name,
    `INSERT INTO ${table.name} (${columns.map(([column]) => column).join(', ')}) SELECT ${storedValues(columns)} FROM ${unnestOf(columns)}${ifNew ? ' ON CONFLICT DO NOTHING' : ''}`,
  );
}

/**
 * New changes, each numbered as it is inserted (contract section 13.1): each account's numbers taken in one upsert of
 * its counter, which holds the row until COMMIT, accounts in byte order (COLLATE "C", the order of every lock a
 * batch takes); the account's changes take the numbers up to the last in their order in the statement's values,
 * which is the order the batch's units succeeded (unit/staged-writes.ts keeps a kind's writes in the order they
 * were taken in). It notifies once per account some instance's feed waits for (migration 019). Migration 020's
 * take_change_numbers does the same; written here as WITH parts, not called: the PL/pgSQL call and its RETURN QUERY
 * cost a batch of 16 changes about 0.1 ms more (pgbench, docs/BENCHMARKS.md).
 */
function numberedInsert(name: string, table: Table<unknown>): Statement {
  const columns = Object.entries(table.columns);
  // The accounts are the statement's first parameter: one entry a change.
  if (columns[0][0] !== 'source_id') throw new Error(`${table.name}: a numbered insert's first column is the account (source_id)`);
  const account = 'PARTITION BY v.source_id';
  return {
    ...statement(
      name,
      `INSERT INTO ${table.name} (seq, ${columns.map(([column]) => column).join(', ')})
     SELECT n.last_seq - count(*) OVER (${account}) + row_number() OVER (${account} ORDER BY v.position), ${storedValues(columns)}
       FROM ${unnestOf(columns, 'position')}
       JOIN change_numbers AS n ON n.source_id = v.source_id CROSS JOIN changes_woken`,
    ),
    // changes_woken is a read-only part: it runs because the insert reads it, and every batch's insert has a row.
    with: `change_numbers AS (
       INSERT INTO change_counters AS c (source_id, last_seq)
       SELECT a.source_id, count(*) FROM unnest($1::text[]) AS a (source_id) GROUP BY a.source_id ORDER BY a.source_id COLLATE "C"
       ON CONFLICT ON CONSTRAINT change_counters_pkey DO UPDATE SET last_seq = c.last_seq + EXCLUDED.last_seq
       RETURNING c.source_id, c.last_seq),
     changes_woken AS (
       SELECT count(pg_notify('receiver_changes', l.source_id)) FROM change_listeners AS l
        WHERE l.source_id = ANY ($1::text[]) AND l.until > now())`,
  };
}

/** The columns a save sends: the key, then what it changes. */
function savedColumns(table: Table<unknown>): string[] {
  return [...table.key, ...table.changes];
}

/** Rows changed, found by their whole key (the account's part too); `add` adds the values to the columns instead of setting them. */
function update(name: string, table: Table<unknown>, add = false): Statement {
  const columns = savedColumns(table).map((column) => [column, table.columns[column]] as [string, ColumnType]);
  const set = table.changes.map((column) => {
    const value = table.columns[column].write?.(`v.${column}`) ?? `v.${column}`;
    return `${column} = ${add ? `${table.name}.${column} + ` : ''}${value}`;
  });
  const match = table.key.map((column) => `${table.name}.${column} = v.${column}`).join(' AND ');
  return statement(name, `UPDATE ${table.name} SET ${set.join(', ')} FROM ${unnestOf(columns)} WHERE ${match}`);
}

/** The types of the columns a save sends (savedColumns), in its order. */
function savedTypes(table: Table<unknown>): ColumnType[] {
  return savedColumns(table).map((column) => table.columns[column]);
}

/** A record's values as its table's save sends them (savedColumns). */
function savedValues<Item>(table: Table<Item>): (item: Item) => unknown[] {
  const all = Object.keys(table.columns);
  const positions = savedColumns(table as Table<unknown>).map((column) => all.indexOf(column));
  return (item) => {
    const values = table.values(item);
    return positions.map((position) => values[position]);
  };
}

/** Whether any account holds a token id: the one read not within an account, for drawing a new id (token-creation.ts). */
const TOKEN_IDS: Table<string> = {
  name: 'tokens',
  columns: { token_id: TOKENS.columns.token_id },
  key: ['token_id'],
  changes: [],
  fromRow: (row) => row.token_id as string,
  values: (tokenId) => [tokenId],
  keyOf: (tokenId) => tokenId,
};

/** A kind of read that locks its rows: in order, or only if free; and the same read without a lock, to tell a held row from none. */
interface LockingRead {
  inOrder: Statement;
  ifFree: Statement;
  find: Statement;
}

function lockingRead(name: string, table: Table<unknown>): LockingRead {
  return {
    inOrder: lookup(`batch_lock_${name}`, table, 'inOrder'),
    ifFree: lookup(`batch_lock_${name}_if_free`, table, 'ifFree'),
    find: lookup(`batch_find_${name}`, table, 'none'),
  };
}

/**
 * What a batch reads, by kind, in the order a round trip sends them: the lock order of kinds. Within one round
 * trip, batches that both lock tokens and holdings, say, lock them in one order; across round trips a batch
 * keeps to it by never waiting for a row before one it holds (batch.ts, invariant 2).
 */
const LOCKING_TOKENS = lockingRead('tokens', TOKENS);
const LOCKING_HOLDINGS = lockingRead('holdings', HOLDINGS);
const LOCKING_BOOKINGS = lockingRead('bookings', BOOKINGS);

export const READS = {
  tokens: { table: TOKENS, statement: LOCKING_TOKENS.inOrder, locking: LOCKING_TOKENS },
  tokenIds: { table: TOKEN_IDS, statement: lookup('batch_find_token_ids', TOKEN_IDS, 'none') },
  ledger: { table: LEDGER, statement: lookup('batch_find_ledger_entries', LEDGER, 'none') },
  holdings: { table: HOLDINGS, statement: LOCKING_HOLDINGS.inOrder, locking: LOCKING_HOLDINGS },
  bookings: { table: BOOKINGS, statement: LOCKING_BOOKINGS.inOrder, locking: LOCKING_BOOKINGS },
  keyedRequests: { table: KEYED_REQUESTS, statement: lookup('batch_find_keyed_requests', KEYED_REQUESTS, 'none') },
  deliveries: { table: DELIVERIES, statement: lookup('batch_find_deliveries', DELIVERIES, 'none') },
} satisfies { [Kind in ReadKind]: { table: Table<ReadRecords[Kind]>; statement: Statement; locking?: LockingRead } };

export const READ_KINDS = Object.keys(READS) as ReadKind[];

const WRITES: Record<
  WrittenKind,
  { table: Table<unknown>; insert: Statement; update?: { statement: Statement; values: (item: never) => unknown[]; types: ColumnType[] } }
> = {
  tokens: {
    table: TOKENS as Table<unknown>,
    insert: insert('batch_create_tokens', TOKENS),
    update: { statement: update('batch_save_tokens', TOKENS), values: savedValues(TOKENS), types: savedTypes(TOKENS as Table<unknown>) },
  },
  ledger: { table: LEDGER as Table<unknown>, insert: insert('batch_record_ledger_entries', LEDGER) },
  bookings: {
    table: BOOKINGS as Table<unknown>,
    insert: insert('batch_create_bookings', BOOKINGS),
    update: {
      statement: update('batch_save_bookings', BOOKINGS),
      values: savedValues(BOOKINGS),
      types: savedTypes(BOOKINGS as Table<unknown>),
    },
  },
  keyedRequests: { table: KEYED_REQUESTS as Table<unknown>, insert: insert('batch_record_keyed_requests', KEYED_REQUESTS) },
  deliveries: { table: DELIVERIES as Table<unknown>, insert: insert('batch_record_deliveries', DELIVERIES) },
  changes: { table: CHANGES as Table<unknown>, insert: numberedInsert('batch_record_changes', CHANGES) },
};

const ADD_HOLDINGS = update('batch_add_holdings', HOLDINGS, true);
const addedHoldings = savedValues(HOLDINGS);
const ADDED_HOLDINGS_TYPES = savedTypes(HOLDINGS as Table<unknown>);

/** Rows of values as columns, one array per position: what unnest takes. */
export function columnsOf(rows: unknown[][]): unknown[][] {
  const width = rows[0]?.length ?? 0;
  return Array.from({ length: width }, (_, column) => rows.map((row) => row[column]));
}

/** Keys (each the key columns' values, in order) as a read binds them: a text[] per key column. */
export function keyParameters(keys: string[][]): Buffer[] {
  return columnsOf(keys).map((column) => textArrayParameter(column as string[]));
}

/** A read of these keys. */
export function readCall(kind: ReadKind, keys: string[][]): Call {
  return { statement: READS[kind].statement, values: keyParameters(keys) };
}

/** The kinds of read that lock their rows, and how they read a row out of lock order. */
export function lockingReadOf(kind: ReadKind): LockingRead | undefined {
  const read = READS[kind];
  return 'locking' in read ? read.locking : undefined;
}

/** A read's rows as records, under the keys the batch files them by. */
export function byKey<Kind extends ReadKind>(kind: Kind, rows: Row[]): Map<string, ReadRecords[Kind]> {
  const { table } = READS[kind] as unknown as { table: Table<ReadRecords[Kind]> };
  return new Map(
    rows.map((row) => {
      const item = table.fromRow(row);
      return [table.keyOf(item), item];
    }),
  );
}

/**
 * The batch's writes as calls, one per table and kind of write that has rows: each of a unit's records writes one
 * row, which its statement's row count checks (checkedWrites); the holdings added are not checked, as a record of
 * an account with no row of them (one the seed never set) is kept, uncounted.
 */
export function writeCalls(writes: StagedWrites): WriteCall[] {
  const calls: WriteCall[] = [];
  const add = (write: Statement, rows: unknown[][], checked: boolean, types: readonly ColumnType[]) => {
    if (rows.length === 0) return;
    const values = columnsOf(rows).map((column, i) => types[i].parameter(column));
    calls.push({ statement: write, values, rowsMeant: checked ? rows.length : undefined });
  };
  for (const kind of WRITTEN) {
    const { table } = WRITES[kind];
    add(
      WRITES[kind].insert,
      [...writes.created[kind].values()].map((item) => table.values(item)),
      true,
      Object.values(table.columns),
    );
    const { update: save } = WRITES[kind];
    if (save)
      add(
        save.statement,
        [...writes.saved[kind].values()].map((item) => save.values(item as never)),
        true,
        save.types,
      );
  }
  add(
    ADD_HOLDINGS,
    [...writes.holdings].map(([sourceId, added]) => addedHoldings({ sourceId, ...added })),
    false,
    ADDED_HOLDINGS_TYPES,
  );
  return calls;
}
