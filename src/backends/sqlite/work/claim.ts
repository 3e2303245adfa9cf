// Claims in SQLite: expired leases swept back to pending (or failed) first, then the ready items handed
// to the claimers in claim order, under the concurrency keys' limits when there are any; the sweep alone
// (reclaimExpired), and the replay of the unfinished items after it (replayUnfinished).
import type { ClaimQuery, NewEvent } from '../../../core/backend.js';
import { claimedEvent, reclaimedEvent, replayedEvent } from '../../../core/codecs/work-items.js';
import { claimOrder } from '../../../core/rows.js';
import type { WorkItem } from '../../../core/types.js';
import { LOCK_KIND } from '../../../core/types.js';
import { batchEvents } from '../../../core/work/batches.js';
import type { SqliteConnection } from '../connection.js';
import { writeEvents } from '../events.js';
import { ORDER, READY, toWorkItem, type WorkItemRow } from './shared.js';
import { cascadeRows } from './status.js';

// Stryker disable next-line StringLiteral: a module-level constant (a static mutant, which this configuration leaves to the tests of every statement it breaks)
// INDEXED BY: the planner otherwise walks work_items_status and sorts; these keep claims flat as queues grow.
const RECLAIM = `UPDATE work_items INDEXED BY work_items_leases SET
    status = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'pending' END,
    error = CASE WHEN attempts >= max_attempts THEN 'lease expired on attempt ' || attempts || ' of ' || max_attempts ELSE error END,
    resolved_at = CASE WHEN attempts >= max_attempts THEN ? ELSE NULL END,
    lease_owner = NULL, lease_expires_at = NULL, updated_at = ?
  WHERE status = 'in_flight' AND lease_expires_at <= ?
  RETURNING *`;

/** Expired leases back to pending (or failed), with their events (not yet written). */
function reclaimRows(
  conn: SqliteConnection,
  now: number,
  actor: string | null,
): { items: WorkItem[]; events: NewEvent[] } {
  // RETURNING shows the new row, so read the owners being cleared first (same transaction).
  const owners = new Map(
    (
      conn
        .stmt(
          "SELECT id, lease_owner FROM work_items INDEXED BY work_items_leases WHERE status = 'in_flight' AND lease_expires_at <= ?",
        )
        .all(now) as Array<{ id: string; lease_owner: string | null }>
    ).map((r) => [r.id, r.lease_owner]),
  );
  // Stryker disable next-line ConditionalExpression: equivalent: with no expired lease RECLAIM changes nothing and nothing cascades; this saves the statements
  if (owners.size === 0) return { items: [], events: [] };
  const rows = conn.stmt(RECLAIM).all(now, now, now) as WorkItemRow[];
  const items = rows.map(toWorkItem).sort(claimOrder);
  return {
    items,
    events: [
      ...items.map((item) => reclaimedEvent(item, owners.get(item.id) ?? null, actor, now)),
      // An item whose last attempt expired failed: its cascade dependants are cancelled with it.
      ...cascadeRows(conn, items, actor, now),
    ],
  };
}

/** Expired leases back to pending (or failed), their events written; the items it moved. In a write transaction. */
function sweep(conn: SqliteConnection, now: number, actor: string | null): WorkItem[] {
  const swept = reclaimRows(conn, now, actor);
  writeEvents(conn, batchEvents(swept.events));
  return swept.items;
}

