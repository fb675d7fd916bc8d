-- Contract section 13.2: a feed request that waits is woken when a change of its account commits on any instance
-- sharing the database. Each instance registers the accounts it has waiting requests for in change_listeners (and
-- refreshes them while they wait); the numbering trigger sends NOTIFY receiver_changes, the account as the payload,
-- for a change of a registered account only. PostgreSQL delivers it at COMMIT, and never for a transaction that rolls
-- back, to every session that LISTENs (each instance's one LISTEN session, src/store/postgres/notifications.ts).
-- Only for registered accounts, because a transaction that notifies takes a database-wide lock at COMMIT until its
-- commit is flushed: transactions that notify commit one after another. Measured with pgbench (2026-11-27, a shared
-- 2-core machine, medians of 3 interleaved rounds): transactions of one change from 8 clients went from 1,560 a
-- second to 780 when every change notified, batches of 16 changes from 4 clients from 372 to 319; with no account
-- registered, the lookup below cost nothing the rounds could tell (2,120 and 399).
-- Unlogged: it is what live instances say now, and they say it again within 30 s.
CREATE UNLOGGED TABLE change_listeners (
  source_id text NOT NULL,
  -- One instance (a store opened by one process), so that each renews and lets lapse its own.
  instance text NOT NULL,
  until timestamptz NOT NULL,
  PRIMARY KEY (source_id, instance)
);

CREATE OR REPLACE FUNCTION number_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO change_counters AS c (source_id, last_seq) VALUES (NEW.source_id, 1)
  ON CONFLICT (source_id) DO UPDATE SET last_seq = c.last_seq + 1
  RETURNING c.last_seq INTO NEW.seq;
  -- Notifications of one transaction with the same payload are sent once: a batch of one account notifies once.
  IF EXISTS (SELECT 1 FROM change_listeners WHERE source_id = NEW.source_id AND until > now()) THEN
    PERFORM pg_notify('receiver_changes', NEW.source_id);
  END IF;
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
