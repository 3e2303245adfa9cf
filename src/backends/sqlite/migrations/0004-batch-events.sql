-- 0004-batch-events: a batched call (claimMany, resolveMany, enqueueMany, the expired-lease sweep, and
-- single calls a handle coalesced) writes one event per batch and type (work_items_claimed, …) on the
-- work_items stream, whose data.items names every item: {"items": [{"id": "wi_…", …}, …]}. Readers of an
-- item's history find those events through event_items, one row per item a batch event names, written by
-- the database itself when the event is inserted (so an import fills it as an append does).

CREATE TABLE event_items (
  work_item_id TEXT NOT NULL,
  position     INTEGER NOT NULL,
  PRIMARY KEY (work_item_id, position)
) WITHOUT ROWID;

CREATE TRIGGER events_batch_items AFTER INSERT ON events
WHEN NEW.type IN ('work_items_enqueued', 'work_items_claimed', 'work_items_resolved', 'work_items_reclaimed')
  AND NEW.work_item_id IS NULL
BEGIN
  INSERT OR IGNORE INTO event_items (work_item_id, position)
  SELECT json_extract(i.value, '$.id'), NEW.position FROM json_each(NEW.data, '$.items') AS i
  WHERE json_type(i.value, '$.id') = 'text';
END;

-- As append-only as the events it indexes.
CREATE TRIGGER event_items_no_update BEFORE UPDATE ON event_items
BEGIN
  SELECT RAISE(ABORT, 'event_items are append-only: UPDATE is not allowed');
END;

CREATE TRIGGER event_items_no_delete BEFORE DELETE ON event_items
BEGIN
  SELECT RAISE(ABORT, 'event_items are append-only: DELETE is not allowed');
END;
