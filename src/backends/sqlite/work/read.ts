// Reads of work items in SQLite: by id (get, blockerStates), lists in claim order (ready or not, blocked
// on a failure, after a cursor), the counts by status, the stats a metrics scrape reads, the history.
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
import type { SqliteConnection } from '../connection.js';
import { getItem, ORDER, READY, toWorkItem, type WorkItemRow } from './shared.js';

/**
 * `stuck(id)`: the pending items blocked on a failure, a blocker ended failed or cancelled or is a pending
 * item blocked on one (it cannot become ready until the failed blocker is retried). Found from the failed
 * and cancelled items along work_item_blockers, so it reads those, the items it finds and their dependants,
 * never every pending item. CROSS JOIN fixes that order and `+p.status` keeps the status index out of it:
 * without statistics the planner otherwise walked every pending item, or every edge, at each step. UNION
 * (not ALL) keeps each item once and ends on any cycle an import brought.
 */
const BLOCKED_ON_FAILURE = `stuck(id) AS (
    SELECT e.item FROM work_items AS f INDEXED BY work_items_ended
      CROSS JOIN work_item_blockers AS e ON e.blocker = f.id
      CROSS JOIN work_items AS p ON p.id = e.item
    WHERE f.status IN ('failed', 'cancelled') AND +p.status = 'pending'
    UNION
    SELECT e.item FROM stuck AS s
      CROSS JOIN work_item_blockers AS e ON e.blocker = s.id
      CROSS JOIN work_items AS p ON p.id = e.item
    WHERE +p.status = 'pending')`;

export async function blockerStates(
  conn: SqliteConnection,
  ids: string[],
): Promise<Array<{ id: string; status: WorkItemStatus; blocked_by: string[] }>> {
  if (ids.length === 0) return [];
  return conn.read(() =>
    (
      conn
        .stmt('SELECT id, status, blocked_by FROM work_items WHERE id IN (SELECT value FROM json_each(?))')
        .all(JSON.stringify(ids)) as Array<{ id: string; status: WorkItemStatus; blocked_by: string }>
    ).map((r) => ({ id: r.id, status: r.status, blocked_by: JSON.parse(r.blocked_by) as string[] })),
  );
}

export async function get(conn: SqliteConnection, id: string): Promise<WorkItem | null> {
  return conn.read(() => getItem(conn, id));
}

export async function list(
  conn: SqliteConnection,
  q: Parameters<WorkItemBackend['list']>[0],
): Promise<WorkItem[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (q.statuses) {
    where.push(`w.status IN (${q.statuses.map(() => '?').join(', ')})`);
    params.push(...q.statuses);
  }
  if (q.kind !== null) {
    where.push('w.kind = ?');
    params.push(q.kind);
  }
  if (q.concurrency_key !== undefined) {
    where.push('w.concurrency_key = ?');
    params.push(q.concurrency_key);
  }
  if (q.ready !== undefined) {
    where.push(q.ready ? `(${READY})` : `w.status = 'pending' AND NOT (${READY})`);
    params.push(q.now);
  }
  if (q.after !== undefined) {
    // After the cursor item in claim order (priority DESC, created_at, id), its key read by id (an item's
    // priority and creation time never change); no item of that id, no rows. The priority bound is a range
    // on the ready index, so a later page starts where the last one ended.
    const key = (cols: string) => `(SELECT ${cols} FROM work_items WHERE id = ?)`;
    where.push(
      `w.priority <= ${key('priority')} AND (w.priority < ${key('priority')} OR (w.created_at, w.id) > ${key('created_at, id')})`,
    );
    params.push(q.after, q.after, q.after);
  }
  // Blocked on a failure: the rows come from the stuck set (CROSS JOIN keeps it the outer loop), one
  // lookup each, so the read costs what it finds; its complement tests each row against that set.
  // Ready or not, the items are pending: walked in claim order (as a claim does), the read stops at its
  // limit instead of sorting every pending item (the dashboard's and resume's lists).
  let from = q.ready === undefined ? 'work_items w' : 'work_items w INDEXED BY work_items_ready';
  if (q.blocked_on_failure === true) {
    from = 'stuck AS s CROSS JOIN work_items AS w ON w.id = s.id';
    where.push("w.status = 'pending'");
  } else if (q.blocked_on_failure === false) {
    where.push("NOT (w.status = 'pending' AND w.id IN (SELECT id FROM stuck))");
  }
  params.push(q.limit);
  const sql = `${q.blocked_on_failure === undefined ? '' : `WITH RECURSIVE ${BLOCKED_ON_FAILURE} `}SELECT w.* FROM ${from} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ${ORDER} LIMIT ?`;
  return conn.read(() => (conn.stmt(sql).all(...params) as WorkItemRow[]).map(toWorkItem));
}

export async function counts(conn: SqliteConnection): Promise<StatusCounts> {
  const rows = conn.read(
    () =>
      conn.stmt('SELECT status, COUNT(*) AS n FROM work_items GROUP BY status').all() as Array<{
        status: WorkItemStatus;
        n: number;
      }>,
  );
  return statusCounts(rows);
}

