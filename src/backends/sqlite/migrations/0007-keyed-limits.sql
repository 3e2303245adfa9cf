-- 0007-keyed-limits: items may carry a concurrency_key; a limit per key caps how many of its items are in
-- flight at once (max_in_flight) and how many claims of them start per window (rate_count per
-- rate_period_ms). A claim reads and updates these rows in its own BEGIN IMMEDIATE transaction, so a limit
-- holds under any number of writers. A key without a row is unlimited, and so is an item without a key.
-- The rate is a fixed window per key: it opens at the first claim after the previous one closed
-- (window_start) and counts the claims started in it (window_count); both are written by claims only.

ALTER TABLE work_items ADD COLUMN concurrency_key TEXT;

-- A limited key's claimable items in claim order, and its items in flight (counted at each claim).
-- Partial: items without a key, most of them, never enter either index.
CREATE INDEX work_items_keyed_ready ON work_items (concurrency_key, priority DESC, created_at, id)
  WHERE status = 'pending' AND concurrency_key IS NOT NULL;
CREATE INDEX work_items_keyed_in_flight ON work_items (concurrency_key)
  WHERE status = 'in_flight' AND concurrency_key IS NOT NULL;

CREATE TABLE work_limits (
  key            TEXT PRIMARY KEY,
  max_in_flight  INTEGER CHECK (max_in_flight >= 1),
  rate_count     INTEGER CHECK (rate_count >= 1),
  rate_period_ms INTEGER CHECK (rate_period_ms >= 1),
  window_start   INTEGER NOT NULL DEFAULT 0,
  window_count   INTEGER NOT NULL DEFAULT 0,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL,
  CHECK ((rate_count IS NULL) = (rate_period_ms IS NULL)),
  CHECK (max_in_flight IS NOT NULL OR rate_count IS NOT NULL)
) WITHOUT ROWID;
