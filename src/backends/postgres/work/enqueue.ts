// Enqueueing in PostgreSQL: the items inserted in one statement (enqueueCtes, also a document commit's,
// documents.ts), then those an existing idempotency key returned and the events (settleEnqueue).

import type { NewEvent, NewWorkItem } from '../../../core/backend.js';
import { enqueuedEvent } from '../../../core/codecs/work-items.js';
import type { WorkItem } from '../../../core/types.js';
import { batchEvents } from '../../../core/work/batches.js';
import { InternalError } from '../../../errors.js';
import { missingBlocker } from '../../shared.js';
import { type Names, type Params, type PostgresConnection, recordset, type Tx } from '../connection.js';
import type { AppendHint } from '../events.js';
import { COLS, commitEvents, toWorkItem, type WorkItemRow } from './shared.js';

/**
 * CTEs inserting `items` in one statement while `guard` holds: `_missing` names the first blocker that is
 * no item of this instance (then nothing is inserted), `_ins` returns the rows created. An existing
 * idempotency key inserts nothing (ON CONFLICT DO NOTHING on the unique index), never a duplicate.
 */
export function enqueueCtes(t: Names, p: Params, items: NewWorkItem[], guard: string): string {
  const batch = p.json(
    items.map((n, ord) => ({
      ord,
      id: n.id,
      title: n.title,
      kind: n.kind,
      status: n.status,
      priority: n.priority,
      payload: JSON.stringify(n.payload ?? null),
      blocked_by: n.blocked_by,
      not_before: n.not_before,
      max_attempts: n.max_attempts,
      idempotency_key: n.idempotency_key,
      on_blocker_failure: n.on_blocker_failure ?? 'wait',
      concurrency_key: n.concurrency_key ?? null,
      traceparent: n.traceparent ?? null,
      created_at: n.created_at,
    })),
  );
  const cols = `ord int, id text, title text, kind text, status text, priority int, payload text,
      blocked_by text[], not_before bigint, max_attempts int, idempotency_key text, on_blocker_failure text,
      concurrency_key text, traceparent text, created_at bigint`;
  return `_in AS (SELECT * FROM ${recordset(batch, cols)}),
  _missing AS (
    SELECT b.dep FROM _in AS x CROSS JOIN LATERAL unnest(x.blocked_by) WITH ORDINALITY AS b(dep, k)
    WHERE NOT EXISTS (SELECT 1 FROM ${t.work_items} AS w WHERE w.instance = $1 AND w.id = b.dep)
      AND NOT EXISTS (SELECT 1 FROM _in AS y WHERE y.id = b.dep AND y.ord < x.ord)
    ORDER BY x.ord, b.k LIMIT 1),
  _ins AS (
    INSERT INTO ${t.work_items} (instance, id, title, kind, status, priority, payload, blocked_by, not_before,
      max_attempts, idempotency_key, on_blocker_failure, concurrency_key, traceparent, created_at, updated_at)
    SELECT $1, x.id, x.title, x.kind, x.status, x.priority, x.payload::jsonb, x.blocked_by, x.not_before,
      x.max_attempts, x.idempotency_key, x.on_blocker_failure, x.concurrency_key, x.traceparent, x.created_at,
      x.created_at
    FROM _in AS x WHERE NOT EXISTS (SELECT 1 FROM _missing) AND ${guard}
    ORDER BY x.ord
    ON CONFLICT (instance, idempotency_key) DO NOTHING
    RETURNING *)`;
}

/**
 * After `enqueueCtes` ran: the result per input item (an existing idempotency key yields the existing item,
 * created=false) and the enqueued events of the created ones, in input order.
 */
export async function settleEnqueue(
  tx: Tx,
  conn: PostgresConnection,
  items: NewWorkItem[],
  created: WorkItemRow[],
): Promise<{ out: Array<{ item: WorkItem; created: boolean }>; events: NewEvent[] }> {
  const byId = new Map(created.map((r) => [r.id, r]));
  const keys = items.filter((n) => !byId.has(n.id)).map((n) => n.idempotency_key);
  const byKey = new Map<string, WorkItemRow>();
  if (keys.length > 0) {
    // A new statement: it sees rows that concurrent enqueues committed after the insert's snapshot.
    const res = await tx.query<WorkItemRow>(
      `SELECT ${COLS} FROM ${conn.names.work_items} WHERE instance = $1 AND idempotency_key = ANY($2::text[])`,
      [conn.instance, keys],
    );
    for (const r of res.rows) if (r.idempotency_key !== null) byKey.set(r.idempotency_key, r);
  }
  const out: Array<{ item: WorkItem; created: boolean }> = [];
  const events: NewEvent[] = [];
  for (const n of items) {
    const row = byId.get(n.id);
    if (row) {
      const item = toWorkItem(row);
      out.push({ item, created: true });
      events.push(enqueuedEvent(item, n.actor, n.actor_kind, n.created_at));
      continue;
    }
    const existing = n.idempotency_key === null ? undefined : byKey.get(n.idempotency_key);
    if (!existing) throw new InternalError(`work item ${n.id} was neither inserted nor found by its key`);
    out.push({ item: toWorkItem(existing), created: false });
  }
  return { out, events };
}

/**
 * Inserts items in one statement; an existing idempotency key returns the existing item (created=false).
 * Returns the result per item and the work_item_enqueued events of the created ones (nothing committed yet).
 */
export async function enqueueRows(
  tx: Tx,
  conn: PostgresConnection,
  items: NewWorkItem[],
): Promise<{ out: Array<{ item: WorkItem; created: boolean }>; events: NewEvent[] }> {
  const p = conn.params();
  const res = await tx.query<{ created: WorkItemRow[] | null; missing: string | null }>(
    `WITH ${enqueueCtes(conn.names, p, items, 'true')}
     SELECT (SELECT json_agg(i) FROM _ins AS i) AS created, (SELECT dep FROM _missing) AS missing`,
    p.values,
  );
  const row = res.rows[0];
  if (row?.missing) throw missingBlocker(row.missing);
  return settleEnqueue(tx, conn, items, row?.created ?? []);
}

export async function enqueue(
  conn: PostgresConnection,
  hint: AppendHint | null,
  items: NewWorkItem[],
): Promise<Array<{ item: WorkItem; created: boolean }>> {
  if (items.length === 0) return [];
  return conn.transaction(async (tx) => {
    const { out, events } = await enqueueRows(tx, conn, items);
    await commitEvents(tx, conn, hint, batchEvents(events));
    return out;
  });
}
