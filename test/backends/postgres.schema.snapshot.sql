CREATE TABLE document_history (
  instance text NOT NULL,
  kind text NOT NULL,
  id text NOT NULL,
  seq integer NOT NULL,
  version integer NOT NULL,
  parent_version integer NOT NULL,
  noop boolean NOT NULL DEFAULT false,
  body jsonb,
  content_hash text NOT NULL,
  actor text NOT NULL,
  actor_kind text NOT NULL,
  provenance jsonb,
  write_id text,
  request_hash text NOT NULL,
  reason text,
  override jsonb,
  created_at bigint NOT NULL
);

CREATE TABLE documents (
  instance text NOT NULL,
  kind text NOT NULL,
  id text NOT NULL,
  version integer NOT NULL,
  body jsonb NOT NULL,
  content_hash text NOT NULL,
  forked_from jsonb,
  last_seq integer NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);

CREATE TABLE event_heads (
  instance text NOT NULL,
  position bigint NOT NULL,
  hash text NOT NULL
);

CREATE TABLE event_streams (
  instance text NOT NULL,
  stream text NOT NULL,
  seq bigint NOT NULL
);

CREATE TABLE events (
  instance text NOT NULL,
  position bigint NOT NULL,
  stream text NOT NULL,
  stream_seq bigint NOT NULL,
  type text NOT NULL,
  data json NOT NULL DEFAULT 'null'::json,
  actor text,
  correlation_id text,
  causation_id text,
  work_item_id text,
  created_at bigint NOT NULL,
  prev_hash text NOT NULL,
  hash text NOT NULL
);

CREATE TABLE schema_migrations (
  name text NOT NULL,
  applied_at bigint NOT NULL
);

CREATE TABLE work_item_blockers (
  instance text NOT NULL,
  blocker text NOT NULL,
  item text NOT NULL
);

CREATE TABLE work_items (
  instance text NOT NULL,
  id text NOT NULL,
  title text NOT NULL,
  kind text,
  status text NOT NULL DEFAULT 'pending'::text,
  priority integer NOT NULL DEFAULT 0,
  payload jsonb NOT NULL DEFAULT 'null'::jsonb,
  notes jsonb NOT NULL DEFAULT '{}'::jsonb,
  result jsonb NOT NULL DEFAULT 'null'::jsonb,
  error text,
  attempts integer NOT NULL DEFAULT 0,
  max_attempts integer NOT NULL DEFAULT 3,
  lease_owner text,
  lease_expires_at bigint,
  claimed_at bigint,
  blocked_by text[] NOT NULL DEFAULT '{}'::text[],
  not_before bigint,
  idempotency_key text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  resolved_at bigint,
  on_blocker_failure text NOT NULL DEFAULT 'wait'::text,
  cascaded_from text,
  concurrency_key text,
  traceparent text
);

CREATE TABLE work_limits (
  instance text NOT NULL,
  key text NOT NULL,
  max_in_flight integer,
  rate_count integer,
  rate_period_ms bigint,
  window_start bigint NOT NULL DEFAULT 0,
  window_count integer NOT NULL DEFAULT 0,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);

CREATE TABLE workflow_hooks (
  instance text NOT NULL,
  hook_id text NOT NULL,
  run_id text NOT NULL,
  token text NOT NULL,
  created_at bigint NOT NULL,
  body text NOT NULL
);

CREATE TABLE workflow_runs (
  instance text NOT NULL,
  run_id text NOT NULL,
  workflow_name text NOT NULL,
  status text NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  body text NOT NULL
);

CREATE TABLE workflow_steps (
  instance text NOT NULL,
  run_id text NOT NULL,
  step_id text NOT NULL,
  status text NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  body text NOT NULL
);

CREATE TABLE workflow_stream_chunks (
  instance text NOT NULL,
  name text NOT NULL,
  chunk_index integer NOT NULL,
  run_id text NOT NULL,
  data bytea NOT NULL,
  eof boolean NOT NULL DEFAULT false,
  created_at bigint NOT NULL
);

CREATE TABLE workflow_waits (
  instance text NOT NULL,
  run_id text NOT NULL,
  correlation_id text NOT NULL,
  status text NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  body text NOT NULL
);

ALTER TABLE document_history ADD CONSTRAINT document_history_actor_kind_check CHECK ((actor_kind = ANY (ARRAY['human'::text, 'model'::text, 'tool'::text, 'system'::text])));

