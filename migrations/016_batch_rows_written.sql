-- A batch's writes check their row counts in the statement that makes them, before its COMMIT in the same round
-- trip (src/store/postgres/statements.ts, checkedWrites): a save that matched no row fails the transaction
-- instead of vanishing as an UPDATE of 0 rows.
CREATE FUNCTION batch_rows_written(meant bigint[], written bigint[]) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  IF meant IS DISTINCT FROM written THEN
    RAISE EXCEPTION 'a batch wrote % rows where it meant %', written, meant USING ERRCODE = 'assert_failure';
  END IF;
  RETURN true;
END
$$;
