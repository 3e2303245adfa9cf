// Claims in PostgreSQL: in one statement when it pays (claimInOneStatement), otherwise expired leases
// reclaimed and ready items claimed together (reclaimAndClaim), under the limit locks when a candidate's
// key is limited (claimLimited); the sweep alone (reclaimExpired), and the replay of the unfinished items
// after it (replayUnfinished).
import type { ClaimQuery, NewEvent } from '../../../core/backend.js';
import {
  CLAIMED,
  claimedEvent,
  type FieldType,
  fieldsText,
  HOLE,
  type Hole,
  reclaimedEvent,
  replayedEvent,
} from '../../../core/codecs/work-items.js';
import { claimOrder } from '../../../core/rows.js';
import type { WorkItem } from '../../../core/types.js';
import { LOCK_KIND } from '../../../core/types.js';
import { BATCH_STREAM, BATCH_TYPE_OF, batchEvents } from '../../../core/work/batches.js';
import { claimerKind, workItemStream } from '../../../core/work/rules.js';
import {
  jsonRows,
  type Names,
  type Params,
  type PostgresConnection,
  recordset,
  type Tx,
} from '../connection.js';
import { type AppendHint, computedEventCtes } from '../events.js';
import {
  commitEvents,
  dueAndUnblocked,
  ORDER,
  oneStatementPays,
  ready,
  sameItem,
  toWorkItem,
  W_COLS,
  type WorkItemRow,
} from './shared.js';
import { cascadeRows } from './status.js';

/**
 * The parameters a claim statement shares: each claimer takes the picked items numbered (lo, hi] in claim
 * order (`claimers`, a json_to_recordset of worker, expires, lo, hi), the kind/id filter on `w` (and the
 * kind's parameter alone, `kind`, 'NULL::text' when none), and the total limit.
 */
function claimParams(
  p: Params,
  q: ClaimQuery,
  // Stryker disable next-line BooleanLiteral: equivalent: the event text columns are read only by the one-statement claim
  eventText = false,
): { claimers: string; filter: string; kind: string; limit: string } {
  let hi = 0;
  const ranges = q.claimers.map((c) => {
    const lo = hi;
    hi += c.limit;
    const range = { worker: c.worker, kind: c.actor_kind, expires: q.now + c.lease_ms, lo, hi };
    return eventText ? { ...range, ...claimedText(q, c) } : range;
  });
  const claimers = p.json(ranges);
  let filter = '';
  const kind = q.kind === null ? 'NULL::text' : `${p.add(q.kind)}::text`;
  if (q.kind !== null) filter += ` AND w.kind = ${kind}`;
  if (q.id !== null) filter += ` AND w.id = ${p.add(q.id)}`;
  // Locks (claim by key) are held by name, never handed out as the next item, not even to a claim of
  // their kind (docs/api.md).
  else filter += ` AND w.kind IS DISTINCT FROM '${LOCK_KIND}'`;
  return { claimers, filter, kind, limit: p.add(hi) };
}

/**
 * The text of claimedEvent's data around what only the item's row knows (its id and attempt), the same for
 * every item a claimer takes: its entry in a batch event of one actor kind (`pre`, `post`: after the id,
 * the actor when it is not the first claimer's, the worker; after the attempt, the lease's end), and the
 * data of a lone claim (`lone_pre`, `lone_post`), as JSON.stringify and batchEvents write them.
 */
function claimedText(q: ClaimQuery, c: ClaimQuery['claimers'][number]) {
  const json = JSON.stringify;
  // The codec's fields with the row's attempt left as a hole: `"worker":…`, `,"attempt":`, `,"lease_expires_at":…`.
  const [head, attempt, after] = fieldsText(CLAIMED.fields, {
    worker: c.worker,
    attempt: HOLE,
    lease_expires_at: q.now + c.lease_ms,
  }) as [string, Hole<'attempt'>, string];
  const before = head + attempt.key;
  // Stryker disable next-line OptionalChaining: equivalent: a claim has at least one claimer (WorkQueue makes one per call)
  const actor = c.worker === q.claimers[0]?.worker ? '' : `,"actor":${json(c.worker)}`;
  return {
    pre: `${actor},${before}`,
    post: `${after}}`,
    lone_pre: `{${before}`,
    lone_post: `${after},"actor_kind":${json(c.actor_kind)}}`,
  };
}

