// Work-item SQL for SQLite: every transition is one conditional statement plus its event, in one
// BEGIN IMMEDIATE transaction.
import type {
  ClaimQuery,
  LeaseQuery,
  NewEvent,
  NewWorkItem,
  Outcome,
  ResolveQuery,
  WorkItemBackend,
} from '../../core/backend.js';
import { claimOrder, workItemFromRow } from '../../core/rows.js';
import type { Json, JsonObject, StatusCounts, WorkItem, WorkItemStatus } from '../../core/types.js';
import { WORK_ITEM_STATUSES } from '../../core/types.js';
import {
  annotatedEvent,
  batchEvents,
  claimedEvent,
  enqueuedEvent,
  explainLeaseFailure,
  explainStatusFailure,
  humanDecisionRefusal,
  humanResolution,
  isRefusal,
  isRepeatedResolve,
  isTerminal,
  ownerOf,
  reclaimedEvent,
  releasedEvent,
  replayedEvent,
  resolvedEvent,
  statusEvent,
} from '../../core/work-rules.js';
import { InvalidInputError } from '../../errors.js';
import type { SqliteConnection } from './connection.js';
import { insertEvents } from './events.js';

interface WorkItemRow {
  id: string;
  title: string;
  kind: string | null;
  status: WorkItemStatus;
  priority: number;
  payload: string;
  notes: string;
  result: string;
  error: string | null;
  attempts: number;
  max_attempts: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  claimed_at: number | null;
  blocked_by: string;
  not_before: number | null;
  idempotency_key: string | null;
  created_at: number;
  updated_at: number;
  resolved_at: number | null;
}

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

// INDEXED BY: the planner otherwise walks work_items_status and sorts; these keep claims flat as queues grow.
const RECLAIM = `UPDATE work_items INDEXED BY work_items_leases SET
    status = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'pending' END,
    error = CASE WHEN attempts >= max_attempts THEN 'lease expired on attempt ' || attempts || ' of ' || max_attempts ELSE error END,
    resolved_at = CASE WHEN attempts >= max_attempts THEN ? ELSE NULL END,
    lease_owner = NULL, lease_expires_at = NULL, updated_at = ?
  WHERE status = 'in_flight' AND lease_expires_at <= ?
  RETURNING *`;

const LEASE_MATCH = "id = ? AND status = 'in_flight' AND lease_owner = ? AND lease_expires_at > ?";

/**
 * Inserts items with their work_item_enqueued events; an existing idempotency key returns the existing
 * item (created=false, no event). Must run inside a write transaction.
 */
export function insertWorkItems(
  conn: SqliteConnection,
  items: NewWorkItem[],
  /** Record the batch as one event per type (enqueueMany), not one per item (a document's effects). */
  batched = false,
): Array<{ item: WorkItem; created: boolean }> {
  const out: Array<{ item: WorkItem; created: boolean }> = [];
  const events: NewEvent[] = [];
  const insert = conn.stmt(
    `INSERT INTO work_items (id, title, kind, status, priority, payload, blocked_by, not_before, max_attempts,
       idempotency_key, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (idempotency_key) DO NOTHING RETURNING *`,
  );
  for (const n of items) {
    for (const dep of n.blocked_by) {
      if (!conn.stmt('SELECT 1 AS x FROM work_items WHERE id = ?').get(dep)) {
        throw new InvalidInputError(`blocked_by names ${dep}, which is not a work item of this instance`, {
          field: 'blocked_by',
          id: dep,
        });
      }
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
      n.created_at,
      n.created_at,
    ) as WorkItemRow | undefined;
    if (row) {
      const item = toWorkItem(row);
      out.push({ item, created: true });
      events.push(enqueuedEvent(item, n.actor, n.created_at));
    } else {
      const existing = conn
        .stmt('SELECT * FROM work_items WHERE idempotency_key = ?')
        .get(n.idempotency_key) as WorkItemRow;
      out.push({ item: toWorkItem(existing), created: false });
    }
  }
  insertEvents(conn, batched ? batchEvents(events) : events);
  return out;
}

/**
 * Moves one item from one of `q.from` to `q.to` outside a lease (nothing else written); returns it with the
 * event that records it. Must run inside a write transaction.
 */
