import { Client } from 'pg';
import request from 'supertest';
import { OTHER, TOKENS } from '../helpers/fixtures';
import { buildTestApp, postgresStoreKind, type TestApp } from '../helpers/app';
import { withdrawal } from '../helpers/payloads';
import { TEST_DATABASE_URL, warnIfNoDatabase, workerSchema } from '../helpers/postgres';

warnIfNoDatabase();

const TOKEN_MISMATCH = { success: 'false', errors: { code: '428', message: "Token ID doesn't match" } };

(TEST_DATABASE_URL ? describe : describe.skip)("another account's token on PostgreSQL (contract section 11: no probing)", () => {
  let app: TestApp;
  let holder: Client;
  beforeEach(async () => {
    app = await buildTestApp(postgresStoreKind);
    holder = new Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${workerSchema()}` });
    await holder.connect();
  });
  afterEach(async () => {
    await holder.end();
    await app.store.close();
  });

  it('a notification naming a token of another account that is locked answers 428 at once, as a missing one, and leaves its lock alone', async () => {
    // ACME's own unit holds its token, as a withdrawal in flight does.
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM tokens WHERE token_id = $1 FOR UPDATE', [TOKENS.active.token_id]);
    const probe = (tokenId: string) =>
      request(app.server)
        .post('/v1/tokens/withdraw')
        .send(withdrawal({ share_public: OTHER.share_public, source_id: OTHER.source_id, destination_id: 'X1', token_id: tokenId }));
    const foreign = await probe(TOKENS.active.token_id);
    const missing = await probe('999999999');
    expect([foreign.status, foreign.body]).toEqual([428, TOKEN_MISMATCH]);
    expect([missing.status, missing.body]).toEqual([428, TOKEN_MISMATCH]);
    // Only waiters on the holder's own transaction: other tests and runs share the cluster's pg_locks.
    const { rows } = await holder.query(
      `SELECT count(*)::int AS n FROM pg_locks waiting JOIN pg_locks held ON held.locktype = 'transactionid' AND held.transactionid = waiting.transactionid
        WHERE waiting.locktype = 'transactionid' AND NOT waiting.granted AND held.granted AND held.pid = pg_backend_pid()`,
    );
    expect(rows[0].n).toBe(0);
    await holder.query('ROLLBACK');
  });
});
