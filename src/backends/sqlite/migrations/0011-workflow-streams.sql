-- 0011-workflow-streams: the byte streams of a Workflow SDK World (src/workflow-world/streams.ts). A stream is
-- named (names are global in the SDK; run_id only says which run it belongs to, for listing) and holds chunks
-- at a dense 0-based chunk_index, allocated in the writer's BEGIN IMMEDIATE transaction as one past the
-- stream's last row, so concurrent writers never collide or leave a gap. A close is one more row, eof = 1,
-- with no data, after the last chunk: nothing is written after it. No foreign key to anything: the SDK's
-- health check writes streams of runs that do not exist. Numbered 0011 on both backends (PostgreSQL's last
-- was 0010), so the one migration has one name; SQLite has no 0009 or 0010.

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

-- A run's streams: every stream has exactly one row at chunk_index 0 (its first chunk, or the close of a
-- stream closed empty), so this partial index holds one entry per stream, not one per chunk.
CREATE INDEX workflow_stream_chunks_run ON workflow_stream_chunks (run_id, name) WHERE chunk_index = 0;
