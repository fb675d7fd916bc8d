-- Contract section 11: a token is looked up within the caller's account before anything is locked, so another
-- account's token answers as a missing one does, in status, time and locks. As migration 007, with the account
-- in the lookup: a row that fails the condition is never locked.
CREATE OR REPLACE FUNCTION lock_token_and_find_ledger_entry(p_token_id text, p_source_id text, p_transaction_id text)
RETURNS TABLE (
  token_id text, source_id text, destination_id text, status text, balance bigint, available_day integer, expiry_day integer,
  destination_currency text, details jsonb,
  l_kind text, l_transaction_id text, l_source_id text, l_destination_id text, l_token_id text,
  l_amount bigint, l_fee bigint, l_token_balance bigint, l_created_at timestamptz
)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  t tokens%ROWTYPE;
  l ledger%ROWTYPE;
BEGIN
  SELECT * INTO t FROM tokens WHERE tokens.token_id = p_token_id AND tokens.source_id = p_source_id FOR UPDATE;
  SELECT * INTO l FROM ledger WHERE ledger.source_id = p_source_id AND ledger.transaction_id = p_transaction_id;
  RETURN QUERY SELECT t.token_id, t.source_id, t.destination_id, t.status, t.balance,
    t.available_date - DATE '1970-01-01', t.expiry_date - DATE '1970-01-01', t.destination_currency, t.details,
    l.kind, l.transaction_id, l.source_id, l.destination_id, l.token_id, l.amount, l.fee, l.token_balance, l.created_at;
END
$$;
