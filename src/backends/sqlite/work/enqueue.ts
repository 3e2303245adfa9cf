// Enqueueing in SQLite: the rows inserted (an existing idempotency key returns its item) and their events,
// in one BEGIN IMMEDIATE transaction; enqueueRows is also a document commit's (documents.ts).

import type { NewEvent, NewWorkItem } from '../../../core/backend.js';
import { enqueuedEvent } from '../../../core/codecs/work-items.js';
import type { WorkItem } from '../../../core/types.js';
import { batchEvents } from '../../../core/work/batches.js';
import { missingBlocker } from '../../shared.js';
import type { SqliteConnection } from '../connection.js';
import { writeEvents } from '../events.js';
import { toWorkItem, type WorkItemRow } from './shared.js';

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

export async function enqueue(conn: SqliteConnection, items: NewWorkItem[]) {
  return conn.write(() => {
    const { out, events } = enqueueRows(conn, items);
    writeEvents(conn, batchEvents(events));
    return out;
  });
}
