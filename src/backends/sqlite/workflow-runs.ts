// Workflow SDK World storage SQL for SQLite (workflow_runs, workflow_steps, workflow_hooks, workflow_waits,
// and the World's events in the hash chain): an events.create is one BEGIN IMMEDIATE transaction, which
// serializes every writer of the file, so the decision reads what the create before it committed, and its
// events take the next stream_seq of the run's stream. PostgreSQL's workflow-runs.ts has the same names.
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
import type { SqliteConnection } from './connection.js';
import { writeEvents } from './events.js';

type Key = { created_at: number; id: string };

const RUN_COLS = 'run_id, workflow_name, status, created_at, updated_at, body';
const STEP_COLS = 'run_id, step_id, status, created_at, updated_at, body';
const HOOK_COLS = 'hook_id, run_id, token, created_at, body';
const WAIT_COLS = 'run_id, correlation_id, status, created_at, updated_at, body';

function one<T>(conn: SqliteConnection, sql: string, ...params: unknown[]): T | null {
  return (conn.stmt(sql).get(...params) as T | undefined) ?? null;
}

/** What the decision of `q` needs, read inside the write transaction. */
function readForCreate(conn: SqliteConnection, q: WorkflowCreateQuery): WorkflowCreateRead {
  const run = one<WorkflowRunRow>(conn, `SELECT ${RUN_COLS} FROM workflow_runs WHERE run_id = ?`, q.run_id);
  const step =
    q.step_id === undefined
      ? null
      : one<WorkflowStepRow>(
          conn,
          `SELECT ${STEP_COLS} FROM workflow_steps WHERE run_id = ? AND step_id = ?`,
          q.run_id,
          q.step_id,
        );
  const hook =
    q.hook_id === undefined
      ? null
      : one<WorkflowHookRow>(conn, `SELECT ${HOOK_COLS} FROM workflow_hooks WHERE hook_id = ?`, q.hook_id);
  const wait =
    q.wait_id === undefined
      ? null
      : one<WorkflowWaitRow>(
          conn,
          `SELECT ${WAIT_COLS} FROM workflow_waits WHERE run_id = ? AND correlation_id = ?`,
          q.run_id,
          q.wait_id,
        );
  const token_holder =
    q.token === undefined
      ? null
      : one<{ run_id: string; hook_id: string }>(
          conn,
          'SELECT run_id, hook_id FROM workflow_hooks WHERE token = ?',
          q.token,
        );
  const recorded =
    q.recorded !== undefined &&
    one(
      conn,
      `SELECT 1 AS x FROM events WHERE type = '${WORKFLOW_EVENT}' AND correlation_id = ? AND stream = ?
         AND json_extract(data, '$.event_type') = ? LIMIT 1`,
      q.recorded.correlation_id,
      workflowRunStream(q.run_id),
      q.recorded.event_type,
    ) !== null;
  return { run, step, hook, wait, token_holder, recorded };
}

/** Each entity's table, its columns (as the row objects name them) and its key. */
const TABLES = {
  run: { table: 'workflow_runs', cols: RUN_COLS.split(', '), keys: ['run_id'] },
  step: { table: 'workflow_steps', cols: STEP_COLS.split(', '), keys: ['run_id', 'step_id'] },
  hook: { table: 'workflow_hooks', cols: HOOK_COLS.split(', '), keys: ['hook_id'] },
  wait: { table: 'workflow_waits', cols: WAIT_COLS.split(', '), keys: ['run_id', 'correlation_id'] },
} as const;

/** Inserts (a row of that key, or a hook of that token, is a conflict) or updates one entity's row. */
function writeRow(
  conn: SqliteConnection,
  entity: keyof typeof TABLES,
  write: { op: 'insert' | 'update'; row: object },
): void {
  const { table, cols, keys } = TABLES[entity];
  const row = write.row as Record<string, string | number>;
  if (write.op === 'insert') {
    const res = conn
      .stmt(
        `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')}) ON CONFLICT DO NOTHING`,
      )
      .run(...cols.map((c) => row[c]));
    if (res.changes === 0) throw workflowEntityConflict(entity, keys.map((k) => row[k]).join('/'));
    return;
  }
  const sets = cols.filter((c) => !(keys as readonly string[]).includes(c));
  conn
    .stmt(
      `UPDATE ${table} SET ${sets.map((c) => `${c} = ?`).join(', ')} WHERE ${keys.map((k) => `${k} = ?`).join(' AND ')}`,
    )
    .run(...sets.map((c) => row[c]), ...keys.map((k) => row[k]));
}

