// Reads of work items in PostgreSQL: by id (get, blockerStates), lists in claim order (ready or not,
// blocked on a failure, after a cursor), the counts by status, the stats a metrics scrape reads, the history.
import type {
  WorkHistory,
  WorkHistoryQuery,
  WorkItemBackend,
  WorkStats,
  WorkStatsQuery,
} from '../../../core/backend.js';
import type { StatusCounts, WorkItem, WorkItemStatus } from '../../../core/types.js';
import { type HistoryRow, historyBuckets } from '../../../core/work/history.js';
import { statusCounts } from '../../shared.js';
import type { Names, PostgresConnection } from '../connection.js';
import {
  COLS,
  dependantsOf,
  getItem,
  itemById,
  ORDER,
  ready,
  toWorkItem,
  W_COLS,
  type WorkItemRow,
} from './shared.js';

/**
 * The CTE `stuck(id)`: the pending items blocked on a failure, a blocker ended failed or cancelled or is a
 * pending item blocked on one (it cannot become ready until the failed blocker is retried). Found from the
 * failed and cancelled items along work_item_blockers, so it reads those, the items it finds and their
 * dependants, never every pending item. UNION (not ALL) keeps each item once and ends on any cycle an
 * import brought.
 */
function blockedOnFailure(t: Names): string {
  return `stuck(id) AS (
    SELECT e.item FROM ${t.work_items} AS f
      ${dependantsOf(t, 'f.id')}
      ${itemById(t, 'e.item', 'status', 'p')}
    WHERE f.instance = $1 AND f.status IN ('failed', 'cancelled') AND p.status = 'pending'
    UNION
    SELECT e.item FROM stuck AS s
      ${dependantsOf(t, 's.id')}
      ${itemById(t, 'e.item', 'status', 'p')}
    WHERE p.status = 'pending')`;
}

export async function blockerStates(
  conn: PostgresConnection,
  ids: string[],
): Promise<Array<{ id: string; status: WorkItemStatus; blocked_by: string[] }>> {
  const t = conn.names;
  if (ids.length === 0) return [];
  const res = await conn.query<{ id: string; status: WorkItemStatus; blocked_by: string[] }>(
    `SELECT id, status, blocked_by FROM ${t.work_items} WHERE instance = $1 AND id = ANY($2::text[])`,
    [conn.instance, ids],
  );
  return res.rows;
}

export async function get(conn: PostgresConnection, id: string): Promise<WorkItem | null> {
  return getItem(conn, id);
}

export async function list(
  conn: PostgresConnection,
  q: Parameters<WorkItemBackend['list']>[0],
): Promise<WorkItem[]> {
  const t = conn.names;
  const p = conn.params();
  const where: string[] = ['w.instance = $1'];
  if (q.statuses) where.push(`w.status = ANY(${p.add(q.statuses)}::text[])`);
  if (q.kind !== null) where.push(`w.kind = ${p.add(q.kind)}`);
  if (q.concurrency_key !== undefined) where.push(`w.concurrency_key = ${p.add(q.concurrency_key)}`);
  if (q.ready !== undefined) {
    const now = p.add(q.now);
    where.push(q.ready ? `(${ready(t, now)})` : `w.status = 'pending' AND NOT (${ready(t, now)})`);
  }
  if (q.after !== undefined) {
    // After the cursor item in claim order (priority DESC, created_at, id), its key read by id (an item's
    // priority and creation time never change); no item of that id, no rows.
    const id = p.add(q.after);
    const key = (cols: string) => `(SELECT ${cols} FROM ${t.work_items} WHERE instance = $1 AND id = ${id})`;
    where.push(
      `w.priority <= ${key('priority')} AND (w.priority < ${key('priority')} OR (w.created_at, w.id) > ${key('created_at, id')})`,
    );
  }
  // Blocked on a failure: the rows come from the stuck set, one primary-key lookup each, so the read
  // costs what it finds; its complement tests each row against that set (hashed once).
  let from = `${t.work_items} AS w`;
  if (q.blocked_on_failure === true) {
    from = `stuck AS s ${itemById(t, 's.id', `${COLS}, instance`, 'w')}`;
    where.push("w.status = 'pending'");
  } else if (q.blocked_on_failure === false) {
    where.push("NOT (w.status = 'pending' AND w.id IN (SELECT id FROM stuck))");
  }
  const res = await conn.query<WorkItemRow>(
    `${q.blocked_on_failure === undefined ? '' : `WITH RECURSIVE ${blockedOnFailure(t)} `}SELECT ${W_COLS}
         FROM ${from} WHERE ${where.join(' AND ')} ${ORDER} LIMIT ${p.add(q.limit)}`,
    p.values,
  );
  return res.rows.map(toWorkItem);
}

export async function counts(conn: PostgresConnection): Promise<StatusCounts> {
  const t = conn.names;
  const res = await conn.query<{ status: WorkItemStatus; n: number }>(
    `SELECT status, count(*) AS n FROM ${t.work_items} WHERE instance = $1 GROUP BY status`,
    [conn.instance],
  );
  return statusCounts(res.rows);
}

