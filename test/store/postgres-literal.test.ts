import fc from 'fast-check';
import { Client } from 'pg';
import { literal } from '../../src/store/postgres/literal';
import { TEST_DATABASE_URL, warnIfNoDatabase } from '../helpers/postgres';

warnIfNoDatabase();

describe('SQL literals (units of work send their values as literals)', () => {
  it('refuses NUL, unsafe or fractional numbers, and values of other kinds', () => {
    expect(() => literal('a\u0000b')).toThrow('a NUL character cannot be stored');
    expect(() => literal(2 ** 53)).toThrow('9007199254740992 is not a safe integer');
    expect(() => literal(0.1)).toThrow('0.1 is not a safe integer');
    expect(() => literal(true)).toThrow('cannot write boolean as an SQL literal');
    expect(() => literal([1])).toThrow('cannot write object as an SQL literal');
    expect(() => literal(null)).toThrow('cannot write object as an SQL literal');
  });

  (TEST_DATABASE_URL ? describe : describe.skip)('read back by PostgreSQL', () => {
    let client: Client;
    beforeAll(async () => {
      client = new Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
    });
    afterAll(() => client.end());

    const readBack = async (value: unknown) => (await client.query(`SELECT ${literal(value)} AS value`)).rows[0].value as unknown;
    const withoutNul = (text: string) => text.replaceAll('\u0000', '');
    const awkward = fc.oneof(
      fc.string({ unit: fc.constantFrom("'", '\\', '"', '$', ';', '-', '\n', 'E', 'a', '1', '\u00e9', '\ud83d\ude00') }),
      fc.string({ unit: 'grapheme' }),
      fc.string({ unit: 'binary' }),
    );

    it('gives back every string exactly: quotes, backslashes, dollars, semicolons, any Unicode', async () => {
      await fc.assert(
        fc.asyncProperty(awkward.map(withoutNul), async (text) => {
          expect(await readBack(text)).toBe(text);
        }),
        { numRuns: 300 },
      );
    });

    it('gives back integers, times and JSON objects', async () => {
      expect(String(await readBack(Number.MAX_SAFE_INTEGER))).toBe('9007199254740991');
      expect(await readBack(-42)).toBe(-42);
      const at = new Date('2026-01-02T03:04:05.678Z');
      expect(await readBack(at)).toEqual(at);
      await fc.assert(
        fc.asyncProperty(fc.dictionary(awkward.map(withoutNul), awkward.map(withoutNul)), async (object) => {
          expect(await readBack(object)).toEqual(object);
        }),
        { numRuns: 100 },
      );
    });
  });
});
