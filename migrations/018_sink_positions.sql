-- Contract section 13.3 (and 13.4's relay): what each sink (a webhook endpoint, the NATS relay) has been handed, kept
-- as positions, not copies: changes stay in `changes`, and a sink's state says how far along them it is per account.
-- (Not `deliveries`: that table keeps the signed notifications that come IN.)

-- One row per sink ever configured; kept when the seed drops it (its positions resume if it comes back).
CREATE TABLE sink_states (
  sink_id text PRIMARY KEY,
  enabled boolean NOT NULL DEFAULT true,
  -- Why it was disabled (a change that failed every step, a 410); null while enabled.
  reason text,
  disabled_at timestamptz,
  -- Bumped by every change made outside the sender (enable, replay) and by a disable: a sender that loaded an older
  -- generation writes nothing more and reloads.
  generation bigint NOT NULL DEFAULT 1,
  -- The one instance sending to this sink, until lease_until (docs/POSTGRESQL.md, "Handing changes on").
  lease_owner text,
  lease_until timestamptz NOT NULL DEFAULT '-infinity',
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Every change of the account with seq <= position is done for the sink: delivered, or not one it takes. An account
-- without a row had no change when the sink was created (those that had got a row at their last seq): position 0.
CREATE TABLE sink_positions (
  sink_id text NOT NULL REFERENCES sink_states ON DELETE CASCADE,
  source_id text NOT NULL,
  position bigint NOT NULL CHECK (position >= 0),
  PRIMARY KEY (sink_id, source_id)
);

-- The window above a position that cannot be told from the changes themselves: a change delivered while an earlier one
-- is not (another token went ahead), and a change being retried (its steps used, when next, the last error). Rows at
-- or below the position are deleted as it passes them; a change waiting for an earlier one of its key has no row.
CREATE TABLE sink_window (
  sink_id text NOT NULL REFERENCES sink_states ON DELETE CASCADE,
  source_id text NOT NULL,
  seq bigint NOT NULL CHECK (seq > 0),
  delivered boolean NOT NULL,
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_attempt_at timestamptz,
  last_error text,
  PRIMARY KEY (sink_id, source_id, seq)
);

-- One row per attempt, for ops (GET /admin/endpoints/{id}/attempts); the sender keeps the newest 1,000 per sink.
CREATE TABLE sink_attempts (
  attempt_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  sink_id text NOT NULL REFERENCES sink_states ON DELETE CASCADE,
  source_id text NOT NULL,
  seq bigint NOT NULL,
  change_id text NOT NULL,
  attempt integer NOT NULL CHECK (attempt > 0),
  result text NOT NULL CHECK (result IN ('delivered', 'failed', 'gone')),
  status integer,
  error text,
  duration_ms integer NOT NULL CHECK (duration_ms >= 0),
  attempted_at timestamptz NOT NULL
);
CREATE INDEX sink_attempts_newest ON sink_attempts (sink_id, attempt_id DESC);
