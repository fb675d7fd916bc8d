/**
 * DATABASE_URL=… npm run bench:change-layouts: what a batch's changes (contract section 13.1) cost PostgreSQL in each
 * way a change could be kept, without the receiver: pgbench from one client (a batch has one connection), `-M
 * prepared`. Each variant is the write a batch of N withdrawals sends (its tokens updated, its ledger rows inserted,
 * then COMMIT) and its changes kept one way:
 * - none: no change (the build before 13.1);
 * - rows: a row a change, numbered from the account's counter through window functions as the store numbers them
 *   (table-statements.ts);
 * - counter: the account's counter taken, no change kept (what numbering alone costs);
 * - page: one row for the batch's changes of the account, their bodies one JSON array, compressed with lz4;
 * - ledger: the change's columns on the ledger row it describes, with a unique (source_id, seq) index;
 * - none_no_fk: none with its ledger rows' foreign key to tokens dropped, for scale.
 * Every variant writes tables of its own, made empty alike, so that none is slowed by rows another left; all update
 * the same tokens, and the variants' order turns each round. The body is a withdrawal's as the receiver makes it.
 * Unlike the store, every variant with changes makes their ids in the database and leaves out the lookup of waiting
 * feeds: alike for each layout, so each costs a little more over none than in the store. Interleaved over
 * BENCH_ROUNDS (default 6) of BENCH_SECONDS (default 3) at each of BENCH_BATCH_SIZES (default 16,60); prints each
 * variant's median ms a batch and the median of its differences from `none` in the same round. In a schema of its
 * own, dropped at the end.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { ledgerEntryView, tokenView } from '../../src/routes/token-view';
import { median } from './median';
import { tokenIdOf, writeBenchSeed } from './seed';
import { openBenchStore } from './store-alone';

const TOKENS = 50_000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const BATCH_SIZES = (process.env.BENCH_BATCH_SIZES ?? '16,60').split(',').map(Number);

/** A batch's N tokens from a random one on, as pgbench draws it, and the rows it writes. */
const TOKENS_OF_BATCH = (n: number) =>
  `generate_series(1, ${n}) AS g0 CROSS JOIN LATERAL (SELECT ${tokenIdOf(0)} + :first + g0 - 1 AS token) AS t0`;
const UPDATE_TOKENS = (n: number) =>
  `w0 AS (UPDATE tokens SET balance = tokens.balance - 1 FROM ${TOKENS_OF_BATCH(n)}
           WHERE tokens.source_id = 'BENCH' AND tokens.token_id = t0.token::text RETURNING 1)`;
const LEDGER_COLUMNS = 'source_id, transaction_id, kind, destination_id, token_id, amount, fee, token_balance, created_at';
const LEDGER_VALUES = `'BENCH', lpad(nextval('bench_transaction_ids')::text, 20, '0'), 'withdrawal', 'D1', t0.token::text, 1, 0, 1000, now()`;
const COUNTER = (n: number, counters: string) =>
  `n AS (INSERT INTO ${counters} AS c (source_id, last_seq) VALUES ('BENCH', ${n})
          ON CONFLICT (source_id) DO UPDATE SET last_seq = c.last_seq + ${n} RETURNING c.last_seq)`;
/** The body's ids, which each change replaces with its own. */
const TOKEN_ID = tokenIdOf(17);
const TRANSACTION_ID = '00009000000000000017';
const REQUEST_ID = '0f0e4a7c-1c2d-4b8e-9a61-3f0a1b2c3d4e';
/**
 * Each change's own body text, parsed once a change as each element of the batch's json[] is: its token's and
 * transaction's ids and a random request id, so that a page of bodies compresses no better than the receiver's.
 */
const BODY = `replace(replace(replace((SELECT body FROM bench_body), '${TOKEN_ID}', (${tokenIdOf(0)} + :first + g0 - 1)::text),
  '${TRANSACTION_ID}', lpad((:first + g0)::text, 20, '0')), '${REQUEST_ID}', gen_random_uuid()::text)`;

interface Variant {
  name: string;
  /** What makes the variant's tables (`ledger_<name>` and what else it writes), each emptied before it runs. */
  tables(name: string): string[];
  /** The batch's write statement for n withdrawals. */
  write(n: number, name: string): string;
}

