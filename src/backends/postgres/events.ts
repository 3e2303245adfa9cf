// Event log SQL for PostgreSQL: appends through the store's append_events function (positions, stream
// sequences and the hash chain assigned under the instance's head row lock in the writer's last
// statement), reads, scans, and the NOTIFY wake-up hint.
import type { EventBackend, EventQuery, NewEvent, StoredEvent } from '../../core/backend.js';
import { eventHashTail, GENESIS_HASH } from '../../core/hash.js';
import type { EventRecord } from '../../core/types.js';
import { BATCH_TYPES } from '../../core/work/batches.js';
import { InternalError } from '../../errors.js';
import { toEventRecord } from '../shared.js';
import type { Names, Params, PostgresConnection, Tx } from './connection.js';
import { createListener, type PgListener } from './driver.js';

/** The NOTIFY channel; the payload names the schema, the instance and the new head position. */
export const NOTIFY_CHANNEL = 'agentstate_events';

/** The least time between two NOTIFY hints of one store (appends in between are folded into the next). */
export const HINT_INTERVAL_MS = 100;

/**
 * A NOTIFY wake-up hint sent after appends commit, outside the writing transaction: NOTIFY inside it takes
 * the database-wide notify queue lock at every COMMIT, serializing all writers. One store sends at most one
 * hint per HINT_INTERVAL_MS, naming the newest committed position; a listener that wakes reads everything
 * up to it. Hints are best effort (polling is the truth), so a failed one is dropped.
 */
export class AppendHint {
  readonly #conn: PostgresConnection;
  /** The hint being sent. */
  #sending: Promise<void> | null = null;
  /** The quiet interval after a hint; appends meanwhile wait for its end. */
  #quiet: NodeJS.Timeout | null = null;
  #pending = 0;
  /** Whether a write committed since the last hint was sent (a stream chunk's may leave the position at 0). */
  #due = false;

  constructor(conn: PostgresConnection) {
    this.#conn = conn;
  }

