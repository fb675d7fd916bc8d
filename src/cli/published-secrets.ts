import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PUBLISHING_FILES, secretsShownIn } from '../process/published-secrets';

const ROOT = path.resolve(__dirname, '..', '..');
export const PUBLISHED_SECRETS_FILE = path.resolve(__dirname, '..', 'data', 'published-secrets.json');

/** The files PUBLISHING_FILES names, `docs/*.md` expanded, in a stable order. */
function publishingFiles(): string[] {
  return PUBLISHING_FILES.flatMap((name) => {
    if (!name.includes('*')) return [name];
    const [directory, pattern] = name.split('/*');
    return readdirSync(path.join(ROOT, directory))
      .filter((file) => file.endsWith(pattern))
      .sort()
      .map((file) => `${directory}/${file}`);
  });
}

/** `npm run published-secrets`: the secrets the documentation and the demo seed show, as the service refuses them in production. */
export function renderPublishedSecrets(): string {
  const secrets = new Set(publishingFiles().flatMap((file) => secretsShownIn(readFileSync(path.join(ROOT, file), 'utf8'))));
  const data = { source: `npm run published-secrets, from ${PUBLISHING_FILES.join(', ')}`, secrets: [...secrets].sort() };
  return `${JSON.stringify(data, null, 2)}\n`;
}

if (require.main === module) {
  writeFileSync(PUBLISHED_SECRETS_FILE, renderPublishedSecrets());
  process.stdout.write(`Wrote ${path.relative(process.cwd(), PUBLISHED_SECRETS_FILE)}\n`);
}
