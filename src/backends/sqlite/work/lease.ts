// What the holder of a lease does with it in SQLite: extend it (heartbeat), end it (resolve, resolveEach:
// a failure may go back to pending for a retry, or cancel its dependants) or give the item back (release).

import type { LeaseQuery, NewEvent, Outcome, ReleaseQuery, ResolveQuery } from '../../../core/backend.js';
import { releasedEvent, resolvedEvent } from '../../../core/codecs/work-items.js';
import type { WorkItem } from '../../../core/types.js';
import { batchEvents } from '../../../core/work/batches.js';
import {
  explainLeaseFailure,
  refusalOf,
  refusedOutcome,
  unmatchedResolve,
} from '../../../core/work/refusals.js';
import type { SqliteConnection } from '../connection.js';
import { writeEvents } from '../events.js';
import { getItem, leaseWhere, toWorkItem, type WorkItemRow } from './shared.js';
import { cascadeRows, setStatusRow } from './status.js';

/** A failed attempt to try again (the parameter, its retry time, set) while attempts remain. */
// Stryker disable next-line StringLiteral: a static mutant (a module constant), left to every resolve test, which fails on the invalid SQL
const RETRY_DUE = '(? IS NOT NULL AND attempts < max_attempts)';

/** One resolve (nothing written yet but the rows): the item and the events recording it, if any. */
function resolveOne(conn: SqliteConnection, q: ResolveQuery): { item: WorkItem; events: NewEvent[] } {
  const w = leaseWhere(q);
  // Stryker disable next-line ConditionalExpression: equivalent behind the queue: WorkQueue refuses retry_at with any status but failed (INVALID_INPUT, tested)
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
