import publishedSecrets from '../data/published-secrets.json';

/**
 * Contract section 11: no published secret works in production. The keys, secrets and tokens this repository's
 * documentation and demo seed print are listed in data/published-secrets.json (`npm run published-secrets`
 * writes it from the files below; a test fails when it is stale), since the image ships none of those files.
 */
export const PUBLISHED_SECRETS: ReadonlySet<string> = new Set(publishedSecrets.secrets);

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
