-- 0007-keyed-limits: items may carry a concurrency_key; a limit per (instance, key) caps how many of its
-- items are in flight at once (max_in_flight) and how many claims of them start per window (rate_count per
-- rate_period_ms). A claim that would take items of limited keys locks their rows here FOR UPDATE first
-- (in key order), then counts and claims in a later statement of the same transaction, whose snapshot sees
-- every claim committed before the lock was granted: a limit holds under READ COMMITTED and any number of
-- connections. A key without a row is unlimited, and so is an item without a key.
-- The rate is a fixed window per key: it opens at the first claim after the previous one closed
-- (window_start) and counts the claims started in it (window_count); both are written by claims only.

ALTER TABLE work_items ADD COLUMN concurrency_key text;

-- A limited key's claimable items in claim order, and its items in flight (counted at each claim).
-- Partial: items without a key, most of them, never enter either index.
CREATE INDEX work_items_keyed_ready ON work_items (instance, concurrency_key, priority DESC, created_at, id)
  WHERE status = 'pending' AND concurrency_key IS NOT NULL;
CREATE INDEX work_items_keyed_in_flight ON work_items (instance, concurrency_key)
  WHERE status = 'in_flight' AND concurrency_key IS NOT NULL;

CREATE TABLE work_limits (
  instance       text NOT NULL,
  key            text NOT NULL,
  max_in_flight  integer CHECK (max_in_flight >= 1),
  rate_count     integer CHECK (rate_count >= 1),
  rate_period_ms bigint CHECK (rate_period_ms >= 1),
  window_start   bigint NOT NULL DEFAULT 0,
  window_count   integer NOT NULL DEFAULT 0,
  created_at     bigint NOT NULL,
  updated_at     bigint NOT NULL,
  PRIMARY KEY (instance, key),
  CHECK ((rate_count IS NULL) = (rate_period_ms IS NULL)),
  CHECK (max_in_flight IS NOT NULL OR rate_count IS NOT NULL)
);

-- Whether a key has a limit: what the unkeyed fast claims ask of their candidates with a key. A plpgsql
-- function, so planning a claim does not open work_limits (the planner does not inline it): a claim of
-- unkeyed items pays nothing for limits, not even at plan time (an EXISTS on the table cost 0.3 ms of
-- planning per claim statement).
CREATE FUNCTION work_limit_exists(p_instance text, p_key text) RETURNS boolean
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path FROM CURRENT
AS $$
BEGIN
  RETURN EXISTS (SELECT 1 FROM work_limits WHERE instance = p_instance AND key = p_key);
END
$$;
