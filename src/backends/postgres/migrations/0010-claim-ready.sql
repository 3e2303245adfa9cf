-- 0010-claim-ready: the ready items a claim takes, chosen by one function whose plan walks work_items_ready
-- in claim order (priority DESC, created_at, id) and stops at the limit, whatever the table's statistics say.
-- Planned inline, a claim of 500 on a table the planner had never analyzed read every pending item through
-- work_items_status and sorted them (33 of 65 ms at 10,000 pending; the estimate was one row, so the sort
-- looked free); `enable_sort = off` for the whole statement made its other parts (the event's text, the
-- claimers' ranges) 40 times slower. Set on this function alone, it leaves the planner one way to return
-- the rows in order: the index, walked until the limit is reached (FOR UPDATE SKIP LOCKED, as before).
--
-- The conditions are ready()'s of src/backends/postgres/work-items (due, every blocker done) and the claim's
-- filters: a kind, or every kind but one (a claim never takes a lock). A claim by id does not come here (it
-- is one primary-key lookup). p_limit 0 takes nothing: the caller passes it when the claim must not run.

CREATE FUNCTION claim_ready(p_instance text, p_now bigint, p_limit bigint, p_kind text, p_not_kind text)
RETURNS TABLE (id text, priority integer, created_at bigint, inst text, concurrency_key text)
LANGUAGE sql
VOLATILE
-- Estimated at one row (not a function's default 1,000), so the statement around it finds each chosen item
-- by its primary key, as it did when the choice was inline: at 1,000 it joined by a scan of every item.
ROWS 1
SET search_path FROM CURRENT
SET enable_sort = off
AS $$
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
$$;