const ledgerTable = (name: string) => `ledger_${name}`;
const tablesOf = (variant: Variant) => variant.tables(variant.name).flatMap((sql) => /^CREATE TABLE (\w+)/.exec(sql)?.[1] ?? []);
const LEDGER_LIKE = (name: string, foreignKey = true) => [
  `CREATE TABLE ${ledgerTable(name)} (LIKE ledger INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES)`,
  `ALTER TABLE ${ledgerTable(name)} ALTER ledger_seq ADD GENERATED ALWAYS AS IDENTITY`,
  ...(foreignKey ? [`ALTER TABLE ${ledgerTable(name)} ADD FOREIGN KEY (source_id, token_id) REFERENCES tokens (source_id, token_id)`] : []),
];
const insertLedger = (n: number, name: string) =>
  `w1 AS (INSERT INTO ${ledgerTable(name)} (${LEDGER_COLUMNS}) SELECT ${LEDGER_VALUES} FROM ${TOKENS_OF_BATCH(n)} RETURNING 1)`;

const withoutChanges = (n: number, name: string) =>
  `WITH ${UPDATE_TOKENS(n)}, ${insertLedger(n, name)} SELECT (SELECT count(*) FROM w0), (SELECT count(*) FROM w1)`;

const VARIANTS: Variant[] = [
  {
    name: 'none',
    tables: (name) => LEDGER_LIKE(name),
    write: withoutChanges,
  },
  {
    name: 'rows',
    tables: (name) => [
      ...LEDGER_LIKE(name),
      `CREATE TABLE counters_${name} (LIKE change_counters INCLUDING ALL)`,
      `CREATE TABLE changes_${name} (LIKE changes INCLUDING ALL)`,
    ],
    write: (n, name) =>
      `WITH ${UPDATE_TOKENS(n)}, ${insertLedger(n, name)}, ${COUNTER(n, `counters_${name}`)},
       w2 AS (INSERT INTO changes_${name} (seq, source_id, change_id, type, created_at, body)
              SELECT n.last_seq - count(*) OVER () + row_number() OVER (ORDER BY g0), 'BENCH',
                     'chg_' || gen_random_uuid(), 'token.withdrawn', now(), (${BODY})::json
                FROM n, generate_series(1, ${n}) AS g0 RETURNING 1)
       SELECT (SELECT count(*) FROM w0), (SELECT count(*) FROM w1), (SELECT count(*) FROM w2)`,
  },
  {
    name: 'counter',
    tables: (name) => [...LEDGER_LIKE(name), `CREATE TABLE counters_${name} (LIKE change_counters INCLUDING ALL)`],
    write: (n, name) =>
      `WITH ${UPDATE_TOKENS(n)}, ${insertLedger(n, name)}, ${COUNTER(n, `counters_${name}`)}
       SELECT (SELECT count(*) FROM w0), (SELECT count(*) FROM w1), (SELECT last_seq FROM n)`,
  },
  {
    name: 'page',
    tables: (name) => [
      ...LEDGER_LIKE(name),
      `CREATE TABLE counters_${name} (LIKE change_counters INCLUDING ALL)`,
      `CREATE TABLE pages_${name} (source_id text NOT NULL, last_seq bigint NOT NULL, first_seq bigint NOT NULL,
         created_at timestamptz NOT NULL, changes json COMPRESSION lz4 NOT NULL, PRIMARY KEY (source_id, last_seq))`,
      `CREATE INDEX ON pages_${name} USING brin (created_at)`,
    ],
    write: (n, name) =>
      `WITH ${UPDATE_TOKENS(n)}, ${insertLedger(n, name)}, ${COUNTER(n, `counters_${name}`)},
       w2 AS (INSERT INTO pages_${name} (source_id, last_seq, first_seq, created_at, changes)
              SELECT 'BENCH', n.last_seq, n.last_seq - ${n} + 1, now(),
                     (SELECT ('[' || string_agg('{"id":"chg_' || gen_random_uuid() || '","type":"token.withdrawn","body":' || ${BODY} || '}', ',') || ']')
                        FROM generate_series(1, ${n}) AS g0)::json
                FROM n RETURNING 1)
       SELECT (SELECT count(*) FROM w0), (SELECT count(*) FROM w1), (SELECT count(*) FROM w2)`,
  },
  {
    name: 'ledger',
    tables: (name) => [
      ...LEDGER_LIKE(name),
      `ALTER TABLE ${ledgerTable(name)} ADD COLUMN seq bigint, ADD COLUMN change_id text, ADD COLUMN change_type text, ADD COLUMN body json`,
      `CREATE UNIQUE INDEX ON ${ledgerTable(name)} (source_id, seq)`,
      `CREATE TABLE counters_${name} (LIKE change_counters INCLUDING ALL)`,
    ],
    write: (n, name) =>
      `WITH ${UPDATE_TOKENS(n)}, ${COUNTER(n, `counters_${name}`)},
       w1 AS (INSERT INTO ${ledgerTable(name)} (${LEDGER_COLUMNS}, seq, change_id, change_type, body)
              SELECT ${LEDGER_VALUES}, n.last_seq - ${n} + g0, 'chg_' || gen_random_uuid(), 'token.withdrawn', (${BODY})::json
                FROM n, ${TOKENS_OF_BATCH(n)} RETURNING 1)
       SELECT (SELECT count(*) FROM w0), (SELECT count(*) FROM w1)`,
  },
  {
    name: 'none_no_fk',
    tables: (name) => LEDGER_LIKE(name, false),
    write: withoutChanges,
  },
];

