-- Contract section 11: an account holds at most MAX_TOKENS_PER_ACCOUNT tokens and MAX_BOOKINGS_PER_ACCOUNT
-- bookings. Counted here, in the unit that creates them, rather than by count(*) on every create: the row is
-- locked by the create that checks it, so concurrent creates of one account count one after the other.
CREATE TABLE account_holdings (
  source_id text PRIMARY KEY REFERENCES accounts (source_id),
  tokens    bigint NOT NULL DEFAULT 0 CHECK (tokens >= 0),
  bookings  bigint NOT NULL DEFAULT 0 CHECK (bookings >= 0)
);
INSERT INTO account_holdings (source_id, tokens, bookings)
SELECT a.source_id,
       (SELECT count(*) FROM tokens t WHERE t.source_id = a.source_id),
       (SELECT count(*) FROM bookings b WHERE b.source_id = a.source_id)
  FROM accounts a;
