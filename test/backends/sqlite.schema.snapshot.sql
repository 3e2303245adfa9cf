CREATE UNIQUE INDEX document_history_version ON document_history (kind, id, version) WHERE noop = 0;

CREATE UNIQUE INDEX document_history_write ON document_history (kind, id, write_id) WHERE write_id IS NOT NULL;

CREATE INDEX events_time ON events (created_at);

CREATE INDEX events_type ON events (type, position);

CREATE INDEX events_work_item ON events (work_item_id, position) WHERE work_item_id IS NOT NULL;

CREATE INDEX events_workflow_correlation ON events (correlation_id, position) WHERE type = 'workflow_event';

CREATE INDEX work_items_cascaded ON work_items (cascaded_from) WHERE cascaded_from IS NOT NULL;

CREATE INDEX work_items_ended ON work_items (status, id) WHERE status IN ('failed', 'cancelled');

CREATE INDEX work_items_keyed_in_flight ON work_items (concurrency_key)
  WHERE status = 'in_flight' AND concurrency_key IS NOT NULL;

CREATE INDEX work_items_keyed_ready ON work_items (concurrency_key, priority DESC, created_at, id)
  WHERE status = 'pending' AND concurrency_key IS NOT NULL;

CREATE INDEX work_items_leases ON work_items (lease_expires_at) WHERE status = 'in_flight';

CREATE INDEX work_items_ready ON work_items (priority DESC, created_at, id) WHERE status = 'pending';

CREATE INDEX work_items_status ON work_items (status, updated_at);

CREATE INDEX workflow_hooks_created ON workflow_hooks (created_at, hook_id);

CREATE INDEX workflow_hooks_run ON workflow_hooks (run_id, created_at, hook_id);

CREATE INDEX workflow_runs_created ON workflow_runs (created_at, run_id);

CREATE INDEX workflow_runs_name ON workflow_runs (workflow_name, created_at, run_id);

CREATE INDEX workflow_runs_status ON workflow_runs (status, created_at, run_id);

CREATE INDEX workflow_steps_run ON workflow_steps (run_id, created_at, step_id);

CREATE INDEX workflow_stream_chunks_run ON workflow_stream_chunks (run_id, name) WHERE chunk_index = 0;

CREATE TABLE document_history (
  kind           TEXT NOT NULL,
  id             TEXT NOT NULL,
  seq            INTEGER NOT NULL,
  version        INTEGER NOT NULL,
  parent_version INTEGER NOT NULL,
  noop           INTEGER NOT NULL DEFAULT 0 CHECK (noop IN (0, 1)),
  body           TEXT,
  content_hash   TEXT NOT NULL,
  actor          TEXT NOT NULL,
  actor_kind     TEXT NOT NULL CHECK (actor_kind IN ('human', 'model', 'tool', 'system')),
  provenance     TEXT,
  write_id       TEXT,
  request_hash   TEXT NOT NULL,
  reason         TEXT,
  override       TEXT,
  created_at     INTEGER NOT NULL,
  PRIMARY KEY (kind, id, seq)
) WITHOUT ROWID;

CREATE TABLE documents (
  kind         TEXT NOT NULL,
  id           TEXT NOT NULL,
  version      INTEGER NOT NULL CHECK (version >= 1),
  body         TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  forked_from  TEXT,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL,
  PRIMARY KEY (kind, id)
) WITHOUT ROWID;

CREATE TABLE event_items (
  work_item_id TEXT NOT NULL,
  position     INTEGER NOT NULL,
  PRIMARY KEY (work_item_id, position)
) WITHOUT ROWID;

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

CREATE TABLE work_item_blockers (
  blocker TEXT NOT NULL,
  item    TEXT NOT NULL,
  PRIMARY KEY (blocker, item)
) WITHOUT ROWID;

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
  resolved_at      INTEGER, on_blocker_failure TEXT NOT NULL DEFAULT 'wait'
  CHECK (on_blocker_failure IN ('wait', 'cascade')), cascaded_from TEXT, concurrency_key TEXT, traceparent TEXT,
  CHECK ((status = 'in_flight') = (lease_expires_at IS NOT NULL))
);

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