async function main() {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('DATABASE_URL is not set: this bench measures PostgreSQL');
  const directory = mkdtempSync(path.join(tmpdir(), 'change-layouts-'));
  const seedFile = path.join(directory, 'seed.json');
  await writeBenchSeed(seedFile, TOKENS);
  const admin = new Client({ connectionString: databaseUrl });
  await admin.connect();
  const schema = `change_layouts_${Date.now()}`;
  await admin.query(`CREATE SCHEMA ${schema}`);
  const { store } = await openBenchStore(databaseUrl, schema, seedFile, true);
  await store.close();
  const pgbenchEnvironment = {
    ...process.env,
    // The batch's own plan setting (batch.ts), and nested loops: the batch's arrays are planned as 10 rows each, so
    // it looks each key up, where a series of 60 would have the planner hash the whole table instead.
    PGOPTIONS: `-c search_path=${schema} -c plan_cache_mode=force_generic_plan -c enable_hashjoin=off -c enable_mergejoin=off`,
  };
  try {
    await admin.query(`SET search_path = ${schema}`);
    await admin.query('CREATE SEQUENCE bench_transaction_ids');
    const body = {
      token: tokenView({ tokenId: TOKEN_ID, sourceId: 'BENCH', destinationId: 'D1', status: 'active', balance: 99_999_998 }),
      ledger_entry: ledgerEntryView({
        kind: 'withdrawal',
        transactionId: TRANSACTION_ID,
        sourceId: 'BENCH',
        destinationId: 'D1',
        tokenId: TOKEN_ID,
        amount: 1,
        fee: 0,
        tokenBalance: 99_999_998,
        createdAt: new Date(),
      }),
      request: { operation: 'withdraw', request_id: REQUEST_ID, transaction_id: TRANSACTION_ID },
    };
    await admin.query('CREATE TABLE bench_body AS SELECT $1::text AS body', [JSON.stringify(body)]);
    for (const variant of VARIANTS) for (const sql of variant.tables(variant.name)) await admin.query(sql);
    const perBatch = new Map<string, number[]>();
    const overNone = new Map<string, number[]>();
    for (let round = 1; round <= ROUNDS; round += 1) {
      for (const n of BATCH_SIZES) {
        const inRound = new Map<string, number>();
        for (let i = 0; i < VARIANTS.length; i += 1) {
          const variant = VARIANTS[(i + round) % VARIANTS.length];
          await admin.query(`TRUNCATE ${tablesOf(variant).join(', ')}`);
          const script = path.join(directory, `${variant.name}-${n}.sql`);
          writeFileSync(
            script,
            `\\set first random(1, ${TOKENS - n})\nBEGIN;\n${variant.write(n, variant.name).replace(/\s+/g, ' ')};\nCOMMIT;\n`,
          );
          const output = execFileSync('pgbench', ['-n', '-M', 'prepared', '-T', String(SECONDS), '-f', script, databaseUrl], {
            env: pgbenchEnvironment,
            encoding: 'utf8',
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          const tps = Number(/tps = ([0-9.]+)/.exec(output)?.[1]);
          const ms = 1000 / tps;
          inRound.set(variant.name, ms);
          const key = `${n} ${variant.name}`;
          perBatch.set(key, [...(perBatch.get(key) ?? []), ms]);
          process.stdout.write(`round ${round} N=${n} ${variant.name.padEnd(10)} ${ms.toFixed(3)} ms a batch\n`);
        }
        for (const [name, ms] of inRound) {
          const key = `${n} ${name}`;
          overNone.set(key, [...(overNone.get(key) ?? []), ms - (inRound.get('none') as number)]);
        }
      }
    }
    process.stdout.write('\n| batch of | layout | ms a batch (median) | more than none (median of rounds) |\n|---|---|---|---|\n');
    for (const [key, values] of perBatch) {
      const [n, name] = key.split(' ');
      process.stdout.write(`| ${n} | ${name} | ${median(values).toFixed(3)} | ${median(overNone.get(key) as number[]).toFixed(3)} |\n`);
    }
  } finally {
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