ALTER TABLE document_history ADD CONSTRAINT document_history_pkey PRIMARY KEY (instance, kind, id, seq);

ALTER TABLE documents ADD CONSTRAINT documents_pkey PRIMARY KEY (instance, kind, id);

ALTER TABLE documents ADD CONSTRAINT documents_version_check CHECK ((version >= 1));

ALTER TABLE event_heads ADD CONSTRAINT event_heads_pkey PRIMARY KEY (instance);

ALTER TABLE event_streams ADD CONSTRAINT event_streams_pkey PRIMARY KEY (instance, stream);

ALTER TABLE events ADD CONSTRAINT events_instance_stream_stream_seq_key UNIQUE (instance, stream, stream_seq);

ALTER TABLE events ADD CONSTRAINT events_pkey PRIMARY KEY (instance, "position");

ALTER TABLE events ADD CONSTRAINT events_position_check CHECK (("position" >= 1));

ALTER TABLE events ADD CONSTRAINT events_stream_seq_check CHECK ((stream_seq >= 1));

ALTER TABLE schema_migrations ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (name);

ALTER TABLE work_item_blockers ADD CONSTRAINT work_item_blockers_pkey PRIMARY KEY (instance, blocker, item);

ALTER TABLE work_items ADD CONSTRAINT work_items_check CHECK (((status = 'in_flight'::text) = (lease_expires_at IS NOT NULL)));

ALTER TABLE work_items ADD CONSTRAINT work_items_idempotency UNIQUE (instance, idempotency_key);

ALTER TABLE work_items ADD CONSTRAINT work_items_max_attempts_check CHECK ((max_attempts >= 1));

ALTER TABLE work_items ADD CONSTRAINT work_items_on_blocker_failure_check CHECK ((on_blocker_failure = ANY (ARRAY['wait'::text, 'cascade'::text])));

ALTER TABLE work_items ADD CONSTRAINT work_items_pkey PRIMARY KEY (instance, id);

ALTER TABLE work_items ADD CONSTRAINT work_items_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'in_flight'::text, 'waiting_human'::text, 'done'::text, 'failed'::text, 'cancelled'::text])));

ALTER TABLE work_limits ADD CONSTRAINT work_limits_check CHECK (((rate_count IS NULL) = (rate_period_ms IS NULL)));

ALTER TABLE work_limits ADD CONSTRAINT work_limits_check1 CHECK (((max_in_flight IS NOT NULL) OR (rate_count IS NOT NULL)));

ALTER TABLE work_limits ADD CONSTRAINT work_limits_max_in_flight_check CHECK ((max_in_flight >= 1));

ALTER TABLE work_limits ADD CONSTRAINT work_limits_pkey PRIMARY KEY (instance, key);

ALTER TABLE work_limits ADD CONSTRAINT work_limits_rate_count_check CHECK ((rate_count >= 1));

ALTER TABLE work_limits ADD CONSTRAINT work_limits_rate_period_ms_check CHECK ((rate_period_ms >= 1));

ALTER TABLE workflow_hooks ADD CONSTRAINT workflow_hooks_instance_token_key UNIQUE (instance, token);

ALTER TABLE workflow_hooks ADD CONSTRAINT workflow_hooks_pkey PRIMARY KEY (instance, hook_id);

ALTER TABLE workflow_runs ADD CONSTRAINT workflow_runs_pkey PRIMARY KEY (instance, run_id);

ALTER TABLE workflow_steps ADD CONSTRAINT workflow_steps_pkey PRIMARY KEY (instance, run_id, step_id);

ALTER TABLE workflow_stream_chunks ADD CONSTRAINT workflow_stream_chunks_check CHECK (((NOT eof) OR (octet_length(data) = 0)));

ALTER TABLE workflow_stream_chunks ADD CONSTRAINT workflow_stream_chunks_chunk_index_check CHECK ((chunk_index >= 0));

ALTER TABLE workflow_stream_chunks ADD CONSTRAINT workflow_stream_chunks_pkey PRIMARY KEY (instance, name, chunk_index);

ALTER TABLE workflow_waits ADD CONSTRAINT workflow_waits_pkey PRIMARY KEY (instance, run_id, correlation_id);

CREATE UNIQUE INDEX document_history_pkey ON agentstate.document_history USING btree (instance, kind, id, seq);

CREATE UNIQUE INDEX document_history_version ON agentstate.document_history USING btree (instance, kind, id, version) WHERE (NOT noop);

