CREATE INDEX events_time ON events (created_at);

CREATE INDEX events_type ON events (type, position);

CREATE INDEX events_work_item ON events (work_item_id, position) WHERE work_item_id IS NOT NULL;

CREATE INDEX work_items_leases ON work_items (lease_expires_at) WHERE status = 'in_flight';

CREATE INDEX work_items_ready ON work_items (priority DESC, created_at, id) WHERE status = 'pending';

CREATE INDEX work_items_status ON work_items (status, updated_at);

CREATE TABLE events (
  position       INTEGER PRIMARY KEY,
  stream         TEXT NOT NULL,
  stream_seq     INTEGER NOT NULL,
  type           TEXT NOT NULL,
  data           TEXT NOT NULL DEFAULT 'null',
  actor          TEXT,
  correlation_id TEXT,
  causation_id   TEXT,
  work_item_id   TEXT,
  created_at     INTEGER NOT NULL,
  prev_hash      TEXT NOT NULL,
  hash           TEXT NOT NULL,
  UNIQUE (stream, stream_seq)
);

CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL);

CREATE TABLE work_items (
  id               TEXT PRIMARY KEY,
  title            TEXT NOT NULL,
  kind             TEXT,
  status           TEXT NOT NULL DEFAULT 'pending'
                   CHECK (status IN ('pending', 'in_flight', 'waiting_human', 'done', 'failed', 'cancelled')),
  priority         INTEGER NOT NULL DEFAULT 0,
  payload          TEXT NOT NULL DEFAULT 'null',
  notes            TEXT NOT NULL DEFAULT '{}',
  result           TEXT NOT NULL DEFAULT 'null',
  error            TEXT,
  attempts         INTEGER NOT NULL DEFAULT 0,
  max_attempts     INTEGER NOT NULL DEFAULT 3 CHECK (max_attempts >= 1),
  lease_owner      TEXT,
  lease_expires_at INTEGER,
  claimed_at       INTEGER,
  blocked_by       TEXT NOT NULL DEFAULT '[]',
  not_before       INTEGER,
  idempotency_key  TEXT UNIQUE,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  resolved_at      INTEGER,
  CHECK ((status = 'in_flight') = (lease_expires_at IS NOT NULL))
);

CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN
  SELECT RAISE(ABORT, 'events are append-only: DELETE is not allowed');
END;

CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN
  SELECT RAISE(ABORT, 'events are append-only: UPDATE is not allowed');
END;

