import publishedSecrets from '../data/published-secrets.json';

/**
 * Contract section 11: no published secret works in production. The keys, secrets and tokens this repository's
 * documentation and demo seed print are listed in data/published-secrets.json (`npm run published-secrets`
 * writes it from the files below; a test fails when it is stale), since the image ships none of those files.
 */
export const PUBLISHED_SECRETS: ReadonlySet<string> = new Set(publishedSecrets.secrets);

/**
 * A key text as this check compares it: trimmed and case-folded, so ` PK_DEMO_…` is the published `pk_demo_…`. For
 * this check only: authentication compares keys exactly.
 */
export function foldedKeyText(text: string): string {
  return text.trim().toLowerCase();
}

const SIGNING_SECRET_PREFIX = 'whsec_';

/**
 * The key a signing secret stands for: standardwebhooks drops a leading `whsec_` and decodes the rest as base64, so
 * `whsec_X` and `X` are one key. Node's decoder is laxer than the library's, but a secret the library refused never
 * gets this far (the seed's schema and WEBHOOK_SECRET's parse), and for one it took both give the same bytes.
 */
export function signingKey(secret: string): Buffer {
  const trimmed = secret.trim();
  const encoded = trimmed.startsWith(SIGNING_SECRET_PREFIX) ? trimmed.slice(SIGNING_SECRET_PREFIX.length) : trimmed;
  return Buffer.from(encoded, 'base64');
}

/** A signing secret's key as a text, to compare keys in a set. */
function signingKeyOf(secret: string): string {
  return signingKey(secret).toString('hex');
}

const PUBLISHED_KEY_TEXTS: ReadonlySet<string> = new Set([...PUBLISHED_SECRETS].map(foldedKeyText));
const PUBLISHED_SIGNING_KEYS: ReadonlySet<string> = new Set(
  [...PUBLISHED_SECRETS].filter((secret) => secret.startsWith(SIGNING_SECRET_PREFIX)).map(signingKeyOf),
);

/** An account key or an admin token the documentation publishes, however it is spelled (trimmed, in any case). */
export function isPublishedKeyText(text: string): boolean {
  return PUBLISHED_KEY_TEXTS.has(foldedKeyText(text));
}

/** A signing secret whose key the documentation publishes, with or without its `whsec_` prefix, or a published text. */
export function isPublishedSigningSecret(secret: string): boolean {
  return PUBLISHED_SIGNING_KEYS.has(signingKeyOf(secret)) || isPublishedKeyText(secret);
}

/** The files, relative to the repository, whose examples are public: whatever secret they show is published. */
export const PUBLISHING_FILES = [
  'README.md',
  '.env.example',
  'docker-compose.yml',
  'seed/demo.json',
  'docs/*.md',
  'docs/openapi.json',
] as const;

/**
 * How a secret shows in those files: a signing secret, an account's keys (by prefix or as the seed's and the
 * API's JSON fields), the two secrets of the settings, and a bearer token long enough to be ADMIN_TOKEN (16
 * characters or more, as the setting requires). Placeholders (`…`, `$TOKEN`) are not secrets.
 */
const SECRET_PATTERNS = [
  /\b(whsec_[A-Za-z0-9+/=]+)/g,
  /\b((?:pk|sk)_[A-Za-z0-9_]{8,})/g,
  /"(?:share_public|share_secret)"\s*:\s*"([A-Za-z0-9._~+/=-]{8,})"/g,
  /\b(?:ADMIN_TOKEN|WEBHOOK_SECRET)=([A-Za-z0-9._~+/=-]{8,})/g,
  /\bBearer ([A-Za-z0-9._~+/=-]{16,})/g,
];

/** Every secret a text shows, by the patterns above. */
export function secretsShownIn(text: string): string[] {
  return SECRET_PATTERNS.flatMap((pattern) => [...text.matchAll(pattern)].map((match) => match[1]));
}
