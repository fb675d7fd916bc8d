-- Contract section 13.1: every applied request records one change in the same transaction as what it applied,
-- numbered per account 1, 2, 3 ... without gaps, in commit order. The number is taken from the account's counter
-- row, updated (and so locked until COMMIT) as the change is inserted: a later transaction of the same account
-- waits for the earlier one's COMMIT or ROLLBACK before it takes the next number, so numbers commit in order, and
-- a transaction that rolls back takes its numbers back with it (Message DB's technique, docs/POSTGRESQL.md).
-- Other accounts' counters are other rows: accounts never wait on each other for a number.
CREATE TABLE change_counters (
  source_id text PRIMARY KEY,
  last_seq bigint NOT NULL CHECK (last_seq > 0)
);

CREATE TABLE changes (
  source_id text NOT NULL,
  seq bigint NOT NULL CHECK (seq > 0),
  change_id text NOT NULL,
  type text NOT NULL,
  created_at timestamptz NOT NULL,
  body jsonb NOT NULL,
  PRIMARY KEY (source_id, seq)
);
-- The retention sweep deletes by age.
CREATE INDEX changes_created_at ON changes (created_at);

CREATE FUNCTION number_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO change_counters AS c (source_id, last_seq) VALUES (NEW.source_id, 1)
  ON CONFLICT (source_id) DO UPDATE SET last_seq = c.last_seq + 1
  RETURNING c.last_seq INTO NEW.seq;
  RETURN NEW;
END
$$;

CREATE TRIGGER changes_numbered BEFORE INSERT ON changes FOR EACH ROW EXECUTE FUNCTION number_change();
