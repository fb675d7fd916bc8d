-- Contract section 11: an account change holds on every instance within 10 seconds, and an account removed from
-- the seed file is disabled, its tokens, bookings and ledger kept. Putting it back in the file enables it again.
ALTER TABLE accounts ADD COLUMN enabled boolean NOT NULL DEFAULT true;

-- Every instance LISTENs on this channel and reads the accounts again when told: a key rotated or an account
-- removed by one instance's seed is in force on the others at once, not at their next periodic read.
CREATE FUNCTION notify_account_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('receiver_accounts', '');
  RETURN NULL;
END
$$;
CREATE TRIGGER accounts_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON accounts
  FOR EACH STATEMENT EXECUTE FUNCTION notify_account_change();
CREATE TRIGGER destinations_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON destinations
  FOR EACH STATEMENT EXECUTE FUNCTION notify_account_change();