/**
 * The SQL text of a codec's data fields (`"key":value,…`, no braces) as JSON.stringify writes them, each from
 * its column: a string as to_json writes it, an integer as its digits, a time as toIso writes it. Every
 * column must be non-null (the whole text is null otherwise).
 */
export function fieldsSql<K extends string>(
  fields: ReadonlyArray<readonly [K, FieldType]>,
  columns: Record<K, string>,
): string {
  return fields
    .map(([key, type], i) => {
      if (!/^[a-z_]+$/.test(key)) throw new Error(`field ${key} is no plain JSON key`);
      const col = columns[key];
      const value =
        type === 'string'
          ? `to_json(${col})::text`
          : type === 'time'
            ? `to_json(${isoText(col)})::text`
            : col;
      return `'${i === 0 ? '' : ','}"${key}":' || ${value}`;
    })
    .join(' || ');
}

/**
 * The text toIso writes for an epoch-milliseconds column (UTC, whole milliseconds, four-digit years). Whole
 * seconds and milliseconds apart: an interval multiplied by a float is exact only while its microseconds fit
 * a double's 53 bits (until about 2255), and `ms × 1 millisecond` in one product rounded later times by a
 * millisecond; a count of seconds times 10^6 µs is always a multiple of 64, so exact to year 9999.
 */
