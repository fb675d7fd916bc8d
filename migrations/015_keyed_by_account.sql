-- Every key of the data within its account (docs/POSTGRESQL.md, "Past one database"): the account is how the data
-- would be split across databases, so tokens are keyed by (source_id, token_id), every write of a token names both,
-- and a ledger row refers to its token within the account. token_id stays unique across accounts on one database
-- (Create Token draws ids until one is free), which a database split by account would keep per account only.
ALTER TABLE ledger DROP CONSTRAINT withdrawals_token_id_fkey;
ALTER TABLE tokens DROP CONSTRAINT tokens_pkey;
ALTER TABLE tokens ADD PRIMARY KEY (source_id, token_id);
ALTER TABLE tokens ADD CONSTRAINT tokens_token_id_key UNIQUE (token_id);
ALTER TABLE ledger ADD CONSTRAINT ledger_token_fkey FOREIGN KEY (source_id, token_id) REFERENCES tokens (source_id, token_id);
-- lock_token_and_find_ledger_entry (migration 013) is no longer called: a unit alone is a batch of one
-- (src/store/postgres/batch.ts). It stays for instances of the version before, which call it while a rolling
-- upgrade runs both; nothing of the schema above changes what they send.