export async function claim(conn: SqliteConnection, q: ClaimQuery): Promise<WorkItem[]> {
  return conn.write(() => {
    const now = q.now;
    // Stryker disable next-line OptionalChaining: equivalent: a claim has at least one claimer (WorkQueue makes one per call)
    sweep(conn, now, q.claimers[0]?.worker ?? null);
    let filter = '';
    const filters: unknown[] = [];
    if (q.kind !== null) {
      filter += ' AND w.kind = ?';
      filters.push(q.kind);
    }
    if (q.id !== null) {
      filter += ' AND w.id = ?';
      filters.push(q.id);
    } else {
      // Locks (claim by key) are held by name, never handed out as the next item, not even to a claim of
      // their kind (docs/api.md).
      filter += ` AND w.kind IS NOT '${LOCK_KIND}'`;
    }
    const room = keyRoom(conn, now);
    if (room) return claimLimited(conn, q, room, filter, filters);
    const update = conn.stmt(
      `UPDATE work_items SET status = 'in_flight', lease_owner = ?, lease_expires_at = ?, claimed_at = ?,
             attempts = attempts + 1, updated_at = ?
           WHERE id IN (SELECT w.id FROM work_items w INDEXED BY work_items_ready WHERE ${READY}${filter} ${ORDER} LIMIT ?)
           RETURNING *`,
    );
    // Each claimer in turn takes the next ready items (those before it are in flight by then).
    const items: WorkItem[] = [];
    const claimedEvents: NewEvent[] = [];
    for (const c of q.claimers) {
      const rows = update.all(
        c.worker,
        now + c.lease_ms,
        now,
        now,
        now,
        ...filters,
        c.limit,
      ) as WorkItemRow[];
      const mine = rows.map(toWorkItem).sort(claimOrder);
      items.push(...mine);
      for (const item of mine) claimedEvents.push(claimedEvent(item, c.worker, c.actor_kind, now));
      // Stryker disable next-line ConditionalExpression: equivalent: the later claimers would find nothing ready either; this saves their statements
      if (rows.length < c.limit) break;
    }
    writeEvents(conn, batchEvents(claimedEvents));
    return items;
  });
}

/**
 * How many items of each limited key a claim at `now` may still take: the least of its max_in_flight less
 * its items in flight, and its rate count less the claims started in its open window (none once the window
 * has closed). Null when the instance has no limits (the claim then runs as it always did). Read in the
 * claim's BEGIN IMMEDIATE transaction, so no other claim runs between this and the claim's update.
 */
function keyRoom(conn: SqliteConnection, now: number): Map<string, number> | null {
  const rows = conn
    .stmt(
      `SELECT l.key, l.max_in_flight - (SELECT COUNT(*) FROM work_items AS w INDEXED BY work_items_keyed_in_flight
             WHERE w.concurrency_key = l.key AND w.status = 'in_flight') AS flight,
           l.rate_count - CASE WHEN l.window_start + l.rate_period_ms > ? THEN l.window_count ELSE 0 END AS rate
         FROM work_limits AS l`,
    )
    .all(now) as Array<{ key: string; flight: number | null; rate: number | null }>;
  // Stryker disable next-line ConditionalExpression: equivalent: claimLimited with no limit hands out what the plain claim does; this keeps the plain claim's one statement
  if (rows.length === 0) return null;
  return new Map(
    rows.map((r) => [
      r.key,
      Math.max(0, Math.min(r.flight ?? Number.POSITIVE_INFINITY, r.rate ?? Number.POSITIVE_INFINITY)),
    ]),
  );
}

/** A claim's candidate: an item's id, key and claim-order columns. */
interface Candidate {
  id: string;
  concurrency_key: string | null;
  priority: number;
  created_at: number;
}

/** Claim order (highest priority, oldest, then id as SQLite's BINARY collation compares ASCII ids; ids are unique). */
function byClaimOrder(a: Candidate, b: Candidate): number {
  // Stryker disable next-line EqualityOperator: equivalent: two candidates never share an id, so < and <= agree
  return b.priority - a.priority || a.created_at - b.created_at || (a.id < b.id ? -1 : 1);
}

/**
 * A claim where limits exist: the first ready items in claim order, skipping those of a key without
 * `room`. The candidates are the first ready items of no limited key, and of each limited key with room its
 * first `room` ready items (one index range each); merged in claim order, the first of them go to the
 * claimers in turn. Then each claimed key's rate window counts the new starts.
 */
