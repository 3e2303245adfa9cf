// Status changes outside a lease in PostgreSQL: setStatus (setStatusRow, also a document commit's), retry
// of failed and cancelled items with what their failure cancelled, and the cascade that cancels a failed or
// cancelled item's dependants (cascadeRows, also run by resolves and the reclaim of expired leases).

import type { NewEvent, RetryQuery, StatusChange } from '../../../core/backend.js';
import { cascadedEvent, reopenedEvent, retriedEvent, statusEvent } from '../../../core/codecs/work-items.js';
import { claimOrder } from '../../../core/rows.js';
import type { WorkItem } from '../../../core/types.js';
import { explainRetryFailure, explainStatusFailure } from '../../../core/work/refusals.js';
import { cascadeError, endedUnsuccessfully, isTerminal, RETRYABLE } from '../../../core/work/rules.js';
import { jsonRows, type PostgresConnection, recordset, type Tx } from '../connection.js';
import type { AppendHint } from '../events.js';
import {
  COLS,
  commitEvents,
  dependantsOf,
  getItem,
  itemById,
  sameItem,
  toWorkItem,
  updateOne,
  W_COLS,
  type WorkItemRow,
} from './shared.js';

/**
 * Cancels the pending `cascade` dependants of items that just ended failed or cancelled, and theirs in turn
 * (one statement per level), each recording the blocker (cascaded_from); returns their events (nothing
 * committed yet).
 */
export async function cascadeRows(
  tx: Tx,
  conn: PostgresConnection,
  /** The items just ended, each with the actor who ended it (the actor of its dependants' events). */
  ended: Array<{ item: WorkItem; actor: string | null }>,
  now: number,
): Promise<NewEvent[]> {
  const t = conn.names;
  const events: NewEvent[] = [];
  let level = ended.filter((e) => endedUnsuccessfully(e.item.status));
  while (level.length > 0) {
    const p = conn.params();
    const blockers = p.json(level.map((b, ord) => ({ ord, id: b.item.id, error: cascadeError(b.item) })));
    const nowP = p.add(now);
    // The blockers' dependants by their rows in work_item_blockers, each locked (in id order) and then
    // tested and updated by primary key, as inAt does: never every pending item, which the planner walked
    // when the UPDATE tested the status itself. A dependant of two blockers ending together records the
    // first of them.
    const res = await tx.query<{ rows: WorkItemRow[] | null }>(
      `WITH _b AS (SELECT * FROM ${recordset(blockers, 'ord int, id text, error text')}),
       _e AS MATERIALIZED (
         SELECT DISTINCT ON (e.item) e.item AS id, b.id AS blocker, b.error
         FROM _b AS b ${dependantsOf(t, 'b.id')}
         ORDER BY e.item, b.ord),
       _d AS MATERIALIZED (
         SELECT x.*, w.instance AS inst FROM _e AS x
           ${itemById(t, 'x.id', 'instance, status, on_blocker_failure', 'w', 'FOR UPDATE')}
         WHERE w.status = 'pending' AND w.on_blocker_failure = 'cascade'),
       _u AS (
         UPDATE ${t.work_items} AS w SET status = 'cancelled', error = d.error, cascaded_from = d.blocker,
           resolved_at = ${nowP}, updated_at = ${nowP}
         FROM _d AS d
         WHERE ${sameItem('d')}
         RETURNING ${W_COLS})
       SELECT ${jsonRows('_u')}`,
      p.values,
    );
    const actorOf = new Map(level.map((b) => [b.item.id, b.actor]));
    // Stryker disable next-line OptionalChaining: equivalent: a SELECT without FROM returns one row
    const items = (res.rows[0]?.rows ?? []).map(toWorkItem).sort(claimOrder);
    // Stryker disable next-line StringLiteral: equivalent: a cancelled dependant always names the blocker it was cancelled for
    level = items.map((item) => ({ item, actor: actorOf.get(item.cascaded_from ?? '') ?? null }));
    for (const c of level) events.push(cascadedEvent(c.item, c.actor, now));
  }
  return events;
}

/**
 * Moves one item from one of `q.from` to `q.to` outside a lease (nothing committed yet); returns it with the
 * event that records it, and `events`: that event and those of the dependants its failure cancelled.
 */
export async function setStatusRow(
  tx: Tx,
  conn: PostgresConnection,
  q: StatusChange,
): Promise<{ item: WorkItem; event: NewEvent; events: NewEvent[] }> {
  const t = conn.names;
  const p = conn.params();
  const now = p.add(q.now);
  const res = await tx.query<{ row: WorkItemRow | null; current: WorkItemRow | null }>(
    `WITH _u AS (
       UPDATE ${t.work_items} SET status = ${p.add(q.to)}, result = ${p.add(JSON.stringify(q.result ?? null))}::jsonb,
         error = ${p.add(q.error)}, lease_expires_at = NULL, resolved_at = ${p.add(isTerminal(q.to) ? q.now : null)}::bigint,
         updated_at = ${now}
       WHERE instance = $1 AND id = ${p.add(q.id)} AND status = ANY(${p.add(q.from)}::text[]) RETURNING *)
     SELECT (SELECT row_to_json(u) FROM _u AS u) AS row`,
    p.values,
  );
  // Stryker disable next-line OptionalChaining: equivalent: a SELECT without FROM returns one row
  const row = res.rows[0]?.row;
  if (!row) explainStatusFailure(await getItem(conn, q.id, tx), q.id, q.to);
  const item = toWorkItem(row);
  const event = statusEvent(item, q);
  return {
    item,
    event,
    events: [event, ...(await cascadeRows(tx, conn, [{ item, actor: q.actor }], q.now))],
  };
}

