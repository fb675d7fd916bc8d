import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { Webhook } from 'standardwebhooks';
import { BOOKING_FIELDS, type BookingFields } from '../domain/bookings';
import { dayNumber } from '../domain/calendar-days';
import type { Token } from '../domain/tokens';
import { seedSchema, type SeedFile } from './schema';
import { fieldProblems } from '../schemas/validate';
import { foldedKeyText, isPublishedKeyText, isPublishedSigningSecret, signingKey } from '../process/published-secrets';
import { hashKey } from '../domain/secrets';
import { receivedSeed, type PublishedKey, type ReadSeed, type SeedWorkerAnswer } from './transfer';
import type { SeedData } from '../store/store';
import type { EndpointConfig } from '../delivery/endpoints';
import type { Config } from '../process/config';

/** A seed file's records as read in this thread: its tokens in an array. */
export type SeedRecords = SeedData & { tokens: Token[] };

/** A seed file as read: its records, the published keys its accounts hold, and its webhook endpoints. */
export type SeedFileRecords = SeedRecords & { publishedKeys: PublishedKey[]; endpoints: EndpointConfig[] };

/** Shipped with the service and served when SEED_FILE is unset, so the README's examples work as written. */
export const DEMO_SEED_FILE = path.resolve(__dirname, '..', '..', 'seed', 'demo.json');

/** A seed file the service cannot start with: each problem (a bad entry) goes on a log line of its own. */
export class SeedFileError extends Error {
  readonly problems: readonly string[];

  constructor(message: string, problems: readonly string[] = [message]) {
    super(message);
    this.problems = problems;
  }
}

/** SEED_FILE=demo names the demo seed on purpose. */
const DEMO_SEED_NAME = 'demo';

/**
 * The seed file to serve. Unset, the demo seed, so that `npm start` and the
 * README's curl examples work as they are; but its keys are public, so in
 * production only SEED_FILE=demo serves it.
 */
export function seedFileToServe(seedFile: string | undefined, production: boolean): string {
  if (seedFile === DEMO_SEED_NAME) return DEMO_SEED_FILE;
  if (seedFile !== undefined) return seedFile;
  if (production) {
    throw new SeedFileError(
      'NODE_ENV=production and SEED_FILE is not set: set SEED_FILE to your seed file (SEED_FILE=demo serves the demo seed, whose keys are public)',
    );
  }
  return DEMO_SEED_FILE;
}

/** The demo seed's keys as the published-key check compares them; read only when a seed holds a published key. */
function demoKeyTexts(): Set<string> {
  const demo = JSON.parse(readFileSync(DEMO_SEED_FILE, 'utf8')) as SeedFile;
  return new Set(demo.accounts.flatMap((account) => [account.share_public, account.share_secret].map(foldedKeyText)));
}

/**
 * The account fields of a seed that hold a value this repository publishes, compared as keys, not spellings (issue
 * 42): key texts trimmed and case-folded, signing secrets by the key they decode to, with or without `whsec_`. Found
 * here, where the key texts still are; authentication compares the exact keys.
 */
function publishedKeysOf(seed: SeedFile): PublishedKey[] {
  const found: PublishedKey[] = [];
  let demoKeys: Set<string> | undefined;
  const isDemoKey = (text: string) => (demoKeys ??= demoKeyTexts()).has(foldedKeyText(text));
  for (const account of seed.accounts) {
    for (const field of ['share_public', 'share_secret'] as const) {
      if (isPublishedKeyText(account[field])) found.push({ sourceId: account.source_id, field, demoKey: isDemoKey(account[field]) });
    }
    if (account.signing_secrets.some(isPublishedSigningSecret))
      found.push({ sourceId: account.source_id, field: 'signing_secrets', demoKey: false });
  }
  return found;
}

/**
 * Contract section 11: the demo seed is recognised by its content, its keys, not by its file name. With
 * NODE_ENV=production a seed holding any of them, public or secret (a copy of the demo under another path, or
 * one demo account pasted into a real seed), stops the start, unless SEED_FILE=demo asks for the demo by name.
 * So does an account with any other key or signing secret the documentation publishes (process/published-secrets.ts):
 * anyone could sign or authenticate for it. Either spelled another way too (publishedKeysOf).
 */
