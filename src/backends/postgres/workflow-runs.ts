// Workflow SDK World storage SQL for PostgreSQL (workflow_runs, workflow_steps, workflow_hooks,
// workflow_waits per instance, and the World's events in the hash chain): an events.create is one
// transaction that first takes the run's advisory lock (and, for a hook_created, the token's), so concurrent
// creates on one run take turns and each reads, in statements after the lock, what the one before committed;
// then it applies the decision and appends its events in its last statement, pipelined with COMMIT. SQLite's
// workflow-runs.ts has the same names.
import type {
  WorkflowCreatePlan,
  WorkflowCreateQuery,
  WorkflowCreateRead,
  WorkflowHookRow,
  WorkflowPage,
  WorkflowRunBackend,
  WorkflowRunRow,
  WorkflowStatusCount,
  WorkflowStepRow,
  WorkflowWaitRow,
} from '../../core/backend.js';
import { WORKFLOW_EVENT, workflowRunStream } from '../../core/codecs/workflow-events/codec.js';
import type { EventRecord } from '../../core/types.js';
import { toEventRecord, workflowEntityConflict } from '../shared.js';
import type { Names, PostgresConnection, Tx } from './connection.js';
import { type AppendHint, writeEvents } from './events.js';

type Key = { created_at: number; id: string };

const RUN_COLS = 'run_id, workflow_name, status, created_at, updated_at, body';
const STEP_COLS = 'run_id, step_id, status, created_at, updated_at, body';
const HOOK_COLS = 'hook_id, run_id, token, created_at, body';
const WAIT_COLS = 'run_id, correlation_id, status, created_at, updated_at, body';

const EVENT_COLS =
  'position, stream, stream_seq, type, data::text AS data, actor, correlation_id, causation_id, work_item_id, created_at, prev_hash, hash';

/** Each entity's table, its columns (as the row objects name them) and its key. */
const TABLES = {
  run: { table: 'workflow_runs', cols: RUN_COLS.split(', '), keys: ['run_id'] },
  step: { table: 'workflow_steps', cols: STEP_COLS.split(', '), keys: ['run_id', 'step_id'] },
  hook: { table: 'workflow_hooks', cols: HOOK_COLS.split(', '), keys: ['hook_id'] },
  wait: { table: 'workflow_waits', cols: WAIT_COLS.split(', '), keys: ['run_id', 'correlation_id'] },
} as const;

/**
 * Takes an advisory lock of this store's instance until the transaction ends: the key is a 64-bit hash of
 * the schema, instance, what is locked and its name (two names that share a hash only wait for each other).
 */
async function lock(tx: Tx, conn: PostgresConnection, what: string, name: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
    JSON.stringify([what, conn.schema, conn.instance, name]),
  ]);
}

async function one<T>(tx: Tx, sql: string, params: unknown[]): Promise<T | null> {
  return ((await tx.query<T>(sql, params)).rows[0] as T | undefined) ?? null;
}

/** What the decision of `q` needs, read under the locks. */
async function readForCreate(
  tx: Tx,
  conn: PostgresConnection,
  q: WorkflowCreateQuery,
): Promise<WorkflowCreateRead> {
  const t = conn.names;
  const i = conn.instance;
  const run = await one<WorkflowRunRow>(
    tx,
    `SELECT ${RUN_COLS} FROM ${t.workflow_runs} WHERE instance = $1 AND run_id = $2`,
    [i, q.run_id],
  );
  const step =
    q.step_id === undefined
      ? null
      : await one<WorkflowStepRow>(
          tx,
          `SELECT ${STEP_COLS} FROM ${t.workflow_steps} WHERE instance = $1 AND run_id = $2 AND step_id = $3`,
          [i, q.run_id, q.step_id],
        );
  const hook =
    q.hook_id === undefined
      ? null
      : await one<WorkflowHookRow>(
          tx,
          `SELECT ${HOOK_COLS} FROM ${t.workflow_hooks} WHERE instance = $1 AND hook_id = $2`,
          [i, q.hook_id],
        );
  const wait =
    q.wait_id === undefined
      ? null
      : await one<WorkflowWaitRow>(
          tx,
          `SELECT ${WAIT_COLS} FROM ${t.workflow_waits} WHERE instance = $1 AND run_id = $2 AND correlation_id = $3`,
          [i, q.run_id, q.wait_id],
        );
  const token_holder =
    q.token === undefined
      ? null
      : await one<{ run_id: string; hook_id: string }>(
          tx,
          `SELECT run_id, hook_id FROM ${t.workflow_hooks} WHERE instance = $1 AND token = $2`,
          [i, q.token],
        );
  const recorded =
    q.recorded !== undefined &&
    (await one(
      tx,
      `SELECT 1 AS x FROM ${t.events} WHERE instance = $1 AND type = '${WORKFLOW_EVENT}'
         AND correlation_id = $2 AND stream = $3 AND data->>'event_type' = $4 LIMIT 1`,
      [i, q.recorded.correlation_id, workflowRunStream(q.run_id), q.recorded.event_type],
    )) !== null;
  return { run, step, hook, wait, token_holder, recorded };
}