/** Applies the decision's writes and removals. */
function applyPlan(conn: SqliteConnection, plan: WorkflowCreatePlan): void {
  if (plan.run) writeRow(conn, 'run', plan.run);
  if (plan.step) writeRow(conn, 'step', plan.step);
  if (plan.hook) writeRow(conn, 'hook', plan.hook);
  if (plan.wait) writeRow(conn, 'wait', plan.wait);
  for (const r of plan.removals) {
    if (r.kind === 'hook') conn.stmt('DELETE FROM workflow_hooks WHERE hook_id = ?').run(r.hook_id);
    else if (r.kind === 'hooks-of-run')
      conn.stmt('DELETE FROM workflow_hooks WHERE run_id = ?').run(r.run_id);
    else conn.stmt('DELETE FROM workflow_waits WHERE run_id = ?').run(r.run_id);
  }
}

/** The keyset condition and order of a page over (created_at, `id`). */
function keyset(page: WorkflowPage<Key>, id: string): { where: string; params: unknown[]; order: string } {
  const dir = page.reverse ? 'DESC' : 'ASC';
  const order = `ORDER BY created_at ${dir}, ${id} ${dir}`;
  if (page.after === null) return { where: '1 = 1', params: [], order };
  return {
    where: `(created_at, ${id}) ${page.reverse ? '<' : '>'} (?, ?)`,
    params: [page.after.created_at, page.after.id],
    order,
  };
}

// The operations of WorkflowRunBackend (src/core/workflow/backend.ts).

export async function createWorkflowEvent(
  conn: SqliteConnection,
  q: WorkflowCreateQuery,
): Promise<EventRecord[]> {
  const stored = conn.write(() => {
    const plan = q.decide(readForCreate(conn, q));
    applyPlan(conn, plan);
    return writeEvents(conn, plan.events);
  });
  return stored.map(toEventRecord);
}

export async function getWorkflowRun(conn: SqliteConnection, runId: string): Promise<WorkflowRunRow | null> {
  return conn.read(() =>
    one<WorkflowRunRow>(conn, `SELECT ${RUN_COLS} FROM workflow_runs WHERE run_id = ?`, runId),
  );
}

export async function listWorkflowRuns(
  conn: SqliteConnection,
  q: { workflow_name: string | null; status: string | null } & WorkflowPage<Key>,
): Promise<WorkflowRunRow[]> {
  const k = keyset(q, 'run_id');
  const where = [k.where];
  const params = [...k.params];
  if (q.workflow_name !== null) {
    where.push('workflow_name = ?');
    params.push(q.workflow_name);
  }
  if (q.status !== null) {
    where.push('status = ?');
    params.push(q.status);
  }
  return conn.read(
    () =>
      conn
        .stmt(`SELECT ${RUN_COLS} FROM workflow_runs WHERE ${where.join(' AND ')} ${k.order} LIMIT ?`)
        .all(...params, q.limit) as WorkflowRunRow[],
  );
}

export async function getWorkflowStep(
  conn: SqliteConnection,
  runId: string,
  stepId: string,
): Promise<WorkflowStepRow | null> {
  return conn.read(() =>
    one<WorkflowStepRow>(
      conn,
      `SELECT ${STEP_COLS} FROM workflow_steps WHERE run_id = ? AND step_id = ?`,
      runId,
      stepId,
    ),
  );
}

export async function listWorkflowSteps(
  conn: SqliteConnection,
  q: { run_id: string } & WorkflowPage<Key>,
): Promise<WorkflowStepRow[]> {
  const k = keyset(q, 'step_id');
  return conn.read(
    () =>
      conn
        .stmt(`SELECT ${STEP_COLS} FROM workflow_steps WHERE run_id = ? AND ${k.where} ${k.order} LIMIT ?`)
        .all(q.run_id, ...k.params, q.limit) as WorkflowStepRow[],
  );
}

export async function getWorkflowHook(
  conn: SqliteConnection,
  hookId: string,
): Promise<WorkflowHookRow | null> {
  return conn.read(() =>
    one<WorkflowHookRow>(conn, `SELECT ${HOOK_COLS} FROM workflow_hooks WHERE hook_id = ?`, hookId),
  );
}

