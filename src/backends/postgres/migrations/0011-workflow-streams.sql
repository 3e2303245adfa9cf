-- 0011-workflow-streams: the byte streams of a Workflow SDK World (src/workflow-world/streams.ts), per
-- instance. A stream is named (names are global in the SDK; run_id only says which run it belongs to, for
-- listing) and holds chunks at a dense 0-based chunk_index. A writer first takes a transaction-level advisory
-- lock on the stream (its schema, instance and name, hashed), then, in a later statement whose snapshot sees
-- every write committed before the lock was granted, inserts at one past the stream's last row: concurrent
-- writers never collide or leave a gap. A close is one more row, eof = true, with no data, after the last
-- chunk: nothing is written after it. No foreign key to anything: the SDK's health check writes streams of
-- runs that do not exist. Names compare byte by byte (COLLATE "C"), as SQLite's do, so a run's streams are
-- listed in the same order on both backends. Numbered 0011 on both backends, so the one migration has one name.

CREATE TABLE workflow_stream_chunks (
  instance    text NOT NULL,
  name        text COLLATE "C" NOT NULL,
  chunk_index integer NOT NULL CHECK (chunk_index >= 0),
  run_id      text COLLATE "C" NOT NULL,
  data        bytea NOT NULL,
  eof         boolean NOT NULL DEFAULT false,
  created_at  bigint NOT NULL,
  PRIMARY KEY (instance, name, chunk_index),
  CHECK (NOT eof OR octet_length(data) = 0)
);

-- A run's streams: every stream has exactly one row at chunk_index 0 (its first chunk, or the close of a
-- stream closed empty), so this partial index holds one entry per stream, not one per chunk.
CREATE INDEX workflow_stream_chunks_run ON workflow_stream_chunks (instance, run_id, name) WHERE chunk_index = 0;
