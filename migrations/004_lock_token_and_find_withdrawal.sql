-- The first round trip of a withdrawal as one statement instead of two: lock the
-- token, then look up the transaction id. Each statement of a volatile PL/pgSQL
-- function takes a new snapshot (READ COMMITTED), so the lookup, made once the
-- lock is held, sees a withdrawal committed by the unit that held the lock before.
-- One row always; its token columns are null when the token does not exist, its
-- withdrawal columns when the transaction id is new.
CREATE FUNCTION lock_token_and_find_withdrawal(p_token_id text, p_transaction_id text)
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
  SELECT * INTO w FROM withdrawals WHERE withdrawals.transaction_id = p_transaction_id;
  RETURN QUERY SELECT t.token_id, t.source_id, t.destination_id, t.status, t.balance,
    w.transaction_id, w.source_id, w.destination_id, w.token_id, w.amount, w.token_balance, w.created_at;
END
$$;
