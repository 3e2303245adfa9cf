// Work-item SQL for PostgreSQL: every transition is one conditional statement, then its events appended
// (positioned and hash-chained under the instance's head lock) pipelined with COMMIT; claims skip rows
// other claimers hold.
import type {
  ClaimQuery,
  LeaseQuery,
  NewEvent,
  NewWorkItem,
  Outcome,
  RecordQuery,
  ReleaseQuery,
  ResolveQuery,
  RetryQuery,
  SignalQuery,
  StatusChange,
  StoredEvent,
  WorkHistory,
  WorkHistoryQuery,
  WorkItemBackend,
  WorkItemRowDump,
  WorkStats,
  WorkStatsQuery,
} from '../../core/backend.js';
import { ITEM_SIGNALED, RUN_RECORD_TYPES, recordKindOf } from '../../core/codecs/run-records.js';
import { claimOrder, workItemFromRow } from '../../core/rows.js';
import { toIso } from '../../core/time.js';
import type { EventRecord, StatusCounts, WorkItem, WorkItemStatus } from '../../core/types.js';
import { LOCK_KIND } from '../../core/types.js';
import {
  annotatedEvent,
  BATCH_STREAM,
  BATCH_TYPE_OF,
  batchEvents,
  cascadedEvent,
  cascadeError,
  checkRecord,
  checkSignal,
  checkUnless,
  claimedEvent,
  claimerKind,
  endedUnsuccessfully,
  enqueuedEvent,
  explainLeaseFailure,
  explainRetryFailure,
  explainStatusFailure,
  type HistoryRow,
  historyBuckets,
  isTerminal,
  RETRYABLE,
  reclaimedEvent,
  refusalOf,
  refusedOutcome,
  releasedEvent,
  reopenedEvent,
  replayedEvent,
  resolvedEvent,
  retriedEvent,
  statusEvent,
  unmatchedResolve,
  wakesFor,
  workItemStream,
} from '../../core/work-rules.js';
import { InternalError } from '../../errors.js';
import { DUMP_COLUMNS, missingBlocker, statusCounts, toEventRecord } from '../shared.js';
import {
  jsonRows,
  type Names,
  type Params,
  type PostgresConnection,
  recordset,
  type Tx,
} from './connection.js';
import { type AppendHint, appendEventsCtes, computedEventCtes, writeEvents } from './events.js';

/** A row as selected, or as nested JSON (row_to_json), both with numbers for bigint columns. */
export type WorkItemRow = WorkItemRowDump;
export const toWorkItem = workItemFromRow;

const ORDER = 'ORDER BY w.priority DESC, w.created_at, w.id';

/**
 * The parameters a claim statement shares: each claimer takes the picked items numbered (lo, hi] in claim
 * order (`claimers`, a json_to_recordset of worker, expires, lo, hi), the kind/id filter on `w`, and the
 * total limit.
 */
function claimParams(
  p: Params,
  q: ClaimQuery,
  eventText = false,
): { claimers: string; filter: string; limit: string } {
  let hi = 0;
  const ranges = q.claimers.map((c) => {
    const lo = hi;
    hi += c.limit;
    const range = { worker: c.worker, kind: c.actor_kind, expires: q.now + c.lease_ms, lo, hi };
    return eventText ? { ...range, ...claimedText(q, c) } : range;
  });
  const claimers = p.json(ranges);
  let filter = '';
  if (q.kind !== null) filter += ` AND w.kind = ${p.add(q.kind)}`;
  if (q.id !== null) filter += ` AND w.id = ${p.add(q.id)}`;
  // Locks (claim by key) are held by name, never handed out as the next item.
  else if (q.kind === null) filter += ` AND w.kind IS DISTINCT FROM '${LOCK_KIND}'`;
  return { claimers, filter, limit: p.add(hi) };
}

/**
 * The text of claimedEvent's data around what only the item's row knows (its id and attempt), the same for
 * every item a claimer takes: its entry in a batch event of one actor kind (`pre`, `post`: after the id,
 * the actor when it is not the first claimer's, the worker; after the attempt, the lease's end), and the
 * data of a lone claim (`lone_pre`, `lone_post`), as JSON.stringify and batchEvents write them.
 */
function claimedText(q: ClaimQuery, c: ClaimQuery['claimers'][number]) {
  const json = JSON.stringify;
  const expires = `,"lease_expires_at":${json(toIso(q.now + c.lease_ms))}`;
  const actor = c.worker === q.claimers[0]?.worker ? '' : `,"actor":${json(c.worker)}`;
  return {
    pre: `${actor},"worker":${json(c.worker)},"attempt":`,
    post: `${expires}}`,
    lone_pre: `{"worker":${json(c.worker)},"attempt":`,
    lone_post: `${expires},"actor_kind":${json(c.actor_kind)}}`,
  };
}

/** The input rows of a resolve (`_in`): one per query, numbered in their order. */
function resolveRows(qs: ResolveQuery[]): Array<Record<string, unknown>> {
  return qs.map((q, ord) => ({
    ord,
    id: q.id,
    worker: q.worker,
    attempt: q.attempt,
    status: q.status,
    result: JSON.stringify(q.result ?? null),
    error: q.error,
    retry_at: q.status === 'failed' ? q.retry_at : null,
    now: q.now,
  }));
}
const RESOLVE_COLS =
  'ord int, id text, worker text, attempt int, status text, result text, error text, retry_at bigint, now bigint';

