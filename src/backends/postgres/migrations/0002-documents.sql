-- 0002-documents: versioned documents (instance, kind, id) -> version, body, and every version's history.

CREATE TABLE documents (
  instance     text NOT NULL,
  kind         text NOT NULL,
  id           text NOT NULL,
  version      integer NOT NULL CHECK (version >= 1),
  body         jsonb NOT NULL,
  content_hash text NOT NULL,
  forked_from  jsonb,
  -- seq of the newest history entry; bumped by the same conditional statement as the version, so
  -- concurrent commits (no-ops included) never pick the same seq.
  last_seq     integer NOT NULL,
  created_at   bigint NOT NULL,
  updated_at   bigint NOT NULL,
  PRIMARY KEY (instance, kind, id)
);

-- One row per commit, including explicit no-ops (noop = true, version unchanged). Retention may delete
-- old rows but never the latest version.
CREATE TABLE document_history (
  instance       text NOT NULL,
  kind           text NOT NULL,
  id             text NOT NULL,
  seq            integer NOT NULL,
  version        integer NOT NULL,
  parent_version integer NOT NULL,
  noop           boolean NOT NULL DEFAULT false,
  body           jsonb,
  content_hash   text NOT NULL,
  actor          text NOT NULL,
  actor_kind     text NOT NULL CHECK (actor_kind IN ('human', 'model', 'tool', 'system')),
  provenance     jsonb,
  write_id       text,
  request_hash   text NOT NULL,
  reason         text,
  override       jsonb,
  created_at     bigint NOT NULL,
  PRIMARY KEY (instance, kind, id, seq)
);

-- The backstops: one history row per version, one per write id.
CREATE UNIQUE INDEX document_history_version ON document_history (instance, kind, id, version) WHERE NOT noop;
CREATE UNIQUE INDEX document_history_write ON document_history (instance, kind, id, write_id)
  WHERE write_id IS NOT NULL;

CREATE TRIGGER document_history_no_update BEFORE UPDATE ON document_history
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_change('document history is immutable: UPDATE');
