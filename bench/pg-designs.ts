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
//   sealer   — (issue 41, point 6) the writer takes no instance-wide lock: its statement inserts the event
//              *unsealed* (no stream sequence, position or hash) into a staging table, and one sealer
//              connection per instance calls the schema's `seal` function in a loop (one autocommitted
//              round trip per pass). A pass locks the head row, takes the committed staged events (lowest
//              staging sequence first, at most SEAL_MAX), gives them stream sequences, the positions after
//              the head and the same SHA-256 chain as `instance` (on the server, as 0003's append_events
//              does), moves them into `events` and moves the head. Readers see sealed events only. An item
//              counts when both its events are sealed.
//              Why a tailing reader cannot skip: only passes write `events`; each holds the head lock until
//              its COMMIT and starts from the head the pass before committed, so passes commit one after
//              another in position order, and a snapshot that sees position p sees every position below p
//              (committed earlier, or in the same transaction). A second sealer by mistake would queue on
//              the head lock, not fork the chain.
//              Why causal order holds without knowing commit order: a pass takes the staged rows visible to
//              its snapshot (committed ones) in staging-sequence order. If transaction A committed before B
//              began, A took its sequence value before B did, and a snapshot that sees B sees A, so A is
//              sealed in an earlier pass or before B in the same one (an item's claim always gets a lower
//              position than its resolve; the audit checks it). Concurrent transactions are sealed in
//              sequence order, not necessarily their commit order; nothing can observe the difference. A
//              transaction still in progress is invisible to the pass and sealed by a later one, so there is
//              no xmin horizon to wait for and no gap timeout.
//   sealer-sync — the sealer's staging, with no sealer of its own: each writer, after its statement commits,
//              calls `seal` itself (a second autocommitted round trip) and goes on only once its events are
//              sealed. This is what agentstate's API needs: a call's events readable when it returns, an
//              append returning its position and hash. A pass that has not seen a writer's commit holds the
//              head lock; the writer's own pass waits for it, then seals what it left.
// Each event row is what agentstate stores (same table, same five indexes). Schema of its own, dropped after.
// A tailing reader (`tail`) can poll "after position N" during the run and checks it saw 1..n once, in order.
import { readFileSync } from 'node:fs';
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
  | 'batch-full'
  | 'sealer'
  | 'sealer-sync';

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
      PRIMARY KEY (instance, work_item_id, position));
    CREATE TABLE ${s}.staged (
      instance text NOT NULL, seq bigserial, stream text NOT NULL, type text NOT NULL, data json NOT NULL,
      actor text, work_item_id text, created_at bigint NOT NULL, PRIMARY KEY (instance, seq));
    CREATE FUNCTION ${s}.seal(p_instance text, p_max int) RETURNS TABLE (e_type text, e_item text)
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_pos bigint; v_hash text; r record; n int := 0;
      a_pos bigint[] := '{}'; a_stream text[] := '{}'; a_seq bigint[] := '{}'; a_type text[] := '{}';
      a_data text[] := '{}'; a_actor text[] := '{}'; a_item text[] := '{}'; a_created bigint[] := '{}';
      a_prev text[] := '{}'; a_hash text[] := '{}';
    BEGIN
      SELECT h.position, h.hash INTO v_pos, v_hash FROM ${s}.event_heads AS h WHERE h.instance = p_instance FOR UPDATE;
      FOR r IN
        WITH t AS (SELECT g.seq FROM ${s}.staged AS g WHERE g.instance = p_instance ORDER BY g.seq LIMIT p_max),
          d AS (DELETE FROM ${s}.staged AS g USING t WHERE g.instance = p_instance AND g.seq = t.seq
            RETURNING g.seq, g.stream, g.type, g.data::text AS data, g.actor, g.work_item_id, g.created_at)
        SELECT d.*, coalesce(q.seq, 0) + row_number() OVER (PARTITION BY d.stream ORDER BY d.seq) AS sseq
        FROM d LEFT JOIN ${s}.event_streams AS q ON q.instance = p_instance AND q.stream = d.stream
        ORDER BY d.seq
      LOOP
        n := n + 1;
        v_pos := v_pos + 1;
        a_prev[n] := v_hash;
        v_hash := encode(sha256(convert_to(v_hash || v_pos || r.stream || r.sseq || r.data, 'UTF8')), 'hex');
        a_pos[n] := v_pos; a_stream[n] := r.stream; a_seq[n] := r.sseq; a_type[n] := r.type; a_data[n] := r.data;
        a_actor[n] := r.actor; a_item[n] := r.work_item_id; a_created[n] := r.created_at; a_hash[n] := v_hash;
      END LOOP;
      IF n = 0 THEN RETURN; END IF;
      INSERT INTO ${s}.events (instance, position, stream, stream_seq, type, data, actor, work_item_id, created_at,
        prev_hash, hash)
      SELECT p_instance, a_pos[i], a_stream[i], a_seq[i], a_type[i], a_data[i]::json, a_actor[i], a_item[i],
        a_created[i], a_prev[i], a_hash[i] FROM generate_subscripts(a_pos, 1) AS i;
      UPDATE ${s}.event_streams AS q SET seq = c.last
        FROM (SELECT u.s, max(u.k) AS last FROM unnest(a_stream, a_seq) AS u(s, k) GROUP BY u.s) AS c
        WHERE q.instance = p_instance AND q.stream = c.s;
      UPDATE ${s}.event_heads SET position = v_pos, hash = v_hash WHERE instance = p_instance;
      RETURN QUERY SELECT u.t, u.w FROM unnest(a_type, a_item) AS u(t, w);
    END $fn$;`;
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
  if (design === 'sealer' || design === 'sealer-sync') {
    // Unsealed: no stream sequence, position or hash yet; the sealer gives them.
    return `,
      ev AS (INSERT INTO ${s}.staged (instance, stream, type, data, actor, work_item_id, created_at)
        SELECT 'i', 'work/' || cl.id, '${type}', ${data}, $1, cl.id, $2 FROM cl)`;
  }
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

/** What the sealer did in one run (the `sealer` design). */
export interface SealerStats {
  /** Sealing transactions that moved at least one event. */
  passes: number;
  /** Events per pass: median and largest. */
  medianPass: number;
  maxPass: number;
  /** How long after its writer's statement returned (committed) each event was sealed, ms. */
  lagMedianMs: number;
  lagP99Ms: number;
  lagMaxMs: number;
  /** From the last writer's commit to the last event sealed, ms. */
  drainMs: number;
}

/** What the tailing reader saw (`tail`). */
export interface TailStats {
  /** Events seen: positions 1..n once each, in order, when all is well. */
  seen: number;
  polls: number;
  /** Where it went wrong first (a skipped, repeated or backward position), or null. */
  fault: string | null;
}

/**
 * CPU time per item over the run (ms): the server backends of the writers, the sealer and the reader (from
 * /proc, so only when the server runs on this machine), and this whole process (writers, sealer and reader).
 * Less sensitive to the other work on a shared machine than the rates.
 */
export interface CpuPerItem {
  writers: number;
  sealer: number;
  reader: number;
  client: number;
}

export interface DesignRun {
  itemsPerSec: number;
  events: number;
  problems: string[];
  sealer?: SealerStats;
  tail?: TailStats;
  cpu?: CpuPerItem;
}

/** CPU ms used so far by the server processes `pids` (utime + stime), or null when /proc cannot tell. */
function serverCpuMs(pids: number[]): number | null {
  let ticks = 0;
  try {
    for (const pid of pids) {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // The fields after the command name (which has spaces and parentheses): state is the 3rd, utime the 14th.
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]);
    }
  } catch {
    return null;
  }
  // Linux reports USER_HZ = 100 ticks per second on the platforms this runs on.
  return ticks * 10;
}

/** The most staged events one sealing pass takes. */
const SEAL_MAX = 5000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

/**
 * The tailing reader: polls "after the last position seen" until `finished()` was true before a poll that
 * found nothing, and checks it saw 1, 2, 3, … with nothing skipped, repeated or out of order.
 */
async function tailReader(s: string, client: pg.Client, finished: () => boolean): Promise<TailStats> {
  let last = 0;
  let seen = 0;
  let polls = 0;
  let fault: string | null = null;
  for (;;) {
    const done = finished();
    const res = await client.query<{ position: string }>({
      name: 'tail',
      text: `SELECT position, type, work_item_id, hash FROM ${s}.events WHERE instance = 'i' AND position > $1
        ORDER BY position LIMIT 1000`,
      values: [last],
    });
    polls += 1;
    for (const r of res.rows) {
      const p = Number(r.position);
      if (p !== seen + 1 && fault === null)
        fault = `position ${p} seen after ${seen} positions (last ${last})`;
      seen += 1;
      last = p;
    }
    if (res.rows.length === 0) {
      if (done) break;
      await sleep(2);
    }
  }
  return { seen, polls, fault };
}

/**
 * One run: fresh schema, `items` pending items (their streams exist, as after enqueue), 8 workers; with `tail`,
 * a reader polling "after N" beside them. The `sealer` design adds its sealer connection and ends when the last
 * event is sealed.
 */
export async function designQueue(
  env: PgEnv,
  design: EventDesign,
  items: number,
  batch: number,
  opts: { tail?: boolean } = {},
): Promise<DesignRun> {
  if (design === 'instance' && batch !== 1)
    throw new Error('the instance design is measured one item at a time');
  if (opts.tail && design === 'none') throw new Error('the none design has no events to tail');
  const s = `"${env.schema}_designs"`;
  await env.admin.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
  await env.admin.query(schemaSql(s));
  if (designIndexSql(s, design)) await env.admin.query(designIndexSql(s, design));
  const pool = new pg.Pool({ connectionString: PG_URL, max: WORKERS });
  pool.on('error', () => {});
  const sealer = design === 'sealer' ? new pg.Client({ connectionString: PG_URL }) : null;
  const reader = opts.tail ? new pg.Client({ connectionString: PG_URL }) : null;
  try {
    for (const c of [sealer, reader]) {
      if (!c) continue;
      c.on('error', () => {});
      await c.connect();
    }
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
    // sealer-sync: the writer's own pass, after its commit (one autocommitted call).
    const syncSeal = design === 'sealer-sync';
    const sealStatement = { name: 'seal', text: `SELECT count(*) FROM ${s}.seal('i', ${SEAL_MAX})` };
    // Open every connection before the clock starts (8 at once: 8 clients), and learn their server pids.
    const pidOf = async (c: pg.Pool | pg.Client) =>
      (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const writerPids = await Promise.all(Array.from({ length: WORKERS }, () => pidOf(pool)));
    const sealerPids = sealer ? [await pidOf(sealer)] : [];
    const readerPids = reader ? [await pidOf(reader)] : [];
    await settle();
    const cpu0 = [writerPids, sealerPids, readerPids].map(serverCpuMs);
    const client0 = process.cpuUsage();
    const problems: string[] = [];
    // The sealer design: when each event's writer saw its commit, and when the sealer sealed it.
    const acked = new Map<string, number>();
    const sealedAt = new Map<string, number>();
    const passSizes: number[] = [];
    let writersDone = false;
    let writersEnd = 0;
    let lastSeal = 0;
    let sealingDone = false;
    const t0 = nowMs();
    const sealing = sealer
      ? (async () => {
          for (;;) {
            // Read before the pass: if the writers were done, this pass sees every staged event.
            const done = writersDone;
            // One pass: one autocommitted call of the schema's seal function.
            const keys = (
              await sealer.query<{ e_type: string; e_item: string }>({
                name: 'seal',
                text: `SELECT e_type, e_item FROM ${s}.seal('i', ${SEAL_MAX})`,
              })
            ).rows.map((r) => `${r.e_type}/${r.e_item}`);
            if (keys.length > 0) {
              lastSeal = nowMs();
              passSizes.push(keys.length);
              for (const k of keys) sealedAt.set(k, lastSeal);
            } else if (done) break;
            else await sleep(1);
          }
          sealingDone = true;
        })()
      : null;
    const tailing = reader ? tailReader(s, reader, () => (sealer ? sealingDone : writersDone)) : null;
    // Awaited below; a failure there is thrown then, not reported early as unhandled.
    sealing?.catch(() => {});
    tailing?.catch(() => {});
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
          if (syncSeal) await pool.query(sealStatement);
          const ids = claimed.rows.map((r) => r.id);
          if (sealer) {
            const t = nowMs();
            for (const id of ids) acked.set(`work_item_claimed/${id}`, t);
          }
          const done = await pool.query({ name: 'done', text: doneSql, values: [worker, Date.now(), ids] });
          if (done.rowCount !== ids.length)
            problems.push(`finishing ${ids.length} items updated ${done.rowCount}`);
          if (syncSeal) await pool.query(sealStatement);
          if (sealer) {
            const t = nowMs();
            for (const id of ids) acked.set(`work_item_resolved/${id}`, t);
          }
        }
      }),
    );
    writersEnd = nowMs();
    writersDone = true;
    await sealing;
    const ms = Math.max(writersEnd, lastSeal) - t0;
    const tail = tailing ? await tailing : undefined;
    const cpu1 = [writerPids, sealerPids, readerPids].map(serverCpuMs);
    const client1 = process.cpuUsage(client0);
    const perItem = (i: number) => ((cpu1[i] ?? Number.NaN) - (cpu0[i] ?? Number.NaN)) / items;
    const cpu: CpuPerItem | undefined =
      cpu1.every((x) => x !== null) && cpu0.every((x) => x !== null)
        ? {
            writers: perItem(0),
            sealer: perItem(1),
            reader: perItem(2),
            client: (client1.user + client1.system) / 1000 / items,
          }
        : undefined;
    // The hash each chained design computes, recomputed here from the stored row.
    const rehash =
      design === 'stream'
        ? `e.prev_hash || e.stream_seq || e.stream || e.data::text`
        : `e.prev_hash || e.position || e.stream || e.stream_seq || e.data::text`;
    const [audit] = (
      await env.admin.query<{
        done: number;
        events: number;
        chained: number;
        rehashed: number;
        first: number | null;
        last: number | null;
        genesis: number;
        ordered: number;
        staged: number;
      }>(
        `SELECT (SELECT count(*)::int FROM ${s}.work_items WHERE status = 'done' AND attempts = 1) AS done,
           (SELECT count(*)::int FROM ${s}.events) AS events,
           (SELECT count(*)::int FROM ${s}.events AS e JOIN ${s}.events AS p
              ON p.instance = e.instance AND ${design === 'stream' ? 'p.stream = e.stream AND p.stream_seq = e.stream_seq - 1' : 'p.position = e.position - 1'}
            WHERE p.hash = e.prev_hash) AS chained,
           (SELECT count(*)::int FROM ${s}.events AS e
            WHERE e.hash = encode(sha256(convert_to(${rehash}, 'UTF8')), 'hex')) AS rehashed,
           (SELECT min(position)::int FROM ${s}.events) AS first,
           (SELECT max(position)::int FROM ${s}.events) AS last,
           (SELECT count(*)::int FROM ${s}.events WHERE ${design === 'stream' ? 'stream_seq = 1' : 'position = 1'}
              AND prev_hash = repeat('0', 64)) AS genesis,
           (SELECT count(*)::int FROM ${s}.events AS c JOIN ${s}.events AS r
              ON r.instance = c.instance AND r.work_item_id = c.work_item_id AND r.type = 'work_item_resolved'
            WHERE c.type = 'work_item_claimed' AND c.stream_seq = 1 AND r.stream_seq = 2
              AND c.position < r.position) AS ordered,
           (SELECT count(*)::int FROM ${s}.staged) AS staged`,
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
    if (design !== 'none') {
      // Each hash is the hash of its own row, the chains start at the zero hash, and positions are 1..n
      // (the primary key makes them distinct).
      if (audit?.rehashed !== events) problems.push(`${audit?.rehashed} of ${events} hashes recompute`);
      const starts = design === 'stream' ? items : 1;
      if (audit?.genesis !== starts) problems.push(`${audit?.genesis} chain starts, expected ${starts}`);
      if (audit?.first !== 1 || audit?.last !== events) {
        problems.push(`positions ${audit?.first}..${audit?.last}, expected 1..${events}`);
      }
    }
    if (design === 'instance' || design === 'stream' || design.startsWith('sealer')) {
      // Each item's claim is the first event of its stream and its resolve the second, at a later position.
      if (audit?.ordered !== items)
        problems.push(`${audit?.ordered} of ${items} items claimed then resolved in order`);
    }
    if (audit?.staged !== 0) problems.push(`${audit?.staged} events left unsealed`);
    let sealerStats: SealerStats | undefined;
    if (sealer) {
      const lags: number[] = [];
      for (const [k, at] of sealedAt) {
        const ack = acked.get(k);
        if (ack === undefined) problems.push(`${k} sealed but never acknowledged to its writer`);
        else lags.push(at - ack);
      }
      if (sealedAt.size !== events) problems.push(`${sealedAt.size} events sealed, expected ${events}`);
      sealerStats = {
        passes: passSizes.length,
        medianPass: quantile(passSizes, 0.5),
        maxPass: Math.max(0, ...passSizes),
        lagMedianMs: quantile(lags, 0.5),
        lagP99Ms: quantile(lags, 0.99),
        lagMaxMs: Math.max(...lags),
        drainMs: Math.max(0, lastSeal - writersEnd),
      };
    }
    if (tail) {
      if (tail.fault) problems.push(`tailing reader: ${tail.fault}`);
      if (tail.seen !== events) problems.push(`tailing reader saw ${tail.seen} events, expected ${events}`);
    }
    return {
      itemsPerSec: (items / ms) * 1000,
      events: audit?.events ?? 0,
      problems,
      ...(sealerStats ? { sealer: sealerStats } : {}),
      ...(tail ? { tail } : {}),
      ...(cpu ? { cpu } : {}),
    };
  } finally {
    await pool.end();
    for (const c of [sealer, reader]) await c?.end().catch(() => {});
    await env.admin.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
  }
}
