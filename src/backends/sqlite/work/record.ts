// What is written about an item in SQLite beside its status: a run's records (record, which may release
// the item to wait), the signals sent to it (signal), its notes (annotate).

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
  refusedOutcome,
  wakesFor,
} from '../../../core/work/refusals.js';
import { workItemStream } from '../../../core/work/rules.js';
import { toEventRecord } from '../../shared.js';
import type { SqliteConnection } from '../connection.js';
import { writeEvents } from '../events.js';
import { getItem, leaseWhere, toWorkItem, type WorkItemRow } from './shared.js';

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