/** Inserts (a row of that key, or a hook of that token, is a conflict) or updates one entity's row. */
async function writeRow(
  tx: Tx,
  conn: PostgresConnection,
  entity: keyof typeof TABLES,
  write: { op: 'insert' | 'update'; row: object },
): Promise<void> {
  const { table, cols, keys } = TABLES[entity];
  const name = conn.names[table as keyof Names];
  const row = write.row as Record<string, string | number>;
  const values = cols.map((c) => row[c]);
  if (write.op === 'insert') {
    const res = await tx.query(
      `INSERT INTO ${name} (instance, ${cols.join(', ')}) VALUES ($1, ${cols.map((_, k) => `$${k + 2}`).join(', ')})
       ON CONFLICT DO NOTHING`,
      [conn.instance, ...values],
    );
    if (res.rowCount === 0) throw workflowEntityConflict(entity, keys.map((k) => row[k]).join('/'));
    return;
  }
  const sets = cols.filter((c) => !(keys as readonly string[]).includes(c));
  const params: unknown[] = [conn.instance];
  const set = sets.map((c) => `${c} = $${params.push(row[c])}`).join(', ');
  const where = keys.map((k) => `${k} = $${params.push(row[k])}`).join(' AND ');
  await tx.query(`UPDATE ${name} SET ${set} WHERE instance = $1 AND ${where}`, params);
}

/** Applies the decision's writes and removals. */
async function applyPlan(tx: Tx, conn: PostgresConnection, plan: WorkflowCreatePlan): Promise<void> {
  const t = conn.names;
  if (plan.run) await writeRow(tx, conn, 'run', plan.run);
  if (plan.step) await writeRow(tx, conn, 'step', plan.step);
  if (plan.hook) await writeRow(tx, conn, 'hook', plan.hook);
  if (plan.wait) await writeRow(tx, conn, 'wait', plan.wait);
  for (const r of plan.removals) {
    if (r.kind === 'hook') {
      await tx.query(`DELETE FROM ${t.workflow_hooks} WHERE instance = $1 AND hook_id = $2`, [
        conn.instance,
        r.hook_id,
      ]);
    } else {
      const table = r.kind === 'hooks-of-run' ? t.workflow_hooks : t.workflow_waits;
      await tx.query(`DELETE FROM ${table} WHERE instance = $1 AND run_id = $2`, [conn.instance, r.run_id]);
    }
  }
}

/** The keyset condition and order of a page over (created_at, `id`); its values are added to `params`. */
function keyset(page: WorkflowPage<Key>, id: string, params: unknown[]): { where: string; order: string } {
  const dir = page.reverse ? 'DESC' : 'ASC';
  const order = `ORDER BY created_at ${dir}, ${id} ${dir}`;
  if (page.after === null) return { where: 'true', order };
  const a = params.push(page.after.created_at);
  const b = params.push(page.after.id);
  return { where: `(created_at, ${id}) ${page.reverse ? '<' : '>'} ($${a}, $${b})`, order };
}

// The operations of WorkflowRunBackend (src/core/workflow/backend.ts).

export async function createWorkflowEvent(
  conn: PostgresConnection,
  hint: AppendHint | null,
  q: WorkflowCreateQuery,
): Promise<EventRecord[]> {
  const stored = await conn.transaction(async (tx) => {
    await lock(tx, conn, 'workflow_run', q.run_id);
    // A token is taken under its own lock too (after the run's: no one takes them the other way round), so
    // two runs creating a hook with one token take turns, and the second records a hook_conflict.
    if (q.token !== undefined) await lock(tx, conn, 'workflow_hook_token', q.token);
    const plan = q.decide(await readForCreate(tx, conn, q));
    await applyPlan(tx, conn, plan);
    return writeEvents(tx, conn, plan.events, { commit: true, hint });
  });
  return stored.map(toEventRecord);
}

