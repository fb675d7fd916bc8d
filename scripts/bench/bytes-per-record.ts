/**
 * `npm run bench:storage`: the bytes each store keeps per request key, per ledger row, per token and per change, as
 * docs/OPERATIONS.md gives them for sizing MAX_KEYS_PER_ACCOUNT, the quotas and CHANGE_RETENTION_DAYS. Memory: V8's heap in use after a
 * full collection, before and after N records; PostgreSQL (with DATABASE_URL): the tables' total size, indexes and
 * TOAST included, before and after N records, in a schema of its own that it drops afterwards. Each kind is measured
 * as it usually is and at the worst a request can make it (issue 42): every text field at its bound in bytes
 * (domain/text-bytes.ts), once in plain ASCII (the most characters) and once in CJK (two bytes a character in V8's
 * heap, and a string holding one is two bytes a character throughout).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Token } from '../../src/domain/tokens';
import type { LedgerEntry } from '../../src/domain/ledger';
import { BOOKING_FIELDS, BOOKING_TEXT_FIELDS } from '../../src/domain/bookings';
import { hashKey } from '../../src/domain/secrets';
import { TEXT_BYTES_PER_FIELD } from '../../src/domain/text-bytes';
import { TOKEN_TEXT_FIELDS } from '../../src/domain/tokens';
import { MemoryStore } from '../../src/store/memory-store';
import { PgStore } from '../../src/store/postgres/pg-store';
import { ledgerEntryView, tokenView } from '../../src/routes/token-view';
import type { KeyedRequest, NewChange, Store } from '../../src/store/store';

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

/** Enough that the columns' growth by doubling is amortised: what a record costs on average, not at a step. */
const N = Number(process.env.BENCH_RECORDS ?? 100_000);
const ACCOUNT = 'SIZING';
const NOW = new Date('2026-01-02T03:04:05.678Z');

/** How the text fields are filled: as usually (short ASCII), or to their bound in bytes with ASCII or with CJK. */
type Filling = 'usual' | 'ascii at the bound' | 'cjk at the bound';
const FILLINGS: readonly Filling[] = ['usual', 'ascii at the bound', 'cjk at the bound'];

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** The CJK Unified Ideographs block: three bytes of UTF-8 each. */
const CJK_FIRST = 0x4e00;
const CJK_COUNT = 0x9fff - CJK_FIRST + 1;

/**
 * A text field at its bound, 255 bytes of UTF-8 as JSON text, of characters drawn at random (a fixed seed per
 * record and field): PostgreSQL compresses a long value (TOAST), and a repeated character would measure its
 * compression, not the worst a partner's text can cost.
 */
function atBound(filling: Exclude<Filling, 'usual'>, i: number, field: number): string {
  let state = (i * 31 + field + 1) >>> 0;
  const next = () => (state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0);
  if (filling === 'ascii at the bound')
    return Array.from({ length: TEXT_BYTES_PER_FIELD }, () => ALPHANUMERIC[next() % ALPHANUMERIC.length]).join('');
  return String.fromCharCode(...Array.from({ length: TEXT_BYTES_PER_FIELD / 3 }, () => CJK_FIRST + (next() % CJK_COUNT)));
}

/** A Modify Booking's answer, the largest a key keeps, different for each key as in real use. */
function bookingAnswer(i: number, filling: Filling): string {
  const booking: Record<string, string> = {
    source_id: ACCOUNT,
    booking_id: `B-${i}`,
    buyer_id: '',
    booking_date: '21-01-2024',
    booking_category: 'hotel',
    supplier_id: 'SUP-4471',
    property_name: 'Hotel Aurora',
    property_country: 'NL',
    guests_count: '3',
    room_count: '1',
    check_in: '14-02-2024',
    check_out: '17-02-2024',
    transaction_currency: 'EUR',
    transaction_amount: '450.00',
    margin_category: '%',
    transaction_margin: '12.50',
    nonrefundable_amount: '150.00',
    refundable_amount: '300.00',
    firstnight_amount: '150.00',
    cancellation_days: '7',
    auth_code: 'AUTH-77812',
    pre_auth: 'true',
    status: 'active',
    updated_at: new Date(NOW.getTime() + i).toISOString(),
  };
  if (filling !== 'usual') ['booking_id', ...BOOKING_TEXT_FIELDS].forEach((field, n) => (booking[field] = atBound(filling, i, n)));
  return JSON.stringify({ success: true, message: 'Success', booking });
}

/** Its fingerprint: at the worst, the request changed every field, which the fingerprint lists. */
function bookingFingerprint(i: number, filling: Filling): string {
  if (filling === 'usual') return JSON.stringify(['modify_booking', `B-${i}`, [['guests_count', '3']]]);
  const { booking } = JSON.parse(bookingAnswer(i, filling)) as { booking: Record<string, string> };
  return JSON.stringify(['modify_booking', booking.booking_id, BOOKING_FIELDS.map((field) => [field, booking[field]])]);
}

const keyedRequest = (i: number, filling: Filling): KeyedRequest => ({
  sourceId: ACCOUNT,
  // The longest {randomkey}: 64 characters.
  key: `sizing-key-${String(i).padStart(12, '0')}`.padEnd(filling === 'usual' ? 0 : 64, 'k'),
  fingerprint: bookingFingerprint(i, filling),
  response: bookingAnswer(i, filling),
  createdAt: NOW,
});
const token = (i: number, filling: Filling = 'usual'): Token => ({
  tokenId: String(4_000_000_000_000_000 + i),
  sourceId: ACCOUNT,
  destinationId: 'D1',
  status: 'active',
  balance: 100_000,
  ...(filling === 'usual'
    ? {}
    : {
        currency: 'EUR',
        details: {
          founding_balance: '100.00',
          ...Object.fromEntries(TOKEN_TEXT_FIELDS.map((field, n) => [field, atBound(filling, i, n)])),
          check_in: '14-02-2026',
          check_out: '17-02-2026',
          room_count: '999',
        },
      }),
});
const ledgerEntry = (i: number): LedgerEntry => ({
  kind: 'withdrawal',
  transactionId: String(90_000_000_000_000_000_000n + BigInt(i)),
  sourceId: ACCOUNT,
  destinationId: 'D1',
  tokenId: token(0).tokenId,
  amount: 100,
  fee: 0,
  tokenBalance: 100_000 - 100,
  createdAt: NOW,
});