export async function stats(conn: SqliteConnection, q: WorkStatsQuery): Promise<WorkStats> {
  const buckets = q.bucketsMs
    .map((b, i) => `, SUM(resolved_at - claimed_at <= ${Number(b)}) AS b${i}`)
    .join('');
  return conn.read(() => {
    // Every row is read once, in table order (NOT INDEXED), for the groups and the oldest ready item's time:
    // by work_items_status with a lookup per row, and the ready items in a second walk, the two cost 87
    // against 51 ms at 100k items (BENCHMARKS.md, Prometheus scrape).
    const rows = conn
      .stmt(
        `SELECT status, kind, COUNT(*) AS count, SUM(attempts) AS attempts, SUM(attempts > 1) AS retried,
           MIN(CASE WHEN ${READY} THEN MAX(w.created_at, COALESCE(w.not_before, 0)) END) AS ready_since,
           SUM(CASE WHEN status = 'pending' AND attempts > 0 THEN attempts >= max_attempts - 1 END) AS last_attempt
         FROM work_items AS w NOT INDEXED GROUP BY status, kind`,
      )
      .all(q.now) as Array<
      WorkStats['groups'][number] & { ready_since: number | null; last_attempt: number | null }
    >;
    let oldest: number | null = null;
    let lastAttempt = 0;
    const groups = rows.map(({ ready_since, last_attempt, ...g }) => {
      if (ready_since !== null && (oldest === null || ready_since < oldest)) oldest = ready_since;
      lastAttempt += last_attempt ?? 0;
      return g;
    });
    // CASE reads max_attempts only for the rows it concerns (a walk decodes each column it reads): 1.09× the
    // pass without it at 100k items, against 1.33× for a plain SUM over both counts (BENCHMARKS.md). The
    // items waiting long are counted in work_items_status (status, updated_at), by the ones that match.
    const waitingLong = (
      conn
        .stmt(
          "SELECT COUNT(*) AS n FROM work_items INDEXED BY work_items_status WHERE status = 'waiting_human' AND updated_at <= ?",
        )
        .get(q.waitingSince) as { n: number }
    ).n;
    const leases = conn
      .stmt(
        `SELECT COALESCE(SUM(lease_expires_at <= ?), 0) AS expired, COALESCE(SUM(lease_expires_at > ? AND lease_expires_at <= ?), 0) AS expiring
           FROM work_items INDEXED BY work_items_leases WHERE status = 'in_flight'`,
      )
      .get(q.now, q.now, q.now + q.expiringWithinMs) as { expired: number; expiring: number };
    const stuck = conn
      .stmt(
        `WITH RECURSIVE ${BLOCKED_ON_FAILURE} SELECT COUNT(DISTINCT s.id) AS n FROM stuck AS s CROSS JOIN work_items AS w ON w.id = s.id WHERE w.status = 'pending'`,
      )
      .get() as { n: number };
    const durations = (
      conn
        .stmt(
          `SELECT kind, COUNT(*) AS count, SUM(resolved_at - claimed_at) AS sumMs${buckets} FROM work_items
             WHERE status IN ('done', 'failed') AND claimed_at IS NOT NULL AND resolved_at IS NOT NULL GROUP BY kind`,
        )
        .all() as Array<Record<string, number | string | null>>
    ).map((r) => ({
      kind: r.kind as string | null,
      count: r.count as number,
      sumMs: r.sumMs as number,
      buckets: q.bucketsMs.map((_, i) => r[`b${i}`] as number),
    }));
    return {
      groups,
      oldestReadySince: oldest,
      leasesExpired: leases.expired,
      leasesExpiring: leases.expiring,
      blockedOnFailure: stuck.n,
      lastAttempt,
      waitingLong,
      durations,
    };
  });
}

/**
 * Items created and items ended per span of the window (counts only). A finished item's time is its
 * resolved_at, found by work_items_status (status, updated_at: a finished item is not updated again); a
 * created one's needs a walk of the table (no index on created_at, which every enqueue would pay for).
 */
export async function history(conn: SqliteConnection, q: WorkHistoryQuery): Promise<WorkHistory> {
  const end = q.since + q.bucketMs * q.buckets;
  return conn.read(() => {
    const rows = conn
      .stmt(
        `SELECT 'created' AS what, CAST((created_at - ?) / ? AS INTEGER) AS b, COUNT(*) AS n FROM work_items NOT INDEXED
           WHERE created_at >= ? AND created_at < ? GROUP BY b
         UNION ALL
         SELECT status, CAST((COALESCE(resolved_at, updated_at) - ?) / ? AS INTEGER), COUNT(*) FROM work_items INDEXED BY work_items_status
           WHERE status IN ('done', 'failed', 'cancelled') AND updated_at >= ?
             AND COALESCE(resolved_at, updated_at) >= ? AND COALESCE(resolved_at, updated_at) < ?
           GROUP BY status, 2`,
      )
      .all(q.since, q.bucketMs, q.since, end, q.since, q.bucketMs, q.since, q.since, end) as HistoryRow[];
    return { buckets: historyBuckets(q.buckets, rows) };
  });
}
