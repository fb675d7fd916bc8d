import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { seedSchema } from '../seed/schema';

/** `npm run seed:schema`: writes docs/seed.schema.json from the zod schema the service validates seeds with. */
export const SEED_SCHEMA_FILE = path.resolve(__dirname, '..', '..', 'docs', 'seed.schema.json');

/**
 * The file as written, before the service normalises it (io: 'input'). Rules across entries (a token's account
 * and destination must exist, ids must not repeat, expiry not before available) are checked by `npm run
 * seed:check` and at start; JSON Schema cannot say them, so the description does.
 */
export function renderSeedSchema(): string {
  const schema = {
    ...z.toJSONSchema(seedSchema, { io: 'input', unrepresentable: 'any' }),
    title: 'Seed file of the token and booking receiver (SEED_FILE)',
    description:
      'Accounts (authoritative: keys, signing secrets and destinations are set from the file on every start), tokens and bookings (inserted when missing). ' +
      "Also checked, beyond this schema: every token's and booking's source_id names an account, a token's destination_id is one of its account's destinations, " +
      'ids do not repeat, expiry_date is not before available_date, and booking rules (check_out not before check_in, a % margin at most 100); ' +
      "an endpoint's url is an absolute http(s) URL without user or password (https:// only unless DELIVERY_ALLOW_HTTP=true), its secrets are whsec_ secrets, its source_ids name accounts. " +
      'Check a file with: npm run seed:check FILE',
  };
  return `${JSON.stringify(schema, null, 2)}\n`;
}

if (require.main === module) {
  mkdirSync(path.dirname(SEED_SCHEMA_FILE), { recursive: true });
  writeFileSync(SEED_SCHEMA_FILE, renderSeedSchema());
  process.stdout.write(`Wrote ${path.relative(process.cwd(), SEED_SCHEMA_FILE)}\n`);
}