/** A failed attempt of input row `x` to try again (its retry time set) while the item `w` has attempts left. */
const RETRY_DUE = '(x.retry_at IS NOT NULL AND w.attempts < w.max_attempts)';

/** Row `w` is in flight under the lease the input row `x` names (worker, unexpired, attempt when given). */
const HELD_BY_X = `w.status = 'in_flight' AND w.lease_owner = x.worker
           AND w.lease_expires_at > x.now AND (x.attempt IS NULL OR w.attempts = x.attempt)`;

/**
 * Row `w` is the item that row `x` of a MATERIALIZED CTE names by its instance (column `inst`) and id. Joined
 * as `w.instance = $1 AND w.id = x.id`, an UPDATE of a few items was planned as a scan of every item of the
 * instance (a new instance is estimated at a few rows until ANALYZE sees it, and json_to_recordset at 100):
 * 8,000 rows read to resolve 8, and a claim of 1,000 compared each picked item with every item updated (a
 * million comparisons, 0.7 s). With the instance a column of the CTE (the planner cannot see its value through
 * MATERIALIZED), the only cheap path to `w` is one primary-key lookup per row of `x`, whatever the estimates.
 */
const sameItem = (x: string) => `w.instance = ${x}.inst AND w.id = ${x}.id`;

/**
 * A CTE `_at`: the rows of `_in` (at most `n`, which tells the planner how many) whose items are held as
 * `where` says (over the item as `w` and the input as `x`), with column `inst` for sameItem. Each item is
 * found by one primary-key lookup (the LIMIT keeps it inside the loop) and locked before `where` is tested,
 * so the test sees its newest version and the item cannot change before the statement's UPDATE (which then
 * needs no test of its own). Only instance and id are in the lookup: with the status there too, the planner
 * preferred the partial index of every instance's leases and scanned it for each row. Items are locked in
 * id order, so two batches naming the same items cannot deadlock.
 */
function inAt(t: Names, n: string, where: string): string {
  return `_at AS MATERIALIZED (
         SELECT x.*, w.instance AS inst FROM (SELECT * FROM _in ORDER BY id LIMIT ${n}) AS x CROSS JOIN LATERAL (
           SELECT instance, status, lease_owner, lease_expires_at, attempts FROM ${t.work_items}
           WHERE instance = $1 AND id = x.id LIMIT 1 FOR UPDATE) AS w
         WHERE ${where})`;
}

/**
 * One statement updating the items that `rows` name (each with its `ord`, the columns `cols`), each only
 * while held as its row says (HELD_BY_X): `set` over the item `w` and its row `x`. Returns the updated
 * items by `ord`; the rows whose lease did not match are not in it.
 */
async function updateHeld(
  run: Pick<Tx, 'query'> | PostgresConnection,
  conn: PostgresConnection,
  rows: unknown[],
  cols: string,
  set: string,
): Promise<Map<number, WorkItem>> {
  const t = conn.names;
  const p = conn.params();
  const batch = p.json(rows);
  const res = await run.query<{ rows: Array<WorkItemRow & { _ord: number }> | null }>(
    `WITH _in AS (SELECT * FROM ${recordset(batch, cols)}),
       ${inAt(t, p.add(rows.length), HELD_BY_X)},
       _u AS (
         UPDATE ${t.work_items} AS w SET ${set}
         FROM _at AS x
         WHERE ${sameItem('x')}
         RETURNING ${W_COLS}, x.ord AS _ord)
       SELECT ${jsonRows('_u')}`,
    p.values,
  );
  return new Map((res.rows[0]?.rows ?? []).map((r) => [r._ord, toWorkItem(r)]));
}

/**
 * Whether a claim or resolve of up to `items` items is sent as one statement that builds its own event.
 * For a batch it saves the client a third of its CPU per item; for single items it does not pay: with 8
 * single-item workers on one instance it ran at 0.77× the two-statement path here (470 against 610 items/s;
 * the head lock is contended either way), with one worker at 1.15×.
 */
const oneStatementPays = (items: number) => items >= 2;

