-- The order withdrawals were applied in, for "latest withdrawals of a token".
-- Inserts on one token are serialised by its row lock, so per token this is commit order.
ALTER TABLE withdrawals ADD COLUMN ledger_seq bigint GENERATED ALWAYS AS IDENTITY;
DROP INDEX withdrawals_by_token;
CREATE INDEX withdrawals_by_token ON withdrawals (token_id, ledger_seq);
