import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sql, TEST_DATABASE_URL, warnIfNoDatabase } from '../helpers/postgres';
import { startServer, type ServerProcess } from '../helpers/server-process';
import { checkCapturedTraffic } from '../helpers/traffic-checks';

jest.setTimeout(60_000);

interface Example {
  command: string;
  answer: string;
}

/** Every ```sh block of the README followed directly by a plain ``` block holding its answer. */
function readmeExamples(): Example[] {
  const readme = readFileSync(path.resolve(__dirname, '..', '..', 'README.md'), 'utf8');
  const pattern = /```sh\n(curl [^\n]*)\n```\n\n?```\n([\s\S]*?)\n```/g;
  return [...readme.matchAll(pattern)].map((match) => ({ command: match[1], answer: match[2] }));
}

/** Times and request ids are the only parts of an answer that differ from run to run. */
const withoutChangeTime = (text: string) => text.replace(/"(updated_at|created_at|time|request_id)":"[^"]+"/g, '"$1":"…"');

const hasCurl = (() => {
  try {
    execFileSync('curl', ['--version']);
    return true;
  } catch {
    return false;
  }
})();

if (!hasCurl) {
  process.stderr.write('README examples SKIPPED: curl is not installed\n');
}

/** The README starts the demo with this token for its inspection examples. */
const ADMIN_TOKEN = 'demo-admin-token-0001';

/** The server environments the examples run against: the memory store, and PostgreSQL on a fresh schema when a test database is named. */
function servers(): Array<[string, () => Promise<Record<string, string>>]> {
  const memory: [string, () => Promise<Record<string, string>>] = ['memory', async () => ({ SEED_FILE: '', ADMIN_TOKEN })];
  if (!TEST_DATABASE_URL) return [memory];
  const postgres: [string, () => Promise<Record<string, string>>] = [
    'postgres',
    async () => {
      await sql('DROP SCHEMA IF EXISTS readme_examples CASCADE');
      await sql('CREATE SCHEMA readme_examples');
      const url = new URL(TEST_DATABASE_URL as string);
      url.searchParams.set('options', '-c search_path=readme_examples');
      return { SEED_FILE: '', ADMIN_TOKEN, DATABASE_URL: url.toString() };
    },
  ];
  return [memory, postgres];
}

warnIfNoDatabase();

/** The signed example: a ```bash script whose first line sets SECRET, and its answer. */
function signedExample(): { script: string; secret: string; answer: string } {
  const readme = readFileSync(path.resolve(__dirname, '..', '..', 'README.md'), 'utf8');
  const match = /```bash\n(SECRET=(\S+)\n[\s\S]*?)\n```\n```\n([\s\S]*?)\n```/.exec(readme);
  if (!match) throw new Error('the README has no signed example');
  return { script: match[1], secret: match[2], answer: match[3] };
}

(hasCurl ? describe : describe.skip)('README signed example, against a demo started with WEBHOOK_SECRET', () => {
  const example = signedExample();
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServer({ SEED_FILE: '', WEBHOOK_SECRET: example.secret });
  });
  afterAll(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
  });

  it('answers as written', () => {
    const script = example.script.replaceAll('localhost:3000', `127.0.0.1:${server.port}`);
    const output = execFileSync('bash', ['-c', script], { encoding: 'utf8', cwd: path.resolve(__dirname, '..', '..') }).trim();
    expect(output).toBe(example.answer.trim());
  });
});

(hasCurl ? describe.each(servers()) : describe.skip.each(servers()))('README curl examples, run in order against the demo seed (%s store)', (_store, environment) => {
  const examples = readmeExamples();
  let server: ServerProcess;

  beforeAll(async () => {
    server = await startServer(await environment());
  });
  afterAll(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
  });

  it('finds the examples', () => {
    expect(examples.length).toBeGreaterThanOrEqual(34);
  });

  it.each(examples.map((example, index) => [index + 1, example] as const))('example %i answers as written', (_index, example) => {
    const command = example.command.replaceAll('localhost:3000', `127.0.0.1:${server.port}`);
    const output = execFileSync('bash', ['-c', command], { encoding: 'utf8' }).replaceAll('\r\n', '\n').trim();
    expect(withoutChangeTime(output)).toBe(withoutChangeTime(example.answer.trim()));
  });
});

checkCapturedTraffic({ skip: !hasCurl });
