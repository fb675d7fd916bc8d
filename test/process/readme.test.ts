import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { sql, TEST_DATABASE_URL, warnIfNoDatabase } from '../helpers/postgres';
import { startServer, type ServerProcess } from '../helpers/server-process';

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * The Markdown files holding curl examples, in the order their examples run
 * against one demo server: an example that changes state (a withdrawal, a
 * booking change) leaves what later ones show, so this order is part of the
 * examples.
 */
const EXAMPLE_FILES = ['README.md', 'docs/API.md', 'docs/OPERATIONS.md'];

/** The Markdown file holding the signed example, run against a demo server of its own. */
const SIGNED_EXAMPLE_FILE = 'docs/SIGNING.md';

interface Example {
  file: string;
  /** 1-based, within its file. */
  number: number;
  command: string;
  answer: string;
}

/** A ```sh block of one curl command followed directly by a plain ``` block holding its answer. */
const CURL_EXAMPLE = /```sh\n(curl [^\n]*)\n```\n\n?```\n([\s\S]*?)\n```/g;
/** Any ```sh block that starts with curl, answered or not. */
const CURL_BLOCK = /```sh\ncurl /g;
/** A ```bash script whose first line sets SECRET, followed directly by its answer. */
const SIGNED_EXAMPLE = /```bash\n(SECRET=(\S+)\n[\s\S]*?)\n```\n```\n([\s\S]*?)\n```/;

const readMarkdown = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const curlBlocksIn = (file: string) => readMarkdown(file).match(CURL_BLOCK)?.length ?? 0;

function examplesIn(file: string): Example[] {
  return [...readMarkdown(file).matchAll(CURL_EXAMPLE)].map((match, index) => ({
    file,
    number: index + 1,
    command: match[1],
    answer: match[2],
  }));
}

/** Every example, file by file in EXAMPLE_FILES order, each file's in document order. */
const allExamples = (): Example[] => EXAMPLE_FILES.flatMap(examplesIn);

/** The README and every Markdown file in docs/: wherever an example could be written. */
function markdownFiles(): string[] {
  const docs = readdirSync(path.join(ROOT, 'docs')).filter((name) => name.endsWith('.md'));
  return ['README.md', ...docs.map((name) => `docs/${name}`)];
}

describe('where the examples live', () => {
  it.each(EXAMPLE_FILES)('%s holds curl examples, each followed by its answer', (file) => {
    const examples = examplesIn(file);
    expect(examples.length).toBeGreaterThan(0);
    expect(curlBlocksIn(file)).toBe(examples.length);
  });

  it('holds them all: no other Markdown file has a curl or signed example the test would not run', () => {
    const unrun = markdownFiles().filter(
      (file) =>
        (!EXAMPLE_FILES.includes(file) && curlBlocksIn(file) > 0) ||
        (file !== SIGNED_EXAMPLE_FILE && SIGNED_EXAMPLE.test(readMarkdown(file))),
    );
    expect(unrun).toEqual([]);
  });

  it('finds every example', () => {
    expect(allExamples().length).toBeGreaterThanOrEqual(52);
  });
});

/**
 * Times, request ids, change ids, the token_id Create Token draws and the transaction_id Load and Unload Token draw
 * are the only parts of an answer that differ from run to run.
 */
const withoutRunParts = (text: string, command: string) => {
  const withoutTimes = text
    .replace(/"(updated_at|created_at|time|request_id)":"[^"]+"/g, '"$1":"…"')
    .replace(/"id":"chg_[0-9a-f-]{36}"/g, '"id":"chg_…"')
    .replace(/"transaction":\{"transaction_id":"\d{20}"/g, '"transaction":{"transaction_id":"…"');
  return command.includes('"token_event":"create"')
    ? withoutTimes.replace(/"token":\{"token_id":"[1-9]\d{15}"/g, '"token":{"token_id":"…"')
    : withoutTimes;
};

const hasCurl = (() => {
  try {
    execFileSync('curl', ['--version']);
    return true;
  } catch {
    return false;
  }
})();

if (!hasCurl) {
  process.stderr.write('curl examples SKIPPED: curl is not installed\n');
}

/** The README's first command starts the demo with the token of the inspection examples: the examples run as it starts it. */
const ADMIN_TOKEN =
  /^npm ci && npm run build && ADMIN_TOKEN=(\S+) npm start/m.exec(readMarkdown('README.md'))?.[1] ?? 'missing from the README';

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

/** The signed example: its script, the secret its first line sets, and its answer. */
function signedExample(): { script: string; secret: string; answer: string } {
  const match = SIGNED_EXAMPLE.exec(readMarkdown(SIGNED_EXAMPLE_FILE));
  if (!match) throw new Error(`${SIGNED_EXAMPLE_FILE} has no signed example`);
  return { script: match[1], secret: match[2], answer: match[3] };
}

(hasCurl ? describe : describe.skip)(`the signed example of ${SIGNED_EXAMPLE_FILE}, against a demo started with WEBHOOK_SECRET`, () => {
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
    const output = execFileSync('bash', ['-c', script], { encoding: 'utf8', cwd: ROOT }).trim();
    expect(output).toBe(example.answer.trim());
  });
});

(hasCurl ? describe.each(servers()) : describe.skip.each(servers()))(
  'the curl examples, run in order against the demo seed (%s store)',
  (_store, environment) => {
    const examples = allExamples();
    let server: ServerProcess;

    beforeAll(async () => {
      server = await startServer(await environment());
    });
    afterAll(async () => {
      server.child.kill('SIGTERM');
      await server.exited;
    });

    it.each(examples.map((example) => [example.file, example.number, example] as const))(
      '%s example %i answers as written',
      (_file, _number, example) => {
        const command = example.command
          .replaceAll('localhost:3000', `127.0.0.1:${server.port}`)
          .replaceAll('localhost:9464', `127.0.0.1:${server.metricsPort}`);
        const output = execFileSync('bash', ['-c', command], { encoding: 'utf8' }).replaceAll('\r\n', '\n').trim();
        expect(withoutRunParts(output, example.command)).toBe(withoutRunParts(example.answer.trim(), example.command));
      },
    );
  },
);
