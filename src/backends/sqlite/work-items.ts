// Work-item SQL for SQLite: every transition is one conditional statement plus its event, in one
// BEGIN IMMEDIATE transaction.
import type {
  ClaimQuery,
  LeaseQuery,
  NewEvent,
  NewWorkItem,
  Outcome,
  RecordQuery,
  ReleaseQuery,
  ResolveQuery,
  RetryQuery,
  SignalQuery,
  StatusChange,
  StoredEvent,
  WorkHistory,
  WorkHistoryQuery,
  WorkItemBackend,
  WorkItemRowDump,
  WorkStats,
  WorkStatsQuery,
} from '../../core/backend.js';
import { ITEM_SIGNALED, RUN_RECORD_TYPES, recordKindOf } from '../../core/codecs/run-records.js';
import { claimOrder, workItemFromRow } from '../../core/rows.js';
import type {
  EventRecord,
  Json,
  JsonObject,
  StatusCounts,
  WorkItem,
  WorkItemStatus,
} from '../../core/types.js';
import { LOCK_KIND } from '../../core/types.js';
import {
  annotatedEvent,
  batchEvents,
  cascadedEvent,
  cascadeError,
  checkRecord,
  checkSignal,
  checkUnless,
  claimedEvent,
  endedUnsuccessfully,
  enqueuedEvent,
  explainLeaseFailure,
  explainRetryFailure,
  explainStatusFailure,
  type HistoryRow,
  historyBuckets,
  isTerminal,
  RETRYABLE,
  reclaimedEvent,
  refusalOf,
  refusedOutcome,
  releasedEvent,
  reopenedEvent,
  replayedEvent,
  resolvedEvent,
  retriedEvent,
  statusEvent,
  unmatchedResolve,
  wakesFor,
  workItemStream,
} from '../../core/work-rules.js';
import { missingBlocker, statusCounts, toEventRecord } from '../shared.js';
import type { SqliteConnection } from './connection.js';
import { writeEvents } from './events.js';

/** A work_items row as SQLite holds it: the portable row, with its JSON columns as text. */
type WorkItemRow = Omit<WorkItemRowDump, 'payload' | 'notes' | 'result' | 'blocked_by'> & {
  payload: string;
  notes: string;
  result: string;
  blocked_by: string;
};

export function toWorkItem(r: WorkItemRow): WorkItem {
  return workItemFromRow({
    ...r,
    payload: JSON.parse(r.payload) as Json,
    notes: JSON.parse(r.notes) as JsonObject,
    result: JSON.parse(r.result) as Json,
    blocked_by: JSON.parse(r.blocked_by) as string[],
  });
}

// A pending item is ready when its not_before has passed and every blocker is done.
const READY = `w.status = 'pending' AND (w.not_before IS NULL OR w.not_before <= ?)
  AND (w.blocked_by = '[]' OR NOT EXISTS (
    SELECT 1 FROM json_each(w.blocked_by) b
    WHERE NOT EXISTS (SELECT 1 FROM work_items d WHERE d.id = b.value AND d.status = 'done')))`;

const ORDER = 'ORDER BY w.priority DESC, w.created_at, w.id';

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

// INDEXED BY: the planner otherwise walks work_items_status and sorts; these keep claims flat as queues grow.
const RECLAIM = `UPDATE work_items INDEXED BY work_items_leases SET
    status = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'pending' END,
    error = CASE WHEN attempts >= max_attempts THEN 'lease expired on attempt ' || attempts || ' of ' || max_attempts ELSE error END,
    resolved_at = CASE WHEN attempts >= max_attempts THEN ? ELSE NULL END,
    lease_owner = NULL, lease_expires_at = NULL, updated_at = ?
  WHERE status = 'in_flight' AND lease_expires_at <= ?
  RETURNING *`;

/** A failed attempt to try again (the parameter, its retry time, set) while attempts remain. */
const RETRY_DUE = '(? IS NOT NULL AND attempts < max_attempts)';

const LEASE_MATCH = "id = ? AND status = 'in_flight' AND lease_owner = ? AND lease_expires_at > ?";

/**
 * Inserts items; an existing idempotency key returns the existing item (created=false). Returns the result
 * per item and the work_item_enqueued events of the created ones (not yet written). Must run inside a
 * write transaction.
 */
