-- 0008-instance-statistics: no planner statistics for work_items.instance.
-- Every statement names one instance (`instance = $1`). With statistics, an instance the last ANALYZE did
-- not see (a new one, or one of many) is estimated at one row, and the planner then treats any index that
-- begins with `instance` as good as the primary key: a resolve of 500 items found each item by scanning
-- work_items_status from the instance's first row (66 of 97 ms; 70-80 ms per resolve of 500 in a store
-- with another, analyzed instance, against 30 ms with the primary key). Without statistics the planner
-- assumes the default share of rows per instance, and a lookup by (instance, id) takes the primary key.
-- Stores analyzed before this migration keep their old figures for this column until they are dropped
-- (pg_statistic, by a superuser); new schemas never collect them.
ALTER TABLE work_items ALTER COLUMN instance SET STATISTICS 0;
