-- Contract section 6: a ledger key is one operation's. Load Token and Unload Token file rows of kinds of their own,
-- so a Loaded or Unloaded notification reusing their transaction_id is refused (422), not taken as their replay.
ALTER TABLE ledger DROP CONSTRAINT ledger_kind_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_kind_check
  CHECK (kind IN ('withdrawal', 'load', 'unload', 'schedule', 'refund', 'load_token', 'unload_token'));
