-- Contract sections 4 and 7: a token may have an available date and an expiry date (UTC calendar days); a
-- withdrawal outside them is refused.
ALTER TABLE tokens ADD COLUMN available_date date, ADD COLUMN expiry_date date,
  ADD CHECK (expiry_date >= available_date);

-- As migration 005, with the token's dates as day numbers since 1970-01-01 (what the service compares).
DROP FUNCTION lock_token_and_find_withdrawal(text, text, text);
CREATE FUNCTION lock_token_and_find_withdrawal(p_token_id text, p_source_id text, p_transaction_id text)
RETURNS TABLE (
  token_id text, source_id text, destination_id text, status text, balance bigint, available_day integer, expiry_day integer,
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
    t.available_date - DATE '1970-01-01', t.expiry_date - DATE '1970-01-01',
    w.transaction_id, w.source_id, w.destination_id, w.token_id, w.amount, w.token_balance, w.created_at;
END
$$;