CREATE TABLE workflow_hooks (
  hook_id    TEXT PRIMARY KEY,
  run_id     TEXT NOT NULL,
  token      TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL,
  body       TEXT NOT NULL
);

CREATE TABLE workflow_runs (
  run_id        TEXT PRIMARY KEY,
  workflow_name TEXT NOT NULL,
  status        TEXT NOT NULL,
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  body          TEXT NOT NULL
);

CREATE TABLE workflow_steps (
  run_id     TEXT NOT NULL,
  step_id    TEXT NOT NULL,
  status     TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  body       TEXT NOT NULL,
  PRIMARY KEY (run_id, step_id)
);

CREATE TABLE workflow_stream_chunks (
  name        TEXT NOT NULL,
  chunk_index INTEGER NOT NULL CHECK (chunk_index >= 0),
  run_id      TEXT NOT NULL,
  data        BLOB NOT NULL,
  eof         INTEGER NOT NULL DEFAULT 0 CHECK (eof IN (0, 1)),
  created_at  INTEGER NOT NULL,
  PRIMARY KEY (name, chunk_index),
  CHECK (eof = 0 OR length(data) = 0)
);

CREATE TABLE workflow_waits (
  run_id         TEXT NOT NULL,
  correlation_id TEXT NOT NULL,
  status         TEXT NOT NULL,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL,
  body           TEXT NOT NULL,
  PRIMARY KEY (run_id, correlation_id)
);

CREATE TRIGGER document_history_no_replace BEFORE INSERT ON document_history
WHEN EXISTS (SELECT 1 FROM document_history WHERE kind = NEW.kind AND id = NEW.id AND seq = NEW.seq)
  OR (NEW.noop = 0 AND EXISTS (SELECT 1 FROM document_history
        WHERE kind = NEW.kind AND id = NEW.id AND version = NEW.version AND noop = 0))
  OR (NEW.write_id IS NOT NULL AND EXISTS (SELECT 1 FROM document_history
        WHERE kind = NEW.kind AND id = NEW.id AND write_id = NEW.write_id))
BEGIN
  SELECT RAISE(ABORT, 'document history is immutable: an insert may not replace a stored entry');
END;

CREATE TRIGGER document_history_no_update BEFORE UPDATE ON document_history
BEGIN
  SELECT RAISE(ABORT, 'document history is immutable: UPDATE is not allowed');
END;

CREATE TRIGGER event_items_no_delete BEFORE DELETE ON event_items
BEGIN
  SELECT RAISE(ABORT, 'event_items are append-only: DELETE is not allowed');
END;

CREATE TRIGGER event_items_no_update BEFORE UPDATE ON event_items
BEGIN
  SELECT RAISE(ABORT, 'event_items are append-only: UPDATE is not allowed');
END;

CREATE TRIGGER events_batch_items AFTER INSERT ON events
WHEN NEW.type IN ('work_items_enqueued', 'work_items_claimed', 'work_items_resolved', 'work_items_reclaimed')
  AND NEW.work_item_id IS NULL
BEGIN
  INSERT OR IGNORE INTO event_items (work_item_id, position)
  SELECT json_extract(i.value, '$.id'), NEW.position FROM json_each(NEW.data, '$.items') AS i
  WHERE json_type(i.value, '$.id') = 'text';
END;

CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN
  SELECT RAISE(ABORT, 'events are append-only: DELETE is not allowed');
END;

CREATE TRIGGER events_no_replace BEFORE INSERT ON events
WHEN EXISTS (SELECT 1 FROM events WHERE position = NEW.position)
  OR EXISTS (SELECT 1 FROM events WHERE stream = NEW.stream AND stream_seq = NEW.stream_seq)
BEGIN
  SELECT RAISE(ABORT, 'events are append-only: an insert may not replace a stored event');
END;

CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN
  SELECT RAISE(ABORT, 'events are append-only: UPDATE is not allowed');
END;

CREATE TRIGGER work_items_blockers AFTER INSERT ON work_items
WHEN NEW.blocked_by <> '[]'
BEGIN
  INSERT OR IGNORE INTO work_item_blockers (blocker, item)
  SELECT b.value, NEW.id FROM json_each(NEW.blocked_by) AS b;
END;

