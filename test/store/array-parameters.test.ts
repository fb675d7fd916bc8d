import { Pool } from 'pg';
import {
  bigintArrayParameter,
  byteaArrayParameter,
  integerArrayParameter,
  jsonbArrayParameter,
  textArrayParameter,
  timestamptzArrayParameter,
} from '../../src/store/postgres/array-parameters';
import { roundTrip, withClient } from '../../src/store/postgres/connection';
import { statement } from '../../src/store/postgres/statements';
import { TEST_DATABASE_URL, warnIfNoDatabase } from '../helpers/postgres';

warnIfNoDatabase();

describe("a column's values as one array parameter in binary form (array-parameters.ts)", () => {
  it('refuses a value its column cannot hold before anything is sent', () => {
    expect(() => bigintArrayParameter([1.5])).toThrow('not a 64-bit integer: 1.5');
    expect(() => bigintArrayParameter(['9223372036854775808'])).toThrow('not a 64-bit integer');
    expect(() => integerArrayParameter([2 ** 31])).toThrow('not a 32-bit integer: 2147483648');
    expect(() => integerArrayParameter([0.5])).toThrow('not a 32-bit integer: 0.5');
    expect(() => timestamptzArrayParameter([new Date(Number.NaN)])).toThrow('not a valid time');
  });

  (TEST_DATABASE_URL ? it : it.skip)('on a real connection: every kind reads back as sent, NULLs, edges and escapes included', async () => {
    const pool = new Pool({ connectionString: TEST_DATABASE_URL, max: 1 });
    const texts = ['', 'plain', 'quote " backslash \\ brace { } comma , NULL', '日本語 🏨', 'x'.repeat(10_000), null];
    const bigints = [
      0,
      -1,
      Number.MAX_SAFE_INTEGER,
      -Number.MAX_SAFE_INTEGER,
      2 ** 32,
      -(2 ** 32) - 1,
      '9223372036854775807',
      '-9223372036854775808',
      null,
    ];
    const integers = [0, -1, 2_147_483_647, -2_147_483_648, 20_500, null];
    const times = [
      new Date('2000-01-01T00:00:00.000Z'),
      new Date('1969-12-31T23:59:59.999Z'),
      new Date('2026-11-28T10:15:30.123Z'),
      new Date('2300-01-01T00:00:00.001Z'),
      new Date('1600-12-31T23:59:59.999Z'),
      null,
    ];
    const bytes = [Buffer.alloc(0), Buffer.from([0, 1, 254, 255]), null];
    const jsonbs = ['{"b":1,"a":"é"}', '[]', null];
    const nothingToUndo = async () => undefined;
    const read = (name: string, type: string, cast: string, value: Buffer) =>
      withClient(
        pool,
        async (client) => {
          const [result] = await roundTrip(client, [
            {
              statement: statement(name, `SELECT v${cast} AS v FROM unnest($1::${type}[]) WITH ORDINALITY AS u (v, n) ORDER BY n`),
              values: [value],
            },
          ]);
          return result.rows.map((row) => row.v);
        },
        nothingToUndo,
      );
    try {
      expect(await read('arrays_text', 'text', '', textArrayParameter(texts))).toEqual(texts);
      expect(await read('arrays_bigint', 'bigint', '::text', bigintArrayParameter(bigints))).toEqual(
        bigints.map((n) => (n === null ? null : String(n))),
      );
      expect(await read('arrays_integer', 'integer', '', integerArrayParameter(integers))).toEqual(integers);
      expect(await read('arrays_timestamptz', 'timestamptz', '', timestamptzArrayParameter(times))).toEqual(times);
      expect(await read('arrays_bytea', 'bytea', '', byteaArrayParameter(bytes))).toEqual(bytes);
      expect(await read('arrays_jsonb', 'jsonb', '::text', jsonbArrayParameter(jsonbs))).toEqual(['{"a": "é", "b": 1}', '[]', null]);
      await expect(read('arrays_jsonb_bad', 'jsonb', '::text', jsonbArrayParameter(['{"a":']))).rejects.toThrow(
        /invalid input syntax for type json/,
      );
    } finally {
      await pool.end();
    }
  });
});
