import fc from 'fast-check';
import { TokenIdIndex } from '../../src/store/memory-token-ids';

/** Token ids as the schemas accept them: 1 to 32 digits without a leading zero. */
const tokenId = fc.bigInt({ min: 1n, max: 10n ** 32n - 1n }).map(String);
/** Any string a caller could hand the store: empty, Latin-1 past ASCII, past Latin-1, astral, lone surrogates. */
const anyId = fc.oneof(
  tokenId,
  fc.string({ maxLength: 40 }),
  fc.string({ unit: fc.constantFrom('1', '2', 'a', 'é', 'ÿ', '\u0000', '€', 'Ω', '😀', '\ud800'), maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
);

/** Adds each id the index does not hold yet, as the token table does, checking every answer against a Map. */
function addAll(ids: readonly string[]): { index: TokenIdIndex; expected: Map<string, number> } {
  const index = new TokenIdIndex();
  const expected = new Map<string, number>();
  for (const id of ids) {
    expect(index.rowOf(id)).toBe(expected.get(id));
    if (expected.has(id)) continue;
    const row = index.add(id);
    expect(row).toBe(expected.size);
    expected.set(id, row);
  }
  expect(index.size).toBe(expected.size);
  return { index, expected };
}

describe('TokenIdIndex', () => {
  it('answers as a Map of id to row would, for any ids, before and after growing', () => {
    fc.assert(
      fc.property(fc.array(anyId, { maxLength: 400 }), fc.array(anyId, { maxLength: 50 }), (ids, probes) => {
        const { index, expected } = addAll([...ids, ...ids.slice(0, 20)]);
        for (const [id, row] of expected) {
          expect(index.rowOf(id)).toBe(row);
          expect(index.idOf(row)).toBe(id);
        }
        for (const probe of probes) expect(index.rowOf(probe)).toBe(expected.get(probe));
      }),
    );
  });

  it('grows past its first rows, slots and arena several times with token ids of every length', () => {
    fc.assert(
      fc.property(fc.uniqueArray(tokenId, { minLength: 2100, maxLength: 3000 }), (ids) => {
        const index = new TokenIdIndex();
        const rows = ids.map((id) => (index.rowOf(id) === undefined ? index.add(id) : -1));
        expect(rows).toEqual(ids.map((_, row) => row));
        expect(ids.map((id) => index.rowOf(id))).toEqual(rows);
        expect(rows.map((row) => index.idOf(row))).toEqual(ids);
      }),
      { numRuns: 5 },
    );
  });

  it('tells apart ids that are prefixes of one another, differ in one byte, or match only as bytes', () => {
    const ids = [
      '1',
      '12',
      '123',
      '1234',
      '',
      '10000000000000',
      '10000000000001',
      '20000000000000',
      'é',
      '\u00e9\u00e9',
      '\u0000',
      '€',
      '😀',
      '\ud83d',
    ];
    const { index } = addAll(ids);
    ids.forEach((id, row) => {
      expect(index.rowOf(id)).toBe(row);
      expect(index.idOf(row)).toBe(id);
    });
    // '€' is U+20AC: its low byte, 0xAC, is '¬', which must not find it, nor must '\u0000' find the empty id.
    expect(index.rowOf('¬')).toBeUndefined();
    expect(index.rowOf('\u00e9\u00e9\u00e9')).toBeUndefined();
    expect(index.rowOf('\ud83d\ude00\ud83d')).toBeUndefined();
    expect(index.rowOf('1000000000000')).toBeUndefined();
  });

  it('keeps 200,000 bench-like ids exactly, and finds none it was not given', () => {
    const index = new TokenIdIndex();
    const idOf = (i: number) => String(1_000_000_000_000 + i);
    const wrong: number[] = [];
    for (let i = 0; i < 200_000; i += 1) if (index.add(idOf(i)) !== i) wrong.push(i);
    for (let i = 0; i < 200_000; i += 1) if (index.rowOf(idOf(i)) !== i || index.idOf(i) !== idOf(i)) wrong.push(i);
    expect(wrong).toEqual([]);
    expect(index.rowOf(idOf(200_000))).toBeUndefined();
    expect(index.rowOf(idOf(-1))).toBeUndefined();
  });
});