export function enqueueRows(
  conn: SqliteConnection,
  items: NewWorkItem[],
): { out: Array<{ item: WorkItem; created: boolean }>; events: NewEvent[] } {
  const out: Array<{ item: WorkItem; created: boolean }> = [];
  const events: NewEvent[] = [];
  const insert = conn.stmt(
    `INSERT INTO work_items (id, title, kind, status, priority, payload, blocked_by, not_before, max_attempts,
       idempotency_key, on_blocker_failure, concurrency_key, traceparent, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (idempotency_key) DO NOTHING RETURNING *`,
  );
  for (const n of items) {
    for (const dep of n.blocked_by) {
      if (!conn.stmt('SELECT 1 AS x FROM work_items WHERE id = ?').get(dep)) throw missingBlocker(dep);
    }
    const row = insert.get(
      n.id,
      n.title,
      n.kind,
      n.status,
      n.priority,
      JSON.stringify(n.payload ?? null),
      JSON.stringify(n.blocked_by),
      n.not_before,
      n.max_attempts,
      n.idempotency_key,
      n.on_blocker_failure ?? 'wait',
      n.concurrency_key ?? null,
      n.traceparent ?? null,
      n.created_at,
      n.created_at,
    ) as WorkItemRow | undefined;
    if (row) {
      const item = toWorkItem(row);
      out.push({ item, created: true });
      events.push(enqueuedEvent(item, n.actor, n.actor_kind, n.created_at));
    } else {
      const existing = conn
        .stmt('SELECT * FROM work_items WHERE idempotency_key = ?')
        .get(n.idempotency_key) as WorkItemRow;
      out.push({ item: toWorkItem(existing), created: false });
    }
  }
  return { out, events };
}

/**
 * Cancels the pending `cascade` dependants of items that just ended failed or cancelled, and theirs in turn,
 * each recording the blocker (cascaded_from); returns their events (not yet written). Must run inside a
 * write transaction.
 */
export function cascadeRows(
  conn: SqliteConnection,
  ended: WorkItem[],
  actor: string | null,
  now: number,
): NewEvent[] {
  const events: NewEvent[] = [];
  const cancel = conn.stmt(
    // The blocker's dependants by its rows in work_item_blockers, one lookup each (`+status`: not by walking
    // every pending item, which the planner preferred without statistics).
    `UPDATE work_items SET status = 'cancelled', error = ?, cascaded_from = ?, resolved_at = ?, updated_at = ?
     WHERE id IN (SELECT item FROM work_item_blockers WHERE blocker = ?)
       AND +status = 'pending' AND on_blocker_failure = 'cascade'
     RETURNING *`,
  );
  let level = ended.filter((i) => endedUnsuccessfully(i.status));
  while (level.length > 0) {
    const next: WorkItem[] = [];
    for (const blocker of level) {
      const rows = cancel.all(cascadeError(blocker), blocker.id, now, now, blocker.id) as WorkItemRow[];
      for (const item of rows.map(toWorkItem).sort(claimOrder)) {
        events.push(cascadedEvent(item, actor, now));
        next.push(item);
      }
    }
    level = next;
  }
  return events;
}

/**
 * Moves one item from one of `q.from` to `q.to` outside a lease (nothing else written); returns it with the
 * event that records it, and `events`: that event and those of the dependants its failure cancelled. Must
 * run inside a write transaction.
 */
export function setStatusRow(
  conn: SqliteConnection,
  q: StatusChange,
): { item: WorkItem; event: NewEvent; events: NewEvent[] } {
  const row = conn
    .stmt(
      `UPDATE work_items SET status = ?, result = ?, error = ?, lease_expires_at = NULL,
         resolved_at = ?, updated_at = ?
       WHERE id = ? AND status IN (${q.from.map(() => '?').join(', ')}) RETURNING *`,
    )
    .get(
      q.to,
      JSON.stringify(q.result ?? null),
      q.error,
      isTerminal(q.to) ? q.now : null,
      q.now,
      q.id,
      ...q.from,
    ) as WorkItemRow | undefined;
  if (!row) explainStatusFailure(getItem(conn, q.id), q.id, q.to);
  const item = toWorkItem(row);
  const event = statusEvent(item, q);
  return { item, event, events: [event, ...cascadeRows(conn, [item], q.actor, q.now)] };
}

/** The item as stored now, or null. */
export function getItem(conn: SqliteConnection, id: string): WorkItem | null {
  const r = conn.stmt('SELECT * FROM work_items WHERE id = ?').get(id) as WorkItemRow | undefined;
  return r ? toWorkItem(r) : null;
}

/** The condition (and its parameters) that `q`'s worker holds the item's lease, unexpired, on its attempt. */
function leaseWhere(q: LeaseQuery): { sql: string; params: unknown[] } {
  const params: unknown[] = [q.id, q.worker, q.now];
  let sql = LEASE_MATCH;
  if (q.attempt !== null) {
    sql += ' AND attempts = ?';
    params.push(q.attempt);
  }
  return { sql, params };
}

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

