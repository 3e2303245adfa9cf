// What the holder of a lease does with it in PostgreSQL: extend it (heartbeat), end it (resolve,
// resolveEach: in one statement when it pays; a failure may go back to pending for a retry, or cancel its
// dependants) or give the item back (release). Each write is fenced by the lease (updateHeld, inAt).

import type { LeaseQuery, NewEvent, Outcome, ReleaseQuery, ResolveQuery } from '../../../core/backend.js';
import {
  fieldsText,
  HOLE,
  type Hole,
  RESOLVED,
  releasedEvent,
  resolvedEvent,
} from '../../../core/codecs/work-items.js';
import { contentHash } from '../../../core/json.js';
import type { WorkItem } from '../../../core/types.js';
import { BATCH_STREAM, BATCH_TYPE_OF, batchEvents } from '../../../core/work/batches.js';
import {
  explainLeaseFailure,
  refusalOf,
  refusedOutcome,
  unmatchedResolve,
} from '../../../core/work/refusals.js';
import { jsonRows, type Names, type PostgresConnection, recordset, type Tx } from '../connection.js';
import { type AppendHint, computedEventCtes } from '../events.js';
import {
  commitEvents,
  getItem,
  oneStatementPays,
  sameItem,
  toWorkItem,
  W_COLS,
  type WorkItemRow,
} from './shared.js';
import { cascadeRows, setStatusRow } from './status.js';

