-- 0005-blocker-failure: what an item does when one of its blockers ends failed or cancelled.
-- on_blocker_failure: 'wait' (stays pending, reported as blocked on a failure until the blocker is retried
-- or the item cancelled) or 'cascade' (cancelled in the transaction that ended the blocker).
-- cascaded_from: the blocker whose failure cancelled the item this way (a retry of it re-opens the item).

ALTER TABLE work_items ADD COLUMN on_blocker_failure text NOT NULL DEFAULT 'wait'
  CHECK (on_blocker_failure IN ('wait', 'cascade'));
ALTER TABLE work_items ADD COLUMN cascaded_from text;

-- The dependants a failure may cancel, and the items a retry re-opens.
CREATE INDEX work_items_cascade ON work_items (instance) WHERE status = 'pending' AND on_blocker_failure = 'cascade';
CREATE INDEX work_items_cascaded ON work_items (instance, cascaded_from) WHERE cascaded_from IS NOT NULL;
