-- 0006-blocker-edges: blocked_by read backwards, one row per (blocker, item), so the items that wait on a
-- blocker are an index range under its id. "Blocked on a failure" and the cascade of a failure start from
-- the failed or cancelled items and follow these rows, so they cost what they find; before, every step read
-- the blocked_by of every pending item (pending × failed: 17.7 s at 40,000 pending / 2,000 failed, issue 23).
-- blocked_by never changes after enqueue and items are never deleted, so each row is written once, by the
-- database when the item is inserted: an enqueue, a document's effects and an import alike.

CREATE TABLE work_item_blockers (
  blocker TEXT NOT NULL,
  item    TEXT NOT NULL,
  PRIMARY KEY (blocker, item)
) WITHOUT ROWID;

CREATE TRIGGER work_items_blockers AFTER INSERT ON work_items
WHEN NEW.blocked_by <> '[]'
BEGIN
  INSERT OR IGNORE INTO work_item_blockers (blocker, item)
  SELECT b.value, NEW.id FROM json_each(NEW.blocked_by) AS b;
END;

-- The items enqueued before this migration.
INSERT OR IGNORE INTO work_item_blockers (blocker, item)
SELECT b.value, w.id FROM work_items AS w, json_each(w.blocked_by) AS b WHERE w.blocked_by <> '[]';

-- Where those reads start: the failed and cancelled items, without a visit to each row for its id.
CREATE INDEX work_items_ended ON work_items (status, id) WHERE status IN ('failed', 'cancelled');

-- The cascade finds its items through work_item_blockers now; this index only cost every write of one.
DROP INDEX work_items_cascade;