export async function getWorkflowRun(
  conn: PostgresConnection,
  runId: string,
): Promise<WorkflowRunRow | null> {
  const res = await conn.query<WorkflowRunRow>(
    `SELECT ${RUN_COLS} FROM ${conn.names.workflow_runs} WHERE instance = $1 AND run_id = $2`,
    [conn.instance, runId],
  );
  return res.rows[0] ?? null;
}

export async function listWorkflowRuns(
  conn: PostgresConnection,
  q: { workflow_name: string | null; status: string | null } & WorkflowPage<Key>,
): Promise<WorkflowRunRow[]> {
  const params: unknown[] = [conn.instance];
  const k = keyset(q, 'run_id', params);
  const where = ['instance = $1', k.where];
  if (q.workflow_name !== null) where.push(`workflow_name = $${params.push(q.workflow_name)}`);
  if (q.status !== null) where.push(`status = $${params.push(q.status)}`);
  const res = await conn.query<WorkflowRunRow>(
    `SELECT ${RUN_COLS} FROM ${conn.names.workflow_runs} WHERE ${where.join(' AND ')} ${k.order} LIMIT $${params.push(q.limit)}`,
    params,
  );
  return res.rows;
}

export async function getWorkflowStep(
  conn: PostgresConnection,
  runId: string,
  stepId: string,
): Promise<WorkflowStepRow | null> {
  const res = await conn.query<WorkflowStepRow>(
    `SELECT ${STEP_COLS} FROM ${conn.names.workflow_steps} WHERE instance = $1 AND run_id = $2 AND step_id = $3`,
    [conn.instance, runId, stepId],
  );
  return res.rows[0] ?? null;
}

export async function listWorkflowSteps(
  conn: PostgresConnection,
  q: { run_id: string } & WorkflowPage<Key>,
): Promise<WorkflowStepRow[]> {
  const params: unknown[] = [conn.instance, q.run_id];
  const k = keyset(q, 'step_id', params);
  const res = await conn.query<WorkflowStepRow>(
    `SELECT ${STEP_COLS} FROM ${conn.names.workflow_steps} WHERE instance = $1 AND run_id = $2 AND ${k.where}
     ${k.order} LIMIT $${params.push(q.limit)}`,
    params,
  );
  return res.rows;
}

export async function getWorkflowHook(
  conn: PostgresConnection,
  hookId: string,
): Promise<WorkflowHookRow | null> {
  const res = await conn.query<WorkflowHookRow>(
    `SELECT ${HOOK_COLS} FROM ${conn.names.workflow_hooks} WHERE instance = $1 AND hook_id = $2`,
    [conn.instance, hookId],
  );
  return res.rows[0] ?? null;
}

export async function getWorkflowHookByToken(
  conn: PostgresConnection,
  token: string,
): Promise<WorkflowHookRow | null> {
  const res = await conn.query<WorkflowHookRow>(
    `SELECT ${HOOK_COLS} FROM ${conn.names.workflow_hooks} WHERE instance = $1 AND token = $2`,
    [conn.instance, token],
  );
  return res.rows[0] ?? null;
}

export async function listWorkflowHooks(
  conn: PostgresConnection,
  q: { run_id: string | null } & WorkflowPage<Key>,
): Promise<WorkflowHookRow[]> {
  const params: unknown[] = [conn.instance];
  const run = q.run_id === null ? '' : `run_id = $${params.push(q.run_id)} AND `;
  const k = keyset(q, 'hook_id', params);
  const res = await conn.query<WorkflowHookRow>(
    `SELECT ${HOOK_COLS} FROM ${conn.names.workflow_hooks} WHERE instance = $1 AND ${run}${k.where}
     ${k.order} LIMIT $${params.push(q.limit)}`,
    params,
  );
  return res.rows;
}

export async function listWorkflowWaits(
  conn: PostgresConnection,
  q: { run_id: string } & WorkflowPage<Key>,
): Promise<WorkflowWaitRow[]> {
  const params: unknown[] = [conn.instance, q.run_id];
  const k = keyset(q, 'correlation_id', params);
  const res = await conn.query<WorkflowWaitRow>(
    `SELECT ${WAIT_COLS} FROM ${conn.names.workflow_waits} WHERE instance = $1 AND run_id = $2 AND ${k.where}
     ${k.order} LIMIT $${params.push(q.limit)}`,
    params,
  );
  return res.rows;
}

