-- Accounts, their destinations, tokens with their withdrawal ledger, bookings
-- and booking idempotency keys. Money is integer minor units (cents).

CREATE TABLE accounts (
  source_id       text PRIMARY KEY,
  -- SHA-256 of the keys: the store never holds a key in plain text.
  public_key_hash bytea NOT NULL CHECK (length(public_key_hash) = 32),
  secret_key_hash bytea NOT NULL CHECK (length(secret_key_hash) = 32)
);

CREATE TABLE destinations (
  source_id      text NOT NULL REFERENCES accounts (source_id),
  destination_id text NOT NULL,
  PRIMARY KEY (source_id, destination_id)
);

CREATE TABLE tokens (
  token_id       text PRIMARY KEY CHECK (token_id ~ '^[1-9][0-9]{0,31}$'),
  source_id      text NOT NULL,
  destination_id text NOT NULL,
  status         text NOT NULL CHECK (status IN ('active', 'freezed', 'disputed', 'deleted')),
  balance        bigint NOT NULL CHECK (balance >= 0),
  FOREIGN KEY (source_id, destination_id) REFERENCES destinations (source_id, destination_id)
);

-- The ledger. transaction_id is 20 digits, too long for bigint, so text with a check.
CREATE TABLE withdrawals (
  transaction_id text PRIMARY KEY CHECK (transaction_id ~ '^[0-9]{20}$'),
  source_id      text NOT NULL,
  destination_id text NOT NULL,
  token_id       text NOT NULL REFERENCES tokens (token_id),
  amount         bigint NOT NULL CHECK (amount > 0),
  token_balance  bigint NOT NULL CHECK (token_balance >= 0),
  created_at     timestamptz NOT NULL
);
CREATE INDEX withdrawals_by_token ON withdrawals (token_id, created_at);

CREATE TABLE bookings (
  source_id  text NOT NULL REFERENCES accounts (source_id),
  booking_id text NOT NULL,
  fields     jsonb NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (source_id, booking_id)
);

CREATE TABLE booking_changes (
  source_id   text NOT NULL,
  key         text NOT NULL,
  fingerprint text NOT NULL,
  result      jsonb NOT NULL,
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (source_id, key)
);
CREATE INDEX booking_changes_by_age ON booking_changes (created_at);
