-- Contract section 9: the rest of the lifecycle. One ledger per token for every kind of money movement, tokens
-- made by Create Token, bookings that can be created and cancelled, and one table of request keys for every
-- operation keyed by {randomkey}.

-- The ledger: withdrawals, loads (with their fee), unloads and credited load schedules, keyed per account by
-- transaction_id across every kind. A credited schedule that finds the balance already there moves zero.
ALTER TABLE withdrawals RENAME TO ledger;
ALTER INDEX withdrawals_by_token RENAME TO ledger_by_token;
ALTER TABLE ledger
  ADD COLUMN kind text NOT NULL DEFAULT 'withdrawal' CHECK (kind IN ('withdrawal', 'load', 'unload', 'schedule')),
  ADD COLUMN fee bigint NOT NULL DEFAULT 0 CHECK (fee >= 0 AND (fee = 0 OR kind = 'load'));
-- Every row written from now on states its kind.
ALTER TABLE ledger ALTER COLUMN kind DROP DEFAULT;
ALTER TABLE ledger DROP CONSTRAINT withdrawals_amount_check;
ALTER TABLE ledger ADD CHECK (amount > 0 OR (kind = 'schedule' AND amount = 0));

-- Balances stay within what an amount can say: 9999999999.99.
ALTER TABLE tokens ADD CHECK (balance <= 999999999999);
-- Create Token's currency and its optional text fields (token_name, customer_name, ...), as sent.
ALTER TABLE tokens ADD COLUMN destination_currency text, ADD COLUMN details jsonb;

ALTER TABLE bookings ADD COLUMN status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'cancelled'));

-- Booking operations and Create Token share one key space per account. A kept booking change held the booking,
-- not the answer's bytes, so the kept keys are not carried over: a retry of a change made before this migration
-- applies the same field values again, which a PATCH makes harmless.
DROP TABLE booking_changes;
CREATE TABLE keyed_requests (
  source_id   text NOT NULL,
  key         text NOT NULL,
  fingerprint text NOT NULL,
  response    text NOT NULL,
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (source_id, key)
);
CREATE INDEX keyed_requests_by_age ON keyed_requests (created_at);

-- As migration 006, on the ledger, with the row's kind and fee and the token's currency and details.
DROP FUNCTION lock_token_and_find_withdrawal(text, text, text);
CREATE FUNCTION lock_token_and_find_ledger_entry(p_token_id text, p_source_id text, p_transaction_id text)
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
  SELECT * INTO t FROM tokens WHERE tokens.token_id = p_token_id FOR UPDATE;
  SELECT * INTO l FROM ledger WHERE ledger.source_id = p_source_id AND ledger.transaction_id = p_transaction_id;
  RETURN QUERY SELECT t.token_id, t.source_id, t.destination_id, t.status, t.balance,
    t.available_date - DATE '1970-01-01', t.expiry_date - DATE '1970-01-01', t.destination_currency, t.details,
    l.kind, l.transaction_id, l.source_id, l.destination_id, l.token_id, l.amount, l.fee, l.token_balance, l.created_at;
END
$$;
