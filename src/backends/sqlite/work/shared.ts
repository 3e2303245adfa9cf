// What SQLite's work-item files share: the work_items row and its mapping to a WorkItem, the claim ORDER
// and the READY condition, one item read by id, and the condition that a worker holds an item's lease.
import type { LeaseQuery, WorkItemRowDump } from '../../../core/backend.js';
import { workItemFromRow } from '../../../core/rows.js';
import type { Json, JsonObject, WorkItem } from '../../../core/types.js';
import type { SqliteConnection } from '../connection.js';

/** A work_items row as SQLite holds it: the portable row, with its JSON columns as text. */
export type WorkItemRow = Omit<WorkItemRowDump, 'payload' | 'notes' | 'result' | 'blocked_by'> & {
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
export const READY = `w.status = 'pending' AND (w.not_before IS NULL OR w.not_before <= ?)
  AND (w.blocked_by = '[]' OR NOT EXISTS (
    SELECT 1 FROM json_each(w.blocked_by) b
    WHERE NOT EXISTS (SELECT 1 FROM work_items d WHERE d.id = b.value AND d.status = 'done')))`;

export const ORDER = 'ORDER BY w.priority DESC, w.created_at, w.id';

const LEASE_MATCH = "id = ? AND status = 'in_flight' AND lease_owner = ? AND lease_expires_at > ?";

/** The item as stored now, or null. */
export function getItem(conn: SqliteConnection, id: string): WorkItem | null {
  const r = conn.stmt('SELECT * FROM work_items WHERE id = ?').get(id) as WorkItemRow | undefined;
  return r ? toWorkItem(r) : null;
}

/** The condition (and its parameters) that `q`'s worker holds the item's lease, unexpired, on its attempt. */
export function leaseWhere(q: LeaseQuery): { sql: string; params: unknown[] } {
  const params: unknown[] = [q.id, q.worker, q.now];
  let sql = LEASE_MATCH;
  if (q.attempt !== null) {
    sql += ' AND attempts = ?';
    params.push(q.attempt);
  }
  return { sql, params };
}