/**
 * A change as a request records it (contract section 13.1): usually a withdrawal's, the token after it and its
 * ledger row; at the bound, a Modify Token's, whose token carries every detail at its bound.
 */
const change = (i: number, filling: Filling): NewChange => ({
  sourceId: ACCOUNT,
  id: `chg_${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`,
  type: filling === 'usual' ? 'token.withdrawn' : 'token.modified',
  createdAt: NOW,
  body: {
    token: tokenView({ ...token(i, filling), balance: 99_900 }),
    ...(filling === 'usual' ? { ledger_entry: ledgerEntryView(ledgerEntry(i)) } : {}),
    request: {
      operation: filling === 'usual' ? 'withdraw' : 'modify_token',
      request_id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      ...(filling === 'usual' ? { transaction_id: ledgerEntry(i).transactionId } : { randomkey: keyedRequest(i, filling).key }),
    },
  },
});

const SEED = {
  accounts: [
    { sourceId: ACCOUNT, publicKeyHash: hashKey('pk'), secretKeyHash: hashKey('sk'), destinations: new Set(['D1']), signingSecrets: [] },
  ],
  tokens: [token(0)],
  bookings: [],
};

/** Writes N records of one kind, 500 to a unit, skipping the first token (the seed's). */
async function write(store: Store, kind: Kind, filling: Filling): Promise<void> {
  for (let start = 0; start < N; start += 500) {
    await store.transaction(async (tx) => {
      for (let i = start; i < Math.min(N, start + 500); i += 1) {
        if (kind === 'keys') await tx.recordKeyedRequest(keyedRequest(i, filling));
        else if (kind === 'ledger rows') await tx.recordLedgerEntry(ledgerEntry(i));
        else if (kind === 'changes') await tx.recordChange(change(i, filling));
        else await tx.createToken(token(i + 1, filling));
      }
    });
  }
}

type Kind = 'keys' | 'ledger rows' | 'tokens' | 'changes';

async function memoryBytes(kind: Kind, filling: Filling): Promise<number> {
  const store = new MemoryStore({ heapShareInUse: () => 0 });
  await store.loadSeed(SEED);
  // The heap and the typed arrays outside it, where the ledger's and the tokens' columns live.
  const used = () => {
    collect();
    const { heapUsed, arrayBuffers } = process.memoryUsage();
    return heapUsed + arrayBuffers;
  };
  const before = used();
  await write(store, kind, filling);
  const bytes = (used() - before) / N;
  await store.close();
  return bytes;
}

const TABLES = { keys: 'keyed_requests', 'ledger rows': 'ledger', tokens: 'tokens', changes: 'changes' } as const;

async function postgresBytes(url: string, kind: Kind, filling: Filling): Promise<number> {
  const schema = `bytes_per_record_${process.pid}`;
  const store = await PgStore.open({ connectionString: url, statementTimeoutMs: 60_000, poolSize: 2, schema, sweepIntervalMs: 0 });
  const { Client } = await import('pg');
  const client = new Client({ connectionString: url, options: `-c search_path=${schema}` });
  await client.connect();
  const size = async () => Number((await client.query(`SELECT pg_total_relation_size('${TABLES[kind]}') AS bytes`)).rows[0].bytes);
  try {
    await store.loadSeed(SEED);
    await client.query(`VACUUM ${TABLES[kind]}`);
    const before = await size();
    await write(store, kind, filling);
    await client.query(`VACUUM ${TABLES[kind]}`);
    return ((await size()) - before) / N;
  } finally {
    await store.close();
    await client.query(`DROP SCHEMA ${schema} CASCADE`);
    await client.end();
  }
}

/** Ledger rows hold no text a request chooses: measured once. */
const MEASURED: ReadonlyArray<readonly [Kind, Filling]> = [
  ...FILLINGS.map((filling) => ['keys', filling] as const),
  ['ledger rows', 'usual'],
  ...FILLINGS.map((filling) => ['tokens', filling] as const),
  ...FILLINGS.map((filling) => ['changes', filling] as const),
];

/** The kinds named on the command line (`npm run bench:storage -- changes tokens`), or every kind. */
const ASKED = process.argv.slice(2);
const measured = MEASURED.filter(([kind]) => ASKED.length === 0 || ASKED.includes(kind));

async function main(): Promise<void> {
  const one = (kind: string) => kind.replace(/s$/, '');
  const line = (store: string, bytes: number, kind: Kind, filling: Filling) =>
    `${store}: ${Math.round(bytes)} bytes per ${one(kind)}${filling === 'usual' ? '' : `, text ${filling}`} (${N} records)\n`;
  for (const [kind, filling] of measured) process.stdout.write(line('memory store', await memoryBytes(kind, filling), kind, filling));
  const url = process.env.DATABASE_URL;
  if (!url) {
    process.stdout.write('PostgreSQL: SKIPPED (set DATABASE_URL)\n');
    return;
  }
  for (const [kind, filling] of measured) process.stdout.write(line('PostgreSQL', await postgresBytes(url, kind, filling), kind, filling));
}

void main();