function claimLimited(
  conn: SqliteConnection,
  q: ClaimQuery,
  room: Map<string, number>,
  filter: string,
  filters: unknown[],
): WorkItem[] {
  const now = q.now;
  const total = q.claimers.reduce((n, c) => n + c.limit, 0);
  const candidates = conn
    .stmt(
      `SELECT w.id, w.concurrency_key, w.priority, w.created_at FROM work_items w INDEXED BY work_items_ready
         WHERE ${READY}${filter}
           AND (w.concurrency_key IS NULL OR NOT EXISTS (SELECT 1 FROM work_limits AS l WHERE l.key = w.concurrency_key))
         ${ORDER} LIMIT ?`,
    )
    .all(now, ...filters, total) as Candidate[];
  const keyed = conn.stmt(
    `SELECT w.id, w.concurrency_key, w.priority, w.created_at FROM work_items w INDEXED BY work_items_keyed_ready
       WHERE w.concurrency_key = ? AND ${READY}${filter} ${ORDER} LIMIT ?`,
  );
  for (const [key, n] of room) {
    // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent: LIMIT 0 returns nothing; this saves the statement
    if (n > 0) candidates.push(...(keyed.all(key, now, ...filters, Math.min(n, total)) as Candidate[]));
  }
  // Stryker disable next-line MethodExpression: equivalent: the claimers take at most total between them
  const picked = candidates.sort(byClaimOrder).slice(0, total);
  const update = conn.stmt(
    `UPDATE work_items SET status = 'in_flight', lease_owner = ?, lease_expires_at = ?, claimed_at = ?,
           attempts = attempts + 1, updated_at = ?
         WHERE id IN (SELECT value FROM json_each(?)) AND status = 'pending'
         RETURNING *`,
  );
  const items: WorkItem[] = [];
  const claimedEvents: NewEvent[] = [];
  let at = 0;
  for (const c of q.claimers) {
    const ids = picked.slice(at, at + c.limit).map((x) => x.id);
    at += c.limit;
    // Stryker disable next-line ConditionalExpression: equivalent: an empty list claims nothing; this saves the statement
    if (ids.length === 0) break;
    const rows = update.all(c.worker, now + c.lease_ms, now, now, JSON.stringify(ids)) as WorkItemRow[];
    const mine = rows.map(toWorkItem).sort(claimOrder);
    items.push(...mine);
    for (const item of mine) claimedEvents.push(claimedEvent(item, c.worker, c.actor_kind, now));
  }
  const started = new Map<string, number>();
  for (const item of items) {
    // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent: the window update of a key without a limit row matches no row
    if (item.concurrency_key !== null && room.has(item.concurrency_key))
      started.set(item.concurrency_key, (started.get(item.concurrency_key) ?? 0) + 1);
  }
  const window = conn.stmt(
    `UPDATE work_limits SET
         window_count = CASE WHEN window_start + rate_period_ms > ? THEN window_count ELSE 0 END + ?,
         window_start = CASE WHEN window_start + rate_period_ms > ? THEN window_start ELSE ? END
       WHERE key = ? AND rate_count IS NOT NULL`,
  );
  for (const [key, n] of started) window.run(now, n, now, now, key);
  writeEvents(conn, batchEvents(claimedEvents));
  return items;
}

export async function reclaimExpired(
  conn: SqliteConnection,
  now: number,
  actor: string | null,
): Promise<WorkItem[]> {
  return conn.write(() => sweep(conn, now, actor));
}

export async function replayUnfinished(
  conn: SqliteConnection,
  now: number,
  actor: string | null,
): Promise<WorkItem[]> {
  return conn.write(() => {
    sweep(conn, now, actor);
    const rows = conn
      .stmt(`SELECT * FROM work_items w WHERE w.status IN ('pending', 'in_flight', 'waiting_human') ${ORDER}`)
      .all() as WorkItemRow[];
    const items = rows.map(toWorkItem);
    writeEvents(
      conn,
      items.map((item) => replayedEvent(item, actor, now)),
    );
    return items;
  });
}
