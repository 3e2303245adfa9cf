// P4 (information, for a design decision): what an event per work-item transition costs on PostgreSQL,
// in raw SQL with no agentstate code, so the cost of the design is seen apart from the library's.
// 8 workers claim (FOR UPDATE SKIP LOCKED) and finish 10,000 items, as P2's raw baseline does, in three
// designs:
//   none     — no event (P2's raw baseline);
//   instance — the event is numbered and hash-chained to the previous event of the *instance* under the
//              instance's head row lock, in the same statement (DESIGN.md today; what agentstate does):
//              the lock is held through each COMMIT's WAL flush, so the instance's writers commit one
//              at a time;
//   stream   — the event takes its position from a sequence and records its transaction id (xid8), so a
//              tailing reader reads below pg_snapshot_xmin (LESSONS.md's other option), and is chained
//              to the previous event of its *stream* under the stream's counter row: no instance-wide lock;
//   batch    — as `instance`, but one event per statement for all the items it claimed or finished (their
//              ids in the event's data, on the instance's `work` stream) instead of one per item;
//   batch-gin  — batch, with a GIN index on the ids the event names (what migration 0004 does);
//   batch-link — batch, with a link table (instance, work_item_id, position) written in the same statement,
//              one row per item (the other way to find an item's batch events);
//   batch-full — batch-gin, with the work_items indexes agentstate has (leases, status and time, the
//              partial ones of failures and cascades): the raw bound of agentstate's own batch design.
// Each event row is what agentstate stores (same table, same five indexes). Schema of its own, dropped after.
import pg from 'pg';
import { nowMs, settle } from './lib.js';
import { PG_URL, type PgEnv, WORKERS } from './postgres.js';

export type EventDesign =
  | 'none'
  | 'instance'
  | 'stream'
  | 'batch'
  | 'batch-gin'
  | 'batch-link'
  | 'batch-full';

function schemaSql(s: string): string {
  return `CREATE SCHEMA ${s};
    CREATE TABLE ${s}.work_items (
      instance text NOT NULL, id text NOT NULL, status text NOT NULL DEFAULT 'pending',
      priority int NOT NULL DEFAULT 0, lease_owner text, lease_expires_at bigint, attempts int NOT NULL DEFAULT 0,
      on_blocker_failure text NOT NULL DEFAULT 'wait', cascaded_from text,
      created_at bigint NOT NULL, updated_at bigint NOT NULL, PRIMARY KEY (instance, id));
    CREATE INDEX ON ${s}.work_items (instance, priority DESC, created_at, id) WHERE status = 'pending';
    CREATE TABLE ${s}.events (
      instance text NOT NULL, position bigint NOT NULL, stream text NOT NULL, stream_seq bigint NOT NULL,
      type text NOT NULL, data json NOT NULL, actor text, work_item_id text, created_at bigint NOT NULL,
      prev_hash text NOT NULL, hash text NOT NULL, xid xid8,
      PRIMARY KEY (instance, position), UNIQUE (instance, stream, stream_seq));
    CREATE INDEX ON ${s}.events (instance, type, position);
    CREATE INDEX ON ${s}.events (instance, created_at);
    CREATE INDEX ON ${s}.events (instance, work_item_id, position) WHERE work_item_id IS NOT NULL;
    CREATE TABLE ${s}.event_heads (instance text PRIMARY KEY, position bigint NOT NULL, hash text NOT NULL);
    CREATE TABLE ${s}.event_streams (
      instance text NOT NULL, stream text NOT NULL, seq bigint NOT NULL, hash text NOT NULL,
      PRIMARY KEY (instance, stream));
    CREATE SEQUENCE ${s}.positions;
    CREATE FUNCTION ${s}.ids(data json) RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE COST 10000
      AS $$ SELECT coalesce(array_agg(x), '{}') FROM json_array_elements_text(data -> 'ids') AS x $$;
    CREATE TABLE ${s}.event_items (instance text NOT NULL, work_item_id text NOT NULL, position bigint NOT NULL,
      PRIMARY KEY (instance, work_item_id, position));`;
}

/** The index a batch design adds to find an item's batch events. */
function designIndexSql(s: string, design: EventDesign): string {
  const gin = `CREATE INDEX ON ${s}.events USING gin (${s}.ids(data));`;
  if (design === 'batch-gin') return gin;
  if (design !== 'batch-full') return '';
  // agentstate's work_items indexes (src/backends/postgres/migrations 0001, 0005, 0006) beside the ready one.
  return `${gin}
    CREATE INDEX ON ${s}.work_items (instance, lease_expires_at) WHERE status = 'in_flight';
    CREATE INDEX ON ${s}.work_items (instance, status, updated_at);
    CREATE INDEX ON ${s}.work_items (instance) WHERE status = 'pending' AND on_blocker_failure = 'cascade';
    CREATE INDEX ON ${s}.work_items (instance, cascaded_from) WHERE cascaded_from IS NOT NULL;
    CREATE INDEX ON ${s}.work_items (instance, status, id) WHERE status IN ('failed', 'cancelled');`;
}

