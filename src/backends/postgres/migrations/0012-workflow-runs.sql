-- 0012-workflow-runs: the entities of a Workflow SDK World (src/workflow-world/storage.ts), per instance:
-- its runs, their steps, live hooks and waits. Each row keeps the columns its reads filter and order by,
-- and `body`, the whole entity as the World's codec writes it (tagged JSON text: bytes, NUL bytes among
-- them, as base64; dates as ISO-8601), which is what a read returns. The World's events are not here: they
-- are events of the hash chain, type 'workflow_event', on the stream 'wf_run:<runId>' (their id is the
-- stream_seq), found by correlation id through events_workflow_correlation. Every row is written by
-- events.create, in one transaction holding the run's advisory lock, whose last statement appends its
-- events. Ids compare byte by byte (COLLATE "C"), as SQLite's do, so keyset pages are the same on both
-- backends. Numbered 0012 on both backends.

CREATE TABLE workflow_runs (
  instance      text NOT NULL,
  run_id        text COLLATE "C" NOT NULL,
  workflow_name text COLLATE "C" NOT NULL,
  status        text NOT NULL,
  created_at    bigint NOT NULL,
  updated_at    bigint NOT NULL,
  body          text NOT NULL,
  PRIMARY KEY (instance, run_id)
);

-- runs.list: all, by workflow name, by status, each in (created_at, run_id) keyset order.
CREATE INDEX workflow_runs_created ON workflow_runs (instance, created_at, run_id);
CREATE INDEX workflow_runs_name ON workflow_runs (instance, workflow_name, created_at, run_id);
CREATE INDEX workflow_runs_status ON workflow_runs (instance, status, created_at, run_id);

CREATE TABLE workflow_steps (
  instance   text NOT NULL,
  run_id     text COLLATE "C" NOT NULL,
  step_id    text COLLATE "C" NOT NULL,
  status     text NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  body       text NOT NULL,
  PRIMARY KEY (instance, run_id, step_id)
);

-- steps.list: a run's steps in (created_at, step_id) keyset order.
CREATE INDEX workflow_steps_run ON workflow_steps (instance, run_id, created_at, step_id);

-- Live hooks only: hook_disposed, and the end of the hook's run, delete the row, which frees its token.
CREATE TABLE workflow_hooks (
  instance   text NOT NULL,
  hook_id    text COLLATE "C" NOT NULL,
  run_id     text COLLATE "C" NOT NULL,
  token      text COLLATE "C" NOT NULL,
  created_at bigint NOT NULL,
  body       text NOT NULL,
  PRIMARY KEY (instance, hook_id),
  UNIQUE (instance, token)
);

-- hooks.list: all, or a run's (and the end of a run deletes these), in (created_at, hook_id) keyset order.
CREATE INDEX workflow_hooks_created ON workflow_hooks (instance, created_at, hook_id);
CREATE INDEX workflow_hooks_run ON workflow_hooks (instance, run_id, created_at, hook_id);

-- Until their run ends (its end deletes them).
CREATE TABLE workflow_waits (
  instance       text NOT NULL,
  run_id         text COLLATE "C" NOT NULL,
  correlation_id text COLLATE "C" NOT NULL,
  status         text NOT NULL,
  created_at     bigint NOT NULL,
  updated_at     bigint NOT NULL,
  body           text NOT NULL,
  PRIMARY KEY (instance, run_id, correlation_id)
);

-- events.listByCorrelationId across runs, and a run's correlated events (attr_set) by correlation id.
CREATE INDEX events_workflow_correlation ON events (instance, correlation_id, position) WHERE type = 'workflow_event';
