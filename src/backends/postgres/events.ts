// Event log SQL for PostgreSQL: positions and stream sequences reserved under the instance's head row lock
// inside the writing statement, hash-chained inserts, reads, scans, and the optional NOTIFY wake-up hint.
import type { EventBackend, EventQuery, NewEvent, StoredEvent } from '../../core/backend.js';
import { computeEventHash, GENESIS_HASH } from '../../core/hash.js';
import { toIso } from '../../core/time.js';
import type { EventRecord, Json } from '../../core/types.js';
import { InternalError } from '../../errors.js';
import type { Names, PostgresConnection, Tx } from './connection.js';
import { createListener } from './driver.js';

/** The NOTIFY channel; the payload names the schema, the instance and the new head position. */
export const NOTIFY_CHANNEL = 'agentstate_events';

/** What a writing statement reserved: the head before the new events, and each stream's last new seq. */
export interface Reservation {
  /** The last position reserved (the new head). */
  last: number;
  /** The hash of the event before the first reserved position (GENESIS_HASH for an empty log). */
  prevHash: string;
  total: number;
  streams: Map<string, { last: number; n: number }>;
}

/**
 * CTEs that reserve positions and stream sequences for the events a statement is about to cause, given
 * `want`: a query of (stream text, n int) over the statement's own results. `$1` must be the instance.
 *
 * The head row is upserted (ON CONFLICT DO UPDATE), which locks it and always acts on its newest committed
 * version, even one committed after the statement's snapshot, and so do the stream counters. Nothing is
 * locked when `want` is empty. Writers take the head as their last lock and then only insert events and
 * commit, so it cannot close a deadlock cycle (the dump loader alone takes it first, on an empty instance).
 */
export function reserveEvents(t: Names, want: string): string {
  return `_want AS (SELECT stream, sum(n)::int AS n FROM (${want}) AS w GROUP BY stream HAVING sum(n) > 0),
  _total AS (SELECT COALESCE(sum(n), 0)::int AS n FROM _want),
  _head AS (
    INSERT INTO ${t.event_heads} AS h (instance, position, hash)
    SELECT $1, n, '${GENESIS_HASH}' FROM _total WHERE n > 0
    ON CONFLICT (instance) DO UPDATE SET position = h.position + EXCLUDED.position
    RETURNING h.position, h.hash),
  _seqs AS (
    INSERT INTO ${t.event_streams} AS s (instance, stream, seq)
    SELECT $1, w.stream, w.n FROM _want AS w CROSS JOIN _head
    ON CONFLICT (instance, stream) DO UPDATE SET seq = s.seq + EXCLUDED.seq
    RETURNING s.stream, s.seq)`;
}

/** The columns a statement using `reserveEvents` must select, read back by `reservationOf`. */
export const RESERVATION_COLUMNS = `(SELECT row_to_json(h) FROM _head AS h) AS _head,
  (SELECT n FROM _total) AS _total,
  (SELECT json_agg(json_build_object('stream', q.stream, 'last', q.seq, 'n', w.n))
     FROM _seqs AS q JOIN _want AS w USING (stream)) AS _seqs`;

export interface ReservationRow {
  _head: { position: number; hash: string } | null;
  _total: number | null;
  _seqs: Array<{ stream: string; last: number; n: number }> | null;
}

export function reservationOf(row: ReservationRow | undefined): Reservation | null {
  if (!row?._head) return null;
  const total = row._total ?? 0;
  return {
    last: row._head.position,
    // The head row still holds the hash of the event before the reserved range.
    prevHash: row._head.hash,
    total,
    streams: new Map((row._seqs ?? []).map((s) => [s.stream, { last: s.last, n: s.n }])),
  };
}

const EVENT_COLS =
  'position, stream, stream_seq, type, data::text AS data, actor, correlation_id, causation_id, work_item_id, created_at, prev_hash, hash';