CREATE UNIQUE INDEX document_history_write ON agentstate.document_history USING btree (instance, kind, id, write_id) WHERE (write_id IS NOT NULL);

CREATE UNIQUE INDEX documents_pkey ON agentstate.documents USING btree (instance, kind, id);

CREATE UNIQUE INDEX event_heads_pkey ON agentstate.event_heads USING btree (instance);

CREATE UNIQUE INDEX event_streams_pkey ON agentstate.event_streams USING btree (instance, stream);

CREATE INDEX events_batch_items ON agentstate.events USING gin (agentstate.event_item_ids(data)) WHERE (type = ANY (ARRAY['work_items_enqueued'::text, 'work_items_claimed'::text, 'work_items_resolved'::text, 'work_items_reclaimed'::text]));

CREATE UNIQUE INDEX events_instance_stream_stream_seq_key ON agentstate.events USING btree (instance, stream, stream_seq);

CREATE UNIQUE INDEX events_pkey ON agentstate.events USING btree (instance, "position");

CREATE INDEX events_time ON agentstate.events USING btree (instance, created_at);

CREATE INDEX events_type ON agentstate.events USING btree (instance, type, "position");

CREATE INDEX events_work_item ON agentstate.events USING btree (instance, work_item_id, "position") WHERE (work_item_id IS NOT NULL);

CREATE INDEX events_workflow_correlation ON agentstate.events USING btree (instance, correlation_id, "position") WHERE (type = 'workflow_event'::text);

CREATE UNIQUE INDEX schema_migrations_pkey ON agentstate.schema_migrations USING btree (name);

CREATE UNIQUE INDEX work_item_blockers_pkey ON agentstate.work_item_blockers USING btree (instance, blocker, item);

CREATE INDEX work_items_cascaded ON agentstate.work_items USING btree (instance, cascaded_from) WHERE (cascaded_from IS NOT NULL);

CREATE INDEX work_items_ended ON agentstate.work_items USING btree (instance, status, id) WHERE (status = ANY (ARRAY['failed'::text, 'cancelled'::text]));

CREATE UNIQUE INDEX work_items_idempotency ON agentstate.work_items USING btree (instance, idempotency_key);

CREATE INDEX work_items_keyed_in_flight ON agentstate.work_items USING btree (instance, concurrency_key) WHERE ((status = 'in_flight'::text) AND (concurrency_key IS NOT NULL));

CREATE INDEX work_items_keyed_ready ON agentstate.work_items USING btree (instance, concurrency_key, priority DESC, created_at, id) WHERE ((status = 'pending'::text) AND (concurrency_key IS NOT NULL));

CREATE INDEX work_items_leases ON agentstate.work_items USING btree (instance, lease_expires_at) WHERE (status = 'in_flight'::text);

CREATE UNIQUE INDEX work_items_pkey ON agentstate.work_items USING btree (instance, id);

CREATE INDEX work_items_ready ON agentstate.work_items USING btree (instance, priority DESC, created_at, id) WHERE (status = 'pending'::text);

CREATE INDEX work_items_status ON agentstate.work_items USING btree (instance, status, updated_at);

CREATE UNIQUE INDEX work_limits_pkey ON agentstate.work_limits USING btree (instance, key);

CREATE INDEX workflow_hooks_created ON agentstate.workflow_hooks USING btree (instance, created_at, hook_id);

CREATE UNIQUE INDEX workflow_hooks_instance_token_key ON agentstate.workflow_hooks USING btree (instance, token);

CREATE UNIQUE INDEX workflow_hooks_pkey ON agentstate.workflow_hooks USING btree (instance, hook_id);

CREATE INDEX workflow_hooks_run ON agentstate.workflow_hooks USING btree (instance, run_id, created_at, hook_id);

CREATE INDEX workflow_runs_created ON agentstate.workflow_runs USING btree (instance, created_at, run_id);

CREATE INDEX workflow_runs_name ON agentstate.workflow_runs USING btree (instance, workflow_name, created_at, run_id);

CREATE UNIQUE INDEX workflow_runs_pkey ON agentstate.workflow_runs USING btree (instance, run_id);

CREATE INDEX workflow_runs_status ON agentstate.workflow_runs USING btree (instance, status, created_at, run_id);

CREATE UNIQUE INDEX workflow_steps_pkey ON agentstate.workflow_steps USING btree (instance, run_id, step_id);

