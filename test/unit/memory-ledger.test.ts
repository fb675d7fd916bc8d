import fc from 'fast-check';
import { MemoryLedger, type LedgerRow } from '../../src/store/memory-ledger';
import { LEDGER_KINDS } from '../../src/domain/ledger';

const TOKEN_IDS = ['token-a', 'token-b', 'token-c'];
const tokenIdOf = (tokenRow: number) => TOKEN_IDS[tokenRow];

/** Every kind in turn, with a fee on loads, so each column is read back. */
const entry = (transactionId: string, tokenRow: number, amount: number): LedgerRow => ({
  kind: LEDGER_KINDS[amount % LEDGER_KINDS.length],
  transactionId,
  tokenRow,
  sourceId: tokenRow === 2 ? 'OTHER' : 'ACME',
  destinationId: 'D1',
  amount,
  fee: LEDGER_KINDS[amount % LEDGER_KINDS.length] === 'load' ? amount % 7 : 0,
  tokenBalance: 1_000_000 - amount,
  createdAt: new Date(1_700_000_000_000 + amount),
});

const twentyDigits = fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 20, maxLength: 20 });

describe('MemoryLedger', () => {
  const appendAll = (ids: readonly string[]) => {
    const ledger = new MemoryLedger();
    ids.forEach((id, i) => ledger.append(entry(id, i % 3, i + 1)));
    return ledger;
  };
  const expectReadBack = (ledger: MemoryLedger, ids: readonly string[]) => {
    expect(ledger.size).toBe(ids.length);
    ids.forEach((id, i) => {
      const { tokenRow, ...expected } = entry(id, i % 3, i + 1);
      expect(ledger.read(ledger.find(expected.sourceId, id), tokenIdOf)).toEqual({ ...expected, tokenId: TOKEN_IDS[tokenRow] });
    });
  };

  it('finds every appended row by its transaction id and reads it back as it went in', () => {
    fc.assert(
      fc.property(fc.uniqueArray(twentyDigits, { minLength: 1, maxLength: 200 }), twentyDigits, (ids, probe) => {
        const ledger = appendAll(ids);
        expectReadBack(ledger, ids);
        if (!ids.includes(probe)) expect(ledger.find('ACME', probe)).toBe(-1);
      }),
    );
  });

  it('still finds every row after growing its columns and index several times', () => {
    const ids = [...new Set(fc.sample(twentyDigits, { numRuns: 5000, seed: 7 }))];
    expect(ids.length).toBeGreaterThan(4096);
    const ledger = appendAll(ids);
    expectReadBack(ledger, ids);
  });

  it('keeps leading zeros and the extremes of the 20 digits', () => {
    const ledger = new MemoryLedger();
    for (const id of ['00000000000000000000', '00000000010000000000', '99999999999999999999', '00000000009999999999']) {
      ledger.append(entry(id, 0, 1));
      expect(ledger.read(ledger.find('ACME', id), tokenIdOf).transactionId).toBe(id);
    }
    expect(ledger.find('ACME', '0000000000000000000')).toBe(-1);
    expect(ledger.find('ACME', '1e19')).toBe(-1);
  });

  it("keys rows by account: one account's transaction id never finds, blocks or reveals another's", () => {
    const ledger = new MemoryLedger();
    const id = '20240121000000000001';
    ledger.append(entry(id, 0, 1));
    expect(ledger.find('OTHER', id)).toBe(-1);
    expect(ledger.find('NOBODY', id)).toBe(-1);
    ledger.append(entry(id, 2, 2));
    expect(ledger.read(ledger.find('ACME', id), tokenIdOf).amount).toBe(1);
    expect(ledger.read(ledger.find('OTHER', id), tokenIdOf).amount).toBe(2);
  });

  it('refuses a transaction id that is not 20 digits', () => {
    expect(() => new MemoryLedger().append(entry('123', 0, 1))).toThrow('transaction_id 123 is not 20 digits');
  });

  it("walks a token's latest rows newest first, up to the limit, past growth of the token table", () => {
    const ledger = new MemoryLedger();
    for (let i = 1; i <= 1500; i += 1) ledger.append(entry(String(i).padStart(20, '0'), i % 2, i));
    ledger.append(entry('00000000000000009999', 5000, 7));
    expect(ledger.latestRows(0, 3).map((row) => ledger.read(row, () => 'x').amount)).toEqual([1500, 1498, 1496]);
    expect(ledger.latestRows(1, 2).map((row) => ledger.read(row, () => 'x').amount)).toEqual([1499, 1497]);
    expect(ledger.latestRows(5000, 10).map((row) => ledger.read(row, () => 'x').amount)).toEqual([7]);
    expect(ledger.latestRows(4999, 10)).toEqual([]);
    expect(ledger.latestRows(9999, 10)).toEqual([]);
  });
});
