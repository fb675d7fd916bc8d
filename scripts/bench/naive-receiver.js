// The peer a user would write instead of the receiver (docs/BENCHMARKS.md): Express 5, express.json, a pg pool of 16
// and one transaction per withdrawal, on the receiver's own tables as this tree migrates them (DATABASE_URL names the
// schema). It checks the key with one SELECT, then the token (exists, active, balance, the stated balance after), and
// keys replays by the ledger row's (source_id, transaction_id). It skips the signature, the account's enabled flag and
// destinations, the token's dates, the 422 for a transaction_id reused with other fields, the change record
// (contract 13), rate limits, logs and metrics.
const { createHash, timingSafeEqual } = require('node:crypto');
const express = require('express');
const { Pool } = require('pg');

// idleTimeoutMillis 0: connections stay open between requests, so the bench can read their backends' CPU.
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 16, idleTimeoutMillis: 0 });
pool.on('error', () => undefined); // a lost idle connection: the next request opens another
const AMOUNT = /^\d{1,10}(\.\d{1,2})?$/;
const cents = (text) => Math.round(Number(text) * 100);
const answer = (res, status, message) => res.status(status).json({ success: status === 200, message });

const app = express();
app.use(express.json());
app.post('/v1/tokens/withdraw', async (req, res) => {
  const b = req.body ?? {};
  const valid = [b.source_id, b.share_public, b.destination_id].every((field) => typeof field === 'string');
  if (!valid || b.read_event !== 'token.withdrawn_created' || !/^[1-9]\d{0,31}$/.test(b.token_id) || !/^\d{20}$/.test(b.transaction_id))
    return answer(res, 400, 'invalid request');
  if (!AMOUNT.test(b.withdrawn_amount) || !AMOUNT.test(b.token_balance) || cents(b.withdrawn_amount) === 0)
    return answer(res, 400, 'invalid amount');
  const amount = cents(b.withdrawn_amount);
  const account = await pool.query('SELECT public_key_hash FROM accounts WHERE source_id = $1', [b.source_id]);
  const presented = createHash('sha256').update(b.share_public).digest();
  if (account.rowCount === 0 || !timingSafeEqual(account.rows[0].public_key_hash, presented)) return answer(res, 401, 'unauthorized');
  const client = await pool.connect();
  let broken;
  try {
    await client.query('BEGIN');
    const key = [b.source_id, String(b.token_id)];
    const sql = 'SELECT status, balance FROM tokens WHERE source_id = $1 AND token_id = $2 AND destination_id = $3 FOR UPDATE';
    const [token] = (await client.query(sql, [...key, b.destination_id])).rows;
    const refusal = !token
      ? [404, 'token not found']
      : token.status !== 'active'
        ? [409, 'token not active']
        : Number(token.balance) < amount
          ? [422, 'over balance']
          : undefined;
    if (refusal) return await client.query('ROLLBACK').then(() => answer(res, ...refusal));
    const after = Number(token.balance) - amount;
    const inserted = await client.query(
      `INSERT INTO ledger (source_id, token_id, transaction_id, kind, destination_id, amount, token_balance, created_at)
       VALUES ($1, $2, $3, 'withdrawal', $4, $5, $6, now()) ON CONFLICT (source_id, transaction_id) DO NOTHING`,
      [...key, b.transaction_id, b.destination_id, amount, after],
    );
    if (inserted.rowCount === 0) return await client.query('ROLLBACK').then(() => answer(res, 200, 'Success')); // a replay
    if (cents(b.token_balance) !== after) return await client.query('ROLLBACK').then(() => answer(res, 409, 'token_balance mismatch'));
    await client.query('UPDATE tokens SET balance = $3, refundable = refundable + $4 WHERE source_id = $1 AND token_id = $2', [
      ...key,
      after,
      amount,
    ]);
    await client.query('COMMIT');
    return answer(res, 200, 'Success');
  } catch (error) {
    broken = error;
    await client.query('ROLLBACK').catch(() => undefined);
    return answer(res, 500, 'internal error');
  } finally {
    client.release(broken);
  }
});
const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ msg: 'listening', port: server.address().port })}\n`);
});
