-- 0002-documents: versioned documents (kind, id) -> version, body, and every version's history.

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

-- One row per commit, including explicit no-ops (noop = 1, version unchanged). Retention may delete
-- old rows but never the latest version.
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

-- The backstops: one history row per version, one per write id.
CREATE UNIQUE INDEX document_history_version ON document_history (kind, id, version) WHERE noop = 0;
CREATE UNIQUE INDEX document_history_write ON document_history (kind, id, write_id) WHERE write_id IS NOT NULL;

CREATE TRIGGER document_history_no_update BEFORE UPDATE ON document_history
BEGIN
  SELECT RAISE(ABORT, 'document history is immutable: UPDATE is not allowed');
END;
