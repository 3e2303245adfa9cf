-- 0004-batch-events: a batched call (claimMany, resolveMany, enqueueMany, the expired-lease sweep, and
-- single calls a handle coalesced) writes one event per batch and type (work_items_claimed, …) on the
-- work_items stream, whose data.items names every item: {"items": [{"id": "wi_…", …}, …]}. Readers of an
-- item's history find those events through this index on the ids they name: one index entry per item,
-- no row per item (BENCHMARKS.md P4 compares it with a link table of (instance, work_item_id, position)).

-- The item ids a batch event names (empty for any other data). IMMUTABLE: it reads only its argument.
-- COST: parsing a batch of hundreds of items is dear, so the planner reads the index instead of calling
-- it on every row of a scan (at the default cost it chose a sequential scan, ~0.5 ms per batch event).
CREATE FUNCTION event_item_ids(data json) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE COST 10000
AS $$
  SELECT coalesce(array_agg(e ->> 'id'), '{}')
  FROM json_array_elements(CASE WHEN json_typeof(data -> 'items') = 'array' THEN data -> 'items' ELSE '[]' END) AS e
$$;

-- Only batch events are indexed; a reader repeats this predicate so the planner can use it.
CREATE INDEX events_batch_items ON events USING gin (event_item_ids(data))
  WHERE type IN ('work_items_enqueued', 'work_items_claimed', 'work_items_resolved', 'work_items_reclaimed');
