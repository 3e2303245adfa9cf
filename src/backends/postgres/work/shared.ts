// What PostgreSQL's work-item files share: the work_items row and its mapping to a WorkItem, its columns
// (COLS, W_COLS), the claim ORDER and the ready condition, the joins that find items by id and a blocker's
// dependants, one item read by id, the condition that a worker holds an item's lease, a one-row UPDATE,
// and the append of a transaction's events with its COMMIT.
import type { LeaseQuery, NewEvent, WorkItemRowDump } from '../../../core/backend.js';
import { workItemFromRow } from '../../../core/rows.js';
import type { WorkItem } from '../../../core/types.js';
import { DUMP_COLUMNS } from '../../shared.js';
import type { Names, Params, PostgresConnection, Tx } from '../connection.js';
import { type AppendHint, writeEvents } from '../events.js';

/** A row as selected, or as nested JSON (row_to_json), both with numbers for bigint columns. */
export type WorkItemRow = WorkItemRowDump;
export const toWorkItem = workItemFromRow;

export const ORDER = 'ORDER BY w.priority DESC, w.created_at, w.id';

/**
 * Row `w` is the item that row `x` of a MATERIALIZED CTE names by its instance (column `inst`) and id. Joined
 * as `w.instance = $1 AND w.id = x.id`, an UPDATE of a few items was planned as a scan of every item of the
 * instance (a new instance is estimated at a few rows until ANALYZE sees it, and json_to_recordset at 100):
 * 8,000 rows read to resolve 8, and a claim of 1,000 compared each picked item with every item updated (a
 * million comparisons, 0.7 s). With the instance a column of the CTE (the planner cannot see its value through
 * MATERIALIZED), the only cheap path to `w` is one primary-key lookup per row of `x`, whatever the estimates.
 */
export const sameItem = (x: string) => `w.instance = ${x}.inst AND w.id = ${x}.id`;

/**
 * Whether a claim or resolve of up to `items` items is sent as one statement that builds its own event.
 * For a batch it saves the client a third of its CPU per item; for single items it does not pay: with 8
 * single-item workers on one instance it ran at 0.77× the two-statement path here (470 against 610 items/s;
 * the head lock is contended either way), with one worker at 1.15×.
 */
export const oneStatementPays = (items: number) => items >= 2;

// Named columns, not *: a prepared statement whose result columns change (a later migration adding one)
// fails on connections that prepared it before.
export const COLS = DUMP_COLUMNS.work_items.join(', ');
export const W_COLS = COLS.split(', ')
  .map((c) => `w.${c}`)
  .join(', ');

/** Due, and every blocker done (the status test is left to the caller). */
export function dueAndUnblocked(t: Names, now: string): string {
  return `(w.not_before IS NULL OR w.not_before <= ${now})
    AND (cardinality(w.blocked_by) = 0 OR NOT EXISTS (
      SELECT 1 FROM unnest(w.blocked_by) AS b(id)
      WHERE NOT EXISTS (
        SELECT 1 FROM ${t.work_items} AS d WHERE d.instance = $1 AND d.id = b.id AND d.status = 'done')))`;
}

/**
 * The rows of work_item_blockers naming blocker `id` (`e.item`), as a LATERAL join. OFFSET 0 keeps it a
 * subquery the planner cannot merge into the join, so it stays one index range per blocker: merged, it was
 * planned as a scan of every row of the instance (22,000 read to cascade the failure of 2 items).
 */
export const dependantsOf = (t: Names, id: string) =>
  `CROSS JOIN LATERAL (
        SELECT item FROM ${t.work_item_blockers} WHERE instance = $1 AND blocker = ${id} OFFSET 0) AS e`;

/**
 * Item `id`'s columns `cols` (as `alias`), as a LATERAL join: one primary-key lookup (LIMIT 1 keeps it
 * inside the loop), its status tested by the caller; `lock` (FOR UPDATE) locks it first, as inAt does. As
 * there: with the status in the lookup the planner may walk the instance's pending items instead.
 */
export const itemById = (t: Names, id: string, cols: string, alias: string, lock = '') =>
  `CROSS JOIN LATERAL (
        SELECT ${cols} FROM ${t.work_items} WHERE instance = $1 AND id = ${id} LIMIT 1 ${lock}) AS ${alias}`;

/** A pending item is ready when its not_before has passed and every blocker is done. */
export function ready(t: Names, now: string): string {
  return `w.status = 'pending' AND ${dueAndUnblocked(t, now)}`;
}

/** The item as stored now (read by `run`: a transaction, or the pool), or null. */
export async function getItem(
  conn: PostgresConnection,
  id: string,
  run: Pick<Tx, 'query'> | PostgresConnection = conn,
): Promise<WorkItem | null> {
  const res = await run.query<WorkItemRow>(
    `SELECT ${COLS} FROM ${conn.names.work_items} WHERE instance = $1 AND id = $2`,
    [conn.instance, id],
  );
  const row = res.rows[0];
  return row ? toWorkItem(row) : null;
}

/** The condition that `q`'s worker holds the item's lease, unexpired, on its attempt. */
export function leaseWhere(p: Params, q: LeaseQuery): string {
  let sql = `instance = $1 AND id = ${p.add(q.id)} AND status = 'in_flight' AND lease_owner = ${p.add(q.worker)}
      AND lease_expires_at > ${p.add(q.now)}`;
  if (q.attempt !== null) sql += ` AND attempts = ${p.add(q.attempt)}`;
  return sql;
}

/** Runs an UPDATE … RETURNING * of at most one row (returned as JSON: immune to later columns). */
export async function updateOne(tx: Tx, p: Params, update: string): Promise<WorkItem | null> {
  const res = await tx.query<{ row: WorkItemRow | null }>(
    `WITH _u AS (${update}) SELECT (SELECT row_to_json(u) FROM _u AS u) AS row`,
    p.values,
  );
  const row = res.rows[0]?.row;
  return row ? toWorkItem(row) : null;
}

/** Appends `events` as the transaction's last statement, pipelined with COMMIT. */
export const commitEvents = (tx: Tx, conn: PostgresConnection, hint: AppendHint | null, events: NewEvent[]) =>
  writeEvents(tx, conn, events, { commit: true, hint });
