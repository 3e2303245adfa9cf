// What a person or an agent is shown of a Workflow SDK World's runs: the `workflow_runs` and `workflow_run`
// operations of the service table (and so `agentstate runs`, the HTTP API, MCP, the dashboard). Read-only,
// through the backend's workflowRuns and workflowStreams. It loads nothing of the SDK (an optional peer
// dependency): the rows' bodies are read with the store's own codec, so the table loads without it.
//
// Left out on purpose: the payloads (a run's or step's input and output, a hook's metadata), which the SDK
// serializes into bytes only the app's code reads back; a hook's token, which resumes the hook (a secret of
// the app's, like a webhook URL); and the run's queue messages (see NOT_INCLUDED_WORK_ITEMS).
import type { StoreBackend, WorkflowRunBackend } from '../core/backend.js';
import { decodeWorkflowEntity } from '../core/codecs/workflow-events/codec.js';
import { InvalidInputError, NotFoundError } from '../errors.js';

/** Rows a list shows when the call names no limit, and the most it shows at once. */
export const WORLD_PAGE = { default: 100, max: 1000 } as const;

/** The most hooks, waits and streams `workflow_run` shows of one run (more is said in `not_included`). */
export const WORLD_RUN_PARTS_MAX = 1000;

/** Why a run's work items (its queue messages) are not shown. */
export const NOT_INCLUDED_WORK_ITEMS =
  'the queue messages are work items of kinds wf:__wkf_workflow_ and wf:__wkf_step_ (wf:__<namespace>_wkf_… when namespaced), titled flow <run id> <workflow> and step <run id> <step>; no index finds them by run, so finding one run’s would read every message: list them with list_items and a kind, and tell this run’s by its id in their titles (the dashboard’s items list filters by that text)';

/** An error a run or step ended with, as far as the store can read it. */
export interface WorldErrorView {
  /** Its message, when the SDK recorded it as text (null when it is serialized bytes only the app reads). */
  message: string | null;
  /** Its code (the run's `errorCode`, or the error's own `code`), if any. */
  code: string | null;
}

/** A run as `workflow_runs` lists it. */
export interface WorldRunSummary {
  run_id: string;
  workflow_name: string;
  status: string;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  completed_at: string | null;
  error: WorldErrorView | null;
}

/** A run as `workflow_run` shows it: the summary and what else its row keeps (not its input or output). */
export interface WorldRunView extends WorldRunSummary {
  deployment_id: string | null;
  spec_version: number | null;
  expired_at: string | null;
  attributes: Record<string, string>;
}

/** A step of a run (not its input or output). */
export interface WorldStepView {
  step_id: string;
  step_name: string | null;
  status: string;
  attempt: number;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  completed_at: string | null;
  retry_after: string | null;
  error: WorldErrorView | null;
}

/** A live hook of a run (not its token, which resumes it, nor its metadata). */
export interface WorldHookView {
  hook_id: string;
  created_at: string;
  is_webhook: boolean;
}

/** A wait of a run (a sleep), until the run ends. */
export interface WorldWaitView {
  /** The wait's correlation id in the run's events. */
  wait_id: string;
  status: string;
  created_at: string;
  resume_at: string | null;
  completed_at: string | null;
}

/** A stream filed under a run: its name, how many chunks it holds, whether it was closed. */
export interface WorldStreamView {
  name: string;
  chunks: number;
  done: boolean;
}

/** What `workflow_run` answers. */
export interface WorldRunDetail {
  run: WorldRunView;
  /** A page of the run's steps in the order they were created (`after`, `limit`). */
  steps: WorldStepView[];
  /** The run's live hooks (a disposed hook, and every hook of an ended run, has none). */
  hooks: WorldHookView[];
  /** The run's waits (an ended run has none). */
  waits: WorldWaitView[];
  streams: WorldStreamView[];
  /** The parts of the run not shown, and why. */
  not_included: Array<{ part: string; reason: string }>;
}

/** What `workflow_runs` takes. */
export interface WorldRunsQuery {
  status?: string;
  workflow?: string;
  after?: string;
  limit?: number;
}

/** What `workflow_run` takes. */
export interface WorldRunQuery {
  run_id: string;
  after?: string;
  limit?: number;
}

type Entity = Record<string, unknown>;

const iso = (v: unknown): string | null =>
  v instanceof Date && !Number.isNaN(v.getTime()) ? v.toISOString() : null;
const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const isObj = (v: unknown): v is Entity => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An entity's error: its message when it is text or `{ message }`, its code; null when it has none. */
function errorOf(e: Entity): WorldErrorView | null {
  const err = e.error;
  const code = text(e.errorCode) ?? (isObj(err) ? text(err.code) : null);
  if (err === undefined || err === null) return code === null ? null : { message: null, code };
  const message = typeof err === 'string' ? err : isObj(err) ? text(err.message) : null;
  return { message, code };
}

function runSummary(row: { run_id: string; workflow_name: string; status: string; body: string }) {
  const r = decodeWorkflowEntity<Entity>(row.body);
  const summary: WorldRunSummary = {
    run_id: row.run_id,
    workflow_name: row.workflow_name,
    status: row.status,
    created_at: iso(r.createdAt) ?? '',
    updated_at: iso(r.updatedAt) ?? '',
    started_at: iso(r.startedAt),
    completed_at: iso(r.completedAt),
    error: errorOf(r),
  };
  return { summary, entity: r };
}

