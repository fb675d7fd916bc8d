-- Contract section 11: while the database cannot write (disk full: SQLSTATE class 53), /readyz answers 503. Reads
-- still answer then, so readiness tries a write: this table truncated and given a row inside a transaction that is
-- rolled back, which needs a new page of the disk the data lives on and leaves nothing behind.
CREATE TABLE write_probe (checked_at timestamptz NOT NULL);