export function refusePublishedKeysInProduction(
  seed: Pick<ReadSeed, 'publishedKeys'>,
  seedFile: string | undefined,
  production: boolean,
): void {
  if (!production || seedFile === DEMO_SEED_NAME) return;
  const demoKey = seed.publishedKeys.find((published) => published.demoKey);
  if (demoKey) {
    throw new SeedFileError(
      `Seed file ${seedFile} holds a key of the demo seed (account ${demoKey.sourceId}): NODE_ENV=production refuses the demo keys, which are public, under any file name; SEED_FILE=demo serves the demo seed on purpose`,
    );
  }
  const [published] = seed.publishedKeys;
  if (published) {
    throw new SeedFileError(
      `Seed file ${seedFile}: account ${published.sourceId}'s ${published.field} holds a value published in this repository's documentation; NODE_ENV=production needs secrets of your own`,
    );
  }
}

/** What the endpoints' check reads of the settings (process/config.ts). */
export interface EndpointSettings {
  production: boolean;
  /** DELIVERY_ALLOW_HTTP. */
  allowHttp: boolean;
  /** The keys that sign notifications to this service: the accounts' signing_secrets and WEBHOOK_SECRET's. */
  incomingSigners: readonly Webhook[];
}

/** The keys that sign notifications to the service: every account's signing secrets, and WEBHOOK_SECRET's. */
export function incomingSigners(accounts: ReadonlyArray<{ signingSecrets: readonly string[] }>, config: Config): Webhook[] {
  return [
    ...accounts.flatMap((account) => account.signingSecrets.map((secret) => new Webhook(secret))),
    ...(config.webhook?.secrets ?? []),
  ];
}

/** Whether two Standard Webhooks secrets are one key, however spelled: each signs the same probe alike. */
function sameSigningKey(one: Webhook, other: Webhook): boolean {
  const probe = new Date(0);
  return one.sign('msg_probe', probe, '{}') === other.sign('msg_probe', probe, '{}');
}

/** Standard Webhooks' shortest key: a shorter one could be guessed, and every webhook an endpoint gets is signed with it. */
const MIN_ENDPOINT_KEY_BYTES = 24;

/**
 * Contract section 13.3, the endpoints' rules that depend on the settings: an http:// URL only with
 * DELIVERY_ALLOW_HTTP=true, and with NODE_ENV=production no secret this repository publishes (compared as keys, as
 * the accounts' signing secrets are: anyone who read the docs could sign as the service) nor a key under 24 bytes.
 * Every bad endpoint is named.
 */
export function refuseEndpointsAgainstSettings(
  endpoints: readonly EndpointConfig[],
  seedFile: string,
  { production, allowHttp, incomingSigners }: EndpointSettings,
): void {
  const problems: string[] = [];
  endpoints.forEach((endpoint, index) => {
    // A webhook the service sends, signed with a key that also signs notifications to it, would be a valid
    // notification if sent back to the service: an endpoint's keys are its own.
    if (endpoint.secrets.some((secret) => incomingSigners.some((signer) => sameSigningKey(new Webhook(secret), signer))))
      problems.push(
        `endpoints.${index}.secrets holds a key that also signs notifications to this service (an account's signing_secrets or WEBHOOK_SECRET; endpoint ${endpoint.id}): a webhook it is sent could be replayed at the service; give the endpoint secrets of its own`,
      );
    if (!allowHttp && new URL(endpoint.url).protocol === 'http:')
      problems.push(`endpoints.${index}.url must be an https:// URL (endpoint ${endpoint.id}); DELIVERY_ALLOW_HTTP=true allows http://`);
    const short = endpoint.secrets.map((secret) => signingKey(secret).length).find((bytes) => bytes < MIN_ENDPOINT_KEY_BYTES);
    if (production && short !== undefined)
      problems.push(
        `endpoints.${index}.secrets holds a key of ${short} bytes (endpoint ${endpoint.id}); NODE_ENV=production needs keys of at least ${MIN_ENDPOINT_KEY_BYTES} bytes, as Standard Webhooks asks (24 to 64)`,
      );
    if (production && endpoint.secrets.some(isPublishedSigningSecret))
      problems.push(
        `endpoints.${index}.secrets holds a value published in this repository's documentation (endpoint ${endpoint.id}); NODE_ENV=production needs secrets of your own`,
      );
  });
  if (problems.length > 0) {
    throw new SeedFileError(
      `Seed file ${seedFile} is invalid: ${problems.join('; ')}`,
      problems.map((problem) => `Seed file ${seedFile} is invalid: ${problem}`),
    );
  }
}

