import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { renderSeedSchema, SEED_SCHEMA_FILE } from '../../src/cli/seed-schema';
import { DEMO_SEED_FILE } from '../../src/seed/file';

describe("the seed file's JSON Schema (docs/seed.schema.json)", () => {
  it('is committed as generated from the zod schema: run `npm run seed:schema` after changing it', () => {
    expect(readFileSync(SEED_SCHEMA_FILE, 'utf8')).toBe(renderSeedSchema());
  });

  it('accepts the demo seed, and refuses an entry of the wrong shape, naming where', () => {
    // With the formats the schema names (updated_at is a date-time), so they are checked, not ignored with a warning.
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const validate = ajv.compile(JSON.parse(renderSeedSchema()));
    const demo = JSON.parse(readFileSync(DEMO_SEED_FILE, 'utf8'));
    expect(validate(demo)).toBe(true);
    const broken = { ...demo, tokens: [{ ...demo.tokens[0], balance: 12.5 }] };
    expect(validate(broken)).toBe(false);
    expect(validate.errors?.map((error) => error.instancePath)).toContain('/tokens/0/balance');
  });
});
