// Event log SQL for SQLite: chained inserts inside the caller's transaction, reads, scans.
import type { EventBackend, EventQuery, NewEvent, StoredEvent } from '../../core/backend.js';
import { computeEventHash, GENESIS_HASH } from '../../core/hash.js';
import { toIso } from '../../core/time.js';
import type { EventRecord } from '../../core/types.js';
import { storeClosedError } from '../../errors.js';
import { toEventRecord } from '../shared.js';
import type { SqliteConnection } from './connection.js';

const INSERT = `INSERT INTO events
  (position, stream, stream_seq, type, data, actor, correlation_id, causation_id, work_item_id, created_at, prev_hash, hash)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/**
 * Appends events with gapless positions and per-stream sequences, each hash chained to the previous
 * event. Must run inside a write transaction (BEGIN IMMEDIATE serializes writers, so max+1 is safe).
 */
export function writeEvents(conn: SqliteConnection, events: NewEvent[]): StoredEvent[] {
  if (events.length === 0) return [];
  const head = conn.stmt('SELECT position, hash FROM events ORDER BY position DESC LIMIT 1').get() as
    | { position: number; hash: string }
    | undefined;
  let position = head?.position ?? 0;
  let prevHash = head?.hash ?? GENESIS_HASH;
  const seqs = new Map<string, number>();
  const seqStmt = conn.stmt(
    'SELECT stream_seq FROM events WHERE stream = ? ORDER BY stream_seq DESC LIMIT 1',
  );
  const insert = conn.stmt(INSERT);
  const out: StoredEvent[] = [];
  for (const e of events) {
    let seq = seqs.get(e.stream);
    if (seq === undefined)
      seq = ((seqStmt.get(e.stream) as { stream_seq: number } | undefined)?.stream_seq ?? 0) as number;
    seq += 1;
    seqs.set(e.stream, seq);
    position += 1;
    const stored: StoredEvent = {
      position,
      stream: e.stream,
      stream_seq: seq,
      type: e.type,
      data: JSON.stringify(e.data ?? null),
      actor: e.actor,
      correlation_id: e.correlation_id,
      causation_id: e.causation_id,
      work_item_id: e.work_item_id,
      created_at: e.created_at,
      prev_hash: prevHash,
      hash: '',
    };
    stored.hash = computeEventHash(prevHash, stored);
    insert.run(
      stored.position,
      stored.stream,
      stored.stream_seq,
      stored.type,
      stored.data,
      stored.actor,
      stored.correlation_id,
      stored.causation_id,
      stored.work_item_id,
      stored.created_at,
      stored.prev_hash,
      stored.hash,
    );
    prevHash = stored.hash;
    out.push(stored);
  }
  conn.noteAppended(position);
  return out;
}

// The operations of EventBackend (src/core/events/backend.ts); PostgreSQL's events.ts has the same names.

export async function append(conn: SqliteConnection, events: NewEvent[]): Promise<EventRecord[]> {
  const stored = conn.write(() => writeEvents(conn, events));
  // The data objects are the ones just written: no need to parse the JSON text back.
  return stored.map((s, i) => ({ ...s, data: events[i]!.data ?? null, created_at: toIso(s.created_at) }));
}

export async function read(conn: SqliteConnection, q: EventQuery): Promise<EventRecord[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  /** Adds a condition, with the values of its placeholders. */
  const and = (sql: string, ...values: unknown[]) => {
    where.push(sql);
    params.push(...values);
  };
  and('position > ?', q.after);
  if (q.until !== null) and('position <= ?', q.until);
  if (q.stream !== null) and('stream = ?', q.stream);
  const types = q.types ?? [];
  // One walk of events_type per type, in position order, each stopping at `limit`, merged; then the rows
  // of the positions kept. With `type IN (…)` the planner read every event of those types after `after`
  // and sorted them for each page, so paging through a window (a retro) cost pages × the window (issue
  // 23). An item's or a stream's events are few: their own index reads those.
  const walks = types.length > 1 && q.work_item_id === null && q.stream === null;
  if (types.length > 0 && !walks) and(`type IN (${types.map(() => '?').join(', ')})`, ...types);
  if (q.work_item_id !== null) {
    // The item's own events, and the batch events naming it (event_items, migration 0004).
    and(
      '(work_item_id = ? OR position IN (SELECT position FROM event_items WHERE work_item_id = ?))',
      q.work_item_id,
      q.work_item_id,
    );
  }
  if (q.since !== null) and('created_at >= ?', q.since);
  if (q.before !== null) and('created_at < ?', q.before);
  const order = `ORDER BY position ${q.reverse ? 'DESC' : 'ASC'}`;
  let sql = `SELECT * FROM events WHERE ${where.join(' AND ')} ${order} LIMIT ?`;
  let all = [...params, q.limit];
  if (walks) {
    const walk = `SELECT position FROM events WHERE type = ? AND ${where.join(' AND ')} ${order} LIMIT ?`;
    sql = `SELECT * FROM events WHERE position IN (${types
      .map(() => `SELECT position FROM (${walk})`)
      .join(' UNION ALL ')} ${order} LIMIT ?) ${order}`;
    all = [...types.flatMap((t) => [t, ...params, q.limit]), q.limit];
  }
  const rows = conn.read(() => conn.stmt(sql).all(...all)) as StoredEvent[];
  return rows.map(toEventRecord);
}

export async function scan(
  conn: SqliteConnection,
  afterPosition: number,
  limit: number,
): Promise<StoredEvent[]> {
  return conn.read(
    () =>
      conn
        .stmt('SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?')
        .all(afterPosition, limit) as StoredEvent[],
  );
}

export async function head(conn: SqliteConnection): Promise<{ position: number; hash: string } | null> {
  const row = conn.read(() =>
    conn.stmt('SELECT position, hash FROM events ORDER BY position DESC LIMIT 1').get(),
  ) as { position: number; hash: string } | undefined;
  return row ?? null;
}

export async function typeCounts(
  conn: SqliteConnection,
  since: number,
  until: number,
): Promise<Array<{ type: string; count: number }>> {
  return conn.read(
    () =>
      conn
        .stmt(
          'SELECT type, COUNT(*) AS count FROM events WHERE created_at >= ? AND created_at < ? GROUP BY type ORDER BY count DESC, type',
        )
        .all(since, until) as Array<{ type: string; count: number }>,
  );
}

export async function countTypes(
  conn: SqliteConnection,
  types: string[],
): Promise<Array<{ type: string; count: number }>> {
  if (types.length === 0) return [];
  // One range of events_type (type, position) per type: the count reads only those entries.
  return conn.read(
    () =>
      conn
        .stmt(
          `SELECT type, COUNT(*) AS count FROM events WHERE type IN (${types.map(() => '?').join(', ')}) GROUP BY type ORDER BY type`,
        )
        .all(...types) as Array<{ type: string; count: number }>,
  );
}

/** The EventBackend of one SQLite store: the operations above, on its connection. */
export function createEventBackend(conn: SqliteConnection): EventBackend {
  return {
    append: (events) => append(conn, events),
    read: (q) => read(conn, q),
    scan: (afterPosition, limit) => scan(conn, afterPosition, limit),
    head: () => head(conn),
    typeCounts: (since, until) => typeCounts(conn, since, until),
    countTypes: (types) => countTypes(conn, types),
  };
}

/**
 * Listens for appends to this store's database file: `onAppend` is called right after a write of this
 * process that appended events commits (on any of its connections to the file), and soon after another
 * process's does (a watch of the WAL file, checked by `PRAGMA data_version`, while anyone listens). A hint
 * may be coalesced or spurious; callers keep polling and use it only to poll sooner. Returns a function that
 * stops listening.
 */
export async function listenForAppends(
  conn: SqliteConnection,
  onAppend: (position: number) => void,
): Promise<() => Promise<void>> {
  if (conn.isClosed) throw storeClosedError();
  const stop = await conn.hints.listen(onAppend);
  return async () => stop();
}
