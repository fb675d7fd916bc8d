import { Pool } from 'pg';
import { roundTrip } from '../../src/store/postgres/connection';
import { statement } from '../../src/store/postgres/statements';
import { TEST_DATABASE_URL, warnIfNoDatabase } from '../helpers/postgres';

warnIfNoDatabase();

const BEGIN = statement('t_begin', 'BEGIN');
const COMMIT = statement('t_commit', 'COMMIT');
const DIVIDE = statement('t_divide', 'SELECT 10 / $1::int AS quotient');
const ECHO = statement(
  't_echo',
  'SELECT $1::text AS text, $2::bigint AS number, $3::timestamptz AS at, $4::jsonb AS json, $5::text AS nothing',
);

(TEST_DATABASE_URL ? describe : describe.skip)('statements batched in one round trip', () => {
  let pool: Pool;
  beforeEach(() => {
    // One connection, so every batch below runs on the one whose statements the earlier ones parsed.
    pool = new Pool({ connectionString: TEST_DATABASE_URL, max: 1 });
  });
  afterEach(() => pool.end());

  it('binds every value and answers each statement in order, the same statement twice in one batch included', async () => {
    const client = await pool.connect();
    try {
      const at = new Date('2026-01-02T03:04:05.678Z');
      const [first, second, third] = await roundTrip(client, [
        { statement: ECHO, values: ["it's \\ \u00e9", 9_007_199_254_740_991, at, JSON.stringify({ a: [1] }), null] },
        { statement: DIVIDE, values: [5] },
        { statement: DIVIDE, values: [2] },
      ]);
      expect(first.rows).toEqual([{ text: "it's \\ \u00e9", number: '9007199254740991', at, json: { a: [1] }, nothing: null }]);
      expect([second.rows[0].quotient, third.rows[0].quotient]).toEqual([2, 5]);
    } finally {
      client.release();
    }
  });

  it('the first failure is thrown; a COMMIT after it answers ROLLBACK, which is thrown too; the connection stays usable', async () => {
    const client = await pool.connect();
    try {
      await expect(
        roundTrip(client, [{ statement: BEGIN }, { statement: DIVIDE, values: [0] }, { statement: DIVIDE, values: [1] }]),
      ).rejects.toThrow('division by zero');
      await expect(roundTrip(client, [{ statement: COMMIT }])).rejects.toThrow('t_commit answered ROLLBACK instead of COMMIT');
      // Statements parsed in the failed batch, and the one it skipped, still run.
      const [answer] = await roundTrip(client, [{ statement: DIVIDE, values: [10] }]);
      expect(answer.rows).toEqual([{ quotient: 1 }]);
    } finally {
      client.release();
    }
  });

  it('describes only statements that return rows: one tagged otherwise that returns rows fails loudly, and the connection stays usable', async () => {
    const client = await pool.connect();
    try {
      const [selected, done] = await roundTrip(client, [
        { statement: statement('t_values', 'VALUES (1)', 'SELECT') },
        { statement: statement('t_none', 'DO $$ BEGIN END $$') },
      ]);
      expect([selected, done]).toEqual([
        { command: 'SELECT', rows: [{ column1: 1 }] },
        { command: 'DO', rows: [] },
      ]);
      await expect(roundTrip(client, [{ statement: statement('t_returning', 'VALUES (1)', 'VALUES') }])).rejects.toThrow(
        'a statement not described as a SELECT returned rows',
      );
      const [answer] = await roundTrip(client, [{ statement: DIVIDE, values: [10] }]);
      expect(answer.rows).toEqual([{ quotient: 1 }]);
    } finally {
      client.release();
    }
  });

  it('refuses a statement name parsed on the connection for another text, before it sends anything; the connection stays usable', async () => {
    const client = await pool.connect();
    try {
      await roundTrip(client, [{ statement: DIVIDE, values: [5] }]);
      const impostor = statement('t_divide', 'SELECT 100 / $1::int AS quotient');
      await expect(roundTrip(client, [{ statement: BEGIN }, { statement: impostor, values: [5] }])).rejects.toThrow(
        'statement t_divide was parsed on this connection as another text',
      );
      // Nothing of the refused round trip reached the database: no transaction is open, and the statement is the first text.
      await expect(roundTrip(client, [{ statement: statement('t_savepoint', 'SAVEPOINT t') }])).rejects.toThrow(
        'SAVEPOINT can only be used in transaction blocks',
      );
      const [answer] = await roundTrip(client, [{ statement: DIVIDE, values: [5] }]);
      expect(answer.rows).toEqual([{ quotient: 2 }]);
    } finally {
      client.release();
    }
  });

  it('converts every value before it writes a byte: a value that cannot be sent fails the round trip, and the connection stays usable', async () => {
    const client = await pool.connect();
    try {
      const unsendable = {
        toString() {
          throw new Error('this value cannot be sent');
        },
      };
      await expect(
        roundTrip(client, [
          { statement: DIVIDE, values: [5] },
          { statement: DIVIDE, values: [unsendable] },
        ]),
      ).rejects.toThrow('this value cannot be sent');
      const [answer] = await roundTrip(client, [{ statement: DIVIDE, values: [10] }]);
      expect(answer.rows).toEqual([{ quotient: 1 }]);
    } finally {
      client.release();
    }
  }, 20_000);

  it('refuses a statement that reads WITH parts outside checkedWrites, before it sends anything; the connection stays usable', async () => {
    const client = await pool.connect();
    try {
      const withParts = { ...statement('t_with_parts', 'SELECT n FROM numbers'), with: 'numbers AS (SELECT 1 AS n)' };
      await expect(roundTrip(client, [{ statement: withParts }])).rejects.toThrow(
        'statement t_with_parts reads WITH parts: it goes in checkedWrites',
      );
      const [answer] = await roundTrip(client, [{ statement: DIVIDE, values: [10] }]);
      expect(answer.rows).toEqual([{ quotient: 1 }]);
    } finally {
      client.release();
    }
  });
});