/** One resolve (nothing written yet but the rows): the item and the events recording it, if any. */
function resolveOne(conn: SqliteConnection, q: ResolveQuery): { item: WorkItem; events: NewEvent[] } {
  const w = leaseWhere(q);
  const retry = q.status === 'failed' ? q.retry_at : null;
  // RETRY_DUE: a failure that goes back to pending (SET expressions all read the row as it was).
  const row = conn
    .stmt(
      `UPDATE work_items SET status = CASE WHEN ${RETRY_DUE} THEN 'pending' ELSE ? END,
         not_before = CASE WHEN ${RETRY_DUE} THEN ? ELSE not_before END,
         lease_owner = CASE WHEN ${RETRY_DUE} THEN NULL ELSE lease_owner END,
         resolved_at = CASE WHEN ${RETRY_DUE} THEN NULL ELSE ? END,
         result = ?, error = ?, lease_expires_at = NULL, updated_at = ?
         WHERE ${w.sql} RETURNING *`,
    )
    .get(
      ...[retry, q.status, retry, retry, retry, retry, q.now],
      ...[JSON.stringify(q.result ?? null), q.error, q.now, ...w.params],
    ) as WorkItemRow | undefined;
  if (!row) {
    const current = getItem(conn, q.id);
    const change = unmatchedResolve(current, q);
    return change ? setStatusRow(conn, change) : { item: current!, events: [] };
  }
  const item = toWorkItem(row);
  return { item, events: [resolvedEvent(item, q), ...cascadeRows(conn, [item], q.worker, q.now)] };
}

/** Resolves `qs` in one transaction; `each`: a refusal is that item's outcome, else it rolls back all. */
function resolveTx(conn: SqliteConnection, qs: ResolveQuery[], each: boolean): Array<Outcome<WorkItem>> {
  const out: Array<Outcome<WorkItem>> = [];
  const events: NewEvent[] = [];
  for (const q of qs) {
    try {
      const r = resolveOne(conn, q);
      out.push({ ok: true, value: r.item });
      events.push(...r.events);
    } catch (err) {
      out.push(refusedOutcome(err, each));
    }
  }
  writeEvents(conn, batchEvents(events));
  return out;
}

// The operations of WorkItemBackend (src/core/backend.ts), each in its own BEGIN IMMEDIATE transaction (a
// write) or read; PostgreSQL's work-items.ts has the same names.

export async function enqueue(conn: SqliteConnection, items: NewWorkItem[]) {
  return conn.write(() => {
    const { out, events } = enqueueRows(conn, items);
    writeEvents(conn, batchEvents(events));
    return out;
  });
}

