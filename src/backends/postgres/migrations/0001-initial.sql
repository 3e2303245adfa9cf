-- 0001-initial: the agent bundle's two tables, work_items (mutable) and events (append-only), shared by
-- many instances: every row carries its instance key and every query filters on it by equality.
-- Times are epoch milliseconds, as in the SQLite backend. Applied with search_path set to the store's schema.

CREATE TABLE work_items (
  instance         text NOT NULL,
  id               text NOT NULL,
  title            text NOT NULL,
  kind             text,
  status           text NOT NULL DEFAULT 'pending'
                   CHECK (status IN ('pending', 'in_flight', 'waiting_human', 'done', 'failed', 'cancelled')),
  priority         integer NOT NULL DEFAULT 0,
  payload          jsonb NOT NULL DEFAULT 'null',
  notes            jsonb NOT NULL DEFAULT '{}',
  result           jsonb NOT NULL DEFAULT 'null',
  error            text,
  attempts         integer NOT NULL DEFAULT 0,
  max_attempts     integer NOT NULL DEFAULT 3 CHECK (max_attempts >= 1),
  lease_owner      text,
  lease_expires_at bigint,
  claimed_at       bigint,
  blocked_by       text[] NOT NULL DEFAULT '{}',
  not_before       bigint,
  idempotency_key  text,
  created_at       bigint NOT NULL,
  updated_at       bigint NOT NULL,
  resolved_at      bigint,
  PRIMARY KEY (instance, id),
  -- Enqueue is INSERT … ON CONFLICT (instance, idempotency_key) DO NOTHING: retries never duplicate.
  CONSTRAINT work_items_idempotency UNIQUE (instance, idempotency_key),
  CHECK ((status = 'in_flight') = (lease_expires_at IS NOT NULL))
);

-- The claim path: ready items of one instance in claim order. Partial, so done/failed rows never slow a claim.
CREATE INDEX work_items_ready ON work_items (instance, priority DESC, created_at, id) WHERE status = 'pending';
-- Expired-lease sweep.
CREATE INDEX work_items_leases ON work_items (instance, lease_expires_at) WHERE status = 'in_flight';
CREATE INDEX work_items_status ON work_items (instance, status, updated_at);

-- RFC 7396 JSON Merge Patch (a null value removes a key; objects merge recursively; anything else replaces),
-- as SQLite's json_patch does, so annotate merges notes in one statement.
CREATE FUNCTION json_merge_patch(target jsonb, patch jsonb) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path FROM CURRENT
AS $$
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
$$;

-- data is json, not jsonb: the hash chain covers the exact JSON text stored.
CREATE TABLE events (
  instance       text NOT NULL,
  position       bigint NOT NULL CHECK (position >= 1),
  stream         text NOT NULL,
  stream_seq     bigint NOT NULL CHECK (stream_seq >= 1),
  type           text NOT NULL,
  data           json NOT NULL DEFAULT 'null',
  actor          text,
  correlation_id text,
  causation_id   text,
  work_item_id   text,
  created_at     bigint NOT NULL,
  prev_hash      text NOT NULL,
  hash           text NOT NULL,
  PRIMARY KEY (instance, position),
  UNIQUE (instance, stream, stream_seq)
);

CREATE INDEX events_type ON events (instance, type, position);
CREATE INDEX events_time ON events (instance, created_at);
CREATE INDEX events_work_item ON events (instance, work_item_id, position) WHERE work_item_id IS NOT NULL;

-- One row per instance: the last allocated position and its hash. A writer locks it (upsert) to allocate
-- positions, so positions are gapless and commit in position order: a reader tailing by position never
-- skips an event committed late.
CREATE TABLE event_heads (
  instance text PRIMARY KEY,
  position bigint NOT NULL,
  hash     text NOT NULL
);

-- The last sequence number of each stream, allocated in the same statement as the head.
CREATE TABLE event_streams (
  instance text NOT NULL,
  stream   text NOT NULL,
  seq      bigint NOT NULL,
  PRIMARY KEY (instance, stream)
);

CREATE FUNCTION refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is not allowed', TG_ARGV[0] USING ERRCODE = 'P0001';
END
$$;

-- Append-only, enforced by the database itself: any UPDATE, DELETE or TRUNCATE fails, whoever issues it.
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_change('events are append-only: UPDATE');
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_change('events are append-only: DELETE');
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_change('events are append-only: TRUNCATE');