/** The event CTEs after `cl` (the claimed or finished rows: id), for `type`; $1 is the worker, $2 the time. */
function eventCtes(s: string, design: EventDesign, type: string): string {
  const data = `json_build_object('worker', $1::text, 'type', '${type}')`;
  if (design === 'none') return '';
  if (design.startsWith('batch')) {
    const link =
      design === 'batch-link'
        ? `,
      li AS (INSERT INTO ${s}.event_items (instance, work_item_id, position)
        SELECT 'i', cl.id, hd.position FROM cl, hd)`
        : '';
    return `,
      sq AS (UPDATE ${s}.event_streams AS q SET seq = q.seq + 1
        WHERE q.instance = 'i' AND q.stream = 'work' AND EXISTS (SELECT 1 FROM cl) RETURNING q.seq, q.stream),
      pv AS (SELECT h.position, h.hash FROM ${s}.event_heads AS h
        WHERE h.instance = 'i' AND EXISTS (SELECT 1 FROM sq) FOR UPDATE),
      bd AS (SELECT json_build_object('worker', $1::text, 'type', '${type}', 'ids', json_agg(cl.id)) AS data FROM cl),
      hd AS (UPDATE ${s}.event_heads AS h SET position = v.position + 1,
          hash = encode(sha256(convert_to(v.hash || (v.position + 1) || sq.stream || sq.seq || bd.data::text, 'UTF8')), 'hex')
        FROM pv AS v, sq, bd WHERE h.instance = 'i'
        RETURNING h.position, v.hash AS prev, h.hash, sq.seq, sq.stream, bd.data),
      ev AS (INSERT INTO ${s}.events (instance, position, stream, stream_seq, type, data, actor, created_at,
          prev_hash, hash)
        SELECT 'i', hd.position, hd.stream, hd.seq, '${type}', hd.data, $1, $2, hd.prev, hd.hash FROM hd)${link}`;
  }
  if (design === 'instance') {
    // One row per statement (single-item runs only): the head moves by one.
    return `,
      sq AS (UPDATE ${s}.event_streams AS q SET seq = q.seq + 1
        FROM cl WHERE q.instance = 'i' AND q.stream = 'work/' || cl.id RETURNING q.seq, q.stream, cl.id),
      pv AS (SELECT h.position, h.hash FROM ${s}.event_heads AS h
        WHERE h.instance = 'i' AND EXISTS (SELECT 1 FROM sq) FOR UPDATE),
      hd AS (UPDATE ${s}.event_heads AS h SET position = v.position + 1,
          hash = encode(sha256(convert_to(v.hash || (v.position + 1) || sq.stream || sq.seq || ${data}::text, 'UTF8')), 'hex')
        FROM pv AS v, sq WHERE h.instance = 'i'
        RETURNING h.position, v.hash AS prev, h.hash, sq.seq, sq.stream, sq.id),
      ev AS (INSERT INTO ${s}.events (instance, position, stream, stream_seq, type, data, actor, work_item_id,
          created_at, prev_hash, hash)
        SELECT 'i', hd.position, hd.stream, hd.seq, '${type}', ${data}, $1, hd.id, $2, hd.prev, hd.hash FROM hd)`;
  }
  return `,
      sq AS (UPDATE ${s}.event_streams AS q SET seq = q.seq + 1,
          hash = encode(sha256(convert_to(q.hash || (q.seq + 1) || q.stream || ${data}::text, 'UTF8')), 'hex')
        FROM cl WHERE q.instance = 'i' AND q.stream = 'work/' || cl.id
        RETURNING q.seq, q.stream, q.hash, cl.id, (SELECT x.hash FROM ${s}.event_streams AS x
          WHERE x.instance = q.instance AND x.stream = q.stream) AS prev),
      ev AS (INSERT INTO ${s}.events (instance, position, stream, stream_seq, type, data, actor, work_item_id,
          created_at, prev_hash, hash, xid)
        SELECT 'i', nextval('${s}.positions'), sq.stream, sq.seq, '${type}', ${data}, $1, sq.id, $2, sq.prev,
          sq.hash, pg_current_xact_id() FROM sq)`;
}

export interface DesignRun {
  itemsPerSec: number;
  events: number;
  problems: string[];
}