export async function stats(conn: PostgresConnection, q: WorkStatsQuery): Promise<WorkStats> {
  const t = conn.names;
  const buckets = q.bucketsMs
    .map((b, i) => `, count(*) FILTER (WHERE resolved_at - claimed_at <= ${Number(b)})::int AS b${i}`)
    .join('');
  // One transaction, one connection: the five reads of one scrape together.
  return conn.transaction(async (tx) => {
    const grouped = await tx.query<
      WorkStats['groups'][number] & { last_attempt: number; waiting_long: number }
    >(
      `SELECT status, kind, count(*)::int AS count, sum(attempts)::int AS attempts,
              count(*) FILTER (WHERE attempts > 1)::int AS retried,
              count(*) FILTER (WHERE status = 'pending' AND attempts > 0 AND attempts >= max_attempts - 1)::int AS last_attempt,
              count(*) FILTER (WHERE status = 'waiting_human' AND updated_at <= $2)::int AS waiting_long
         FROM ${t.work_items} WHERE instance = $1 GROUP BY status, kind`,
      [conn.instance, q.waitingSince],
    );
    let lastAttempt = 0;
    let waitingLong = 0;
    const groups = grouped.rows.map(({ last_attempt, waiting_long, ...g }) => {
      lastAttempt += last_attempt;
      waitingLong += waiting_long;
      return g;
    });
    const oldest = await tx.query<{ t: string | null }>(
      `SELECT min(GREATEST(w.created_at, COALESCE(w.not_before, 0))) AS t FROM ${t.work_items} AS w
         WHERE w.instance = $1 AND ${ready(t, '$2')}`,
      [conn.instance, q.now],
    );
    const leases = await tx.query<{ expired: number; expiring: number }>(
      `SELECT count(*) FILTER (WHERE lease_expires_at <= $2)::int AS expired,
              count(*) FILTER (WHERE lease_expires_at > $2 AND lease_expires_at <= $3)::int AS expiring
         FROM ${t.work_items} WHERE instance = $1 AND status = 'in_flight'`,
      [conn.instance, q.now, q.now + q.expiringWithinMs],
    );
    const stuck = await tx.query<{ n: number }>(
      `WITH RECURSIVE ${blockedOnFailure(t)} SELECT count(DISTINCT s.id)::int AS n
         FROM stuck AS s ${itemById(t, 's.id', 'status', 'w')} WHERE w.status = 'pending'`,
      [conn.instance],
    );
    const durations = await tx.query<Record<string, number | string | null>>(
      `SELECT kind, count(*)::int AS count, sum(resolved_at - claimed_at)::float8 AS "sumMs"${buckets}
         FROM ${t.work_items}
        WHERE instance = $1 AND status IN ('done', 'failed') AND claimed_at IS NOT NULL AND resolved_at IS NOT NULL
        GROUP BY kind`,
      [conn.instance],
    );
    const t0 = oldest.rows[0]?.t;
    return {
      groups,
      oldestReadySince: t0 === null || t0 === undefined ? null : Number(t0),
      leasesExpired: leases.rows[0]?.expired ?? 0,
      leasesExpiring: leases.rows[0]?.expiring ?? 0,
      blockedOnFailure: stuck.rows[0]?.n ?? 0,
      lastAttempt,
      waitingLong,
      durations: durations.rows.map((r) => ({
        kind: r.kind as string | null,
        count: r.count as number,
        sumMs: Number(r.sumMs),
        buckets: q.bucketsMs.map((_, i) => r[`b${i}`] as number),
      })),
    };
  });
}

/**
 * Items created and items ended per span of the window (counts only). A finished item's time is its
 * resolved_at, found by work_items_status (instance, status, updated_at: a finished item is not updated again);
 * a created one's needs a walk of the instance's rows (no index on created_at, which every enqueue would pay for).
 */
export async function history(conn: PostgresConnection, q: WorkHistoryQuery): Promise<WorkHistory> {
  const t = conn.names;
  const end = q.since + q.bucketMs * q.buckets;
  const rows = await conn.query<HistoryRow>(
    `SELECT 'created' AS what, ((created_at - $2) / $3)::int AS b, count(*)::int AS n FROM ${t.work_items}
         WHERE instance = $1 AND created_at >= $2 AND created_at < $4 GROUP BY 2
       UNION ALL
       SELECT status, ((COALESCE(resolved_at, updated_at) - $2) / $3)::int, count(*)::int FROM ${t.work_items}
         WHERE instance = $1 AND status IN ('done', 'failed', 'cancelled') AND updated_at >= $2
           AND COALESCE(resolved_at, updated_at) >= $2 AND COALESCE(resolved_at, updated_at) < $4
         GROUP BY 1, 2`,
    [conn.instance, q.since, q.bucketMs, end],
  );
  return { buckets: historyBuckets(q.buckets, rows.rows) };
}
