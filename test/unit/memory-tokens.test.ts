import fc from 'fast-check';
import { TOKEN_STATUSES, type Token, type TokenStatus } from '../../src/domain/tokens';
import { MemoryTokenTable } from '../../src/store/memory-tokens';

const tokenArbitrary = fc.record({
  tokenId: fc.bigInt({ min: 1n, max: 10n ** 32n - 1n }).map(String),
  sourceId: fc.constantFrom('ACME', 'OTHER', "O'Brien \\ co"),
  destinationId: fc.constantFrom('D1', 'D2'),
  status: fc.constantFrom(...TOKEN_STATUSES),
  balance: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
});

describe('MemoryTokenTable', () => {
  it('reads back every token as it was put, across growth, and the latest write of a token wins', () => {
    fc.assert(
      fc.property(fc.array(tokenArbitrary, { minLength: 1, maxLength: 300 }), (tokens) => {
        const table = new MemoryTokenTable();
        const expected = new Map<string, Token>();
        for (const token of tokens) {
          table.put(token);
          expected.set(token.tokenId, token);
        }
        for (const [tokenId, token] of expected) {
          const row = table.rowOf(tokenId) as number;
          expect(table.read(row)).toEqual(token);
          expect(table.idOf(row)).toBe(tokenId);
        }
      }),
    );
  });

  it('keeps rows stable while growing past its first capacity several times', () => {
    const table = new MemoryTokenTable();
    const token = (i: number): Token => ({
      tokenId: String(i),
      sourceId: `S${i % 3}`,
      destinationId: 'D1',
      status: TOKEN_STATUSES[i % 4],
      balance: i * 7,
    });
    for (let i = 1; i <= 5000; i += 1) table.put(token(i));
    table.put({ ...token(17), status: 'deleted', balance: 0 });
    for (const i of [1, 1023, 1024, 1025, 4096, 5000]) expect(table.read(table.rowOf(String(i)) as number)).toEqual(token(i));
    expect(table.read(table.rowOf('17') as number)).toEqual({ ...token(17), status: 'deleted', balance: 0 });
    expect(table.rowOf('5001')).toBeUndefined();
  });

  it('refuses a status it cannot hold rather than storing another', () => {
    const table = new MemoryTokenTable();
    expect(() => table.put({ tokenId: '1', sourceId: 'ACME', destinationId: 'D1', status: 'closed' as TokenStatus, balance: 1 })).toThrow(
      'token status closed is not one of active, freezed, disputed, deleted',
    );
    expect(table.rowOf('1')).toBeUndefined();
  });
});
