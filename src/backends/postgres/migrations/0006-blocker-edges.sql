-- 0006-blocker-edges: blocked_by read backwards, one row per (instance, blocker, item), so the items that
-- wait on a blocker are an index range under its id. "Blocked on a failure" and the cascade of a failure
-- start from the failed or cancelled items and follow these rows, so they cost what they find; before,
-- every step read the blocked_by of every pending item (pending × failed, issue 23). blocked_by never
-- changes after enqueue and items are never deleted, so each row is written once, by the database when the
-- item is inserted: an enqueue, a document's effects and an import alike. Rows, not a GIN index on
-- blocked_by: they are never rewritten, where a GIN entry would be written again by every claim and resolve.

CREATE TABLE work_item_blockers (
  instance text NOT NULL,
  blocker  text NOT NULL,
  item     text NOT NULL,
  PRIMARY KEY (instance, blocker, item)
);

CREATE FUNCTION work_item_blockers_insert() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
  INSERT INTO work_item_blockers (instance, blocker, item)
  SELECT NEW.instance, b.id, NEW.id FROM unnest(NEW.blocked_by) AS b(id)
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;

-- The WHEN keeps an item without blockers (most of them) from calling the function at all.
CREATE TRIGGER work_items_blockers AFTER INSERT ON work_items
  FOR EACH ROW WHEN (cardinality(NEW.blocked_by) > 0) EXECUTE FUNCTION work_item_blockers_insert();

-- The items enqueued before this migration.
INSERT INTO work_item_blockers (instance, blocker, item)
SELECT w.instance, b.id, w.id FROM work_items AS w CROSS JOIN LATERAL unnest(w.blocked_by) AS b(id)
WHERE cardinality(w.blocked_by) > 0
ON CONFLICT DO NOTHING;

-- Where those reads start: the failed and cancelled items of an instance, by index alone.
CREATE INDEX work_items_ended ON work_items (instance, status, id) WHERE status IN ('failed', 'cancelled');

-- The cascade finds its items through work_item_blockers now; this index only cost every write of one.
DROP INDEX work_items_cascade;