/** One run: fresh schema, `items` pending items (their streams exist, as after enqueue), 8 workers. */
export async function designQueue(
  env: PgEnv,
  design: EventDesign,
  items: number,
  batch: number,
): Promise<DesignRun> {
  if (design === 'instance' && batch !== 1)
    throw new Error('the instance design is measured one item at a time');
  const s = `"${env.schema}_designs"`;
  await env.admin.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
  await env.admin.query(schemaSql(s));
  if (designIndexSql(s, design)) await env.admin.query(designIndexSql(s, design));
  const pool = new pg.Pool({ connectionString: PG_URL, max: WORKERS });
  pool.on('error', () => {});
  try {
    await env.admin.query(
      `INSERT INTO ${s}.work_items (instance, id, created_at, updated_at)
       SELECT 'i', 'wi_' || lpad(g::text, 6, '0'), g, g FROM generate_series(1, $1::int) AS g`,
      [items],
    );
    await env.admin.query(
      `INSERT INTO ${s}.event_streams SELECT 'i', 'work/' || id, 0, repeat('0', 64) FROM ${s}.work_items`,
    );
    await env.admin.query(`INSERT INTO ${s}.event_streams VALUES ('i', 'work', 0, repeat('0', 64))`);
    await env.admin.query(`INSERT INTO ${s}.event_heads VALUES ('i', 0, repeat('0', 64))`);
    await env.admin.query(`ANALYZE ${s}.work_items`);
    await env.admin.query(`ANALYZE ${s}.event_streams`);
    const claimSql = `WITH next AS (
        SELECT id FROM ${s}.work_items WHERE instance = 'i' AND status = 'pending'
        ORDER BY priority DESC, created_at, id LIMIT ${batch} FOR UPDATE SKIP LOCKED),
      cl AS (UPDATE ${s}.work_items AS w SET status = 'in_flight', lease_owner = $1, lease_expires_at = $2::bigint + 60000,
          attempts = w.attempts + 1, updated_at = $2::bigint
        FROM next WHERE w.instance = 'i' AND w.id = next.id RETURNING w.id)${eventCtes(s, design, 'work_item_claimed')}
      SELECT id FROM cl`;
    const doneSql = `WITH cl AS (UPDATE ${s}.work_items SET status = 'done', lease_expires_at = NULL, updated_at = $2
        WHERE instance = 'i' AND id = ANY($3::text[]) AND status = 'in_flight' AND lease_owner = $1
        RETURNING id)${eventCtes(s, design, 'work_item_resolved')}
      SELECT id FROM cl`;
    await Promise.all(Array.from({ length: WORKERS }, () => pool.query('SELECT 1')));
    await settle();
    const problems: string[] = [];
    const t0 = nowMs();
    await Promise.all(
      Array.from({ length: WORKERS }, async (_, w) => {
        const worker = `w${w}`;
        for (;;) {
          const claimed = await pool.query<{ id: string }>({
            name: 'claim',
            text: claimSql,
            values: [worker, Date.now()],
          });
          if (claimed.rows.length === 0) return;
          const ids = claimed.rows.map((r) => r.id);
          const done = await pool.query({ name: 'done', text: doneSql, values: [worker, Date.now(), ids] });
          if (done.rowCount !== ids.length)
            problems.push(`finishing ${ids.length} items updated ${done.rowCount}`);
        }
      }),
    );
    const ms = nowMs() - t0;
    const [audit] = (
      await env.admin.query<{ done: number; events: number; chained: number }>(
        `SELECT (SELECT count(*)::int FROM ${s}.work_items WHERE status = 'done' AND attempts = 1) AS done,
           (SELECT count(*)::int FROM ${s}.events) AS events,
           (SELECT count(*)::int FROM ${s}.events AS e JOIN ${s}.events AS p
              ON p.instance = e.instance AND ${design === 'stream' ? 'p.stream = e.stream AND p.stream_seq = e.stream_seq - 1' : 'p.position = e.position - 1'}
            WHERE p.hash = e.prev_hash) AS chained`,
      )
    ).rows;
    // Batch events: one per statement, however the items fell into batches; what they name is checked here.
    const events = design.startsWith('batch') ? (audit?.events ?? 0) : design === 'none' ? 0 : 2 * items;
    if (audit?.done !== items) problems.push(`${audit?.done} of ${items} done once`);
    if (!design.startsWith('batch') && audit?.events !== events) {
      problems.push(`${audit?.events} events, expected ${events}`);
    }
    if (design.startsWith('batch')) {
      // Every item is named exactly once in a claimed event and once in a resolved event.
      const named = (
        await env.admin.query<{ type: string; n: number; distinct: number }>(
          `SELECT type, count(*)::int AS n, count(DISTINCT x)::int AS distinct
           FROM ${s}.events, json_array_elements_text(data->'ids') AS x GROUP BY type`,
        )
      ).rows;
      for (const type of ['work_item_claimed', 'work_item_resolved']) {
        const r = named.find((x) => x.type === type);
        if (r?.n !== items || r?.distinct !== items) {
          problems.push(
            `${type} events name ${r?.n ?? 0} items (${r?.distinct ?? 0} distinct), expected ${items}`,
          );
        }
      }
    }
    // Every event but the first of the chain (instance) or of each stream (stream) links to its predecessor.
    const links = design === 'none' ? 0 : design === 'stream' ? events - items : events - 1;
    if (audit?.chained !== links) problems.push(`${audit?.chained} chain links, expected ${links}`);
    return { itemsPerSec: (items / ms) * 1000, events: audit?.events ?? 0, problems };
  } finally {
    await pool.end();
    await env.admin.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
  }
}
