import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { PUBLISHED_SECRETS } from '../../src/process/published-secrets';
import {
  DEMO_SEED_FILE,
  readSeedFile,
  refuseEndpointsAgainstSettings,
  refusePublishedKeysInProduction,
  SeedFileError,
} from '../../src/seed/file';
import { keyMatches } from '../../src/domain/secrets';
import { FIXTURE, SIGNER_SECRET } from '../helpers/fixtures';

const directory = mkdtempSync(path.join(tmpdir(), 'seed-'));
function seedFile(content: unknown, name = 'seed.json'): string {
  const file = path.join(directory, name);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

describe('seed file', () => {
  it('the demo seed loads, with two accounts, tokens in every status and a booking', () => {
    const seed = readSeedFile(DEMO_SEED_FILE);
    expect(seed.accounts.length).toBeGreaterThanOrEqual(2);
    expect(new Set(seed.tokens.map((token) => token.status))).toEqual(new Set(['active', 'freezed', 'disputed', 'deleted']));
    expect(seed.bookings.length).toBeGreaterThanOrEqual(1);
  });

  it('keeps keys only as hashes', () => {
    const seed = readSeedFile(seedFile(FIXTURE));
    const account = seed.accounts[0];
    expect(keyMatches('pk_test_acme_1', account.publicKeyHash)).toBe(true);
    expect(keyMatches('sk_test_acme_1', account.secretKeyHash)).toBe(true);
    expect(JSON.stringify(seed)).not.toMatch(/pk_test|sk_test/);
  });

  it('reads amounts as minor units and token ids as decimal strings', () => {
    const seed = readSeedFile(seedFile({ ...FIXTURE, tokens: [{ ...FIXTURE.tokens[0], token_id: 77, balance: '12.5' }] }));
    expect(seed.tokens[0]).toMatchObject({ tokenId: '77', balance: 1250 });
  });

  it.each([
    [
      'a balance that is not an amount',
      { tokens: [{ ...FIXTURE.tokens[0], balance: '12,50' }] },
      'tokens.0.balance must be a decimal amount',
    ],
    ['an unknown status', { tokens: [{ ...FIXTURE.tokens[0], status: 'frozen' }] }, 'tokens.0.status must be one of'],
    ['a token of no account', { tokens: [{ ...FIXTURE.tokens[0], source_id: 'GHOST' }] }, 'tokens.0.source_id names no account'],
    [
      'a token at an unregistered destination',
      { tokens: [{ ...FIXTURE.tokens[0], destination_id: 'ZZ' }] },
      'tokens.0.destination_id is not a destination of account ACME',
    ],
    ['a repeated token', { tokens: [FIXTURE.tokens[0], FIXTURE.tokens[0]] }, 'tokens.1.token_id repeats'],
    [
      'a repeated account',
      { accounts: [FIXTURE.accounts[0], FIXTURE.accounts[0]], tokens: [], bookings: [] },
      'accounts.1.source_id repeats ACME',
    ],
    [
      'an account without a secret',
      { accounts: [{ ...FIXTURE.accounts[0], share_secret: undefined }] },
      'accounts.0.share_secret is required',
    ],
    [
      'a booking with a bad date',
      { bookings: [{ ...FIXTURE.bookings[0], check_in: '32-01-2024' }] },
      'bookings.0.check_in must be a real calendar date',
    ],
    [
      'a booking that ends before it starts',
      { bookings: [{ ...FIXTURE.bookings[0], check_out: '01-01-2024' }] },
      'bookings.0.check_out must not be before check_in',
    ],
    ['a booking of no account', { bookings: [{ ...FIXTURE.bookings[0], source_id: 'GHOST' }] }, 'bookings.0.source_id names no account'],
    ['a booking missing a field', { bookings: [{ ...FIXTURE.bookings[0], pre_auth: undefined }] }, 'bookings.0.pre_auth is required'],
    [
      'a % margin that is not an amount',
      { bookings: [{ ...FIXTURE.bookings[0], margin_category: '%', transaction_margin: '1.234' }] },
      'bookings.0.transaction_margin must be a decimal amount',
    ],
  ])('rejects %s, naming the bad entry', (_what, change, message) => {
    const file = seedFile({ ...FIXTURE, ...change });
    expect(() => readSeedFile(file)).toThrow(`Seed file ${file} is invalid: `);
    expect(() => readSeedFile(file)).toThrow(message);
  });

  it('rejects a file that is not JSON, naming the file', () => {
    const file = seedFile('{ not json', 'broken.json');
    expect(() => readSeedFile(file)).toThrow(`Seed file ${file} cannot be read as JSON`);
  });

  it('rejects a missing file, naming it', () => {
    expect(() => readSeedFile(path.join(directory, 'absent.json'))).toThrow('absent.json cannot be read');
  });

  it('reads token dates as UTC day numbers, and refuses an expiry before the available date, naming the entry', () => {
    const dated = { ...FIXTURE.tokens[0], available_date: '01-01-2026', expiry_date: '31-12-2027' };
    const token = readSeedFile(seedFile({ ...FIXTURE, tokens: [dated] })).tokens[0];
    expect({ availableDay: token.availableDay, expiryDay: token.expiryDay }).toEqual({
      availableDay: Date.UTC(2026, 0, 1) / 86_400_000,
      expiryDay: Date.UTC(2027, 11, 31) / 86_400_000,
    });
    const file = seedFile({ ...FIXTURE, tokens: [{ ...dated, expiry_date: '31-12-2025' }] }, 'backwards.json');
    expect(() => readSeedFile(file)).toThrow(
      `Seed file ${file} is invalid: tokens.0.expiry_date must not be before available_date (01-01-2026)`,
    );
  });
});

describe('the demo seed in production (contract section 11)', () => {
  const demo = JSON.parse(readFileSync(DEMO_SEED_FILE, 'utf8'));

  it('is recognised by a demo secret key alone: public keys changed, the public sk_demo_ keys kept, under another path', () => {
    const disguised = {
      ...demo,
      accounts: demo.accounts.map((account: { share_public: string }, i: number) => ({
        ...account,
        share_public: `pk_changed_public_key_${i}`,
      })),
    };
    const file = seedFile(disguised, 'disguised.json');
    expect(() => refusePublishedKeysInProduction(readSeedFile(file), file, true)).toThrow(
      `Seed file ${file} holds a key of the demo seed (account PDR28): NODE_ENV=production refuses the demo keys, which are public, under any file name; SEED_FILE=demo serves the demo seed on purpose`,
    );
  });

  it.each([
    ['a leading space', (key: string) => ` ${key}`],
    ['capitals', (key: string) => key.toUpperCase()],
  ])('is recognised by a demo key spelled with %s: the check compares keys, not spellings (authentication stays exact)', (_how, spell) => {
    const respelled = {
      accounts: [{ ...demo.accounts[1], share_public: spell(demo.accounts[1].share_public), share_secret: 'sk_real_0001' }],
    };
    const file = seedFile(respelled, 'respelled.json');
    expect(() => refusePublishedKeysInProduction(readSeedFile(file), file, true)).toThrow(
      `Seed file ${file} holds a key of the demo seed (account ${demo.accounts[1].source_id}): NODE_ENV=production refuses the demo keys`,
    );
  });

  it('refuses a published signing secret without its whsec_ prefix: standardwebhooks reads it as the same key', () => {
    const signing = 'whsec_ZGVtby1zaWduaW5nLXNlY3JldC0wMDAwMDAwMDAx';
    expect(PUBLISHED_SECRETS).toContain(signing);
    const account = { source_id: 'REAL1', share_public: 'pk_real_0001', share_secret: 'sk_real_0001', destinations: ['D1'] };
    const file = seedFile({ accounts: [{ ...account, signing_secrets: [signing.slice('whsec_'.length)] }] }, 'unprefixed.json');
    expect(() => refusePublishedKeysInProduction(readSeedFile(file), file, true)).toThrow(
      `Seed file ${file}: account REAL1's signing_secrets holds a value published in this repository's documentation`,
    );
  });

  it('a seed of its own keys starts in production; the demo by name (SEED_FILE=demo) too; outside production anything goes', () => {
    const own = seedFile(
      { accounts: [{ source_id: 'REAL1', share_public: 'pk_real_0001', share_secret: 'sk_real_0001', destinations: ['D1'] }] },
      'own.json',
    );
    expect(() => refusePublishedKeysInProduction(readSeedFile(own), own, true)).not.toThrow();
    expect(() => refusePublishedKeysInProduction(readSeedFile(DEMO_SEED_FILE), 'demo', true)).not.toThrow();
    expect(() => refusePublishedKeysInProduction(readSeedFile(DEMO_SEED_FILE), DEMO_SEED_FILE, false)).not.toThrow();
  });

  // Each secret the documentation publishes, in each account field it could fill (a signing secret must be whsec_).
  const placements = [...PUBLISHED_SECRETS].flatMap((secret): Array<[string, string]> =>
    secret.startsWith('whsec_')
      ? [['signing_secrets', secret]]
      : [
          ['share_public', secret],
          ['share_secret', secret],
        ],
  );

  it.each(placements)('refuses a seed account whose %s is %p, a value the documentation publishes', (field, secret) => {
    const account = { source_id: 'REAL1', share_public: 'pk_real_0001', share_secret: 'sk_real_0001', destinations: ['D1'] };
    const published = { ...account, [field]: field === 'signing_secrets' ? ['whsec_b3duLXNlY3JldC1vZi1yZWFsMQ==', secret] : secret };
    const file = seedFile({ accounts: [published] }, 'published.json');
    const refusal = `Seed file ${file}: account REAL1's ${field} holds a value published in this repository's documentation; NODE_ENV=production needs secrets of your own`;
    // The demo's own keys are refused by the demo check first, with its message.
    const demoKey = /^(pk|sk)_demo_/.test(secret);
    expect(() => refusePublishedKeysInProduction(readSeedFile(file), file, true)).toThrow(
      demoKey ? 'holds a key of the demo seed' : refusal,
    );
    expect(() => refusePublishedKeysInProduction(readSeedFile(file), file, false)).not.toThrow();
  });
});

describe("the seed's webhook endpoints (contract section 13.3)", () => {
  const secret = 'whsec_ZXJwLXNlY3JldC1vZi1vdXItb3duLW9mLTMyLWJ5dGVz';
  const erp = { id: 'erp', url: 'https://erp.example/hooks', secrets: [secret], source_ids: ['ACME'], types: ['token.withdrawn'] };
  const problemsOf = (act: () => unknown): readonly string[] => {
    try {
      act();
    } catch (error) {
      if (error instanceof SeedFileError) return error.problems;
      throw error;
    }
    return [];
  };

  it('come out as the engine reads them: source_ids and types only when given', () => {
    const any = { id: 'analytics-2', url: 'http://10.0.0.7:8080/in', secrets: [secret, secret.replace('ZXJw', 'bmV3')] };
    expect(readSeedFile(seedFile({ ...FIXTURE, endpoints: [erp, any] })).endpoints).toEqual([
      { id: 'erp', url: 'https://erp.example/hooks', secrets: [secret], sourceIds: ['ACME'], types: ['token.withdrawn'] },
      { id: 'analytics-2', url: 'http://10.0.0.7:8080/in', secrets: any.secrets },
    ]);
    expect(readSeedFile(seedFile(FIXTURE)).endpoints).toEqual([]);
  });

  it('a file with bad endpoints is refused, naming each bad field; then each repeated id and unknown account', () => {
    const malformed = [
      { ...erp, url: 'erp.example/hooks' },
      { ...erp, id: 'ERP 2', url: 'ftp://erp.example/hooks' },
      { ...erp, url: 'https://user:pass@erp.example/hooks', secrets: [] },
      { ...erp, secrets: ['whsec_!!!'], types: ['token.deleted'] },
      { id: 'misspelt', url: erp.url, secrets: erp.secrets, source_id: ['ACME'] },
    ];
    const file = seedFile({ ...FIXTURE, endpoints: malformed }, 'endpoints.json');
    expect(problemsOf(() => readSeedFile(file))).toEqual(
      [
        'endpoints.0.url must be an absolute URL, such as https://erp.example/hooks',
        "endpoints.1.id must be 1 to 64 lower-case letters, digits, '-' or '_', starting with a letter or digit",
        'endpoints.1.url must be an https:// URL',
        'endpoints.2.url must not carry a user or password: the signature proves the sender',
        'endpoints.2.secrets must hold at least one whsec_… secret',
        'endpoints.3.secrets.0 must be one whsec_… secret (base64 after the prefix)',
        'endpoints.3.types.0 must be one of token.created, token.modified, token.status_changed, token.dates_changed, token.withdrawn, token.loaded, token.unloaded, token.refunded, token.schedule_credited, booking.created, booking.modified, booking.cancelled',
        'endpoints.4.source_id Unrecognized key: "source_id"',
      ].map((problem) => `Seed file ${file} is invalid: ${problem}`),
    );
    // Rules across entries, as for tokens, once every entry has its shape.
    const crossed = seedFile(
      { ...FIXTURE, endpoints: [erp, { ...erp, source_ids: ['ACME', 'NOBODY'] }, { ...erp, id: 'nats' }] },
      'crossed.json',
    );
    expect(problemsOf(() => readSeedFile(crossed))).toEqual(
      [
        'endpoints.1.id repeats erp',
        'endpoints.1.source_ids.1 names no account in accounts',
        // The NATS relay's sink id (contract 13.4), with or without NATS_URL: its positions are never an endpoint's.
        "endpoints.2.id is the NATS relay's own id (NATS_URL): choose another",
      ].map((problem) => `Seed file ${crossed} is invalid: ${problem}`),
    );
  });

  it('an http:// URL is refused unless DELIVERY_ALLOW_HTTP=true; a published secret in production, however spelled', () => {
    const published = 'whsec_ZGVtby1zaWduaW5nLXNlY3JldC0wMDAwMDAwMDAx';
    expect(PUBLISHED_SECRETS).toContain(published);
    const endpoints = [
      { ...erp, url: 'http://127.0.0.1:9000/hooks' },
      { ...erp, id: 'leaked', secrets: [secret, published.slice('whsec_'.length)] },
    ];
    const file = seedFile({ ...FIXTURE, endpoints }, 'settings.json');
    const read = readSeedFile(file).endpoints;
    expect(
      problemsOf(() => refuseEndpointsAgainstSettings(read, file, { production: true, allowHttp: false, incomingSigners: [] })),
    ).toEqual([
      `Seed file ${file} is invalid: endpoints.0.url must be an https:// URL (endpoint erp); DELIVERY_ALLOW_HTTP=true allows http://`,
      `Seed file ${file} is invalid: endpoints.1.secrets holds a value published in this repository's documentation (endpoint leaked); NODE_ENV=production needs secrets of your own`,
    ]);
    expect(
      problemsOf(() => refuseEndpointsAgainstSettings(read.slice(0, 1), file, { production: true, allowHttp: true, incomingSigners: [] })),
    ).toEqual([]);
    expect(
      problemsOf(() => refuseEndpointsAgainstSettings(read.slice(1), file, { production: false, allowHttp: false, incomingSigners: [] })),
    ).toEqual([]);
  });

  it('a key under 24 bytes is refused in production, as Standard Webhooks asks; outside production it serves', () => {
    const short = 'whsec_ZXJwLXNlY3JldC1vZi1vdXItb3du';
    const file = seedFile({ ...FIXTURE, endpoints: [erp, { ...erp, id: 'short', secrets: [secret, short] }] }, 'short.json');
    const read = readSeedFile(file).endpoints;
    expect(
      problemsOf(() => refuseEndpointsAgainstSettings(read, file, { production: true, allowHttp: true, incomingSigners: [] })),
    ).toEqual([
      `Seed file ${file} is invalid: endpoints.1.secrets holds a key of 21 bytes (endpoint short); NODE_ENV=production needs keys of at least 24 bytes, as Standard Webhooks asks (24 to 64)`,
    ]);
    expect(
      problemsOf(() => refuseEndpointsAgainstSettings(read, file, { production: false, allowHttp: true, incomingSigners: [] })),
    ).toEqual([]);
  });

  it("an endpoint's secret that also signs notifications to the service (however spelled) is refused: a webhook it is sent could be replayed here", () => {
    const file = seedFile({ ...FIXTURE, endpoints: [{ ...erp, secrets: [secret] }] }, 'reused.json');
    const read = readSeedFile(file).endpoints;
    const settings = { production: false, allowHttp: true };
    expect(
      problemsOf(() =>
        refuseEndpointsAgainstSettings(read, file, { ...settings, incomingSigners: [new Webhook(secret.slice('whsec_'.length))] }),
      ),
    ).toEqual([
      `Seed file ${file} is invalid: endpoints.0.secrets holds a key that also signs notifications to this service (an account's signing_secrets or WEBHOOK_SECRET; endpoint erp): a webhook it is sent could be replayed at the service; give the endpoint secrets of its own`,
    ]);
    expect(
      problemsOf(() => refuseEndpointsAgainstSettings(read, file, { ...settings, incomingSigners: [new Webhook(SIGNER_SECRET)] })),
    ).toEqual([]);
  });
});
