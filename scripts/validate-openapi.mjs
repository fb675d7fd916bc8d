// Validates docs/openapi.json as OpenAPI 3.1 with @seriousme/openapi-schema-validator (an ES module, hence this script).
import { readFile } from 'node:fs/promises';
import { Validator } from '@seriousme/openapi-schema-validator';

const file = new URL('../docs/openapi.json', import.meta.url);
const result = await new Validator().validate(JSON.parse(await readFile(file, 'utf8')));
if (!result.valid) {
  process.stderr.write(`docs/openapi.json is not valid OpenAPI 3.1:\n${JSON.stringify(result.errors, null, 2)}\n`);
  process.exit(1);
}
process.stdout.write(`docs/openapi.json is valid OpenAPI ${result.openapi ?? '3.1'}\n`);