  /** A write committed, with events up to `position` (a write that appends none names the head as it is). */
  appended(position: number): void {
    this.#pending = Math.max(this.#pending, position);
    this.#due = true;
    if (this.#sending === null && this.#quiet === null) this.#sending = this.#send();
  }

  async #send(): Promise<void> {
    const position = this.#pending;
    this.#pending = 0;
    this.#due = false;
    const payload = JSON.stringify({ schema: this.#conn.schema, instance: this.#conn.instance, position });
    try {
      await this.#conn.pool.query({ text: 'SELECT pg_notify($1, $2)', values: [NOTIFY_CHANNEL, payload] });
    } catch {
      // A lost hint only means listeners poll at their normal pace.
    }
    this.#sending = null;
    this.#quiet = setTimeout(() => {
      this.#quiet = null;
      if (this.#due) this.#sending = this.#send();
    }, HINT_INTERVAL_MS);
    this.#quiet.unref();
  }

  /** Sends what is pending now, without waiting out the quiet interval (before the pool closes). */
  async drain(): Promise<void> {
    await this.#sending;
    if (this.#quiet !== null) {
      clearTimeout(this.#quiet);
      this.#quiet = null;
    }
    if (this.#due) {
      this.#sending = this.#send();
      await this.#sending;
      if (this.#quiet !== null) clearTimeout(this.#quiet);
      this.#quiet = null;
    }
  }
}

/** Events ready for `append_events`: every text as PostgreSQL will store it, `data` as its JSON text. */
type PendingEvent = Omit<StoredEvent, 'position' | 'stream_seq' | 'prev_hash' | 'hash'>;

/** A row `append_events` returns for each event, in the order given. */
export interface AppendedRow {
  e_position: number;
  e_stream_seq: number;
  e_prev_hash: string;
  e_hash: string;
}

/** The text PostgreSQL will store for `s`: lone surrogates become U+FFFD. */
function storable(s: string | null): string | null {
  return s !== null && /[\uD800-\uDFFF]/.test(s) ? Buffer.from(s, 'utf8').toString('utf8') : s;
}

/** What the one-event CTEs send as parameters: the event as stored, its stream as JSON, its hash tail. */
export type OneEventField = keyof PendingEvent | 'stream_json' | 'tail';

/**
 * The CTEs that append one event (see appendEventsCtes), defining `_ev`. Its text depends on `t` and `when`
 * alone: every value is a parameter, whose placeholder `param(field)` returns (called once per field, in
 * the order the text uses them), so a caller can keep the text and bind new values.
 */
export function oneEventCtes(t: Names, param: (field: OneEventField) => string, when: string): string {
  const stream = param('stream');
  const sj = param('stream_json');
  const tail = param('tail');
  return `_aseq AS (
        INSERT INTO ${t.event_streams} AS q (instance, stream, seq) SELECT $1, ${stream}, 1 WHERE ${when}
        ON CONFLICT (instance, stream) DO UPDATE SET seq = q.seq + 1
        RETURNING q.seq),
      _aprev AS (
        SELECT h.position, h.hash FROM ${t.event_heads} AS h
        WHERE h.instance = $1 AND EXISTS (SELECT 1 FROM _aseq) FOR UPDATE),
      _ahead AS (
        UPDATE ${t.event_heads} AS h SET position = v.position + 1,
          hash = encode(sha256(convert_to('["' || v.hash || '",' || (v.position + 1) || ',' || ${sj}::text
            || ',' || s.seq || ',' || ${tail}::text, 'UTF8')), 'hex')
        FROM _aprev AS v, _aseq AS s WHERE h.instance = $1
        RETURNING h.position, v.hash AS prev_hash, h.hash, s.seq),
      _ev AS (
        INSERT INTO ${t.events} (instance, position, stream, stream_seq, type, data, actor, correlation_id,
          causation_id, work_item_id, created_at, prev_hash, hash)
        -- Without a head row the position is NULL and the NOT NULL constraint fails the whole statement.
        SELECT $1, h.position, ${stream}, s.seq, ${param('type')}, ${param('data')}::json, ${param('actor')}::text,
          ${param('correlation_id')}::text, ${param('causation_id')}::text, ${param('work_item_id')}::text,
          ${param('created_at')}::bigint, h.prev_hash, h.hash
        FROM _aseq AS s LEFT JOIN _ahead AS h ON true
        RETURNING position AS e_position, stream_seq AS e_stream_seq, prev_hash AS e_prev_hash, hash AS e_hash)`;
}

/**
 * CTEs appending one event whose fields the statement itself computes, so that a writer needs no round trip
 * between its change and its event. `fields` is a query of one row with the columns stream, type, data (the
 * JSON text to store), actor, work_item_id and created_at; `when` as in appendEventsCtes. The hash tail is
 * assembled as eventHashTail writes it: to_json of a text writes exactly JSON.stringify's escapes for any
 * string PostgreSQL can hold (test/backends/postgres.specific.test.ts holds the two to it). Defines `_ev`.
 */
export function computedEventCtes(t: Names, fields: string, when: string): string {
  const field = (f: OneEventField) =>
    f === 'correlation_id' || f === 'causation_id' ? 'NULL' : `(SELECT ${f} FROM _bev)`;
  return `_bev AS MATERIALIZED (
        SELECT f.*, to_json(f.stream)::text AS stream_json,
          to_json(f.type)::text || ',' || to_json(f.data)::text || ',' || COALESCE(to_json(f.actor)::text, 'null')
            || ',null,null,' || COALESCE(to_json(f.work_item_id)::text, 'null') || ',' || f.created_at || ']' AS tail
        FROM (${fields}) AS f),
      ${oneEventCtes(t, field, when)}`;
}

/** An event as stored (the text PostgreSQL keeps), before the server numbers and chains it. */
function pendingOf(e: NewEvent): PendingEvent {
  return {
    stream: storable(e.stream) as string,
    type: storable(e.type) as string,
    data: JSON.stringify(e.data ?? null),
    actor: storable(e.actor),
    correlation_id: storable(e.correlation_id),
    causation_id: storable(e.causation_id),
    work_item_id: storable(e.work_item_id),
    created_at: e.created_at,
  };
}

/** One event ready for `oneEventCtes`: as stored, with its stream's JSON and its hash tail. */
export function pendingOne(e: NewEvent): Record<OneEventField, unknown> {
  const pending = pendingOf(e);
  return { ...pending, stream_json: JSON.stringify(pending.stream), tail: eventHashTail(pending) };
}

/**
 * CTEs that append `events` (in the order they happened) and define `_ev`, one row per event
 * (e_position, e_stream_seq, e_prev_hash, e_hash); their values are added to `p` (whose `$1` is the
 * instance). `when`, an SQL condition over earlier CTEs, makes them append nothing and lock nothing when
 * false. Stream counters are locked first, the instance's head row last: it serializes the instance's
 * appenders (positions are handed out in lock order and commit in that order, so a reader tailing by
 * position never skips an event that commits late) and is held only until the statement's COMMIT.
 *
 * One event (the common case) is appended by plain SQL in the statement; several by the store's
 * `append_events` function (migration 0003), which numbers and chains them in a loop. Both compute
 * computeEventHash (src/core/hash.ts): the JSON text around the server-assigned numbers (prev_hash,
 * position, stream_seq) is written here by JSON.stringify itself. Read the rows back with `appendedEvents`.
 */
export function appendEventsCtes(
  t: Names,
  p: Params,
  events: NewEvent[],
  when = 'true',
): { ctes: string; pending: PendingEvent[] } {
  const pending = events.map(pendingOf);
  // The hashed text is JSON.stringify([prev_hash, position, stream, stream_seq, type, data, …]); only
  // prev_hash, position and stream_seq come from the server, so the rest is written here.
  const streamJson = pending.map((e) => JSON.stringify(e.stream));
  const tails = pending.map(eventHashTail);
  if (pending.length === 1) {
    const one = {
      ...(pending[0] as PendingEvent),
      stream_json: streamJson[0] as string,
      tail: tails[0] as string,
    };
    return { ctes: oneEventCtes(t, (field) => p.add(one[field]), when), pending };
  }
  const col = <K extends keyof PendingEvent>(k: K) => pending.map((x) => x[k]);
  const args = [
    `CASE WHEN ${when} THEN ${p.add(col('stream'))}::text[] END`,
    `${p.add(col('type'))}::text[]`,
    `${p.add(col('data'))}::text[]`,
    `${p.add(col('actor'))}::text[]`,
    `${p.add(col('correlation_id'))}::text[]`,
    `${p.add(col('causation_id'))}::text[]`,
    `${p.add(col('work_item_id'))}::text[]`,
    `${p.add(col('created_at'))}::bigint[]`,
    `${p.add(streamJson)}::text[]`,
    `${p.add(tails)}::text[]`,
  ];
  return { ctes: `_ev AS (SELECT * FROM ${t.append_events}($1, ${args.join(', ')}))`, pending };
}

/** Whether this instance was ever opened in this schema (its head row exists); writes nothing. */
export async function eventHeadExists(conn: PostgresConnection): Promise<boolean> {
  const res = await conn.query<{ table: string | null }>('SELECT to_regclass($1)::text AS table', [
    conn.names.event_heads,
  ]);
  if (!res.rows[0]?.table) return false;
  const head = await conn.query(`SELECT 1 FROM ${conn.names.event_heads} WHERE instance = $1`, [
    conn.instance,
  ]);
  return head.rows.length > 0;
}

/** The head row every appender locks; created when a store opens, so appends find it. */
export async function ensureEventHead(conn: PostgresConnection): Promise<void> {
  await conn.query(
    `INSERT INTO ${conn.names.event_heads} (instance, position, hash) VALUES ($1, 0, $2) ON CONFLICT (instance) DO NOTHING`,
    [conn.instance, GENESIS_HASH],
  );
}

/** The stored events, from what `appendEventsCtes` sent and the rows the call returned (same order). */
export function appendedEvents(pending: PendingEvent[], rows: AppendedRow[]): StoredEvent[] {
  if (rows.length !== pending.length) {
    throw new InternalError(`append_events stored ${rows.length} of ${pending.length} events`);
  }
  return pending.map((e, k) => {
    const r = rows[k] as AppendedRow;
    return {
      ...e,
      position: r.e_position,
      stream_seq: r.e_stream_seq,
      prev_hash: r.e_prev_hash,
      hash: r.e_hash,
    };
  });
}

/** The batch event types as SQL literals, as the partial index events_batch_items lists them. */
const BATCH_TYPE_LIST = BATCH_TYPES.map((x) => `'${x}'`).join(', ');

const APPENDED_COLS = 'e_position, e_stream_seq, e_prev_hash, e_hash';

const EVENT_COLS =
  'position, stream, stream_seq, type, data::text AS data, actor, correlation_id, causation_id, work_item_id, created_at, prev_hash, hash';

/**
 * Appends `events` (in the order they happened) as the transaction's last statement, pipelined with COMMIT
 * when `commit` is set; the head row lock it takes is then held only until that COMMIT. Sends the wake-up
 * hint once committed.
 */
export async function writeEvents(
  tx: Tx,
  conn: PostgresConnection,
  events: NewEvent[],
  opts: { commit: boolean; hint: AppendHint | null },
): Promise<StoredEvent[]> {
  if (events.length === 0) return [];
  const p = conn.params();
  const call = appendEventsCtes(conn.names, p, events);
  const sql = `WITH ${call.ctes} SELECT ${APPENDED_COLS} FROM _ev ORDER BY e_position`;
  const res = opts.commit
    ? await tx.queryAndCommit<AppendedRow>(sql, p.values)
    : await tx.query<AppendedRow>(sql, p.values);
  const out = appendedEvents(call.pending, res.rows);
  if (opts.commit) opts.hint?.appended((out.at(-1) as StoredEvent).position);
  return out;
}

// The operations of EventBackend (src/core/events/backend.ts); SQLite's events.ts has the same names.

export async function append(
  conn: PostgresConnection,
  hint: AppendHint | null,
  events: NewEvent[],
): Promise<EventRecord[]> {
  if (events.length === 0) return [];
  const stored = await conn.transaction((tx) => writeEvents(tx, conn, events, { commit: true, hint }));
  return stored.map(toEventRecord);
}

export async function read(conn: PostgresConnection, q: EventQuery): Promise<EventRecord[]> {
  const t = conn.names;
  const p = conn.params();
  const where: string[] = ['instance = $1', `position > ${p.add(q.after)}`];
  if (q.until !== null) where.push(`position <= ${p.add(q.until)}`);
  if (q.stream !== null) where.push(`stream = ${p.add(q.stream)}`);
  const types = q.types ?? [];
  // One walk of events_type per type, in position order, each stopping at `limit`, merged; then the rows
  // of the positions kept. With `type = ANY(…)` the planner walked the log by position and filtered it
  // (110,000 rows read for the newest 200 outcomes at 1,000,000 events), or read every event of those
  // types and sorted them (issue 23). An item's or a stream's events are few: their own index reads those.
  const walks = types.length > 1 && q.work_item_id === null && q.stream === null;
  if (types.length > 0 && !walks) where.push(`type = ANY(${p.add(types)}::text[])`);
  if (q.work_item_id !== null) {
    // The item's own events, and the batch events naming it (through their GIN index, migration 0004).
    const id = p.add(q.work_item_id);
    where.push(
      `(work_item_id = ${id} OR (type IN (${BATCH_TYPE_LIST}) AND ${t.event_item_ids}(data) @> ARRAY[${id}::text]))`,
    );
  }
  if (q.since !== null) where.push(`created_at >= ${p.add(q.since)}`);
  if (q.before !== null) where.push(`created_at < ${p.add(q.before)}`);
  const order = `ORDER BY position ${q.reverse ? 'DESC' : 'ASC'}`;
  const limit = p.add(q.limit);
  let sql = `SELECT ${EVENT_COLS} FROM ${t.events} WHERE ${where.join(' AND ')} ${order} LIMIT ${limit}`;
  if (walks) {
    const walk = (type: string) =>
      `(SELECT position FROM ${t.events} WHERE type = ${p.add(type)} AND ${where.join(' AND ')} ${order} LIMIT ${limit})`;
    sql = `SELECT ${EVENT_COLS} FROM ${t.events} WHERE instance = $1 AND position IN (
          SELECT position FROM (${types.map(walk).join(' UNION ALL ')}) AS u ${order} LIMIT ${limit}) ${order}`;
  }
  const res = await conn.query<StoredEvent>(sql, p.values);
  return res.rows.map(toEventRecord);
}

export async function scan(
  conn: PostgresConnection,
  afterPosition: number,
  limit: number,
): Promise<StoredEvent[]> {
  const t = conn.names;
  const res = await conn.query<StoredEvent>(
    `SELECT ${EVENT_COLS} FROM ${t.events} WHERE instance = $1 AND position > $2 ORDER BY position LIMIT $3`,
    [conn.instance, afterPosition, limit],
  );
  return res.rows;
}

export async function head(conn: PostgresConnection): Promise<{ position: number; hash: string } | null> {
  const t = conn.names;
  const res = await conn.query<{ position: number; hash: string }>(
    `SELECT position, hash FROM ${t.events} WHERE instance = $1 ORDER BY position DESC LIMIT 1`,
    [conn.instance],
  );
  return res.rows[0] ?? null;
}

export async function typeCounts(
  conn: PostgresConnection,
  since: number,
  until: number,
): Promise<Array<{ type: string; count: number }>> {
  const t = conn.names;
  const res = await conn.query<{ type: string; count: number }>(
    `SELECT type, count(*) AS count FROM ${t.events}
         WHERE instance = $1 AND created_at >= $2 AND created_at < $3
         GROUP BY type ORDER BY count DESC, type`,
    [conn.instance, since, until],
  );
  return res.rows;
}

export async function countTypes(
  conn: PostgresConnection,
  types: string[],
): Promise<Array<{ type: string; count: number }>> {
  if (types.length === 0) return [];
  // One range of events_type (instance, type, position) per type: the count reads only those entries.
  const res = await conn.query<{ type: string; count: number }>(
    `SELECT type, count(*)::int AS count FROM ${conn.names.events}
       WHERE instance = $1 AND type = ANY($2::text[]) GROUP BY type ORDER BY type`,
    [conn.instance, types],
  );
  return res.rows;
}

/** The EventBackend of one PostgreSQL store: the operations above, on its connection and NOTIFY hint. */
export function createEventBackend(conn: PostgresConnection, hint: AppendHint | null): EventBackend {
  return {
    append: (events) => append(conn, hint, events),
    read: (q) => read(conn, q),
    scan: (afterPosition, limit) => scan(conn, afterPosition, limit),
    head: () => head(conn),
    typeCounts: (since, until) => typeCounts(conn, since, until),
    countTypes: (types) => countTypes(conn, types),
  };
}

/** The first wait before re-opening a lost LISTEN connection; it doubles on each failure, up to the max. */
export const RELISTEN_MIN_MS = 100;
/** The longest wait between two tries to re-open a lost LISTEN connection. */
export const RELISTEN_MAX_MS = 5000;

/**
 * Listens for the append hint of this store's instance on a dedicated connection (never a pooled one:
 * poolers and pools drop LISTEN). A hint may be lost; callers must keep polling, and use it only to poll
 * sooner. A LISTEN connection that is lost (terminated, server restarted) is opened again in the
 * background, waiting RELISTEN_MIN_MS, then twice as long after each failure up to RELISTEN_MAX_MS; hints
 * sent meanwhile are lost. Only the first connection's failure is reported (STORAGE_UNAVAILABLE). Returns
 * a function that stops listening.
 */
export async function listenForAppends(
  conn: PostgresConnection,
  onAppend: (position: number) => void,
): Promise<() => Promise<void>> {
  let stopped = false;
  let current: PgListener | null = null;
  let retry: NodeJS.Timeout | null = null;
  let reopening: Promise<void> | null = null;
  let delay = RELISTEN_MIN_MS;

  const relisten = () => {
    if (stopped || retry !== null || reopening !== null) return;
    retry = setTimeout(() => {
      retry = null;
      reopening = open().then(
        () => {
          reopening = null;
          delay = RELISTEN_MIN_MS;
        },
        () => {
          reopening = null;
          delay = Math.min(delay * 2, RELISTEN_MAX_MS);
          relisten();
        },
      );
    }, delay);
    // A listener alone does not keep the process alive.
    retry.unref();
  };

  const open = async (): Promise<void> => {
    const client = await createListener(conn.config);
    let lost: Error | null = null;
    const onLost = (err?: Error) => {
      if (lost !== null) return;
      lost = err ?? new Error('Connection terminated unexpectedly');
      void client.end().catch(() => {});
      if (current === client) {
        current = null;
        relisten();
      }
    };
    // From its first moment: an 'error' nobody listens to would kill the process.
    client.on('error', onLost);
    client.on('end', () => onLost());
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
      lost ??= err as Error;
      await client.end().catch(() => {});
      throw conn.mapError(err);
    }
    if (stopped || lost !== null) {
      await client.end().catch(() => {});
      // Lost between LISTEN's answer and here: the caller (or the next try) sees it like a failed connect.
      if (lost !== null && !stopped) throw conn.mapError(lost);
      return;
    }
    current = client;
  };

  await open();
  return async () => {
    stopped = true;
    if (retry !== null) clearTimeout(retry);
    retry = null;
    // A connection being opened again ends itself when it sees `stopped`.
    await reopening;
    const client = current;
    current = null;
    await client?.end().catch(() => {});
  };
}