/** A seed's endpoints as the delivery engine reads them. */
function toEndpoints(seed: SeedFile): EndpointConfig[] {
  return seed.endpoints.map((endpoint) => ({
    id: endpoint.id,
    url: endpoint.url,
    secrets: endpoint.secrets,
    ...(endpoint.source_ids ? { sourceIds: endpoint.source_ids } : {}),
    ...(endpoint.types ? { types: endpoint.types } : {}),
  }));
}

/**
 * One string object per distinct value: a million tokens of a few accounts and destinations would
 * otherwise hold a million copies of each name.
 */
function interner(): (value: string) => string {
  const seen = new Map<string, string>();
  return (value) => {
    const known = seen.get(value);
    if (known !== undefined) return known;
    seen.set(value, value);
    return value;
  };
}

/** Turns the validated file into store records: keys become hashes here, before the store sees them. */
export function toSeedData(seed: SeedFile, loadedAt: Date): SeedRecords {
  const intern = interner();
  return {
    accounts: seed.accounts.map((account) => ({
      sourceId: account.source_id,
      publicKeyHash: hashKey(account.share_public),
      secretKeyHash: hashKey(account.share_secret),
      signingSecrets: account.signing_secrets,
      destinations: new Set(account.destinations),
    })),
    tokens: seed.tokens.map((token) => ({
      tokenId: token.token_id,
      sourceId: intern(token.source_id),
      destinationId: intern(token.destination_id),
      status: token.status,
      balance: token.balance,
      ...(token.refundable ? { refundable: token.refundable } : {}),
      ...(token.available_date ? { availableDay: dayNumber(token.available_date) } : {}),
      ...(token.expiry_date ? { expiryDay: dayNumber(token.expiry_date) } : {}),
    })),
    bookings: seed.bookings.map((booking) => ({
      sourceId: booking.source_id,
      bookingId: booking.booking_id,
      fields: Object.fromEntries(BOOKING_FIELDS.map((field) => [field, booking[field]])) as BookingFields,
      status: booking.status,
      updatedAt: booking.updated_at ? new Date(booking.updated_at) : loadedAt,
    })),
  };
}

function parseSeedText(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new SeedFileError(`Seed file ${file} cannot be read as JSON: ${(error as Error).message}`);
  }
}

/**
 * Reads and validates a seed file; the error names the file and every bad entry.
 * No variable keeps the parsed text, so a large seed's text can be collected before the records are built.
 */
export function readSeedFile(file: string, loadedAt = new Date()): SeedFileRecords {
  const result = seedSchema.safeParse(parseSeedText(file));
  if (!result.success) {
    const problems = fieldProblems(result.error.issues).map((problem) => `${problem.field} ${problem.message}`);
    throw new SeedFileError(
      `Seed file ${file} is invalid: ${problems.join('; ')}`,
      problems.map((problem) => `Seed file ${file} is invalid: ${problem}`),
    );
  }
  return { ...toSeedData(result.data, loadedAt), publishedKeys: publishedKeysOf(result.data), endpoints: toEndpoints(result.data) };
}

/** worker's own file beside this one: .js when built, .ts when run by tsx (the thread inherits its loader). */
const SEED_WORKER_FILE = path.join(__dirname, `worker${path.extname(__filename)}`);

/**
 * readSeedFile on a worker thread, resolved once the thread has ended. A million-token seed is 110 MB of text
 * that parsing and checking turn into several times that in objects; in the serving thread they would grow its
 * heap to its largest, which V8 keeps long after (about 1 GB resident on Node 24, docs/BENCHMARKS.md). The
 * thread's heap goes when the thread does, and the tokens arrive in columns (transfer.ts).
 */
export async function readSeedFileApart(file: string): Promise<ReadSeed> {
  const worker = new Worker(SEED_WORKER_FILE, { workerData: { file } });
  const [answer] = await Promise.all([
    new Promise<SeedWorkerAnswer>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    }),
    new Promise((resolve) => worker.once('exit', resolve)),
  ]);
  if ('error' in answer) throw answer.problems ? new SeedFileError(answer.error, answer.problems) : new Error(answer.error);
  return receivedSeed(answer.seed);
}
