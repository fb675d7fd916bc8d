-- Contract section 11: an account keeps at most MAX_KEYS_PER_ACCOUNT request keys and signed deliveries in their
-- retention window. Counted beside the quotas, in the unit that records a key, and taken off by the retention
-- sweep in the transaction that deletes the rows.
ALTER TABLE account_holdings ADD COLUMN keys bigint NOT NULL DEFAULT 0 CHECK (keys >= 0);
UPDATE account_holdings h
   SET keys = (SELECT count(*) FROM keyed_requests k WHERE k.source_id = h.source_id)
            + (SELECT count(*) FROM deliveries d WHERE d.source_id = h.source_id);
