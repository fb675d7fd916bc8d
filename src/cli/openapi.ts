import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildOpenApiDocument } from '../openapi/document';
import { SERVICE_VERSION } from '../process/version';

/** `npm run openapi`: writes docs/openapi.json; CI fails when the committed file differs from what this writes. */
export const OPENAPI_FILE = path.resolve(__dirname, '..', '..', 'docs', 'openapi.json');

export function renderOpenApiDocument(): string {
  return `${JSON.stringify(buildOpenApiDocument(SERVICE_VERSION), null, 2)}\n`;
}

if (require.main === module) {
  mkdirSync(path.dirname(OPENAPI_FILE), { recursive: true });
  writeFileSync(OPENAPI_FILE, renderOpenApiDocument());
  process.stdout.write(`Wrote ${path.relative(process.cwd(), OPENAPI_FILE)}\n`);
}
