-- 0003-append-events: events are appended, positioned and hash-chained by one server-side call, so a
-- writer takes the instance's head row lock only inside its last statement and holds it just until
-- COMMIT (no client round trip while it is held).
--
-- The hash is the one src/core/hash.ts computes (computeEventHash): SHA-256 (hex) of the JSON array
-- [prev_hash, position, stream, stream_seq, type, data, actor, correlation_id, causation_id,
--  work_item_id, created_at] as JSON.stringify writes it, `data` being the exact JSON text stored
-- (column type json keeps the text as given). The caller sends each event's stream and the array's tail
-- (from type on) already as JSON.stringify text; only prev_hash, position and stream_seq are the
-- server's, and they are a hex string and integers.

CREATE FUNCTION append_events(
  p_instance text,
  p_streams text[],
  p_types text[],
  p_data text[],
  p_actors text[],
  p_correlation text[],
  p_causation text[],
  p_work_items text[],
  p_created bigint[],
  -- JSON.stringify(stream), and JSON.stringify([type, data, actor, correlation_id, causation_id,
  -- work_item_id, created_at]) without its leading '['.
  p_stream_json text[],
  p_tails text[]
) RETURNS TABLE (e_position bigint, e_stream_seq bigint, e_prev_hash text, e_hash text)
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
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
$$;