/** The text toIso writes for an epoch-milliseconds column (UTC, whole milliseconds, four-digit years). */
const isoText = (col: string) =>
  `to_char(timestamp 'epoch' + ${col} * interval '1 millisecond', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

// Named columns, not *: a prepared statement whose result columns change (a later migration adding one)
// fails on connections that prepared it before.
const COLS = DUMP_COLUMNS.work_items.join(', ');
const W_COLS = COLS.split(', ')
  .map((c) => `w.${c}`)
  .join(', ');

/** Due, and every blocker done (the status test is left to the caller). */
function dueAndUnblocked(t: Names, now: string): string {
  return `(w.not_before IS NULL OR w.not_before <= ${now})
    AND (cardinality(w.blocked_by) = 0 OR NOT EXISTS (
      SELECT 1 FROM unnest(w.blocked_by) AS b(id)
      WHERE NOT EXISTS (
        SELECT 1 FROM ${t.work_items} AS d WHERE d.instance = $1 AND d.id = b.id AND d.status = 'done')))`;
}

/**
 * The rows of work_item_blockers naming blocker `id` (`e.item`), as a LATERAL join. OFFSET 0 keeps it a
 * subquery the planner cannot merge into the join, so it stays one index range per blocker: merged, it was
 * planned as a scan of every row of the instance (22,000 read to cascade the failure of 2 items).
 */
const dependantsOf = (t: Names, id: string) =>
  `CROSS JOIN LATERAL (
        SELECT item FROM ${t.work_item_blockers} WHERE instance = $1 AND blocker = ${id} OFFSET 0) AS e`;

/**
 * Item `id`'s columns `cols` (as `alias`), as a LATERAL join: one primary-key lookup (LIMIT 1 keeps it
 * inside the loop), its status tested by the caller; `lock` (FOR UPDATE) locks it first, as inAt does. As
 * there: with the status in the lookup the planner may walk the instance's pending items instead.
 */
const itemById = (t: Names, id: string, cols: string, alias: string, lock = '') =>
  `CROSS JOIN LATERAL (
        SELECT ${cols} FROM ${t.work_items} WHERE instance = $1 AND id = ${id} LIMIT 1 ${lock}) AS ${alias}`;

/**
 * The CTE `stuck(id)`: the pending items blocked on a failure, a blocker ended failed or cancelled or is a
 * pending item blocked on one (it cannot become ready until the failed blocker is retried). Found from the
 * failed and cancelled items along work_item_blockers, so it reads those, the items it finds and their
 * dependants, never every pending item. UNION (not ALL) keeps each item once and ends on any cycle an
 * import brought.
 */
function blockedOnFailure(t: Names): string {
  return `stuck(id) AS (
    SELECT e.item FROM ${t.work_items} AS f
      ${dependantsOf(t, 'f.id')}
      ${itemById(t, 'e.item', 'status', 'p')}
    WHERE f.instance = $1 AND f.status IN ('failed', 'cancelled') AND p.status = 'pending'
    UNION
    SELECT e.item FROM stuck AS s
      ${dependantsOf(t, 's.id')}
      ${itemById(t, 'e.item', 'status', 'p')}
    WHERE p.status = 'pending')`;
}

/** A pending item is ready when its not_before has passed and every blocker is done. */
function ready(t: Names, now: string): string {
  return `w.status = 'pending' AND ${dueAndUnblocked(t, now)}`;
}

/**
 * CTEs inserting `items` in one statement while `guard` holds: `_missing` names the first blocker that is
 * no item of this instance (then nothing is inserted), `_ins` returns the rows created. An existing
 * idempotency key inserts nothing (ON CONFLICT DO NOTHING on the unique index), never a duplicate.
 */
export function enqueueCtes(t: Names, p: Params, items: NewWorkItem[], guard: string): string {
  const batch = p.json(
    items.map((n, ord) => ({
      ord,
      id: n.id,
      title: n.title,
      kind: n.kind,
      status: n.status,
      priority: n.priority,
      payload: JSON.stringify(n.payload ?? null),
      blocked_by: n.blocked_by,
      not_before: n.not_before,
      max_attempts: n.max_attempts,
      idempotency_key: n.idempotency_key,
      on_blocker_failure: n.on_blocker_failure ?? 'wait',
      concurrency_key: n.concurrency_key ?? null,
      traceparent: n.traceparent ?? null,
      created_at: n.created_at,
    })),
  );
  const cols = `ord int, id text, title text, kind text, status text, priority int, payload text,
      blocked_by text[], not_before bigint, max_attempts int, idempotency_key text, on_blocker_failure text,
      concurrency_key text, traceparent text, created_at bigint`;
  return `_in AS (SELECT * FROM ${recordset(batch, cols)}),
  _missing AS (
    SELECT b.dep FROM _in AS x CROSS JOIN LATERAL unnest(x.blocked_by) WITH ORDINALITY AS b(dep, k)
    WHERE NOT EXISTS (SELECT 1 FROM ${t.work_items} AS w WHERE w.instance = $1 AND w.id = b.dep)
      AND NOT EXISTS (SELECT 1 FROM _in AS y WHERE y.id = b.dep AND y.ord < x.ord)
    ORDER BY x.ord, b.k LIMIT 1),
  _ins AS (
    INSERT INTO ${t.work_items} (instance, id, title, kind, status, priority, payload, blocked_by, not_before,
      max_attempts, idempotency_key, on_blocker_failure, concurrency_key, traceparent, created_at, updated_at)
    SELECT $1, x.id, x.title, x.kind, x.status, x.priority, x.payload::jsonb, x.blocked_by, x.not_before,
      x.max_attempts, x.idempotency_key, x.on_blocker_failure, x.concurrency_key, x.traceparent, x.created_at,
      x.created_at
    FROM _in AS x WHERE NOT EXISTS (SELECT 1 FROM _missing) AND ${guard}
    ORDER BY x.ord
    ON CONFLICT (instance, idempotency_key) DO NOTHING
    RETURNING *)`;
}

/**
 * After `enqueueCtes` ran: the result per input item (an existing idempotency key yields the existing item,
 * created=false) and the enqueued events of the created ones, in input order.
 */
export async function settleEnqueue(
  tx: Tx,
  conn: PostgresConnection,
  items: NewWorkItem[],
  created: WorkItemRow[],
): Promise<{ out: Array<{ item: WorkItem; created: boolean }>; events: NewEvent[] }> {
  const byId = new Map(created.map((r) => [r.id, r]));
  const keys = items.filter((n) => !byId.has(n.id)).map((n) => n.idempotency_key);
  const byKey = new Map<string, WorkItemRow>();
  if (keys.length > 0) {
    // A new statement: it sees rows that concurrent enqueues committed after the insert's snapshot.
    const res = await tx.query<WorkItemRow>(
      `SELECT ${COLS} FROM ${conn.names.work_items} WHERE instance = $1 AND idempotency_key = ANY($2::text[])`,
      [conn.instance, keys],
    );
    for (const r of res.rows) if (r.idempotency_key !== null) byKey.set(r.idempotency_key, r);
  }
  const out: Array<{ item: WorkItem; created: boolean }> = [];
  const events: NewEvent[] = [];
  for (const n of items) {
    const row = byId.get(n.id);
    if (row) {
      const item = toWorkItem(row);
      out.push({ item, created: true });
      events.push(enqueuedEvent(item, n.actor, n.actor_kind, n.created_at));
      continue;
    }
    const existing = n.idempotency_key === null ? undefined : byKey.get(n.idempotency_key);
    if (!existing) throw new InternalError(`work item ${n.id} was neither inserted nor found by its key`);
    out.push({ item: toWorkItem(existing), created: false });
  }
  return { out, events };
}

/**
 * Inserts items in one statement; an existing idempotency key returns the existing item (created=false).
 * Returns the result per item and the work_item_enqueued events of the created ones (nothing committed yet).
 */
export async function enqueueRows(
  tx: Tx,
  conn: PostgresConnection,
  items: NewWorkItem[],
): Promise<{ out: Array<{ item: WorkItem; created: boolean }>; events: NewEvent[] }> {
  const p = conn.params();
  const res = await tx.query<{ created: WorkItemRow[] | null; missing: string | null }>(
    `WITH ${enqueueCtes(conn.names, p, items, 'true')}
     SELECT (SELECT json_agg(i) FROM _ins AS i) AS created, (SELECT dep FROM _missing) AS missing`,
    p.values,
  );
  const row = res.rows[0];
  if (row?.missing) throw missingBlocker(row.missing);
  return settleEnqueue(tx, conn, items, row?.created ?? []);
}

interface ReclaimClaimRow extends WorkItemRow {
  _reclaimed: boolean;
  _claimed: boolean;
  _previous_owner: string | null;
  _rn: number | null;
}

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
    const items = (res.rows[0]?.rows ?? []).map(toWorkItem).sort(claimOrder);
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

/** The item as stored now (read by `run`: a transaction, or the pool), or null. */
export async function getItem(
  conn: PostgresConnection,
  id: string,
  run: Pick<Tx, 'query'> | PostgresConnection = conn,
): Promise<WorkItem | null> {
  const res = await run.query<WorkItemRow>(
    `SELECT ${COLS} FROM ${conn.names.work_items} WHERE instance = $1 AND id = $2`,
    [conn.instance, id],
  );
  const row = res.rows[0];
  return row ? toWorkItem(row) : null;
}

/** The condition that `q`'s worker holds the item's lease, unexpired, on its attempt. */
function leaseWhere(p: Params, q: LeaseQuery): string {
  let sql = `instance = $1 AND id = ${p.add(q.id)} AND status = 'in_flight' AND lease_owner = ${p.add(q.worker)}
      AND lease_expires_at > ${p.add(q.now)}`;
  if (q.attempt !== null) sql += ` AND attempts = ${p.add(q.attempt)}`;
  return sql;
}

/** Runs an UPDATE … RETURNING * of at most one row (returned as JSON: immune to later columns). */
async function updateOne(tx: Tx, p: Params, update: string): Promise<WorkItem | null> {
  const res = await tx.query<{ row: WorkItemRow | null }>(
    `WITH _u AS (${update}) SELECT (SELECT row_to_json(u) FROM _u AS u) AS row`,
    p.values,
  );
  const row = res.rows[0]?.row;
  return row ? toWorkItem(row) : null;
}

/** Appends `events` as the transaction's last statement, pipelined with COMMIT. */
const commitEvents = (tx: Tx, conn: PostgresConnection, hint: AppendHint | null, events: NewEvent[]) =>
  writeEvents(tx, conn, events, { commit: true, hint });

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
  const rows = res.rows[0]?.rows ?? [];
  const claimed = rows.map(toWorkItem);
  const events = claimed.map((item, k) =>
    claimedEvent(item, item.lease_owner as string, claimerKind(q.claimers, rows[k]!._rn), q.now),
  );
  return { claimed, events: batchEvents(events) };
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
    const { claimers: claimersP, filter, limit } = claimParams(p, claim);
    // Ready pending items come off the partial index in claim order; reclaimed ones join them. Nothing is
    // claimed here when one of them has a limited key: claimLimited claims, under the limit locks.
    readySql = `SELECT w.id, w.priority, w.created_at, w.instance AS inst, w.concurrency_key FROM ${t.work_items} AS w
        WHERE w.instance = $1 AND ${ready(t, nowP)}${filter}
        ${ORDER} LIMIT ${limit} FOR UPDATE SKIP LOCKED`;
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
  for (const [k, item] of claimed.entries()) {
    const kind = claimerKind(claim!.claimers, claimedRows[k]!._rn ?? 0);
    events.push(claimedEvent(item, item.lease_owner as string, kind, now));
  }
  const reclaimed = reclaimedRows.map((x) => x.item);
  // An item whose last attempt expired failed: its cascade dependants are cancelled with it.
  const cascaded = await cascadeRows(
    tx,
    conn,
    reclaimed.map((item) => ({ item, actor })),
    now,
  );
  return {
    reclaimed,
    claimed,
    events: [...batchEvents(events), ...cascaded],
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
  if (!oneStatementPays(q.claimers.reduce((n, c) => n + c.limit, 0))) return null;
  const p = conn.params();
  const nowP = p.add(q.now);
  const first = q.claimers[0];
  // Claimers of one actor kind (nearly always): each entry's text around its id and attempt comes from its
  // claimer (claimedText), so the statement only joins strings; otherwise it writes the whole entry.
  const shared = first !== undefined && q.claimers.every((c) => c.actor_kind === first.actor_kind);
  const { claimers: claimersP, filter, limit } = claimParams(p, q, shared);
  const one = p.add('work_item_claimed');
  const many = p.add(BATCH_TYPE_OF.work_item_claimed);
  // claimedEvent's data, as JSON.stringify writes it (its actor kind last, or once on a batch all share).
  const claimed = `'"worker":' || to_json(u.lease_owner)::text || ',"attempt":' || u.attempts
            || ',"lease_expires_at":' || to_json(${isoText('u.lease_expires_at')})::text`;
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
      _ready AS MATERIALIZED (
        SELECT w.id, w.priority, w.created_at, w.instance AS inst, w.concurrency_key FROM ${t.work_items} AS w
        WHERE w.instance = $1 AND ${ready(t, nowP)}${filter} AND NOT (SELECT stale FROM _stale)
        ${ORDER} LIMIT ${limit} FOR UPDATE SKIP LOCKED),
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
  if (row.position !== null) hint?.appended(Number(row.position));
  return (row.rows ?? []).map(toWorkItem);
}

/**
 * A resolve of two or more leased items in one statement (one round trip), its event built by the
 * statement (the work_items_resolved batchEvents would write): all of `qs` or none. It changes nothing
 * and returns null when any of them does not hold its lease (the full resolve explains each); it is not
 * tried when one fails (failures may cascade), when they differ in time, or when an id repeats.
 */
async function resolveInOneStatement(
  conn: PostgresConnection,
  hint: AppendHint | null,
  qs: ResolveQuery[],
): Promise<WorkItem[] | null> {
  const t = conn.names;
  const first = qs[0];
  if (!first || !oneStatementPays(qs.length) || qs.some((q) => q.status === 'failed' || q.now !== first.now))
    return null;
  // One row per item: the statement commits what it matched, so a repeated id must take the full path.
  if (new Set(qs.map((q) => q.id)).size !== qs.length) return null;
  const p = conn.params();
  const json = JSON.stringify;
  const rows = resolveRows(qs);
  // The actor kind all of them share is said once, on the batch; otherwise last on each entry.
  const shared = qs.every((q) => q.actor_kind === first.actor_kind);
  for (const [ord, q] of qs.entries()) {
    // The event's text around what only the item's row knows (attempt, duration), as resolvedEvent and
    // batchEvents write it. Set on the row itself: a spread copy of each row cost 3 µs an item.
    const row = rows[ord] as Record<string, unknown>;
    const actor = q.worker === first.worker ? '' : `,"actor":${json(q.worker)}`;
    const error = q.error !== null ? `,"error":${json(q.error)}` : '';
    const result = q.result !== null && q.result !== undefined ? `,"result":${json(q.result)}` : '';
    row.pre = `{"id":${json(q.id)}${actor},"status":${json(q.status)},"worker":${json(q.worker)},"attempt":`;
    row.post = `${error}${result}`;
    row.tail = shared ? '' : `,"actor_kind":${json(q.actor_kind)}`;
  }
  const head = shared ? `{"actor_kind":${json(first.actor_kind)},"items":[` : '{"items":[';
  const batch = p.json(rows);
  const n = p.add(qs.length);
  const nowP = p.add(first.now);
  const sql = `WITH _in AS (
         SELECT * FROM ${recordset(batch, `${RESOLVE_COLS}, pre text, post text, tail text`)}),
       ${inAt(t, n, HELD_BY_X)},
       _u AS (
         UPDATE ${t.work_items} AS w SET status = x.status, result = x.result::jsonb, error = x.error,
           lease_expires_at = NULL, resolved_at = x.now, updated_at = x.now
         FROM _at AS x
         WHERE ${sameItem('x')} AND (SELECT count(*) FROM _at) = ${n}
         RETURNING ${W_COLS}, x.ord AS _ord, x.pre AS _pre, x.post AS _post, x.tail AS _tail),
       _entries AS (
         SELECT count(*) AS n,
           string_agg(u._pre || u.attempts || u._post
             || CASE WHEN u.claimed_at IS NULL THEN '' ELSE ',"duration_ms":' || (${nowP} - u.claimed_at) END
             || u._tail || '}', ',' ORDER BY u._ord) AS entries
         FROM _u AS u),
       ${computedEventCtes(
         t,
         `SELECT ${p.add(BATCH_STREAM)}::text AS stream, ${p.add(BATCH_TYPE_OF.work_item_resolved)}::text AS type,
            ${p.add(head)}::text || e.entries || ']}' AS data, ${p.add(first.worker)}::text AS actor,
            NULL::text AS work_item_id, ${nowP}::bigint AS created_at
          FROM _entries AS e`,
         '(SELECT n FROM _entries) > 0',
       )}
       SELECT ${jsonRows('_u', 'ORDER BY u._ord')}, (SELECT e_position FROM _ev) AS position`;
  const res = await conn.transaction((tx) =>
    tx.queryAndCommit<{ rows: WorkItemRow[] | null; position: number | null }>(sql, p.values),
  );
  const done = res.rows[0]?.rows ?? [];
  if (done.length !== qs.length) return null;
  const position = res.rows[0]?.position;
  if (position !== null && position !== undefined) hint?.appended(Number(position));
  return done.map(toWorkItem);
}

/**
 * Resolves `qs` in one transaction: one fenced UPDATE for all of them, then, for any it did not match, the
 * reason (a repeated resolve returns the item; an item waiting for a human is resolved outside a lease;
 * anything else is refused). `each`: a refusal is that item's outcome and the others still commit;
 * otherwise the first refusal throws and rolls the whole batch back.
 */
async function resolveTx(
  tx: Tx,
  conn: PostgresConnection,
  hint: AppendHint | null,
  qs: ResolveQuery[],
  each: boolean,
): Promise<Array<Outcome<WorkItem>>> {
  const done = await updateHeld(
    tx,
    conn,
    resolveRows(qs),
    RESOLVE_COLS,
    `status = CASE WHEN ${RETRY_DUE} THEN 'pending' ELSE x.status END,
       not_before = CASE WHEN ${RETRY_DUE} THEN x.retry_at ELSE w.not_before END,
       lease_owner = CASE WHEN ${RETRY_DUE} THEN NULL ELSE w.lease_owner END,
       resolved_at = CASE WHEN ${RETRY_DUE} THEN NULL ELSE x.now END,
       result = x.result::jsonb, error = x.error, lease_expires_at = NULL, updated_at = x.now`,
  );
  const out: Array<Outcome<WorkItem>> = [];
  const events: NewEvent[] = [];
  const failed: Array<{ item: WorkItem; actor: string }> = [];
  for (const [ord, q] of qs.entries()) {
    const hit = done.get(ord);
    if (hit) {
      out.push({ ok: true, value: hit });
      events.push(resolvedEvent(hit, q));
      if (hit.status === 'failed') failed.push({ item: hit, actor: q.worker });
      continue;
    }
    try {
      const current = await getItem(conn, q.id, tx);
      const change = unmatchedResolve(current, q);
      const r = change ? await setStatusRow(tx, conn, change) : { item: current!, events: [] };
      out.push({ ok: true, value: r.item });
      events.push(...r.events);
    } catch (err) {
      out.push(refusedOutcome(err, each));
    }
  }
  // The dependants the failures cancel, in the same transaction (one statement per level for the batch).
  const cascaded = await cascadeRows(tx, conn, failed, qs[0]?.now ?? 0);
  await commitEvents(tx, conn, hint, [...batchEvents(events), ...cascaded]);
  return out;
}

// The operations of WorkItemBackend (src/core/backend.ts); SQLite's work-items.ts has the same names.

export async function enqueue(
  conn: PostgresConnection,
  hint: AppendHint | null,
  items: NewWorkItem[],
): Promise<Array<{ item: WorkItem; created: boolean }>> {
  if (items.length === 0) return [];
  return conn.transaction(async (tx) => {
    const { out, events } = await enqueueRows(tx, conn, items);
    await commitEvents(tx, conn, hint, batchEvents(events));
    return out;
  });
}

export async function claim(
  conn: PostgresConnection,
  hint: AppendHint | null,
  q: ClaimQuery,
): Promise<WorkItem[]> {
  const fast = await claimInOneStatement(conn, hint, q);
  if (fast) return fast;
  return conn.transaction(async (tx) => {
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

export async function heartbeat(
  conn: PostgresConnection,
  qs: Array<LeaseQuery & { lease_ms: number }>,
): Promise<Array<Outcome<WorkItem>>> {
  if (qs.length === 0) return [];
  const rows = qs.map((q, ord) => ({
    ord,
    id: q.id,
    worker: q.worker,
    attempt: q.attempt,
    expires: q.now + q.lease_ms,
    now: q.now,
  }));
  // One statement for every lease; a lease that no longer matches is explained on its own.
  const done = await updateHeld(
    conn,
    conn,
    rows,
    'ord int, id text, worker text, attempt int, expires bigint, now bigint',
    'lease_expires_at = x.expires, updated_at = x.now',
  );
  const out: Array<Outcome<WorkItem>> = [];
  for (const [ord, q] of qs.entries()) {
    const hit = done.get(ord);
    if (hit) {
      out.push({ ok: true, value: hit });
      continue;
    }
    const current = await getItem(conn, q.id);
    out.push(refusalOf(() => explainLeaseFailure(current, q, 'heartbeat')));
  }
  return out;
}

export async function resolve(
  conn: PostgresConnection,
  hint: AppendHint | null,
  qs: ResolveQuery[],
): Promise<WorkItem[]> {
  const fast = await resolveInOneStatement(conn, hint, qs);
  if (fast) return fast;
  const out = await conn.transaction((tx) => resolveTx(tx, conn, hint, qs, false));
  return out.map((o) => (o as { value: WorkItem }).value);
}

export async function resolveEach(
  conn: PostgresConnection,
  hint: AppendHint | null,
  qs: ResolveQuery[],
): Promise<Array<Outcome<WorkItem>>> {
  const fast = await resolveInOneStatement(conn, hint, qs);
  if (fast) return fast.map((value) => ({ ok: true as const, value }));
  return conn.transaction((tx) => resolveTx(tx, conn, hint, qs, true));
}

export async function release(
  conn: PostgresConnection,
  hint: AppendHint | null,
  q: ReleaseQuery,
): Promise<WorkItem> {
  const t = conn.names;
  return conn.transaction(async (tx) => {
    const p = conn.params();
    const hit = await updateOne(
      tx,
      p,
      // The attempt number stays spent (a fencing token is never reused); max_attempts grows instead.
      `UPDATE ${t.work_items} SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL,
             max_attempts = max_attempts + 1, updated_at = ${p.add(q.now)}
           WHERE ${leaseWhere(p, q)} RETURNING *`,
    );
    if (!hit) explainLeaseFailure(await getItem(conn, q.id, tx), q, 'release');
    await commitEvents(tx, conn, hint, [releasedEvent(hit, q)]);
    return hit;
  });
}

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

export async function blockerStates(
  conn: PostgresConnection,
  ids: string[],
): Promise<Array<{ id: string; status: WorkItemStatus; blocked_by: string[] }>> {
  const t = conn.names;
  if (ids.length === 0) return [];
  const res = await conn.query<{ id: string; status: WorkItemStatus; blocked_by: string[] }>(
    `SELECT id, status, blocked_by FROM ${t.work_items} WHERE instance = $1 AND id = ANY($2::text[])`,
    [conn.instance, ids],
  );
  return res.rows;
}

export async function get(conn: PostgresConnection, id: string): Promise<WorkItem | null> {
  return getItem(conn, id);
}

export async function list(
  conn: PostgresConnection,
  q: Parameters<WorkItemBackend['list']>[0],
): Promise<WorkItem[]> {
  const t = conn.names;
  const p = conn.params();
  const where: string[] = ['w.instance = $1'];
  if (q.statuses) where.push(`w.status = ANY(${p.add(q.statuses)}::text[])`);
  if (q.kind !== null) where.push(`w.kind = ${p.add(q.kind)}`);
  if (q.concurrency_key !== undefined) where.push(`w.concurrency_key = ${p.add(q.concurrency_key)}`);
  if (q.ready !== undefined) {
    const now = p.add(q.now);
    where.push(q.ready ? `(${ready(t, now)})` : `w.status = 'pending' AND NOT (${ready(t, now)})`);
  }
  if (q.after !== undefined) {
    // After the cursor item in claim order (priority DESC, created_at, id), its key read by id (an item's
    // priority and creation time never change); no item of that id, no rows.
    const id = p.add(q.after);
    const key = (cols: string) => `(SELECT ${cols} FROM ${t.work_items} WHERE instance = $1 AND id = ${id})`;
    where.push(
      `w.priority <= ${key('priority')} AND (w.priority < ${key('priority')} OR (w.created_at, w.id) > ${key('created_at, id')})`,
    );
  }
  // Blocked on a failure: the rows come from the stuck set, one primary-key lookup each, so the read
  // costs what it finds; its complement tests each row against that set (hashed once).
  let from = `${t.work_items} AS w`;
  if (q.blocked_on_failure === true) {
    from = `stuck AS s ${itemById(t, 's.id', `${COLS}, instance`, 'w')}`;
    where.push("w.status = 'pending'");
  } else if (q.blocked_on_failure === false) {
    where.push("NOT (w.status = 'pending' AND w.id IN (SELECT id FROM stuck))");
  }
  const res = await conn.query<WorkItemRow>(
    `${q.blocked_on_failure === undefined ? '' : `WITH RECURSIVE ${blockedOnFailure(t)} `}SELECT ${W_COLS}
         FROM ${from} WHERE ${where.join(' AND ')} ${ORDER} LIMIT ${p.add(q.limit)}`,
    p.values,
  );
  return res.rows.map(toWorkItem);
}

export async function counts(conn: PostgresConnection): Promise<StatusCounts> {
  const t = conn.names;
  const res = await conn.query<{ status: WorkItemStatus; n: number }>(
    `SELECT status, count(*) AS n FROM ${t.work_items} WHERE instance = $1 GROUP BY status`,
    [conn.instance],
  );
  return statusCounts(res.rows);
}

export async function stats(conn: PostgresConnection, q: WorkStatsQuery): Promise<WorkStats> {
  const t = conn.names;
  const buckets = q.bucketsMs
    .map((b, i) => `, count(*) FILTER (WHERE resolved_at - claimed_at <= ${Number(b)})::int AS b${i}`)
    .join('');
  // One transaction, one connection: the five reads of one scrape together.
  return conn.transaction(async (tx) => {
    const grouped = await tx.query<
      WorkStats['groups'][number] & { last_attempt: number; waiting_long: number }
    >(
      `SELECT status, kind, count(*)::int AS count, sum(attempts)::int AS attempts,
              count(*) FILTER (WHERE attempts > 1)::int AS retried,
              count(*) FILTER (WHERE status = 'pending' AND attempts > 0 AND attempts >= max_attempts - 1)::int AS last_attempt,
              count(*) FILTER (WHERE status = 'waiting_human' AND updated_at <= $2)::int AS waiting_long
         FROM ${t.work_items} WHERE instance = $1 GROUP BY status, kind`,
      [conn.instance, q.waitingSince],
    );
    let lastAttempt = 0;
    let waitingLong = 0;
    const groups = grouped.rows.map(({ last_attempt, waiting_long, ...g }) => {
      lastAttempt += last_attempt;
      waitingLong += waiting_long;
      return g;
    });
    const oldest = await tx.query<{ t: string | null }>(
      `SELECT min(GREATEST(w.created_at, COALESCE(w.not_before, 0))) AS t FROM ${t.work_items} AS w
         WHERE w.instance = $1 AND ${ready(t, '$2')}`,
      [conn.instance, q.now],
    );
    const leases = await tx.query<{ expired: number; expiring: number }>(
      `SELECT count(*) FILTER (WHERE lease_expires_at <= $2)::int AS expired,
              count(*) FILTER (WHERE lease_expires_at > $2 AND lease_expires_at <= $3)::int AS expiring
         FROM ${t.work_items} WHERE instance = $1 AND status = 'in_flight'`,
      [conn.instance, q.now, q.now + q.expiringWithinMs],
    );
    const stuck = await tx.query<{ n: number }>(
      `WITH RECURSIVE ${blockedOnFailure(t)} SELECT count(DISTINCT s.id)::int AS n
         FROM stuck AS s ${itemById(t, 's.id', 'status', 'w')} WHERE w.status = 'pending'`,
      [conn.instance],
    );
    const durations = await tx.query<Record<string, number | string | null>>(
      `SELECT kind, count(*)::int AS count, sum(resolved_at - claimed_at)::float8 AS "sumMs"${buckets}
         FROM ${t.work_items}
        WHERE instance = $1 AND status IN ('done', 'failed') AND claimed_at IS NOT NULL AND resolved_at IS NOT NULL
        GROUP BY kind`,
      [conn.instance],
    );
    const t0 = oldest.rows[0]?.t;
    return {
      groups,
      oldestReadySince: t0 === null || t0 === undefined ? null : Number(t0),
      leasesExpired: leases.rows[0]?.expired ?? 0,
      leasesExpiring: leases.rows[0]?.expiring ?? 0,
      blockedOnFailure: stuck.rows[0]?.n ?? 0,
      lastAttempt,
      waitingLong,
      durations: durations.rows.map((r) => ({
        kind: r.kind as string | null,
        count: r.count as number,
        sumMs: Number(r.sumMs),
        buckets: q.bucketsMs.map((_, i) => r[`b${i}`] as number),
      })),
    };
  });
}

/**
 * Items created and items ended per span of the window (counts only). A finished item's time is its
 * resolved_at, found by work_items_status (instance, status, updated_at: a finished item is not updated again);
 * a created one's needs a walk of the instance's rows (no index on created_at, which every enqueue would pay for).
 */
export async function history(conn: PostgresConnection, q: WorkHistoryQuery): Promise<WorkHistory> {
  const t = conn.names;
  const end = q.since + q.bucketMs * q.buckets;
  const rows = await conn.query<HistoryRow>(
    `SELECT 'created' AS what, ((created_at - $2) / $3)::int AS b, count(*)::int AS n FROM ${t.work_items}
         WHERE instance = $1 AND created_at >= $2 AND created_at < $4 GROUP BY 2
       UNION ALL
       SELECT status, ((COALESCE(resolved_at, updated_at) - $2) / $3)::int, count(*)::int FROM ${t.work_items}
         WHERE instance = $1 AND status IN ('done', 'failed', 'cancelled') AND updated_at >= $2
           AND COALESCE(resolved_at, updated_at) >= $2 AND COALESCE(resolved_at, updated_at) < $4
         GROUP BY 1, 2`,
    [conn.instance, q.since, q.bucketMs, end],
  );
  return { buckets: historyBuckets(q.buckets, rows.rows) };
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
    const items = (row?.rows ?? []).map(toWorkItem).sort(claimOrder);
    const replayed = items.map((item) => replayedEvent(item, actor, now));
    await commitEvents(tx, conn, hint, [...r.events, ...replayed]);
    return items;
  });
}

/** The WorkItemBackend of one PostgreSQL store: the operations above, on its connection and NOTIFY hint. */
export function createWorkItemBackend(conn: PostgresConnection, hint: AppendHint | null): WorkItemBackend {
  return {
    enqueue: (items) => enqueue(conn, hint, items),
    claim: (q) => claim(conn, hint, q),
    heartbeat: (qs) => heartbeat(conn, qs),
    resolve: (qs) => resolve(conn, hint, qs),
    resolveEach: (qs) => resolveEach(conn, hint, qs),
    release: (q) => release(conn, hint, q),
    record: (qs) => record(conn, hint, qs),
    signal: (q) => signal(conn, hint, q),
    annotate: (q) => annotate(conn, hint, q),
    setStatus: (qs) => setStatus(conn, hint, qs),
    retry: (qs) => retry(conn, hint, qs),
    blockerStates: (ids) => blockerStates(conn, ids),
    get: (id) => get(conn, id),
    list: (q) => list(conn, q),
    counts: () => counts(conn),
    stats: (q) => stats(conn, q),
    history: (q) => history(conn, q),
    reclaimExpired: (now, actor) => reclaimExpired(conn, hint, now, actor),
    replayUnfinished: (now, actor) => replayUnfinished(conn, hint, now, actor),
  };
}