/** The text PostgreSQL will store for `s`: lone surrogates become U+FFFD, so hash that, not the JS string. */
function storable(s: string | null): string | null {
  return s !== null && /[\uD800-\uDFFF]/.test(s) ? Buffer.from(s, 'utf8').toString('utf8') : s;
}

export function toEventRecord(row: StoredEvent): EventRecord {
  return { ...row, data: JSON.parse(row.data) as Json, created_at: toIso(row.created_at) };
}

/**
 * Inserts `events` into the positions `r` reserved, each hash chained to the previous one, and moves the
 * head hash; pipelined with COMMIT when `commit` is set. The events must be exactly the ones the reserving
 * statement counted (same streams, same numbers), in the order they happened.
 */
export async function writeEvents(
  tx: Tx,
  conn: PostgresConnection,
  r: Reservation | null,
  events: NewEvent[],
  opts: { commit: boolean; notify: boolean },
): Promise<StoredEvent[]> {
  if (events.length === 0) return [];
  const counts = new Map<string, number>();
  for (const e of events) {
    const stream = storable(e.stream) as string;
    counts.set(stream, (counts.get(stream) ?? 0) + 1);
  }
  if (
    !r ||
    r.total !== events.length ||
    r.streams.size !== counts.size ||
    [...counts].some(([s, n]) => r.streams.get(s)?.n !== n)
  ) {
    throw new InternalError(
      `event reservation mismatch: reserved ${r?.total ?? 0} positions for ${events.length} events`,
    );
  }
  let position = r.last - r.total;
  let prevHash = r.prevHash;
  const next = new Map([...r.streams].map(([s, v]) => [s, v.last - v.n]));
  const out: StoredEvent[] = [];
  for (const e of events) {
    const stream = storable(e.stream) as string;
    const seq = (next.get(stream) ?? 0) + 1;
    next.set(stream, seq);
    position += 1;
    const stored: StoredEvent = {
      position,
      stream,
      stream_seq: seq,
      type: storable(e.type) as string,
      data: JSON.stringify(e.data ?? null),
      actor: storable(e.actor),
      correlation_id: storable(e.correlation_id),
      causation_id: storable(e.causation_id),
      work_item_id: storable(e.work_item_id),
      created_at: e.created_at,
      prev_hash: prevHash,
      hash: '',
    };
    stored.hash = computeEventHash(prevHash, stored);
    prevHash = stored.hash;
    out.push(stored);
  }
  const col = <K extends keyof StoredEvent>(k: K) => out.map((e) => e[k]);
  const t = conn.names;
  // The head already sits at the last reserved position (this transaction moved it there and holds its
  // lock until COMMIT); only its hash moves.
  const sql = `WITH _ins AS (
      INSERT INTO ${t.events}
        (instance, position, stream, stream_seq, type, data, actor, correlation_id, causation_id, work_item_id,
         created_at, prev_hash, hash)
      SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::bigint[], $5::text[], $6::json[], $7::text[],
        $8::text[], $9::text[], $10::text[], $11::bigint[], $12::text[], $13::text[])),
    _head AS (UPDATE ${t.event_heads} SET hash = $14 WHERE instance = $1 RETURNING position)
    SELECT ${
      opts.notify
        ? `pg_notify('${NOTIFY_CHANNEL}', json_build_object('schema', '${conn.schema}', 'instance', $1::text, 'position', position)::text)`
        : 'position'
    } FROM _head`;
  const params = [
    conn.instance,
    col('position'),
    col('stream'),
    col('stream_seq'),
    col('type'),
    col('data'),
    col('actor'),
    col('correlation_id'),
    col('causation_id'),
    col('work_item_id'),
    col('created_at'),
    col('prev_hash'),
    col('hash'),
    prevHash,
  ];
  if (opts.commit) await tx.queryAndCommit(sql, params);
  else await tx.query(sql, params);
  return out;
}

