import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startServer, type ServerProcess } from '../helpers/server-process';

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

/** The time a booking changed is the only part of an answer that differs from run to run. */
const withoutChangeTime = (text: string) => text.replace(/"updated_at":"[^"]+"/g, '"updated_at":"…"');

const hasCurl = (() => {
  try {
    execFileSync('curl', ['--version']);
    return true;
  } catch {
    return false;
  }
})();

if (!hasCurl) {
  // eslint-disable-next-line no-console
  console.warn('README examples skipped: curl is not installed');
}

(hasCurl ? describe : describe.skip)('README curl examples, run in order against the demo seed', () => {
  const examples = readmeExamples();
  let server: ServerProcess;

  beforeAll(async () => {
    server = await startServer({ SEED_FILE: '' });
  });
  afterAll(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
  });

  it('finds the examples', () => {
    expect(examples.length).toBeGreaterThanOrEqual(25);
  });

  it.each(examples.map((example, index) => [index + 1, example] as const))('example %i answers as written', (_index, example) => {
    const command = example.command.replaceAll('localhost:3000', `127.0.0.1:${server.port}`);
    const output = execFileSync('bash', ['-c', command], { encoding: 'utf8' }).replaceAll('\r\n', '\n').trim();
    expect(withoutChangeTime(output)).toBe(withoutChangeTime(example.answer.trim()));
  });
});
