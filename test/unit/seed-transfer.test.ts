import fc from 'fast-check';
import { TOKEN_STATUSES, type Token } from '../../src/domain/tokens';
import { DEMO_SEED_FILE, readSeedFile } from '../../src/seed/file';
import { movedBuffers, receivedSeed, toColumns, type TransferredSeed } from '../../src/seed/transfer';

/** What a worker's postMessage does to the seed: a structured clone, the columns' buffers moved. */
function crossThreads(seed: TransferredSeed): TransferredSeed {
  return structuredClone(seed, { transfer: movedBuffers(seed.tokens) });
}

// Seed days are 1000-01-01 to 9999-12-31; wider still, so the "no such date" value is never a day.
const day = fc.integer({ min: -1_000_000, max: 3_000_000 });
const seedToken = fc.record(
  {
    tokenId: fc.bigInt({ min: 1n, max: 10n ** 32n - 1n }).map(String),
    sourceId: fc.constantFrom('ACME', 'OTHER', "O'Brien \\ co"),
    destinationId: fc.constantFrom('D1', 'D2', 'ÉTÉ'),
    status: fc.constantFrom(...TOKEN_STATUSES),
    balance: fc.integer({ min: 0, max: 999_999_999_999 }),
    availableDay: day,
    expiryDay: day,
  },
  { requiredKeys: ['tokenId', 'sourceId', 'destinationId', 'status', 'balance'] },
);

describe('a seed crossing from the thread that read it', () => {
  it('gives back every token as it was, in order, each time its tokens are read', () => {
    fc.assert(
      fc.property(fc.array(seedToken, { maxLength: 200 }), (tokens: Token[]) => {
        const received = receivedSeed(
          crossThreads({ accounts: [], bookings: [], tokens: toColumns(tokens), publishedKeys: [], endpoints: [] }),
        );
        expect([...received.tokens]).toEqual(tokens);
        expect([...received.tokens]).toEqual(tokens);
      }),
    );
  });

  it('moves the columns rather than copying them: the sender is left with none', () => {
    const seed: TransferredSeed = {
      accounts: [],
      bookings: [],
      publishedKeys: [],
      endpoints: [],
      tokens: toColumns([{ tokenId: '1', sourceId: 'A', destinationId: 'D', status: 'active', balance: 5 }]),
    };
    crossThreads(seed);
    expect(seed.tokens.balances.byteLength).toBe(0);
  });

  it('gives back the demo seed as read in this thread, key hashes as Buffers, its published keys and endpoints', () => {
    const read = readSeedFile(DEMO_SEED_FILE);
    const endpoints = [
      {
        id: 'erp',
        url: 'https://erp.example/hooks',
        secrets: ['whsec_ZXJwLXNlY3JldA=='],
        sourceIds: ['PDR28'],
        types: ['token.withdrawn' as const],
      },
    ];
    const received = receivedSeed(
      crossThreads({
        accounts: read.accounts,
        bookings: read.bookings,
        tokens: toColumns(read.tokens),
        publishedKeys: read.publishedKeys,
        endpoints,
      }),
    );
    expect(received.endpoints).toEqual(endpoints);
    expect(received.publishedKeys).toEqual(read.publishedKeys);
    expect(received.publishedKeys.every((published) => published.demoKey)).toBe(true);
    expect(received.publishedKeys.length).toBe(2 * read.accounts.length);
    expect(received.accounts).toEqual(read.accounts);
    for (const account of received.accounts) {
      expect(Buffer.isBuffer(account.publicKeyHash) && Buffer.isBuffer(account.secretKeyHash)).toBe(true);
    }
    expect(received.bookings).toEqual(read.bookings);
    expect([...received.tokens]).toEqual(read.tokens);
  });
});