CREATE INDEX workflow_steps_run ON agentstate.workflow_steps USING btree (instance, run_id, created_at, step_id);

CREATE UNIQUE INDEX workflow_stream_chunks_pkey ON agentstate.workflow_stream_chunks USING btree (instance, name, chunk_index);

CREATE INDEX workflow_stream_chunks_run ON agentstate.workflow_stream_chunks USING btree (instance, run_id, name) WHERE (chunk_index = 0);

CREATE UNIQUE INDEX workflow_waits_pkey ON agentstate.workflow_waits USING btree (instance, run_id, correlation_id);

CREATE TRIGGER document_history_no_update BEFORE UPDATE ON agentstate.document_history FOR EACH STATEMENT EXECUTE FUNCTION agentstate.refuse_change('document history is immutable: UPDATE');

CREATE TRIGGER events_no_delete BEFORE DELETE ON agentstate.events FOR EACH STATEMENT EXECUTE FUNCTION agentstate.refuse_change('events are append-only: DELETE');

CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON agentstate.events FOR EACH STATEMENT EXECUTE FUNCTION agentstate.refuse_change('events are append-only: TRUNCATE');

CREATE TRIGGER events_no_update BEFORE UPDATE ON agentstate.events FOR EACH STATEMENT EXECUTE FUNCTION agentstate.refuse_change('events are append-only: UPDATE');

CREATE TRIGGER work_items_blockers AFTER INSERT ON agentstate.work_items FOR EACH ROW WHEN ((cardinality(new.blocked_by) > 0)) EXECUTE FUNCTION agentstate.work_item_blockers_insert();

CREATE OR REPLACE FUNCTION agentstate.append_events(p_instance text, p_streams text[], p_types text[], p_data text[], p_actors text[], p_correlation text[], p_causation text[], p_work_items text[], p_created bigint[], p_stream_json text[], p_tails text[])
 RETURNS TABLE(e_position bigint, e_stream_seq bigint, e_prev_hash text, e_hash text)
 LANGUAGE plpgsql
 SET search_path TO 'agentstate'
AS $function$
DECLARE
  n int := coalesce(cardinality(p_streams), 0);
  v_pos bigint;
  v_hash text;
  v_seqs bigint[];
  v_prev text[] := '{}';
  v_hashes text[] := '{}';
BEGIN
  IF n = 0 THEN
    RETURN;
  END IF;
  -- Each stream's counter moves by its number of new events; the i-th event of a stream in this call
  -- takes the i-th of the new numbers. Stream rows are locked first (in stream order), the head last, as
  -- every writer does, so appenders never deadlock.
  WITH c AS (
    SELECT s AS stream, count(*)::bigint AS k FROM unnest(p_streams) AS s GROUP BY s),
  up AS (
    INSERT INTO event_streams AS q (instance, stream, seq)
    SELECT p_instance, c.stream, c.k FROM c ORDER BY c.stream
    ON CONFLICT (instance, stream) DO UPDATE SET seq = q.seq + EXCLUDED.seq
    RETURNING q.stream, q.seq)
  SELECT array_agg(x.seq ORDER BY x.ord) INTO v_seqs FROM (
    SELECT u.ord, up.seq - c.k + row_number() OVER (PARTITION BY u.s ORDER BY u.ord) AS seq
    FROM unnest(p_streams) WITH ORDINALITY AS u(s, ord)
    JOIN up ON up.stream = u.s
    JOIN c ON c.stream = u.s) AS x;

  -- Then the head. Its row lock serializes the instance's appenders: positions are handed out in lock
  -- order and commit in that order (the lock is released at COMMIT), so a reader tailing by position
  -- never skips an event that commits late. FOR UPDATE waits for a concurrent appender and then reads its head.
  SELECT h.position, h.hash INTO v_pos, v_hash FROM event_heads AS h WHERE h.instance = p_instance FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO event_heads (instance, position, hash) VALUES (p_instance, 0, repeat('0', 64))
      ON CONFLICT (instance) DO NOTHING;
    SELECT h.position, h.hash INTO v_pos, v_hash FROM event_heads AS h WHERE h.instance = p_instance FOR UPDATE;
  END IF;

  FOR i IN 1..n LOOP
    v_prev[i] := v_hash;
    v_hash := encode(sha256(convert_to(
      '["' || v_hash || '",' || (v_pos + i) || ',' || p_stream_json[i] || ',' || v_seqs[i] || ',' || p_tails[i],
      'UTF8')), 'hex');
    v_hashes[i] := v_hash;
  END LOOP;

  INSERT INTO events (instance, position, stream, stream_seq, type, data, actor, correlation_id, causation_id,
    work_item_id, created_at, prev_hash, hash)
  SELECT p_instance, v_pos + u.ord, u.s, v_seqs[u.ord], p_types[u.ord], p_data[u.ord]::json, p_actors[u.ord],
    p_correlation[u.ord], p_causation[u.ord], p_work_items[u.ord], p_created[u.ord], v_prev[u.ord],
    v_hashes[u.ord]
  FROM unnest(p_streams) WITH ORDINALITY AS u(s, ord);

  UPDATE event_heads SET position = v_pos + n, hash = v_hash WHERE instance = p_instance;

  RETURN QUERY SELECT v_pos + g, v_seqs[g], v_prev[g], v_hashes[g] FROM generate_series(1, n) AS g;