export function setStatusRow(
  conn: SqliteConnection,
  q: Parameters<WorkItemBackend['setStatus']>[0],
): { item: WorkItem; event: NewEvent } {
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
  if (!row) {
    const current = conn.stmt('SELECT * FROM work_items WHERE id = ?').get(q.id) as WorkItemRow | undefined;
    explainStatusFailure(current ? toWorkItem(current) : null, q.id, q.to);
  }
  const item = toWorkItem(row);
  return { item, event: statusEvent(item, q) };
}

/** The refusal `explain` throws, as an outcome (a failure of the storage is thrown on). */
function refusalOf(explain: () => never): Outcome<WorkItem> {
  try {
    explain();
  } catch (err) {
    if (isRefusal(err)) return { ok: false, error: err };
    throw err;
  }
}

export function createWorkItemBackend(conn: SqliteConnection): WorkItemBackend {
  const getRow = (id: string) =>
    conn.stmt('SELECT * FROM work_items WHERE id = ?').get(id) as WorkItemRow | undefined;
  const getItem = (id: string): WorkItem | null => {
    const r = getRow(id);
    return r ? toWorkItem(r) : null;
  };

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
  function reclaim(now: number, actor: string | null): { items: WorkItem[]; events: NewEvent[] } {
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
      events: items.map((item) => reclaimedEvent(item, owners.get(item.id) ?? null, actor, now)),
    };
  }

  function setStatusTx(q: Parameters<WorkItemBackend['setStatus']>[0]): WorkItem {
    const { item, event } = setStatusRow(conn, q);
    insertEvents(conn, [event]);
    return item;
  }

  /** One resolve (nothing written yet but the row): the item and the event recording it, if any. */
  function resolveOne(q: ResolveQuery): { item: WorkItem; event: NewEvent | null } {
    const w = leaseWhere(q);
    const row = conn
      .stmt(
        `UPDATE work_items SET status = ?, result = ?, error = ?, lease_expires_at = NULL, resolved_at = ?, updated_at = ?
         WHERE ${w.sql} RETURNING *`,
      )
      .get(q.status, JSON.stringify(q.result ?? null), q.error, q.now, q.now, ...w.params) as
      | WorkItemRow
      | undefined;
    if (!row) {
      const current = getItem(q.id);
      if (current && isRepeatedResolve(current, q)) return { item: current, event: null };
      if (current?.status === 'waiting_human') {
        if (ownerOf(current)) throw humanDecisionRefusal(current, 'resolve');
        return setStatusRow(conn, humanResolution(q));
      }
      explainLeaseFailure(current, q, 'resolve');
    }
    const item = toWorkItem(row);
    return { item, event: resolvedEvent(item, q) };
  }

  /** Resolves `qs` in one transaction; `each`: a refusal is that item's outcome, else it rolls back all. */
  function resolveTx(qs: ResolveQuery[], each: boolean): Array<Outcome<WorkItem>> {
    const out: Array<Outcome<WorkItem>> = [];
    const events: NewEvent[] = [];
    for (const q of qs) {
      try {
        const r = resolveOne(q);
        out.push({ ok: true, value: r.item });
        if (r.event) events.push(r.event);
      } catch (err) {
        if (!each || !isRefusal(err)) throw err;
        out.push({ ok: false, error: err });
      }
    }
    insertEvents(conn, batchEvents(events));
    return out;
  }

  return {
    async enqueue(items) {
      return conn.write(() => insertWorkItems(conn, items, true));
    },

    async claim(q: ClaimQuery) {
      return conn.write(() => {
        const now = q.now;
        const swept = reclaim(now, q.claimers[0]?.worker ?? null);
        let filter = '';
        const filters: unknown[] = [];
        if (q.kind !== null) {
          filter += ' AND w.kind = ?';
          filters.push(q.kind);
        }
        if (q.id !== null) {
          filter += ' AND w.id = ?';
          filters.push(q.id);
        }
        const claim = conn.stmt(
          `UPDATE work_items SET status = 'in_flight', lease_owner = ?, lease_expires_at = ?, claimed_at = ?,
             attempts = attempts + 1, updated_at = ?
           WHERE id IN (SELECT w.id FROM work_items w INDEXED BY work_items_ready WHERE ${READY}${filter} ${ORDER} LIMIT ?)
           RETURNING *`,
        );
        // Each claimer in turn takes the next ready items (those before it are in flight by then).
        const items: WorkItem[] = [];
        for (const c of q.claimers) {
          const rows = claim.all(
            c.worker,
            now + c.lease_ms,
            now,
            now,
            now,
            ...filters,
            c.limit,
          ) as WorkItemRow[];
          items.push(...rows.map(toWorkItem).sort(claimOrder));
          if (rows.length < c.limit) break;
        }
        const events = [
          ...swept.events,
          ...items.map((item) => claimedEvent(item, item.lease_owner as string, now)),
        ];
        insertEvents(conn, batchEvents(events));
        return items;
      });
    },

    async heartbeat(qs) {
      return conn.write(() =>
        qs.map((q): Outcome<WorkItem> => {
          const w = leaseWhere(q);
          const row = conn
            .stmt(`UPDATE work_items SET lease_expires_at = ?, updated_at = ? WHERE ${w.sql} RETURNING *`)
            .get(q.now + q.lease_ms, q.now, ...w.params) as WorkItemRow | undefined;
          if (row) return { ok: true, value: toWorkItem(row) };
          return refusalOf(() => explainLeaseFailure(getItem(q.id), q, 'heartbeat'));
        }),
      );
    },

    async resolve(qs) {
      return conn.write(() => resolveTx(qs, false).map((o) => (o as { value: WorkItem }).value));
    },

    async resolveEach(qs) {
      return conn.write(() => resolveTx(qs, true));
    },

    async release(q) {
      return conn.write(() => {
        const w = leaseWhere(q);
        const row = conn
          .stmt(
            `UPDATE work_items SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL, max_attempts = max_attempts + 1, updated_at = ?
             WHERE ${w.sql} RETURNING *`,
          )
          .get(q.now, ...w.params) as WorkItemRow | undefined;
        if (!row) explainLeaseFailure(getItem(q.id), q, 'release');
        const item = toWorkItem(row);
        insertEvents(conn, [releasedEvent(item, q.worker, q.now)]);
        return item;
      });
    },

    async annotate(q) {
      return conn.write(() => {
        const w = q.lease ? leaseWhere(q.lease) : { sql: 'id = ?', params: [q.id] };
        const row = conn
          .stmt(
            `UPDATE work_items SET notes = json_patch(notes, ?), updated_at = ? WHERE ${w.sql} RETURNING *`,
          )
          .get(JSON.stringify(q.notes), q.now, ...w.params) as WorkItemRow | undefined;
        if (!row) {
          if (q.lease) explainLeaseFailure(getItem(q.id), q.lease, 'annotate');
          explainStatusFailure(null, q.id, 'pending');
        }
        const item = toWorkItem(row);
        insertEvents(conn, [annotatedEvent(item, q.notes, q.actor, q.now)]);
        return item;
      });
    },

    async setStatus(q) {
      return conn.write(() => setStatusTx(q));
    },

    async get(id) {
      return conn.read(() => getItem(id));
    },

    async list(q) {
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
      if (q.ready !== undefined) {
        where.push(q.ready ? `(${READY})` : `w.status = 'pending' AND NOT (${READY})`);
        params.push(q.now);
      }
      params.push(q.limit);
      const sql = `SELECT * FROM work_items w ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ${ORDER} LIMIT ?`;
      return conn.read(() => (conn.stmt(sql).all(...params) as WorkItemRow[]).map(toWorkItem));
    },

    async counts() {
      const rows = conn.read(
        () =>
          conn.stmt('SELECT status, COUNT(*) AS n FROM work_items GROUP BY status').all() as Array<{
            status: WorkItemStatus;
            n: number;
          }>,
      );
      const counts = Object.fromEntries(WORK_ITEM_STATUSES.map((s) => [s, 0])) as StatusCounts;
      for (const r of rows) counts[r.status] = r.n;
      return counts;
    },

    async reclaimExpired(now, actor) {
      return conn.write(() => {
        const swept = reclaim(now, actor);
        insertEvents(conn, batchEvents(swept.events));
        return swept.items;
      });
    },

    async replayUnfinished(now, actor) {
      return conn.write(() => {
        const swept = reclaim(now, actor);
        const rows = conn
          .stmt(
            `SELECT * FROM work_items w WHERE w.status IN ('pending', 'in_flight', 'waiting_human') ${ORDER}`,
          )
          .all() as WorkItemRow[];
        const items = rows.map(toWorkItem);
        insertEvents(conn, [
          ...batchEvents(swept.events),
          ...items.map((item) => replayedEvent(item, actor, now)),
        ]);
        return items;
      });
    },
  };
}
