// What is written about an item in PostgreSQL beside its status: a run's records (record, which may
// release the item to wait; recordHeld in one statement), the signals sent to it (signal), its notes
// (annotate).

import type {
  NewEvent,
  Outcome,
  RecordQuery,
  SignalQuery,
  StoredEvent,
  WorkItemBackend,
} from '../../../core/backend.js';
import { ITEM_SIGNALED, RUN_RECORD_TYPES, recordKindOf } from '../../../core/codecs/run-records.js';
import { annotatedEvent, releasedEvent } from '../../../core/codecs/work-items.js';
import type { EventRecord, WorkItem } from '../../../core/types.js';
import {
  checkRecord,
  checkSignal,
  checkUnless,
  explainLeaseFailure,
  explainStatusFailure,
  refusalOf,
  refusedOutcome,
  wakesFor,
} from '../../../core/work/refusals.js';
import { workItemStream } from '../../../core/work/rules.js';
import { InternalError } from '../../../errors.js';
import { toEventRecord } from '../../shared.js';
import type { PostgresConnection, Tx } from '../connection.js';
import { type AppendHint, appendEventsCtes } from '../events.js';
import {
  COLS,
  commitEvents,
  getItem,
  leaseWhere,
  toWorkItem,
  updateOne,
  type WorkItemRow,
} from './shared.js';

/**
 * One record under a lease, with no release or condition (a step's result, alone in its batch): the lease
 * check and the append in one statement, one round trip — the append happens only when `_held` found the
 * item leased to the worker on that attempt, locked until COMMIT.
 */
async function recordHeld(
  conn: PostgresConnection,
  hint: AppendHint | null,
  q: RecordQuery & { lease: { worker: string; attempt: number } },
): Promise<Outcome<WorkItem>> {
  const t = conn.names;
  const lease = { id: q.id, worker: q.lease.worker, attempt: q.lease.attempt, now: q.now };
  const p = conn.params();
  const held = leaseWhere(p, lease);
  const call = appendEventsCtes(t, p, q.events, 'EXISTS (SELECT 1 FROM _held)');
  const row = await conn.transaction(async (tx) => {
    const res = await tx.queryAndCommit<{ row: WorkItemRow | null; n: number; last: number | null }>(
      `WITH _held AS (SELECT row_to_json(w) AS row FROM ${t.work_items} AS w WHERE ${held} FOR UPDATE),
         ${call.ctes}
       SELECT (SELECT row FROM _held) AS row, (SELECT count(*)::int FROM _ev) AS n,
         (SELECT max(e_position) FROM _ev) AS last`,
      p.values,
    );
    return res.rows[0];
  });
  if (!row?.row) {
    // Not the worker's lease on that attempt: nothing was appended; say why from the item as it is now.
    const current = await getItem(conn, q.id);
    return refusalOf(() => explainLeaseFailure(current, lease, 'record a step of'));
  }
  if (row.n !== call.pending.length) {
    throw new InternalError(`append_events stored ${row.n} of ${call.pending.length} events`);
  }
  if (row.last !== null) hint?.appended(row.last);
  return { ok: true, value: toWorkItem(row.row) };
}

export async function record(
  conn: PostgresConnection,
  hint: AppendHint | null,
  qs: RecordQuery[],
): Promise<Array<Outcome<WorkItem>>> {
  const only = qs.length === 1 ? qs[0]! : null;
  if (only?.lease && only.release === null && !only.unless && only.events.length > 0) {
    return [
      await recordHeld(conn, hint, only as RecordQuery & { lease: { worker: string; attempt: number } }),
    ];
  }
  const t = conn.names;
  const ids = [...new Set(qs.map((q) => q.id))];
  return conn.transaction(async (tx) => {
    // The items, locked until COMMIT: no claim, heartbeat or resolve changes one between the check and the append.
    const res = await tx.query<WorkItemRow>(
      `SELECT ${COLS} FROM ${t.work_items} WHERE instance = $1 AND id = ANY($2::text[]) ORDER BY id FOR UPDATE`,
      [conn.instance, ids],
    );
    const items = new Map(res.rows.map((r) => [r.id, toWorkItem(r)]));
    const out: Array<Outcome<WorkItem>> = [];
    const events: NewEvent[] = [];
    for (const q of qs) {
      try {
        const current = items.get(q.id) ?? null;
        checkRecord(current, q);
        if (q.unless) checkUnless(q, await signalCount(tx, conn, q.id, q.unless.signal));
        const held = current as WorkItem;
        if (q.release === null) {
          events.push(...q.events);
          out.push({ ok: true, value: held });
          continue;
        }
        const r = q.release;
        const p = conn.params();
        // As release: the attempt stays spent (a fencing token is never reused); max_attempts grows instead.
        const item = (await updateOne(
          tx,
          p,
          `UPDATE ${t.work_items} SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL,
               max_attempts = max_attempts + 1, not_before = ${p.add(r.not_before)}, updated_at = ${p.add(q.now)}
             WHERE instance = $1 AND id = ${p.add(q.id)} RETURNING *`,
        )) as WorkItem;
        items.set(q.id, item);
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
        out.push({ ok: true, value: item });
      } catch (err) {
        out.push(refusedOutcome(err));
      }
    }
    await commitEvents(tx, conn, hint, events);
    return out;
  });
}