END
$function$
;

CREATE OR REPLACE FUNCTION agentstate.claim_ready(p_instance text, p_now bigint, p_limit bigint, p_kind text, p_not_kind text)
 RETURNS TABLE(id text, priority integer, created_at bigint, inst text, concurrency_key text)
 LANGUAGE sql
 ROWS 1
 SET search_path TO 'agentstate'
 SET enable_sort TO 'off'
AS $function$
  SELECT w.id, w.priority, w.created_at, w.instance, w.concurrency_key
  FROM work_items AS w
  WHERE w.instance = p_instance AND w.status = 'pending'
    AND (w.not_before IS NULL OR w.not_before <= p_now)
    AND (cardinality(w.blocked_by) = 0 OR NOT EXISTS (
      SELECT 1 FROM unnest(w.blocked_by) AS b(id)
      WHERE NOT EXISTS (
        SELECT 1 FROM work_items AS d WHERE d.instance = p_instance AND d.id = b.id AND d.status = 'done')))
    AND (p_kind IS NULL OR w.kind = p_kind)
    AND (p_not_kind IS NULL OR w.kind IS DISTINCT FROM p_not_kind)
  ORDER BY w.priority DESC, w.created_at, w.id
  LIMIT p_limit
  FOR UPDATE OF w SKIP LOCKED
$function$
;

CREATE OR REPLACE FUNCTION agentstate.event_item_ids(data json)
 RETURNS text[]
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE COST 10000
AS $function$
  SELECT coalesce(array_agg(e ->> 'id'), '{}')
  FROM json_array_elements(CASE WHEN json_typeof(data -> 'items') = 'array' THEN data -> 'items' ELSE '[]' END) AS e
$function$
;

CREATE OR REPLACE FUNCTION agentstate.json_merge_patch(target jsonb, patch jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
 IMMUTABLE PARALLEL SAFE
 SET search_path TO 'agentstate'
AS $function$
DECLARE
  k text;
  v jsonb;
  result jsonb;
BEGIN
  IF patch IS NULL OR jsonb_typeof(patch) <> 'object' THEN
    RETURN patch;
  END IF;
  result := CASE WHEN jsonb_typeof(target) = 'object' THEN target ELSE '{}'::jsonb END;
  FOR k, v IN SELECT e.key, e.value FROM jsonb_each(patch) AS e LOOP
    IF jsonb_typeof(v) = 'null' THEN
      result := result - k;
    ELSE
      result := result || jsonb_build_object(k, json_merge_patch(result -> k, v));
    END IF;
  END LOOP;
  RETURN result;
END
$function$
;

CREATE OR REPLACE FUNCTION agentstate.refuse_change()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  RAISE EXCEPTION '% is not allowed', TG_ARGV[0] USING ERRCODE = 'P0001';
END
$function$
;

CREATE OR REPLACE FUNCTION agentstate.work_item_blockers_insert()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'agentstate'
AS $function$
BEGIN
  INSERT INTO work_item_blockers (instance, blocker, item)
  SELECT NEW.instance, b.id, NEW.id FROM unnest(NEW.blocked_by) AS b(id)
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$function$
;

CREATE OR REPLACE FUNCTION agentstate.work_limit_exists(p_instance text, p_key text)
 RETURNS boolean
 LANGUAGE plpgsql
 STABLE PARALLEL SAFE
 SET search_path TO 'agentstate'
AS $function$
BEGIN
  RETURN EXISTS (SELECT 1 FROM work_limits WHERE instance = p_instance AND key = p_key);
END
$function$
;