export async function claim(conn: SqliteConnection, q: ClaimQuery): Promise<WorkItem[]> {
  return conn.write(() => {
    const now = q.now;
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
    } else if (q.kind === null) {
      // Locks (claim by key) are held by name, never handed out as the next item.
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

/** Claim order (highest priority, oldest, then id as SQLite's BINARY collation compares ASCII ids). */
const byClaimOrder = (a: Candidate, b: Candidate) =>
  b.priority - a.priority || a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

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
    if (n > 0) candidates.push(...(keyed.all(key, now, ...filters, Math.min(n, total)) as Candidate[]));
  }
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
    if (ids.length === 0) break;
    const rows = update.all(c.worker, now + c.lease_ms, now, now, JSON.stringify(ids)) as WorkItemRow[];
    const mine = rows.map(toWorkItem).sort(claimOrder);
    items.push(...mine);
    for (const item of mine) claimedEvents.push(claimedEvent(item, c.worker, c.actor_kind, now));
  }
  const started = new Map<string, number>();
  for (const item of items) {
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

export async function heartbeat(
  conn: SqliteConnection,
  qs: Array<LeaseQuery & { lease_ms: number }>,
): Promise<Array<Outcome<WorkItem>>> {
  return conn.write(() =>
    qs.map((q): Outcome<WorkItem> => {
      const w = leaseWhere(q);
      const row = conn
        .stmt(`UPDATE work_items SET lease_expires_at = ?, updated_at = ? WHERE ${w.sql} RETURNING *`)
        .get(q.now + q.lease_ms, q.now, ...w.params) as WorkItemRow | undefined;
      if (row) return { ok: true, value: toWorkItem(row) };
      return refusalOf(() => explainLeaseFailure(getItem(conn, q.id), q, 'heartbeat'));
    }),
  );
}

export async function resolve(conn: SqliteConnection, qs: ResolveQuery[]): Promise<WorkItem[]> {
  return conn.write(() => resolveTx(conn, qs, false).map((o) => (o as { value: WorkItem }).value));
}

export async function resolveEach(
  conn: SqliteConnection,
  qs: ResolveQuery[],
): Promise<Array<Outcome<WorkItem>>> {
  return conn.write(() => resolveTx(conn, qs, true));
}

export async function release(conn: SqliteConnection, q: ReleaseQuery): Promise<WorkItem> {
  return conn.write(() => {
    const w = leaseWhere(q);
    const row = conn
      .stmt(
        `UPDATE work_items SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL, max_attempts = max_attempts + 1, updated_at = ?
             WHERE ${w.sql} RETURNING *`,
      )
      .get(q.now, ...w.params) as WorkItemRow | undefined;
    if (!row) explainLeaseFailure(getItem(conn, q.id), q, 'release');
    const item = toWorkItem(row);
    writeEvents(conn, [releasedEvent(item, q)]);
    return item;
  });
}

export async function record(conn: SqliteConnection, qs: RecordQuery[]): Promise<Array<Outcome<WorkItem>>> {
  return conn.write(() => {
    const out: Array<Outcome<WorkItem>> = [];
    const events: NewEvent[] = [];
    for (const q of qs) {
      try {
        // The write lock is held (BEGIN IMMEDIATE): the item cannot change between the check and the append.
        let item = getItem(conn, q.id);
        checkRecord(item, q);
        if (q.unless) checkUnless(q, signalCount(conn, q.id, q.unless.signal));
        const held = item as WorkItem;
        if (q.release === null) {
          events.push(...q.events);
        } else {
          const r = q.release;
          // As release: the attempt stays spent (a fencing token is never reused); max_attempts grows instead.
          const row = conn
            .stmt(
              `UPDATE work_items SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL,
                 max_attempts = max_attempts + 1, not_before = ?, updated_at = ? WHERE id = ? RETURNING *`,
            )
            .get(r.not_before, q.now, q.id) as WorkItemRow;
          item = toWorkItem(row);
          events.push(
            ...q.events,
            releasedEvent(item, {
              id: q.id,
              worker: held.lease_owner as string,
              attempt: held.attempts,
              actor: r.actor,
              actor_kind: r.actor_kind,
              not_before: r.not_before,
              now: q.now,
            }),
          );
        }
        out.push({ ok: true, value: item as WorkItem });
      } catch (err) {
        out.push(refusedOutcome(err));
      }
    }
    writeEvents(conn, events);
    return out;
  });
}

/** How many signals named `name` item `id` has been sent. */
function signalCount(conn: SqliteConnection, id: string, name: string): number {
  const r = conn
    .stmt(
      `SELECT count(*) AS n FROM events WHERE stream = ? AND type = '${ITEM_SIGNALED}' AND json_extract(data, '$.name') = ?`,
    )
    .get(workItemStream(id), name) as { n: number };
  return r.n;
}

export async function signal(
  conn: SqliteConnection,
  q: SignalQuery,
): Promise<{ item: WorkItem; event: EventRecord }> {
  return conn.write(() => {
    const current = getItem(conn, q.id);
    checkSignal(current, q);
    // The item's last record of its run: whether it is handed back by a wait for this signal.
    const last = conn
      .stmt(
        `SELECT type, data FROM events WHERE stream = ? AND type IN (${RUN_RECORD_TYPES.map(() => '?').join(', ')})
           ORDER BY stream_seq DESC LIMIT 1`,
      )
      .get(workItemStream(q.id), ...RUN_RECORD_TYPES) as { type: string; data: string } | undefined;
    const wakes = wakesFor(current, last ? recordKindOf(last.type, last.data) : null, q.name);
    let item = current;
    if (wakes) {
      const row = conn
        .stmt('UPDATE work_items SET not_before = ?, updated_at = ? WHERE id = ? RETURNING *')
        .get(q.now, q.now, q.id) as WorkItemRow;
      item = toWorkItem(row);
    }
    const [event] = writeEvents(conn, [q.build(wakes)]);
    return { item, event: toEventRecord(event as StoredEvent) };
  });
}

export async function annotate(
  conn: SqliteConnection,
  q: Parameters<WorkItemBackend['annotate']>[0],
): Promise<WorkItem> {
  return conn.write(() => {
    const w = q.lease ? leaseWhere(q.lease) : { sql: 'id = ?', params: [q.id] };
    const row = conn
      .stmt(`UPDATE work_items SET notes = json_patch(notes, ?), updated_at = ? WHERE ${w.sql} RETURNING *`)
      .get(JSON.stringify(q.notes), q.now, ...w.params) as WorkItemRow | undefined;
    if (!row) {
      if (q.lease) explainLeaseFailure(getItem(conn, q.id), q.lease, 'annotate');
      explainStatusFailure(null, q.id, 'pending');
    }
    const item = toWorkItem(row);
    writeEvents(conn, [annotatedEvent(item, q.notes, q.actor, q.actor_kind, q.now)]);
    return item;
  });
}

export async function setStatus(conn: SqliteConnection, qs: StatusChange[]): Promise<WorkItem[]> {
  return conn.write(() => {
    const out: WorkItem[] = [];
    const events: NewEvent[] = [];
    const cascaded = new Set<string>();
    for (const q of qs) {
      if (cascaded.has(q.id)) {
        out.push(getItem(conn, q.id)!);
        continue;
      }
      const r = setStatusRow(conn, q);
      for (const e of r.events.slice(1)) if (e.work_item_id !== null) cascaded.add(e.work_item_id);
      out.push(r.item);
      events.push(...r.events);
    }
    writeEvents(conn, events);
    return out;
  });
}

export async function retry(conn: SqliteConnection, qs: RetryQuery[]): Promise<WorkItem[]> {
  return conn.write(() => {
    const events: NewEvent[] = [];
    const retried: WorkItem[] = [];
    const update = conn.stmt(
      `UPDATE work_items SET status = 'pending', result = 'null', error = NULL, lease_owner = NULL,
             lease_expires_at = NULL, resolved_at = NULL, cascaded_from = NULL,
             max_attempts = attempts + max_attempts, updated_at = ?
           WHERE id = ? AND status IN ('failed', 'cancelled')
             AND (idempotency_key IS NULL
               OR (substr(idempotency_key, 1, 4) != 'doc:' AND idempotency_key NOT LIKE 'run:%#ask#%'))
           RETURNING *`,
    );
    for (const q of qs) {
      const previous = getItem(conn, q.id);
      const row = update.get(q.now, q.id) as WorkItemRow | undefined;
      if (!previous || !row || !RETRYABLE.includes(previous.status)) explainRetryFailure(previous, q.id);
      const item = toWorkItem(row);
      retried.push(item);
      events.push(retriedEvent(item, previous, q));
    }
    // The items these failures cancelled (cascade) are pending again, and those theirs cancelled.
    const reopen = conn.stmt(
      `UPDATE work_items SET status = 'pending', result = 'null', error = NULL, resolved_at = NULL,
             cascaded_from = NULL, updated_at = ?
           WHERE id = ? RETURNING *`,
    );
    const actorOf = new Map(qs.map((q) => [q.id, q]));
    let level = retried.map((i) => ({ id: i.id, q: actorOf.get(i.id)! }));
    while (level.length > 0) {
      const next: typeof level = [];
      for (const b of level) {
        const cancelled = conn
          .stmt(
            "SELECT * FROM work_items WHERE cascaded_from = ? AND status = 'cancelled' ORDER BY priority DESC, created_at, id",
          )
          .all(b.id) as WorkItemRow[];
        for (const old of cancelled) {
          const item = toWorkItem(reopen.get(b.q.now, old.id) as WorkItemRow);
          events.push(reopenedEvent(item, { error: old.error, blocker: b.id }, b.q.actor, b.q.now));
          next.push({ id: item.id, q: b.q });
        }
      }
      level = next;
    }
    writeEvents(conn, events);
    return retried;
  });
}

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

/** The WorkItemBackend of one SQLite store: the operations above, on its connection. */
export function createWorkItemBackend(conn: SqliteConnection): WorkItemBackend {
  return {
    enqueue: (items) => enqueue(conn, items),
    claim: (q) => claim(conn, q),
    heartbeat: (qs) => heartbeat(conn, qs),
    resolve: (qs) => resolve(conn, qs),
    resolveEach: (qs) => resolveEach(conn, qs),
    release: (q) => release(conn, q),
    record: (qs) => record(conn, qs),
    signal: (q) => signal(conn, q),
    annotate: (q) => annotate(conn, q),
    setStatus: (qs) => setStatus(conn, qs),
    retry: (qs) => retry(conn, qs),
    blockerStates: (ids) => blockerStates(conn, ids),
    get: (id) => get(conn, id),
    list: (q) => list(conn, q),
    counts: () => counts(conn),
    stats: (q) => stats(conn, q),
    history: (q) => history(conn, q),
    reclaimExpired: (now, actor) => reclaimExpired(conn, now, actor),
    replayUnfinished: (now, actor) => replayUnfinished(conn, now, actor),
  };
}
