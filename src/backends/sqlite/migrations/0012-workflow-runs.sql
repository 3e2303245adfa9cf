-- 0012-workflow-runs: the entities of a Workflow SDK World (src/workflow-world/storage.ts): its runs, their
-- steps, live hooks and waits. Each row keeps the columns its reads filter and order by, and `body`, the
-- whole entity as the World's codec writes it (tagged JSON: bytes, NUL bytes among them, as base64; dates as
-- ISO-8601), which is what a read returns. The World's events are not here: they are events of the hash
-- chain, type 'workflow_event', on the stream 'wf_run:<runId>' (their id is the stream_seq), found by
-- correlation id through events_workflow_correlation. Every row is written by events.create, in the
-- BEGIN IMMEDIATE transaction that appends its events. Numbered 0012 on both backends.

CREATE TABLE workflow_runs (
  run_id        TEXT PRIMARY KEY,
  workflow_name TEXT NOT NULL,
  status        TEXT NOT NULL,
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  body          TEXT NOT NULL
);

-- runs.list: all, by workflow name, by status, each in (created_at, run_id) keyset order.
CREATE INDEX workflow_runs_created ON workflow_runs (created_at, run_id);
CREATE INDEX workflow_runs_name ON workflow_runs (workflow_name, created_at, run_id);
CREATE INDEX workflow_runs_status ON workflow_runs (status, created_at, run_id);

CREATE TABLE workflow_steps (
  run_id     TEXT NOT NULL,
  step_id    TEXT NOT NULL,
  status     TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  body       TEXT NOT NULL,
  PRIMARY KEY (run_id, step_id)
);

-- steps.list: a run's steps in (created_at, step_id) keyset order.
CREATE INDEX workflow_steps_run ON workflow_steps (run_id, created_at, step_id);

-- Live hooks only: hook_disposed, and the end of the hook's run, delete the row, which frees its token.
CREATE TABLE workflow_hooks (
  hook_id    TEXT PRIMARY KEY,
  run_id     TEXT NOT NULL,
  token      TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL,
  body       TEXT NOT NULL
);

-- hooks.list: all, or a run's (and the end of a run deletes these), in (created_at, hook_id) keyset order.
CREATE INDEX workflow_hooks_created ON workflow_hooks (created_at, hook_id);
CREATE INDEX workflow_hooks_run ON workflow_hooks (run_id, created_at, hook_id);

-- Until their run ends (its end deletes them).
CREATE TABLE workflow_waits (
  run_id         TEXT NOT NULL,
  correlation_id TEXT NOT NULL,
  status         TEXT NOT NULL,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL,
  body           TEXT NOT NULL,
  PRIMARY KEY (run_id, correlation_id)
);

-- events.listByCorrelationId across runs, and a run's correlated events (attr_set) by correlation id.
CREATE INDEX events_workflow_correlation ON events (correlation_id, position) WHERE type = 'workflow_event';