/** How many signals named `name` item `id` has been sent (in the transaction `tx`). */
async function signalCount(tx: Tx, conn: PostgresConnection, id: string, name: string): Promise<number> {
  const res = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${conn.names.events}
       WHERE instance = $1 AND stream = $2 AND type = '${ITEM_SIGNALED}' AND data->>'name' = $3`,
    [conn.instance, workItemStream(id), name],
  );
  return res.rows[0]?.n ?? 0;
}

export async function signal(
  conn: PostgresConnection,
  hint: AppendHint | null,
  q: SignalQuery,
): Promise<{ item: WorkItem; event: EventRecord }> {
  const t = conn.names;
  return conn.transaction(async (tx) => {
    // The item, locked until COMMIT: a claim or a wait's commit waits for this signal, or comes before it.
    const res = await tx.query<WorkItemRow>(
      `SELECT ${COLS} FROM ${t.work_items} WHERE instance = $1 AND id = $2 FOR UPDATE`,
      [conn.instance, q.id],
    );
    const current = res.rows[0] ? toWorkItem(res.rows[0]) : null;
    checkSignal(current, q);
    // The item's last record of its run: whether it is handed back by a wait for this signal.
    const last = await tx.query<{ type: string; data: string }>(
      `SELECT type, data::text AS data FROM ${t.events}
         WHERE instance = $1 AND stream = $2 AND type = ANY($3::text[]) ORDER BY stream_seq DESC LIMIT 1`,
      [conn.instance, workItemStream(q.id), RUN_RECORD_TYPES],
    );
    const row = last.rows[0];
    const wakes = wakesFor(current, row ? recordKindOf(row.type, row.data) : null, q.name);
    let item = current;
    if (wakes) {
      const p = conn.params();
      item = (await updateOne(
        tx,
        p,
        `UPDATE ${t.work_items} SET not_before = ${p.add(q.now)}, updated_at = ${p.add(q.now)}
           WHERE instance = $1 AND id = ${p.add(q.id)} RETURNING *`,
      )) as WorkItem;
    }
    const [event] = await commitEvents(tx, conn, hint, [q.build(wakes)]);
    return { item, event: toEventRecord(event as StoredEvent) };
  });
}

export async function annotate(
  conn: PostgresConnection,
  hint: AppendHint | null,
  q: Parameters<WorkItemBackend['annotate']>[0],
): Promise<WorkItem> {
  const t = conn.names;
  return conn.transaction(async (tx) => {
    const p = conn.params();
    const notes = p.add(JSON.stringify(q.notes));
    const now = p.add(q.now);
    const where = q.lease ? leaseWhere(p, q.lease) : `instance = $1 AND id = ${p.add(q.id)}`;
    // RFC 7396 merge in the UPDATE itself: concurrent annotations never lose each other's keys.
    const hit = await updateOne(
      tx,
      p,
      `UPDATE ${t.work_items} SET notes = ${t.merge_patch}(notes, ${notes}::jsonb), updated_at = ${now}
           WHERE ${where} RETURNING *`,
    );
    if (!hit) {
      if (q.lease) explainLeaseFailure(await getItem(conn, q.id, tx), q.lease, 'annotate');
      explainStatusFailure(null, q.id, 'pending');
    }
    await commitEvents(tx, conn, hint, [annotatedEvent(hit, q.notes, q.actor, q.actor_kind, q.now)]);
    return hit;
  });
}
