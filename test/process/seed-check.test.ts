import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEMO_SEED_FILE } from '../../src/seed/file';

const ROOT = path.resolve(__dirname, '..', '..');

/** Runs `npm run seed:check`'s script as npm does, and collects what it says. */
function seedCheck(file: string, settings: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = { ...process.env, ...settings };
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'src/cli/seed-check.ts', file], { cwd: ROOT, env }, (error, stdout, stderr) =>
      resolve({ code: error ? (error.code as number) : 0, stdout, stderr }),
    );
  });
}

describe('npm run seed:check FILE', () => {
  it('says what a valid file holds and exits 0', async () => {
    expect(await seedCheck(DEMO_SEED_FILE)).toEqual({
      code: 0,
      stdout: `${DEMO_SEED_FILE}: valid: 2 accounts, 11 tokens, 2 bookings, 0 endpoints\n`,
      stderr: '',
    });
  });

  it('names the bad entry and exits 1', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'seed-check-')), 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({
        accounts: [{ source_id: 'A', share_public: 'p', share_secret: 's', destinations: [] }],
        tokens: [{ token_id: '1', source_id: 'A', destination_id: 'Z', status: 'active', balance: '1.00' }],
      }),
    );
    expect(await seedCheck(file)).toEqual({
      code: 1,
      stdout: '',
      stderr: `Seed file ${file} is invalid: tokens.0.destination_id is not a destination of account A\n`,
    });
  });

  it('checks the endpoints under the settings the service would start with: http:// only with DELIVERY_ALLOW_HTTP=true', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'seed-check-')), 'endpoints.json');
    const endpoint = { id: 'erp', url: 'http://127.0.0.1:9000/hooks', secrets: ['whsec_ZXJwLXNlY3JldC1vZi1vdXItb3duLW9mLTMyLWJ5dGVz'] };
    writeFileSync(
      file,
      JSON.stringify({ accounts: [{ source_id: 'A', share_public: 'p', share_secret: 's', destinations: [] }], endpoints: [endpoint] }),
    );
    expect(await seedCheck(file, { DELIVERY_ALLOW_HTTP: 'false' })).toEqual({
      code: 1,
      stdout: '',
      stderr: `Seed file ${file} is invalid: endpoints.0.url must be an https:// URL (endpoint erp); DELIVERY_ALLOW_HTTP=true allows http://\n`,
    });
    expect(await seedCheck(file, { DELIVERY_ALLOW_HTTP: 'true' })).toEqual({
      code: 0,
      stdout: `${file}: valid: 1 accounts, 0 tokens, 0 bookings, 1 endpoints\n`,
      stderr: '',
    });
  });
});
