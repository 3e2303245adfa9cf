-- 0008-trace-context: an item carries the W3C traceparent of the span that enqueued it (null when none was
-- recording, as without an OpenTelemetry SDK), so the spans that claim and process it link to its
-- producer. Recorded in work_item_enqueued as well, so verify checks the row against the log.

ALTER TABLE work_items ADD COLUMN traceparent TEXT;