export function createEventBackend(conn: PostgresConnection, notify: boolean): EventBackend {
  const t = conn.names;
  return {
    async append(events) {
      if (events.length === 0) return [];
      const stored = await conn.transaction(async (tx) => {
        const p = conn.params();
        const streams = p.add(events.map((e) => e.stream));
        const res = await tx.query<ReservationRow>(
          `WITH ${reserveEvents(t, `SELECT s AS stream, 1 AS n FROM unnest(${streams}::text[]) AS s`)}
           SELECT ${RESERVATION_COLUMNS}`,
          p.values,
        );
        return writeEvents(tx, conn, reservationOf(res.rows[0]), events, { commit: true, notify });
      });
      return stored.map(toEventRecord);
    },

    async read(q: EventQuery) {
      const p = conn.params();
      const where: string[] = ['instance = $1', `position > ${p.add(q.after)}`];
      if (q.until !== null) where.push(`position <= ${p.add(q.until)}`);
      if (q.stream !== null) where.push(`stream = ${p.add(q.stream)}`);
      if (q.types !== null && q.types.length > 0) where.push(`type = ANY(${p.add(q.types)}::text[])`);
      if (q.work_item_id !== null) where.push(`work_item_id = ${p.add(q.work_item_id)}`);
      if (q.since !== null) where.push(`created_at >= ${p.add(q.since)}`);
      if (q.before !== null) where.push(`created_at < ${p.add(q.before)}`);
      const sql = `SELECT ${EVENT_COLS} FROM ${t.events} WHERE ${where.join(' AND ')}
        ORDER BY position ${q.reverse ? 'DESC' : 'ASC'} LIMIT ${p.add(q.limit)}`;
      const res = await conn.query<StoredEvent>(sql, p.values);
      return res.rows.map(toEventRecord);
    },

    async scan(afterPosition, limit) {
      const res = await conn.query<StoredEvent>(
        `SELECT ${EVENT_COLS} FROM ${t.events} WHERE instance = $1 AND position > $2 ORDER BY position LIMIT $3`,
        [conn.instance, afterPosition, limit],
      );
      return res.rows;
    },

    async head() {
      const res = await conn.query<{ position: number; hash: string }>(
        `SELECT position, hash FROM ${t.events} WHERE instance = $1 ORDER BY position DESC LIMIT 1`,
        [conn.instance],
      );
      return res.rows[0] ?? null;
    },

    async typeCounts(since, until) {
      const res = await conn.query<{ type: string; count: number }>(
        `SELECT type, count(*) AS count FROM ${t.events}
         WHERE instance = $1 AND created_at >= $2 AND created_at < $3
         GROUP BY type ORDER BY count DESC, type`,
        [conn.instance, since, until],
      );
      return res.rows;
    },
  };
}

/**
 * Listens for the append hint of this store's instance on a dedicated connection (never a pooled one:
 * poolers and pools drop LISTEN). A hint may be lost; callers must keep polling, and use it only to poll
 * sooner. Returns a function that stops listening.
 */
export async function listenForAppends(
  conn: PostgresConnection,
  onAppend: (position: number) => void,
): Promise<() => Promise<void>> {
  const client = await createListener(conn.config);
  client.on('error', () => {
    // The hint is best effort: a lost listener only means polling at the normal pace.
  });
  try {
    await client.connect();
    client.on('notification', (msg) => {
      if (msg.channel !== NOTIFY_CHANNEL || !msg.payload) return;
      try {
        const p = JSON.parse(msg.payload) as { schema?: string; instance?: string; position?: number };
        if (p.schema === conn.schema && p.instance === conn.instance) onAppend(Number(p.position));
      } catch {
        // Not ours.
      }
    });
    await client.query(`LISTEN ${NOTIFY_CHANNEL}`);
  } catch (err) {
    await client.end().catch(() => {});
    throw conn.mapError(err);
  }
  return async () => {
    await client.end().catch(() => {});
  };
}
