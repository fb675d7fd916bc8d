-- Contract section 13.2: a feed request that waits is woken when a change of its account commits on any instance
-- sharing the database. The numbering trigger also sends NOTIFY receiver_changes with the account as the payload:
-- PostgreSQL delivers it at COMMIT, and never for a transaction that rolls back, to every session that LISTENs (each
-- instance's one LISTEN session, src/store/postgres/notifications.ts). Notifications of one transaction with the same
-- payload are sent once, so a batch of many units of one account notifies once. The channel is the database's, not
-- the schema's: an instance on another schema of the same database hears it too, and reads to find nothing new.
CREATE OR REPLACE FUNCTION number_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO change_counters AS c (source_id, last_seq) VALUES (NEW.source_id, 1)
  ON CONFLICT (source_id) DO UPDATE SET last_seq = c.last_seq + 1
  RETURNING c.last_seq INTO NEW.seq;
  PERFORM pg_notify('receiver_changes', NEW.source_id);
  RETURN NEW;
END
$$;

-- The feed's types filter: each listed type is read from here in seq order, at most a page of it, so a rare type
-- among many changes costs a page, not a scan of the account's changes (src/store/postgres/pg-store.ts, readChanges).
CREATE INDEX changes_by_type ON changes (source_id, type, seq);

-- A change is handed on as it was made (the feed, webhooks, the NATS relay: src/delivery/change-view.ts), so its
-- body is kept as its JSON text: jsonb reorders keys (shortest first), and the feed on PostgreSQL showed a token as
-- {"status", "balance", "token_id", ...} where the memory store and /admin/tokens show {"token_id", "source_id", ...}.
-- The body is only ever read back whole, never searched, so json loses nothing. Rows written before keep jsonb's
-- order. This rewrites the table once (an ACCESS EXCLUSIVE lock for the time it takes: changes are at most
-- CHANGE_RETENTION_DAYS old).
ALTER TABLE changes ALTER COLUMN body TYPE json USING body::json;