export async function setStatus(
  conn: PostgresConnection,
  hint: AppendHint | null,
  qs: StatusChange[],
): Promise<WorkItem[]> {
  return conn.transaction(async (tx) => {
    const out: WorkItem[] = [];
    const events: NewEvent[] = [];
    const cascaded = new Set<string>();
    for (const q of qs) {
      if (cascaded.has(q.id)) {
        out.push((await getItem(conn, q.id, tx))!);
        continue;
      }
      const r = await setStatusRow(tx, conn, q);
      // Stryker disable next-line MethodExpression,ConditionalExpression: equivalent: the first event is the item's own, a batch naming one id twice is refused before this loop, and cascade events always name their item
      for (const e of r.events.slice(1)) if (e.work_item_id !== null) cascaded.add(e.work_item_id);
      out.push(r.item);
      events.push(...r.events);
    }
    await commitEvents(tx, conn, hint, events);
    return out;
  });
}

export async function retry(
  conn: PostgresConnection,
  hint: AppendHint | null,
  qs: RetryQuery[],
): Promise<WorkItem[]> {
  const t = conn.names;
  // Stryker disable next-line ConditionalExpression,ArrayDeclaration: equivalent: WorkQueue never sends an empty batch, and an empty one changes nothing
  if (qs.length === 0) return [];
  return conn.transaction(async (tx) => {
    const events: NewEvent[] = [];
    const retried: Array<{ item: WorkItem; q: RetryQuery }> = [];
    for (const q of qs) {
      // Locked first: a concurrent retry of the same item waits, then finds it pending and is refused.
      const cur = await tx.query<WorkItemRow>(
        `SELECT ${COLS} FROM ${t.work_items} WHERE instance = $1 AND id = $2 FOR UPDATE`,
        [conn.instance, q.id],
      );
      const previous = cur.rows[0] ? toWorkItem(cur.rows[0]) : null;
      const p = conn.params();
      const item =
        // Stryker disable next-line ConditionalExpression: equivalent: the UPDATE's WHERE repeats the status test, and explainRetryFailure reports a missing item either way
        previous && RETRYABLE.includes(previous.status)
          ? await updateOne(
              tx,
              p,
              `UPDATE ${t.work_items} SET status = 'pending', result = 'null'::jsonb, error = NULL,
                     lease_owner = NULL, lease_expires_at = NULL, resolved_at = NULL, cascaded_from = NULL,
                     max_attempts = attempts + max_attempts, updated_at = ${p.add(q.now)}
                   WHERE instance = $1 AND id = ${p.add(q.id)} AND status IN ('failed', 'cancelled')
                     AND (idempotency_key IS NULL
                       OR (left(idempotency_key, 4) <> 'doc:' AND idempotency_key NOT LIKE 'run:%#ask#%'))
                   RETURNING *`,
            )
          : null;
      if (!previous || !item) explainRetryFailure(previous, q.id);
      retried.push({ item, q });
      events.push(retriedEvent(item, previous, q));
    }
    // The items these failures cancelled (cascade) are pending again, and those theirs cancelled.
    let level = retried.map((r) => ({ id: r.item.id, q: r.q }));
    while (level.length > 0) {
      const p = conn.params();
      const ids = p.add(level.map((b) => b.id));
      const nowP = p.add(level[0]!.q.now);
      const res = await tx.query<{
        rows: Array<WorkItemRow & { _blocker: string; _error: string | null }> | null;
      }>(
        `WITH _old AS (
               SELECT id, cascaded_from, error FROM ${t.work_items}
               WHERE instance = $1 AND status = 'cancelled' AND cascaded_from = ANY(${ids}::text[]) FOR UPDATE),
             _u AS (
               UPDATE ${t.work_items} AS w SET status = 'pending', result = 'null'::jsonb, error = NULL,
                 resolved_at = NULL, cascaded_from = NULL, updated_at = ${nowP}
               FROM _old AS o WHERE w.instance = $1 AND w.id = o.id
               RETURNING ${W_COLS}, o.cascaded_from AS _blocker, o.error AS _error)
             SELECT ${jsonRows('_u')}`,
        p.values,
      );
      const byId = new Map(level.map((b) => [b.id, b.q]));
      // Stryker disable next-line OptionalChaining: equivalent: a SELECT without FROM returns one row
      const rows = (res.rows[0]?.rows ?? [])
        .map((r) => ({ r, item: toWorkItem(r) }))
        .sort((a, b) => claimOrder(a.item, b.item));
      const next: typeof level = [];
      for (const { r, item } of rows) {
        const q = byId.get(r._blocker)!;
        events.push(reopenedEvent(item, { error: r._error, blocker: r._blocker }, q.actor, q.now));
        next.push({ id: item.id, q });
      }
      level = next;
    }
    await commitEvents(tx, conn, hint, events);
    return retried.map((r) => r.item);
  });
}
