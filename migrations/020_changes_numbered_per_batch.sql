-- Contract section 13.1's numbering, taken once per account and statement rather than once per change. Migration
-- 017's row trigger ran a PL/pgSQL upsert of the account's counter for every change, and 019's lookup of waiting
-- feeds with it: a batch of 16 withdrawals of one account updated its counter row 16 times (16 row versions in the
-- WAL) and looked up change_listeners 16 times. Measured on PostgreSQL at 16 connections (docs/BENCHMARKS.md, issue
-- 44): the database spent 335 us of CPU a withdrawal against 189 without changes, and wrote 1,500 bytes of WAL
-- against 600.
--
-- take_change_numbers(accounts) takes as many numbers as the array names each account (one entry a change), in one
-- upsert of each account's counter, in byte order (COLLATE "C", the order of every lock a batch takes), and answers
-- each account's last number taken: the statement that inserts the changes numbers them up to it, in its own order
-- (src/store/postgres/table-statements.ts). The counter row stays locked until COMMIT, as with 017's trigger, so an
-- account's numbers still commit in order without a gap. It sends 019's NOTIFY once for each account some instance
-- is waiting for.
-- PL/pgSQL, not SQL: a session keeps a PL/pgSQL function's plans, where PostgreSQL 15 plans a SQL function's
-- statements again at every call of a prepared statement.
CREATE FUNCTION take_change_numbers(accounts text[]) RETURNS TABLE (source_id text, last_seq bigint)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_notify('receiver_changes', l.source_id)
     FROM change_listeners AS l
    WHERE l.source_id = ANY (accounts) AND l.until > now();
  RETURN QUERY
  INSERT INTO change_counters AS c (source_id, last_seq)
  SELECT a.source_id, count(*) FROM unnest(accounts) AS a (source_id) GROUP BY a.source_id ORDER BY a.source_id COLLATE "C"
  ON CONFLICT ON CONSTRAINT change_counters_pkey DO UPDATE SET last_seq = c.last_seq + EXCLUDED.last_seq
  RETURNING c.source_id, c.last_seq;
END
$$;

-- Every change is now inserted with its number (a change without one is refused: seq is NOT NULL).
DROP TRIGGER changes_numbered ON changes;
DROP FUNCTION number_change();
