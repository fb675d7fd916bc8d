-- Contract sections 9.8-9.10: Refund is a ledger row of its own kind, capped by what was withdrawn from the token
-- less what was refunded to it; Modify, Load and Unload Token change a token's details as well as its balance.

ALTER TABLE ledger DROP CONSTRAINT ledger_kind_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_kind_check CHECK (kind IN ('withdrawal', 'load', 'unload', 'schedule', 'refund'));

-- What Refund may still give back, kept on the token so the cap is read under the token's lock and written with
-- the row that changes it; the rows written before this migration are all withdrawals or kinds that do not count.
ALTER TABLE tokens ADD COLUMN refundable bigint NOT NULL DEFAULT 0 CHECK (refundable >= 0);
UPDATE tokens SET refundable = w.total
  FROM (SELECT token_id, sum(amount) AS total FROM ledger WHERE kind = 'withdrawal' GROUP BY token_id) AS w
 WHERE tokens.token_id = w.token_id;

-- As migration 009, with the token's refundable amount.
DROP FUNCTION lock_token_and_find_ledger_entry(text, text, text);
CREATE FUNCTION lock_token_and_find_ledger_entry(p_token_id text, p_source_id text, p_transaction_id text)
RETURNS TABLE (
  token_id text, source_id text, destination_id text, status text, balance bigint, refundable bigint,
  available_day integer, expiry_day integer, destination_currency text, details jsonb,
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
  RETURN QUERY SELECT t.token_id, t.source_id, t.destination_id, t.status, t.balance, t.refundable,
    t.available_date - DATE '1970-01-01', t.expiry_date - DATE '1970-01-01', t.destination_currency, t.details,
    l.kind, l.transaction_id, l.source_id, l.destination_id, l.token_id, l.amount, l.fee, l.token_balance, l.created_at;
END
$$;