export async function getWorkflowHookByToken(
  conn: SqliteConnection,
  token: string,
): Promise<WorkflowHookRow | null> {
  return conn.read(() =>
    one<WorkflowHookRow>(conn, `SELECT ${HOOK_COLS} FROM workflow_hooks WHERE token = ?`, token),
  );
}

export async function listWorkflowHooks(
  conn: SqliteConnection,
  q: { run_id: string | null } & WorkflowPage<Key>,
): Promise<WorkflowHookRow[]> {
  const k = keyset(q, 'hook_id');
  const run = q.run_id === null ? '' : 'run_id = ? AND ';
  const params = q.run_id === null ? k.params : [q.run_id, ...k.params];
  return conn.read(
    () =>
      conn
        .stmt(`SELECT ${HOOK_COLS} FROM workflow_hooks WHERE ${run}${k.where} ${k.order} LIMIT ?`)
        .all(...params, q.limit) as WorkflowHookRow[],
  );
}

export async function listWorkflowWaits(
  conn: SqliteConnection,
  q: { run_id: string } & WorkflowPage<Key>,
): Promise<WorkflowWaitRow[]> {
  const k = keyset(q, 'correlation_id');
  return conn.read(
    () =>
      conn
        .stmt(`SELECT ${WAIT_COLS} FROM workflow_waits WHERE run_id = ? AND ${k.where} ${k.order} LIMIT ?`)
        .all(q.run_id, ...k.params, q.limit) as WorkflowWaitRow[],
  );
}

export async function countWorkflowStatuses(
  conn: SqliteConnection,
): Promise<{ runs: WorkflowStatusCount[]; steps: WorkflowStatusCount[] }> {
  // One read transaction: the two counts are of the same moment. Runs by their status index; steps by a scan
  // of their table (as the work items' gauges are counted), which a metrics scrape pays once.
  return conn.read(() => ({
    runs: conn
      .stmt('SELECT status, COUNT(*) AS count FROM workflow_runs GROUP BY status ORDER BY status')
      .all() as WorkflowStatusCount[],
    steps: conn
      .stmt('SELECT status, COUNT(*) AS count FROM workflow_steps GROUP BY status ORDER BY status')
      .all() as WorkflowStatusCount[],
  }));
}

export async function listWorkflowEvents(
  conn: SqliteConnection,
  q: { run_id: string } & WorkflowPage<number>,
): Promise<EventRecord[]> {
  const after = q.after === null ? '' : `AND stream_seq ${q.reverse ? '<' : '>'} ?`;
  const params = q.after === null ? [] : [q.after];
  const rows = conn.read(() =>
    conn
      .stmt(
        `SELECT * FROM events WHERE stream = ? ${after} ORDER BY stream_seq ${q.reverse ? 'DESC' : 'ASC'} LIMIT ?`,
      )
      .all(workflowRunStream(q.run_id), ...params, q.limit),
  ) as Parameters<typeof toEventRecord>[0][];
  return rows.map(toEventRecord);
}

export async function getWorkflowEvent(
  conn: SqliteConnection,
  runId: string,
  seq: number,
): Promise<EventRecord | null> {
  const row = conn.read(() =>
    one<Parameters<typeof toEventRecord>[0]>(
      conn,
      'SELECT * FROM events WHERE stream = ? AND stream_seq = ?',
      workflowRunStream(runId),
      seq,
    ),
  );
  return row === null ? null : toEventRecord(row);
}

export async function listWorkflowEventsByCorrelation(
  conn: SqliteConnection,
  q: { correlation_id: string } & WorkflowPage<number>,
): Promise<EventRecord[]> {
  const after = q.after === null ? '' : `AND position ${q.reverse ? '<' : '>'} ?`;
  const params = q.after === null ? [] : [q.after];
  const rows = conn.read(() =>
    conn
      .stmt(
        `SELECT * FROM events WHERE type = '${WORKFLOW_EVENT}' AND correlation_id = ? ${after}
         ORDER BY position ${q.reverse ? 'DESC' : 'ASC'} LIMIT ?`,
      )
      .all(q.correlation_id, ...params, q.limit),
  ) as Parameters<typeof toEventRecord>[0][];
  return rows.map(toEventRecord);
}

/** The WorkflowRunBackend of one SQLite store: the operations above, on its connection. */
export function createWorkflowRunBackend(conn: SqliteConnection): WorkflowRunBackend {
  return {
    createEvent: (q) => createWorkflowEvent(conn, q),
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