function runView(row: Parameters<typeof runSummary>[0]): WorldRunView {
  const { summary, entity: r } = runSummary(row);
  const attributes: Record<string, string> = {};
  if (isObj(r.attributes)) {
    for (const [k, v] of Object.entries(r.attributes)) if (typeof v === 'string') attributes[k] = v;
  }
  return {
    ...summary,
    deployment_id: text(r.deploymentId),
    spec_version: typeof r.specVersion === 'number' ? r.specVersion : null,
    expired_at: iso(r.expiredAt),
    attributes,
  };
}

function stepView(row: { step_id: string; status: string; body: string }): WorldStepView {
  const s = decodeWorkflowEntity<Entity>(row.body);
  return {
    step_id: row.step_id,
    step_name: text(s.stepName),
    status: row.status,
    attempt: typeof s.attempt === 'number' ? s.attempt : 0,
    created_at: iso(s.createdAt) ?? '',
    updated_at: iso(s.updatedAt) ?? '',
    started_at: iso(s.startedAt),
    completed_at: iso(s.completedAt),
    retry_after: iso(s.retryAfter),
    error: errorOf(s),
  };
}

function hookView(row: { hook_id: string; body: string }): WorldHookView {
  const h = decodeWorkflowEntity<Entity>(row.body);
  return { hook_id: row.hook_id, created_at: iso(h.createdAt) ?? '', is_webhook: h.isWebhook === true };
}

function waitView(row: { correlation_id: string; status: string; body: string }): WorldWaitView {
  const w = decodeWorkflowEntity<Entity>(row.body);
  return {
    wait_id: row.correlation_id,
    status: row.status,
    created_at: iso(w.createdAt) ?? '',
    resume_at: iso(w.resumeAt),
    completed_at: iso(w.completedAt),
  };
}

/** The backend's World storage (null on a backend that keeps none). */
function runsOf(backend: StoreBackend): WorkflowRunBackend | null {
  return backend.workflowRuns ?? null;
}

/**
 * The World's runs, newest first ((created_at, run_id) descending), of one status and / or one workflow;
 * with `after` (the id of the last run a page showed), the runs after it in that order. An `after` that names
 * no run is INVALID_INPUT. @default limit 100
 */
export async function listWorldRuns(backend: StoreBackend, q: WorldRunsQuery): Promise<WorldRunSummary[]> {
  const runs = runsOf(backend);
  if (runs === null) return [];
  let after: { created_at: number; id: string } | null = null;
  if (q.after !== undefined) {
    const last = await runs.getRun(q.after);
    if (last === null) {
      throw new InvalidInputError(
        `workflow_runs: after ${JSON.stringify(q.after)} names no run; page on from the id of the last run a page showed`,
        { field: 'after' },
      );
    }
    after = { created_at: last.created_at, id: last.run_id };
  }
  const rows = await runs.listRuns({
    workflow_name: q.workflow ?? null,
    status: q.status ?? null,
    after,
    limit: q.limit ?? WORLD_PAGE.default,
    reverse: true,
  });
  return rows.map((r) => runSummary(r).summary);
}

/**
 * One run of the World: its row, a page of its steps (in the order they were created; `after` the id of the
 * last step a page showed), its live hooks, its waits and its streams with their chunk counts. NOT_FOUND for
 * no such run; an `after` naming no step of it is INVALID_INPUT. Its queue messages are not included (said in
 * `not_included`). @default limit 100
 */
export async function showWorldRun(backend: StoreBackend, q: WorldRunQuery): Promise<WorldRunDetail> {
  const runs = runsOf(backend);
  const row = runs === null ? null : await runs.getRun(q.run_id);
  if (runs === null || row === null) {
    throw new NotFoundError(`no workflow run ${JSON.stringify(q.run_id)}`, { run_id: q.run_id });
  }
  let after: { created_at: number; id: string } | null = null;
  if (q.after !== undefined) {
    const last = await runs.getStep(q.run_id, q.after);
    if (last === null) {
      throw new InvalidInputError(
        `workflow_run: after ${JSON.stringify(q.after)} names no step of run ${JSON.stringify(q.run_id)}; page on from the id of the last step a page showed`,
        { field: 'after' },
      );
    }
    after = { created_at: last.created_at, id: last.step_id };
  }
  const max = WORLD_RUN_PARTS_MAX;
  const whole = { after: null, limit: max + 1, reverse: false };
  const [steps, hooks, waits, streams] = await Promise.all([
    runs.listSteps({ run_id: q.run_id, after, limit: q.limit ?? WORLD_PAGE.default, reverse: false }),
    runs.listHooks({ run_id: q.run_id, ...whole }),
    runs.listWaits({ run_id: q.run_id, ...whole }),
    backend.workflowStreams?.states({ run_id: q.run_id, limit: max + 1 }) ?? Promise.resolve([]),
  ]);
  const notIncluded: WorldRunDetail['not_included'] = [];
  const capped = <T>(part: string, list: T[]): T[] => {
    if (list.length <= max) return list;
    notIncluded.push({ part, reason: `more than ${max}: the first ${max} are shown` });
    return list.slice(0, max);
  };
  notIncluded.push({ part: 'work_items', reason: NOT_INCLUDED_WORK_ITEMS });
  return {
    run: runView(row),
    steps: steps.map(stepView),
    hooks: capped('hooks', hooks).map(hookView),
    waits: capped('waits', waits).map(waitView),
    streams: capped('streams', streams).map((s) => ({ name: s.name, chunks: s.tail + 1, done: s.done })),
    not_included: notIncluded,
  };
}