export async function countWorkflowStatuses(
  conn: PostgresConnection,
): Promise<{ runs: WorkflowStatusCount[]; steps: WorkflowStatusCount[] }> {
  // One statement: the two counts are of the same snapshot. Runs by their status index; steps by the
  // instance's range of their primary key (as the work items' gauges are counted), once per metrics scrape.
  const t = conn.names;
  const res = await conn.query<{ what: 'runs' | 'steps'; status: string; count: number }>(
    `SELECT 'runs' AS what, status, COUNT(*) AS count FROM ${t.workflow_runs} WHERE instance = $1 GROUP BY status
     UNION ALL
     SELECT 'steps', status, COUNT(*) FROM ${t.workflow_steps} WHERE instance = $1 GROUP BY status
     ORDER BY what, status`,
    [conn.instance],
  );
  const of = (what: 'runs' | 'steps') =>
    res.rows.filter((r) => r.what === what).map((r) => ({ status: r.status, count: r.count }));
  return { runs: of('runs'), steps: of('steps') };
}

type StoredRow = Parameters<typeof toEventRecord>[0];

export async function listWorkflowEvents(
  conn: PostgresConnection,
  q: { run_id: string } & WorkflowPage<number>,
): Promise<EventRecord[]> {
  const params: unknown[] = [conn.instance, workflowRunStream(q.run_id)];
  const after = q.after === null ? '' : `AND stream_seq ${q.reverse ? '<' : '>'} $${params.push(q.after)}`;
  const res = await conn.query<StoredRow>(
    `SELECT ${EVENT_COLS} FROM ${conn.names.events} WHERE instance = $1 AND stream = $2 ${after}
     ORDER BY stream_seq ${q.reverse ? 'DESC' : 'ASC'} LIMIT $${params.push(q.limit)}`,
    params,
  );
  return res.rows.map(toEventRecord);
}

export async function getWorkflowEvent(
  conn: PostgresConnection,
  runId: string,
  seq: number,
): Promise<EventRecord | null> {
  const res = await conn.query<StoredRow>(
    `SELECT ${EVENT_COLS} FROM ${conn.names.events} WHERE instance = $1 AND stream = $2 AND stream_seq = $3`,
    [conn.instance, workflowRunStream(runId), seq],
  );
  const row = res.rows[0];
  return row === undefined ? null : toEventRecord(row);
}

export async function listWorkflowEventsByCorrelation(
  conn: PostgresConnection,
  q: { correlation_id: string } & WorkflowPage<number>,
): Promise<EventRecord[]> {
  const params: unknown[] = [conn.instance, q.correlation_id];
  const after = q.after === null ? '' : `AND position ${q.reverse ? '<' : '>'} $${params.push(q.after)}`;
  const res = await conn.query<StoredRow>(
    `SELECT ${EVENT_COLS} FROM ${conn.names.events}
     WHERE instance = $1 AND type = '${WORKFLOW_EVENT}' AND correlation_id = $2 ${after}
     ORDER BY position ${q.reverse ? 'DESC' : 'ASC'} LIMIT $${params.push(q.limit)}`,
    params,
  );
  return res.rows.map(toEventRecord);
}

/** The WorkflowRunBackend of one PostgreSQL store: the operations above, on its connection and NOTIFY hint. */
export function createWorkflowRunBackend(
  conn: PostgresConnection,
  hint: AppendHint | null,
): WorkflowRunBackend {
  return {
    createEvent: (q) => createWorkflowEvent(conn, hint, q),
    getRun: (runId) => getWorkflowRun(conn, runId),
    listRuns: (q) => listWorkflowRuns(conn, q),
    getStep: (runId, stepId) => getWorkflowStep(conn, runId, stepId),
    listSteps: (q) => listWorkflowSteps(conn, q),
    getHook: (hookId) => getWorkflowHook(conn, hookId),
    getHookByToken: (token) => getWorkflowHookByToken(conn, token),
    listHooks: (q) => listWorkflowHooks(conn, q),
    listWaits: (q) => listWorkflowWaits(conn, q),
    countStatuses: () => countWorkflowStatuses(conn),
    listEvents: (q) => listWorkflowEvents(conn, q),
    getEvent: (runId, seq) => getWorkflowEvent(conn, runId, seq),
    listEventsByCorrelation: (q) => listWorkflowEventsByCorrelation(conn, q),
  };
}
