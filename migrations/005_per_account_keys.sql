-- Contract sections 6, 7 and 10: what one account sends never collides with, blocks or reveals another's.

-- Ledger keys are (source_id, transaction_id): an account's transaction ids are its own.
ALTER TABLE withdrawals DROP CONSTRAINT withdrawals_pkey;
ALTER TABLE withdrawals ADD PRIMARY KEY (source_id, transaction_id);

DROP FUNCTION lock_token_and_find_withdrawal(text, text);
-- As migration 004, with the lookup by the account's key. Each statement of a volatile PL/pgSQL function takes a
-- new snapshot (READ COMMITTED), so the lookup, made once the lock is held, sees a withdrawal committed by the unit
-- that held the lock before.
CREATE FUNCTION lock_token_and_find_withdrawal(p_token_id text, p_source_id text, p_transaction_id text)
RETURNS TABLE (
  token_id text, source_id text, destination_id text, status text, balance bigint,
  w_transaction_id text, w_source_id text, w_destination_id text, w_token_id text,
  w_amount bigint, w_token_balance bigint, w_created_at timestamptz
)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  t tokens%ROWTYPE;
  w withdrawals%ROWTYPE;
BEGIN
  SELECT * INTO t FROM tokens WHERE tokens.token_id = p_token_id FOR UPDATE;
  SELECT * INTO w FROM withdrawals WHERE withdrawals.source_id = p_source_id AND withdrawals.transaction_id = p_transaction_id;
  RETURN QUERY SELECT t.token_id, t.source_id, t.destination_id, t.status, t.balance,
    w.transaction_id, w.source_id, w.destination_id, w.token_id, w.amount, w.token_balance, w.created_at;
END
$$;

-- Signing secrets of an account (whsec_…): needed as they are to check an HMAC, so not hashed like the keys.
ALTER TABLE accounts ADD COLUMN signing_secrets text[] NOT NULL DEFAULT '{}';

-- Destinations are set from the seed file on every start: a token keeps its account, and a destination removed
-- from the file leaves its tokens in place (operations on them answer 413 Destination ID Unknown).
ALTER TABLE tokens DROP CONSTRAINT tokens_source_id_destination_id_fkey;
ALTER TABLE tokens ADD FOREIGN KEY (source_id) REFERENCES accounts (source_id);

-- Signed deliveries per account, with a digest of the body, written in the unit of the change they applied.
DROP TABLE webhook_deliveries;
CREATE TABLE deliveries (
  source_id   text NOT NULL,
  webhook_id  text NOT NULL CHECK (length(webhook_id) BETWEEN 1 AND 256),
  body_digest bytea NOT NULL CHECK (length(body_digest) = 32),
  response    text NOT NULL,
  received_at timestamptz NOT NULL,
  PRIMARY KEY (source_id, webhook_id)
);
CREATE INDEX deliveries_by_age ON deliveries (received_at);
