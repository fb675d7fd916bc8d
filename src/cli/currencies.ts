/**
 * Writes src/data/iso-4217.json, the active currency codes, from ISO 4217 list one (the XML the maintenance
 * agency publishes as list-one.xml): `npm run currencies -- path/to/list-one.xml`. Funds and units without a
 * country entry count too, as on the list; withdrawn codes are on list three, never here.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const OUTPUT = path.resolve(__dirname, '..', 'data', 'iso-4217.json');

function tag(entry: string, name: string): string | undefined {
  return new RegExp(`<${name}[^>]*>([^<]*)</${name}>`).exec(entry)?.[1].trim();
}

const source = process.argv[2];
if (!source) {
  process.stderr.write('usage: npm run currencies -- path/to/list-one.xml\n');
  process.exit(2);
}
const xml = readFileSync(source, 'utf8');
const published = /Pblshd="([^"]+)"/.exec(xml)?.[1];
if (!published) throw new Error(`${source} is not ISO 4217 list one: no Pblshd attribute`);
const currencies = new Map<string, { code: string; number: string; name: string }>();
for (const [entry] of xml.matchAll(/<CcyNtry>[\s\S]*?<\/CcyNtry>/g)) {
  const code = tag(entry, 'Ccy');
  const number = tag(entry, 'CcyNbr');
  const name = tag(entry, 'CcyNm');
  if (code && number && name) currencies.set(code, { code, number, name });
}
const sorted = [...currencies.values()].sort((a, b) => a.code.localeCompare(b.code));
writeFileSync(OUTPUT, `${JSON.stringify({ published, currencies: sorted }, null, 2)}\n`);
process.stdout.write(`${OUTPUT}: ${sorted.length} codes of list one published ${published}\n`);