function isoText(col: string): string {
  return `to_char(timestamp 'epoch' + (${col} / 1000) * interval '1 second' + (${col} % 1000) * interval '1 millisecond', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

interface ReclaimClaimRow extends WorkItemRow {
  _reclaimed: boolean;
  _claimed: boolean;
  _previous_owner: string | null;
  _rn: number | null;
}

/**
 * SQL: whether any row of `cte` (column concurrency_key) has a key with a limit. Such a claim is left to
 * claimLimited, which takes the limit locks first: a claim without them never hands out a limited key's item.
 * The test is a function call (work_limit_exists), so the statement's plan does not involve work_limits.
 */
function limitedAmong(t: Names, cte: string, where = 'true'): string {
  return `EXISTS (SELECT 1 FROM ${cte} AS c
      WHERE c.concurrency_key IS NOT NULL AND ${where} AND ${t.work_limit_exists}($1, c.concurrency_key))`;
}

/**
 * A claim where a candidate's key is limited, in the claim's transaction after its sweep. First the limit
 * rows of the keys with pending items are locked FOR UPDATE, in key order: a claim of the same keys waits
 * for this transaction to commit. Then, in a new statement (under READ COMMITTED a new snapshot, which sees
 * every claim committed before the locks were granted), each locked key's room is counted (max_in_flight
 * less its items in flight; the rate count less the starts of its open window), and the ready items are
 * picked in claim order from the first ones of no limited key and each locked key's first `room` ones (one
 * index range each), handed to the claimers in turn; the rate windows of the keys claimed count the new
 * starts. A limited key that was not locked (its first item became pending meanwhile) is skipped.
 */
async function claimLimited(
  tx: Tx,
  conn: PostgresConnection,
  q: ClaimQuery,
): Promise<{ claimed: WorkItem[]; events: NewEvent[] }> {
  const t = conn.names;
  const locked = await tx.query<{ key: string }>(
    `SELECT l.key FROM ${t.work_limits} AS l
     WHERE l.instance = $1 AND EXISTS (
       SELECT 1 FROM ${t.work_items} AS w
       WHERE w.instance = $1 AND w.concurrency_key = l.key AND w.status = 'pending')
     ORDER BY l.key FOR UPDATE`,
    [conn.instance],
  );
  const p = conn.params();
  const nowP = p.add(q.now);
  const keys = p.add(locked.rows.map((r) => r.key));
  const { claimers: claimersP, filter, limit } = claimParams(p, q);
  const inWindow = `l.window_start + l.rate_period_ms > ${nowP}`;
  const res = await tx.query<{ rows: Array<WorkItemRow & { _rn: number }> | null }>(
    `WITH _room AS MATERIALIZED (
        SELECT l.key, GREATEST(0, LEAST(
          l.max_in_flight - (SELECT count(*) FROM ${t.work_items} AS f
            WHERE f.instance = $1 AND f.concurrency_key = l.key AND f.status = 'in_flight'),
          l.rate_count - CASE WHEN ${inWindow} THEN l.window_count ELSE 0 END)) AS room
        FROM ${t.work_limits} AS l WHERE l.instance = $1 AND l.key = ANY(${keys}::text[])),
      _free AS MATERIALIZED (
        SELECT w.id, w.priority, w.created_at, w.instance AS inst FROM ${t.work_items} AS w
        WHERE w.instance = $1 AND ${ready(t, nowP)}${filter}
          AND (w.concurrency_key IS NULL OR NOT EXISTS (
            SELECT 1 FROM ${t.work_limits} AS l WHERE l.instance = $1 AND l.key = w.concurrency_key))
        ${ORDER} LIMIT ${limit} FOR UPDATE SKIP LOCKED),
      _keyed AS MATERIALIZED (
        SELECT k.* FROM _room AS r CROSS JOIN LATERAL (
          SELECT w.id, w.priority, w.created_at, w.instance AS inst FROM ${t.work_items} AS w
          WHERE w.instance = $1 AND w.concurrency_key = r.key AND ${ready(t, nowP)}${filter}
          ${ORDER} LIMIT LEAST(COALESCE(r.room, ${limit}), ${limit}) FOR UPDATE SKIP LOCKED) AS k
        WHERE COALESCE(r.room, 1) > 0),
      _candidates AS MATERIALIZED (
        SELECT c.id, c.inst, row_number() OVER (ORDER BY c.priority DESC, c.created_at, c.id) AS rn
        FROM (SELECT * FROM _free UNION ALL SELECT * FROM _keyed) AS c ORDER BY rn LIMIT ${limit}),
      _picked AS MATERIALIZED (
        SELECT k.id, cl.worker, cl.expires, k.rn, k.inst FROM _candidates AS k
        JOIN ${recordset(claimersP, 'worker text, expires bigint, lo bigint, hi bigint', 'cl')}
          ON k.rn > cl.lo AND k.rn <= cl.hi),
      _upd AS (
        UPDATE ${t.work_items} AS w SET status = 'in_flight', lease_owner = k.worker,
          lease_expires_at = k.expires, claimed_at = ${nowP}, attempts = w.attempts + 1, updated_at = ${nowP}
        FROM _picked AS k WHERE ${sameItem('k')}
        RETURNING ${W_COLS}, k.rn AS _rn),
      _window AS (
        UPDATE ${t.work_limits} AS l SET
          window_count = CASE WHEN ${inWindow} THEN l.window_count ELSE 0 END + s.n,
          window_start = CASE WHEN ${inWindow} THEN l.window_start ELSE ${nowP} END
        FROM (SELECT u.concurrency_key AS key, count(*) AS n FROM _upd AS u
              WHERE u.concurrency_key = ANY(${keys}::text[]) GROUP BY u.concurrency_key) AS s
        WHERE l.instance = $1 AND l.key = s.key AND l.rate_count IS NOT NULL
        RETURNING l.key)
      SELECT ${jsonRows('_upd', 'ORDER BY u._rn')}, (SELECT count(*) FROM _window) AS windows`,
    p.values,
  );
  // Stryker disable next-line OptionalChaining,ArrayDeclaration: equivalent: a SELECT without FROM returns one row, and rows is null only when none matched (read as none)
  const rows = res.rows[0]?.rows ?? [];
  const claimed = rows.map(toWorkItem);
  const events = claimed.map((item, k) =>
    claimedEvent(item, item.lease_owner as string, claimerKind(q.claimers, rows[k]!._rn), q.now),
  );
  return { claimed, events: batchEvents(events) };
}

/**
 * The ready items a claim takes, in claim order, locked (SKIP LOCKED), at most `limit` (an expression): the
 * claim_ready function (migration 0010), whose plan walks work_items_ready in that order and stops at the
 * limit whatever the table's statistics say — planned inline, a claim on a table never analyzed read and
 * sorted every pending item. A claim by id is one primary-key lookup and stays inline (`filter` has it).
 */
function readyItems(
  t: Names,
  q: ClaimQuery,
  now: string,
  limit: string,
  filter: string,
  kind: string,
): string {
  // Stryker disable next-line ConditionalExpression: equivalent in results (the inline SELECT takes the same items); the plan at size is what claim_ready is for (test/backends/postgres.hot-plans.test.ts)
  if (q.id !== null) {
    return `SELECT w.id, w.priority, w.created_at, w.instance AS inst, w.concurrency_key FROM ${t.work_items} AS w
        WHERE w.instance = $1 AND ${ready(t, now)}${filter}
        ${ORDER} LIMIT ${limit} FOR UPDATE SKIP LOCKED`;
  }
  // Locks (claim by key) are held by name, never handed out as the next item, not even to a claim of
  // their kind.
  const notKind = `'${LOCK_KIND}'::text`;
  return `SELECT r.id, r.priority, r.created_at, r.inst, r.concurrency_key
        FROM ${t.claim_ready}($1, ${now}::bigint, (${limit})::bigint, ${kind}, ${notKind}) AS r`;
}

/**
 * One statement: expired leases go back to pending (or failed once attempts are spent) and, with
 * `claim`, up to `limit` ready items (reclaimed ones included) go in flight under the new lease, each row
 * updated once. Rows other transactions hold are skipped (SKIP LOCKED), and the candidates are picked in
 * a MATERIALIZED CTE so the LIMIT is applied once, not re-evaluated by the planner per row.
 */
async function reclaimAndClaim(
  tx: Tx,
  conn: PostgresConnection,
  now: number,
  actor: string | null,
  claim: ClaimQuery | null,
): Promise<{ reclaimed: WorkItem[]; claimed: WorkItem[]; events: NewEvent[]; limited: boolean }> {
  const t = conn.names;
  const p = conn.params();
  const nowP = p.add(now);
  let readySql =
    'SELECT NULL::text AS id, 0 AS priority, 0::bigint AS created_at, NULL::text AS inst, NULL::text AS concurrency_key WHERE false';
  let picked =
    'SELECT NULL::text AS id, NULL::text AS worker, NULL::bigint AS expires, 0::bigint AS rn, NULL::text AS inst WHERE false';
  if (claim) {
    const { claimers: claimersP, filter, kind, limit } = claimParams(p, claim);
    // Ready pending items come off the partial index in claim order; reclaimed ones join them. Nothing is
    // claimed here when one of them has a limited key: claimLimited claims, under the limit locks.
    readySql = readyItems(t, claim, nowP, limit, filter, kind);
    picked = `SELECT k.id, cl.worker, cl.expires, k.rn, k.inst FROM (
          SELECT c.id, c.inst, row_number() OVER (ORDER BY c.priority DESC, c.created_at, c.id) AS rn FROM (
            SELECT id, priority, created_at, inst FROM _ready
            UNION ALL
            SELECT w.id, w.priority, w.created_at, e.inst FROM ${t.work_items} AS w JOIN _expired AS e
              ON ${sameItem('e')}
             WHERE NOT e.spent AND ${dueAndUnblocked(t, nowP)}${filter}
          ) AS c ORDER BY rn LIMIT ${limit}) AS k
        JOIN ${recordset(claimersP, 'worker text, expires bigint, lo bigint, hi bigint', 'cl')}
          ON k.rn > cl.lo AND k.rn <= cl.hi
        WHERE NOT (SELECT limited FROM _limited)`;
  }
  // Reclaimed items that could be claimed again count as candidates (even when not due: conservative).
  const sql = `WITH _expired AS MATERIALIZED (
        SELECT id, lease_owner AS previous_owner, attempts >= max_attempts AS spent, instance AS inst,
          concurrency_key
        FROM ${t.work_items}
        WHERE instance = $1 AND status = 'in_flight' AND lease_expires_at <= ${nowP}
        FOR UPDATE SKIP LOCKED),
      _ready AS MATERIALIZED (${readySql}),
      _limited AS MATERIALIZED (SELECT ${
        claim ? `${limitedAmong(t, '_ready')} OR ${limitedAmong(t, '_expired', 'NOT c.spent')}` : 'false'
      } AS limited),
      _picked AS MATERIALIZED (${picked}),
      _upd AS (
        UPDATE ${t.work_items} AS w SET
          status = CASE WHEN x.claimed THEN 'in_flight' WHEN x.spent THEN 'failed' ELSE 'pending' END,
          error = CASE WHEN x.spent
            THEN 'lease expired on attempt ' || w.attempts || ' of ' || w.max_attempts ELSE w.error END,
          resolved_at = CASE WHEN x.spent THEN ${nowP} WHEN x.reclaimed THEN NULL ELSE w.resolved_at END,
          lease_owner = CASE WHEN x.claimed THEN x.worker ELSE NULL END,
          lease_expires_at = CASE WHEN x.claimed THEN x.expires ELSE NULL END,
          claimed_at = CASE WHEN x.claimed THEN ${nowP} ELSE w.claimed_at END,
          attempts = w.attempts + CASE WHEN x.claimed THEN 1 ELSE 0 END,
          updated_at = ${nowP}
        FROM (
          SELECT COALESCE(e.id, k.id) AS id, COALESCE(e.inst, k.inst) AS inst, e.id IS NOT NULL AS reclaimed,
            COALESCE(e.spent, false) AS spent,
            e.previous_owner, k.id IS NOT NULL AS claimed, k.worker, k.expires, k.rn
          FROM _expired AS e FULL JOIN _picked AS k ON k.id = e.id) AS x
        WHERE ${sameItem('x')}
        RETURNING w.*, x.reclaimed AS _reclaimed, x.claimed AS _claimed, x.previous_owner AS _previous_owner,
          x.rn AS _rn)
      SELECT ${jsonRows('_upd')}, (SELECT limited FROM _limited) AS limited`;
  const res = await tx.query<{ rows: ReclaimClaimRow[] | null; limited: boolean }>(sql, p.values);
  const row = res.rows[0];
  // Stryker disable next-line OptionalChaining,ArrayDeclaration: equivalent: a SELECT without FROM returns one row, and rows is null only when none matched (read as none)
  const rows = row?.rows ?? [];
  const reclaimedRows = rows
    .filter((r) => r._reclaimed)
    .map((r) => ({ r, item: toWorkItem(r) }))
    .sort((a, b) => claimOrder(a.item, b.item));
  // In the order they were handed out, so each claimer's items follow the earlier claimers'.
  const claimedRows = rows.filter((r) => r._claimed).sort((a, b) => (a._rn ?? 0) - (b._rn ?? 0));
  const claimed = claimedRows.map(toWorkItem);
  const events: NewEvent[] = reclaimedRows.map(({ r, item }) =>
    reclaimedEvent(
      item,
      r._previous_owner,
      actor,
      now,
      // An item reclaimed and claimed again in this statement was, in between, pending on its old attempt.
      r._claimed ? { attempt: item.attempts - 1, status: 'pending' } : undefined,
    ),
  );
  const claimedEvents = claimed.map((item, k) =>
    claimedEvent(
      item,
      item.lease_owner as string,
      claimerKind(claim!.claimers, claimedRows[k]!._rn ?? 0),
      now,
    ),
  );
  const reclaimed = reclaimedRows.map((x) => x.item);
  // An item whose last attempt expired failed: its cascade dependants are cancelled with it, before the
  // claim is recorded (cause before effect, in the order SQLite writes them).
  const cascaded = await cascadeRows(
    tx,
    conn,
    reclaimed.map((item) => ({ item, actor })),
    now,
  );
  return {
    reclaimed,
    claimed,
    events: [...batchEvents(events), ...cascaded, ...batchEvents(claimedEvents)],
    // Stryker disable next-line OptionalChaining: equivalent: a SELECT without FROM returns one row
    limited: row?.limited === true,
  };
}

/**
 * A claim in one statement (one round trip), its event built by the statement: what claimedEvent and
 * batchEvents would write for the items it hands out (one work_item_claimed, or one work_items_claimed
 * naming them all). Expired leases are the full claim's work (they are reclaimed first, and a spent one
 * may cascade), and so are items of limited keys (claimLimited): when any is among the candidates this
 * changes nothing and returns null.
 */
async function claimInOneStatement(
  conn: PostgresConnection,
  hint: AppendHint | null,
  q: ClaimQuery,
): Promise<WorkItem[] | null> {
  const t = conn.names;
  // Stryker disable next-line ConditionalExpression: equivalent: the one statement writes what the full claim writes (test/backends/agreement.test.ts); this only chooses the cheaper
  if (!oneStatementPays(q.claimers.reduce((n, c) => n + c.limit, 0))) return null;
  const p = conn.params();
  const nowP = p.add(q.now);
  const first = q.claimers[0];
  // Claimers of one actor kind (nearly always): each entry's text around its id and attempt comes from its
  // claimer (claimedText), so the statement only joins strings; otherwise it writes the whole entry.
  // Stryker disable next-line ConditionalExpression,EqualityOperator,ArrowFunction: equivalent when it turns shared off: both texts are the same bytes (test/backends/agreement.test.ts); only the cheaper is chosen
  const shared = first !== undefined && q.claimers.every((c) => c.actor_kind === first.actor_kind);
  const { claimers: claimersP, filter, kind: kindP, limit } = claimParams(p, q, shared);
  const one = p.add('work_item_claimed');
  const many = p.add(BATCH_TYPE_OF.work_item_claimed);
  // work_item_claimed's data as its codec writes it (its actor kind last, or once on a batch all share).
  const claimed = fieldsSql(CLAIMED.fields, {
    worker: 'u.lease_owner',
    attempt: 'u.attempts',
    lease_expires_at: 'u.lease_expires_at',
  });
  const kind = `',"actor_kind":' || to_json(u._kind)::text`;
  const text = shared ? ', cl.pre, cl.post, cl.lone_pre, cl.lone_post' : '';
  const textCols = shared ? ', pre text, post text, lone_pre text, lone_post text' : '';
  const entries = shared
    ? `_entries AS (
        SELECT count(*) AS n, 1 AS kinds, NULL::text AS kind,
          string_agg('{"id":' || to_json(u.id)::text || u._pre || u.attempts || u._post, ',' ORDER BY u._rn)
            AS entries, NULL::text AS kinded,
          (SELECT u1._lone_pre || u1.attempts || u1._lone_post FROM _upd AS u1 ORDER BY u1._rn LIMIT 1) AS lone
        FROM _upd AS u)`
    : `_entries AS (
        SELECT count(*) AS n, count(DISTINCT u._kind) AS kinds, min(u._kind) AS kind,
          string_agg('{"id":' || to_json(u.id)::text
            || CASE WHEN u.lease_owner = f.actor THEN '' ELSE ',"actor":' || to_json(u.lease_owner)::text END
            || ',' || ${claimed} || '}', ',' ORDER BY u._rn) AS entries,
          string_agg('{"id":' || to_json(u.id)::text
            || CASE WHEN u.lease_owner = f.actor THEN '' ELSE ',"actor":' || to_json(u.lease_owner)::text END
            || ',' || ${claimed} || ${kind} || '}', ',' ORDER BY u._rn) AS kinded,
          string_agg('{' || ${claimed} || ${kind} || '}', ',') AS lone
        FROM _upd AS u CROSS JOIN _first AS f)`;
  const kindText = shared ? `${p.add(JSON.stringify(first.actor_kind))}::text` : 'to_json(e.kind)::text';
  const sql = `WITH _stale AS MATERIALIZED (
        SELECT EXISTS (SELECT 1 FROM ${t.work_items}
          WHERE instance = $1 AND status = 'in_flight' AND lease_expires_at <= ${nowP}) AS stale),
      _ready AS MATERIALIZED (${readyItems(t, q, nowP, `CASE WHEN (SELECT stale FROM _stale) THEN 0 ELSE ${limit} END`, filter, kindP)}),
      _limited AS MATERIALIZED (SELECT ${limitedAmong(t, '_ready')} AS limited),
      _picked AS MATERIALIZED (
        SELECT k.id, cl.worker, cl.kind, cl.expires${text}, k.rn, k.inst FROM (
          SELECT r.id, r.inst, row_number() OVER (ORDER BY r.priority DESC, r.created_at, r.id) AS rn
          FROM _ready AS r) AS k
        JOIN ${recordset(claimersP, `worker text, kind text, expires bigint, lo bigint, hi bigint${textCols}`, 'cl')}
          ON k.rn > cl.lo AND k.rn <= cl.hi
        WHERE NOT (SELECT limited FROM _limited)),
      _upd AS (
        UPDATE ${t.work_items} AS w SET status = 'in_flight', lease_owner = k.worker,
          lease_expires_at = k.expires, claimed_at = ${nowP}, attempts = w.attempts + 1, updated_at = ${nowP}
        FROM _picked AS k WHERE ${sameItem('k')}
        RETURNING ${W_COLS}, k.rn AS _rn, k.kind AS _kind${
          shared ? ', k.pre AS _pre, k.post AS _post, k.lone_pre AS _lone_pre, k.lone_post AS _lone_post' : ''
        }),
      _first AS (SELECT lease_owner AS actor, id FROM _upd ORDER BY _rn LIMIT 1),
      ${entries},
      ${computedEventCtes(
        t,
        `SELECT CASE WHEN e.n = 1 THEN ${p.add(workItemStream(''))} || f.id ELSE ${p.add(BATCH_STREAM)} END AS stream,
           CASE WHEN e.n = 1 THEN ${one} ELSE ${many} END AS type,
           CASE WHEN e.n = 1 THEN e.lone
             WHEN e.kinds = 1 THEN '{"actor_kind":' || ${kindText} || ',"items":[' || e.entries || ']}'
             ELSE '{"items":[' || e.kinded || ']}' END AS data,
           f.actor, CASE WHEN e.n = 1 THEN f.id END AS work_item_id, ${nowP}::bigint AS created_at
         FROM _entries AS e LEFT JOIN _first AS f ON true`,
        '(SELECT n FROM _entries) > 0',
      )}
      SELECT ${jsonRows('_upd', 'ORDER BY u._rn')}, (SELECT stale FROM _stale) AS stale,
        (SELECT limited FROM _limited) AS limited, (SELECT e_position FROM _ev) AS position`;
  const res = await conn.transaction((tx) =>
    tx.queryAndCommit<{
      rows: WorkItemRow[] | null;
      stale: boolean;
      limited: boolean;
      position: number | null;
    }>(sql, p.values),
  );
  const row = res.rows[0];
  if (!row || row.stale || row.limited) return null;
  // Stryker disable next-line ConditionalExpression,EqualityOperator,OptionalChaining: latency only: the hint wakes this process's watchers of the log at once instead of at their next poll
  if (row.position !== null) hint?.appended(Number(row.position));
  return (row.rows ?? []).map(toWorkItem);
}

export async function claim(
  conn: PostgresConnection,
  hint: AppendHint | null,
  q: ClaimQuery,
): Promise<WorkItem[]> {
  const fast = await claimInOneStatement(conn, hint, q);
  if (fast) return fast;
  return conn.transaction(async (tx) => {
    // Stryker disable next-line OptionalChaining: equivalent: a claim has at least one claimer (WorkQueue makes one per call)
    const r = await reclaimAndClaim(tx, conn, q.now, q.claimers[0]?.worker ?? null, q);
    if (!r.limited) {
      await commitEvents(tx, conn, hint, r.events);
      return r.claimed;
    }
    // A candidate's key is limited: the claim runs again, after the sweep, under the limit locks.
    const l = await claimLimited(tx, conn, q);
    await commitEvents(tx, conn, hint, [...r.events, ...l.events]);
    return l.claimed;
  });
}

export async function reclaimExpired(
  conn: PostgresConnection,
  hint: AppendHint | null,
  now: number,
  actor: string | null,
): Promise<WorkItem[]> {
  return conn.transaction(async (tx) => {
    const r = await reclaimAndClaim(tx, conn, now, actor, null);
    await commitEvents(tx, conn, hint, r.events);
    return r.reclaimed;
  });
}

export async function replayUnfinished(
  conn: PostgresConnection,
  hint: AppendHint | null,
  now: number,
  actor: string | null,
): Promise<WorkItem[]> {
  const t = conn.names;
  return conn.transaction(async (tx) => {
    const r = await reclaimAndClaim(tx, conn, now, actor, null);
    // FOR SHARE: each replayed state is the newest committed one, and stays so until this commits.
    const res = await tx.query<{ rows: WorkItemRow[] | null }>(
      `WITH _un AS (
             SELECT ${W_COLS} FROM ${t.work_items} AS w
             WHERE w.instance = $1 AND w.status IN ('pending', 'in_flight', 'waiting_human') FOR SHARE)
           SELECT ${jsonRows('_un')}`,
      [conn.instance],
    );
    const row = res.rows[0];
    // Stryker disable next-line OptionalChaining: equivalent: a SELECT without FROM returns one row
    const items = (row?.rows ?? []).map(toWorkItem).sort(claimOrder);
    const replayed = items.map((item) => replayedEvent(item, actor, now));
    await commitEvents(tx, conn, hint, [...r.events, ...replayed]);
    return items;
  });
}
