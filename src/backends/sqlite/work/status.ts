// Status changes outside a lease in SQLite: setStatus (setStatusRow, also a document commit's), retry of
// failed and cancelled items with what their failure cancelled, and the cascade that cancels a failed or
// cancelled item's dependants (cascadeRows, also run by resolves and the sweep of expired leases).

import type { NewEvent, RetryQuery, StatusChange } from '../../../core/backend.js';
import { cascadedEvent, reopenedEvent, retriedEvent, statusEvent } from '../../../core/codecs/work-items.js';
import { claimOrder } from '../../../core/rows.js';
import type { WorkItem } from '../../../core/types.js';
import { explainRetryFailure, explainStatusFailure } from '../../../core/work/refusals.js';
import { cascadeError, endedUnsuccessfully, isTerminal, RETRYABLE } from '../../../core/work/rules.js';
import type { SqliteConnection } from '../connection.js';
import { writeEvents } from '../events.js';
import { getItem, toWorkItem, type WorkItemRow } from './shared.js';

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
      // Stryker disable next-line MethodExpression,ConditionalExpression: equivalent: the first event is the item's own, a batch naming one id twice is refused before this loop, and cascade events always name their item
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