/** The input rows of a resolve (`_in`): one per query, numbered in their order. */
function resolveRows(qs: ResolveQuery[]): Array<Record<string, unknown> & { ord: number; id: string }> {
  return qs.map((q, ord) => ({
    ord,
    id: q.id,
    worker: q.worker,
    attempt: q.attempt,
    status: q.status,
    result: JSON.stringify(q.result ?? null),
    error: q.error,
    // Stryker disable next-line ConditionalExpression: equivalent behind the queue: WorkQueue refuses retry_at with any status but failed (INVALID_INPUT, tested)
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
 * Updates the items that `rows` name (each with its `ord` and `id`, the columns `cols`), each only while
 * held as its row says (HELD_BY_X): `set` over the item `w` and its row `x`. Returns the updated items by
 * `ord`; the rows whose lease did not match are not in it. One statement when the ids differ; a row naming
 * an item an earlier row names runs after it, in a statement of its own, and sees what the earlier one did
 * (two heartbeats of one item both extend it; a resolve repeated in a batch finds the item finished), as
 * SQLite runs rows one by one (test/backends/agreement.test.ts).
 */
async function updateHeld(
  run: Pick<Tx, 'query'> | PostgresConnection,
  conn: PostgresConnection,
  rows: Array<{ ord: number; id: string; [col: string]: unknown }>,
  cols: string,
  set: string,
): Promise<Map<number, WorkItem>> {
  const rounds: Array<typeof rows> = [];
  const seen = new Map<string, number>();
  for (const row of rows) {
    const k = seen.get(row.id) ?? 0;
    seen.set(row.id, k + 1);
    const round = rounds[k];
    if (round) round.push(row);
    else rounds[k] = [row];
  }
  // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent: one round through the loop below is this call; this saves the copy
  if (rounds.length <= 1) return updateHeldOnce(run, conn, rows, cols, set);
  const out = new Map<number, WorkItem>();
  for (const round of rounds) {
    for (const [ord, item] of await updateHeldOnce(run, conn, round, cols, set)) out.set(ord, item);
  }
  return out;
}

/** updateHeld of rows whose ids all differ: one statement. */
async function updateHeldOnce(
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
  // Stryker disable next-line OptionalChaining,ArrayDeclaration: equivalent: a SELECT without FROM returns one row, and rows is null only when none matched (read as none)
  return new Map((res.rows[0]?.rows ?? []).map((r) => [r._ord, toWorkItem(r)]));
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
  // Stryker disable next-line ConditionalExpression,EqualityOperator,BooleanLiteral,ArrowFunction,BlockStatement: equivalent where it sends a batch to the full resolve, which writes the same record (test/backends/agreement.test.ts); this only chooses the cheaper
  if (!first || !oneStatementPays(qs.length) || qs.some((q) => q.status === 'failed' || q.now !== first.now))
    return null;
  // One row per item: the statement commits what it matched, so a repeated id must take the full path.
  // Stryker disable next-line ConditionalExpression,EqualityOperator,ArrowFunction: equivalent: a repeated id let in matches one row of the UPDATE, so the statement finds fewer items than asked and the full resolve follows, which finds the repeat done; turned on for every batch, the full resolve always runs
  if (new Set(qs.map((q) => q.id)).size !== qs.length) return null;
  const p = conn.params();
  const json = JSON.stringify;
  const rows = resolveRows(qs);
  // The actor kind all of them share is said once, on the batch; otherwise last on each entry.
  const shared = qs.every((q) => q.actor_kind === first.actor_kind);
  // Stryker disable next-line StringLiteral: equivalent: the loop below runs at least once (first is an item) and sets it
  let durationKey = '';
  for (const [ord, q] of qs.entries()) {
    // The event's text around what only the item's row knows (attempt, duration), as resolvedEvent and
    // batchEvents write it. Set on the row itself: a spread copy of each row cost 3 µs an item.
    const row = rows[ord] as Record<string, unknown>;
    const actor = q.worker === first.worker ? '' : `,"actor":${json(q.worker)}`;
    // The codec's fields with the row's attempt and duration left as holes (a done item is never retried,
    // so there is no retry_at).
    const [head, attempt, post, duration] = fieldsText(RESOLVED.fields, {
      status: q.status,
      worker: q.worker,
      attempt: HOLE,
      error: q.error ?? undefined,
      retry_at: undefined,
      // Stryker disable next-line ConditionalExpression: equivalent: a result reaches the backend as JSON, never undefined (WorkQueue makes a missing one null)
      result_hash: q.result !== null && q.result !== undefined ? contentHash(q.result) : undefined,
      duration_ms: HOLE,
    }) as [string, Hole<'attempt'>, string, Hole<'duration_ms'>, string];
    row.pre = `{"id":${json(q.id)}${actor},${head}${attempt.key}`;
    durationKey = duration.key;
    row.post = post;
    row.tail = shared ? '' : `,"actor_kind":${json(q.actor_kind)}`;
  }
  // The duration's key (the same for every item), written where the row says the item was claimed.
  const durationP = p.add(durationKey);
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
             || CASE WHEN u.claimed_at IS NULL THEN '' ELSE ${durationP}::text || (${nowP} - u.claimed_at) END
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
  // Stryker disable next-line OptionalChaining,ArrayDeclaration: equivalent: a SELECT without FROM returns one row, and rows is null only when none matched (read as none)
  const done = res.rows[0]?.rows ?? [];
  // Stryker disable next-line ConditionalExpression: equivalent: after a statement that did everything, the full resolve finds every item done by this worker (a repeat) and writes nothing
  if (done.length !== qs.length) return null;
  // Stryker disable next-line OptionalChaining: equivalent: a SELECT without FROM returns one row
  const position = res.rows[0]?.position;
  // Stryker disable next-line ConditionalExpression,EqualityOperator,LogicalOperator,OptionalChaining: latency only: the hint wakes this process's watchers of the log at once instead of at their next poll
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
  for (const [ord, q] of qs.entries()) {
    const hit = done.get(ord);
    if (hit) {
      out.push({ ok: true, value: hit });
      // A last failure cancels its dependants right after it, at its time (as SQLite records it, entry by
      // entry: test/backends/agreement.test.ts); only a last failure costs that statement.
      events.push(
        resolvedEvent(hit, q),
        ...(await cascadeRows(tx, conn, [{ item: hit, actor: q.worker }], q.now)),
      );
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
  await commitEvents(tx, conn, hint, batchEvents(events));
  return out;
}

export async function heartbeat(
  conn: PostgresConnection,
  qs: Array<LeaseQuery & { lease_ms: number }>,
): Promise<Array<Outcome<WorkItem>>> {
  // Stryker disable next-line ConditionalExpression,ArrayDeclaration: equivalent: WorkQueue never sends an empty batch, and an empty one changes nothing
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
  // Stryker disable next-line ConditionalExpression: equivalent: the full resolve after the statement finds every item done by this worker (a repeat) and writes nothing
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
  // Stryker disable next-line ConditionalExpression: equivalent: the full resolve after the statement finds every item done by this worker (a repeat) and writes nothing
  if (fast) return fast.map((value) => ({ ok: true as const, value }));
  return conn.transaction((tx) => resolveTx(tx, conn, hint, qs, true));
}

export async function release(
  conn: PostgresConnection,
  hint: AppendHint | null,
  q: ReleaseQuery,
): Promise<WorkItem> {
  return conn.transaction(async (tx) => {
    // The item found as every lease statement finds it (inAt: one primary-key lookup, locked, then tested),
    // not by a WHERE the planner may answer from the partial index of every in-flight lease.
    // The attempt number stays spent (a fencing token is never reused); max_attempts grows instead.
    const done = await updateHeld(
      tx,
      conn,
      [{ ord: 0, id: q.id, worker: q.worker, attempt: q.attempt, now: q.now }],
      'ord int, id text, worker text, attempt int, now bigint',
      `status = 'pending', lease_owner = NULL, lease_expires_at = NULL,
       max_attempts = w.max_attempts + 1, updated_at = x.now`,
    );
    const hit = done.get(0);
    if (!hit) explainLeaseFailure(await getItem(conn, q.id, tx), q, 'release');
    await commitEvents(tx, conn, hint, [releasedEvent(hit, q)]);
    return hit;
  });
}
