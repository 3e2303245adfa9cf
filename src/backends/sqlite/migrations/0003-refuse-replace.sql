-- 0003-refuse-replace: INSERT OR REPLACE (and REPLACE INTO) deletes the row it collides with without firing
-- that table's DELETE trigger (recursive_triggers is off), so it could rewrite a stored event or history
-- entry under the append-only triggers. These refuse any insert that would collide with a stored row; an
-- ordinary append never does. Each test is its own EXISTS so it is answered by one index.

CREATE TRIGGER events_no_replace BEFORE INSERT ON events
WHEN EXISTS (SELECT 1 FROM events WHERE position = NEW.position)
  OR EXISTS (SELECT 1 FROM events WHERE stream = NEW.stream AND stream_seq = NEW.stream_seq)
BEGIN
  SELECT RAISE(ABORT, 'events are append-only: an insert may not replace a stored event');
END;

CREATE TRIGGER document_history_no_replace BEFORE INSERT ON document_history
WHEN EXISTS (SELECT 1 FROM document_history WHERE kind = NEW.kind AND id = NEW.id AND seq = NEW.seq)
  OR (NEW.noop = 0 AND EXISTS (SELECT 1 FROM document_history
        WHERE kind = NEW.kind AND id = NEW.id AND version = NEW.version AND noop = 0))
  OR (NEW.write_id IS NOT NULL AND EXISTS (SELECT 1 FROM document_history
        WHERE kind = NEW.kind AND id = NEW.id AND write_id = NEW.write_id))
BEGIN
  SELECT RAISE(ABORT, 'document history is immutable: an insert may not replace a stored entry');
END;
