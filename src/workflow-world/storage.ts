// The storage of a Workflow SDK World (`World.runs`, `steps`, `events`, `hooks`: @workflow/world
// 5.0.0-beta.21's Storage) over an agentstate store. Every change is an `events.create`: one transaction of
// the backend's workflowRuns, serialized per run, that reads the entities the rules need, decides with
// core/codecs/workflow-events/rules.ts (`decideCreateEvent`, at the store's clock), writes the entities and appends the World's events
// to the instance's hash chain, on the run's stream `wf_run:<runId>`. A World event's id is its place in that
// stream (`evnt_` + stream_seq, 26 digits): dense from 1, allocated at commit, so a reader's log is always a
// prefix of the run's. Entities and event data keep bytes and dates losslessly (the codec's tagged JSON).

import { type Attributes, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type {
  CreateEventParams,
  Event,
  EventResult,
  Hook,
  PaginatedResponse,
  PaginationOptions,
  ResolveData,
  Step,
  Storage,
  Wait,
  WorkflowRun,
} from '@workflow/world';
import type {
  StoreBackend,
  WorkflowCreatePlan,
  WorkflowCreateRead,
  WorkflowRunBackend,
} from '../core/backend.js';
import {
  decodeWorkflowEntity,
  readWorkflowEvent,
  toTagged,
  WORKFLOW_EVENT,
  WORKFLOW_ID_CHARS,
  workflowEvent,
  workflowEventSeq,
} from '../core/codecs/workflow-events/codec.js';
import type { CreateEventDecision, HookOwner } from '../core/codecs/workflow-events/decision.js';
import {
  EntityConflictError,
  HookNotFoundError,
  WorkflowRunNotFoundError,
  WorkflowWorldError,
} from '../core/codecs/workflow-events/errors.js';
import { hookRow, runRow, stepRow, waitRow } from '../core/codecs/workflow-events/rows.js';
import { decideCreateEvent } from '../core/codecs/workflow-events/rules.js';
import { newId } from '../core/ids.js';
import { LIMITS } from '../core/input.js';
import type { Clock } from '../core/time.js';
import { TRACER_NAME } from '../core/tracing.js';
import type { EventRecord } from '../core/types.js';
import { isAgentStateError, StateConflictError } from '../errors.js';

/** What the storage needs of a store: its backend (with workflowRuns) and its clock (an `Instance` has both). */
export interface WorldStorageStore {
  /** The store's backend; its `workflowRuns` keeps the runs, steps, hooks, waits and events. */
  readonly backend: StoreBackend;
  /** The time of every event and entity change (epoch ms). */
  readonly clock: Clock;
}

/** How `createWorldStorage` records. */
export interface WorldStorageOptions {
  /** The owner fields of every hook this World creates. @default local-owner, local-project, local */
  hookOwner?: HookOwner;
  /** The actor of the World's events in the store's log. @default 'workflow-world' */
  actor?: string;
}

/** The most bytes of one `events.create` request, as JSON with its bytes in base64 (the store's event limit). */
export const WORKFLOW_REQUEST_BYTES = LIMITS.jsonBytes;

/** The longest id (run, step, hook, wait, token) the storage takes, in characters. */
export { WORKFLOW_ID_CHARS };

/** The rows a list returns when no limit is given, and the most it returns at once. */
export const WORKFLOW_PAGE = { default: 100, max: 1000 } as const;

const DEFAULT_OWNER: HookOwner = { ownerId: 'local-owner', projectId: 'local-project', environment: 'local' };

// ---- ids ----------------------------------------------------------------------------------------------

/** Why `value` is no id the storage can hold (a string of 1 to WORKFLOW_ID_CHARS characters, no control
 * characters, no unpaired surrogates), or null when it is one. A path or `__proto__` also is none. */
function idProblem(value: unknown, path: boolean): string | null {
  if (typeof value !== 'string') return 'must be a string';
  if (value.length === 0 || value.length > WORKFLOW_ID_CHARS) {
    return `must have 1 to ${WORKFLOW_ID_CHARS} characters`;
  }
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return 'must not contain control characters (NUL among them)';
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return 'must not contain an unpaired surrogate';
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) return 'must not contain an unpaired surrogate';
  }
  if (path) {
    if (value.includes('/') || value.includes('\\')) return 'must not contain / or \\';
    if (value.startsWith('.')) return 'must not start with .';
    if (value === '__proto__' || value === 'constructor' || value === 'prototype')
      return `must not be ${value}`;
  }
  return null;
}

/** A request's id (`path`: an entity id, refused when it looks like a path or an object's key): else a 400. */
function checkId(field: string, value: unknown, path = true): string {
  const problem = idProblem(value, path);
  if (problem !== null) {
    throw new WorkflowWorldError(`Invalid event request: ${field} ${problem}`, { status: 400 });
  }
  return value as string;
}

/** Whether a looked-up id could name anything stored (a miss otherwise, with no query). */
const storable = (value: unknown, path = true): value is string => idProblem(value, path) === null;

// ---- entities -----------------------------------------------------------------------------------------

const decoded = <T>(row: { body: string } | null): T | null =>
  row === null ? null : decodeWorkflowEntity<T>(row.body);

function withoutData<T extends object>(value: T, resolve: ResolveData | undefined, keys: string[]): T {
  if (resolve !== 'none') return value;
  const out = { ...value } as Record<string, unknown>;
  for (const k of keys) {
    if (k === 'metadata') delete out[k];
    else out[k] = undefined;
  }
  return out as T;
}

/** The SDK's event of a stored World event (its data left out with resolveData 'none'). */
function sdkEvent(record: EventRecord, resolve?: ResolveData): Event {
  const e = readWorkflowEvent(record);
  if (e === null) throw new WorkflowWorldError(`event ${record.position} is no World event`);
  const event: Record<string, unknown> = {
    runId: e.runId,
    eventId: e.eventId,
    eventType: e.eventType,
    createdAt: e.createdAt,
  };
  if (e.correlationId !== undefined) event.correlationId = e.correlationId;
  if (e.eventData !== undefined && resolve !== 'none') event.eventData = e.eventData;
  if (e.specVersion !== undefined) event.specVersion = e.specVersion;
  return event as unknown as Event;
}

// ---- paging -------------------------------------------------------------------------------------------

function badCursor(cursor: string): WorkflowWorldError {
  return new WorkflowWorldError(`Invalid cursor ${JSON.stringify(cursor)}`, { status: 400 });
}

function pageOf(p: PaginationOptions | undefined, defaultOrder: 'asc' | 'desc') {
  const limit = p?.limit ?? WORKFLOW_PAGE.default;
  if (!Number.isInteger(limit) || limit < 1 || limit > WORKFLOW_PAGE.max) {
    throw new WorkflowWorldError(`Invalid limit ${limit}: 1 to ${WORKFLOW_PAGE.max}`, { status: 400 });
  }
  const order = p?.sortOrder ?? defaultOrder;
  if (order !== 'asc' && order !== 'desc') {
    throw new WorkflowWorldError(`Invalid sortOrder ${String(order)}`, { status: 400 });
  }
  return { limit, reverse: order === 'desc', cursor: p?.cursor };
}

/** A number cursor (an event's place in its run, or its position in the log). */
function numberCursor(cursor: string | undefined): number | null {
  if (cursor === undefined) return null;
  if (!/^\d{1,15}$/.test(cursor)) throw badCursor(cursor);
  return Number(cursor);
}

/** An entity cursor: `<created_at>:<id>` of the last row a page showed. */
function keyCursor(cursor: string | undefined): { created_at: number; id: string } | null {
  if (cursor === undefined) return null;
  const m = /^(\d{1,15}):([\s\S]+)$/.exec(cursor);
  if (m === null) throw badCursor(cursor);
  return { created_at: Number(m[1]), id: m[2] as string };
}

/** A page of `rows` (one more than the limit was read: whether there is more). */
function page<R, T>(
  rows: R[],
  limit: number,
  map: (row: R) => T,
  cursorOf: (row: R) => string,
  previous: string | undefined,
): PaginatedResponse<T> {
  const hasMore = rows.length > limit;
  const kept = rows.slice(0, limit);
  const last = kept.at(-1);
  return {
    data: kept.map(map),
    cursor: last === undefined ? (previous ?? null) : cursorOf(last),
    hasMore,
  };
}

const keyOf = (created_at: number, id: string) => `${created_at}:${id}`;

// ---- the storage --------------------------------------------------------------------------------------

/** What events.create asks the backend to read for request `data` of run `runId`. */
function readsOf(runId: string, data: Record<string, unknown>) {
  const type = typeof data.eventType === 'string' ? data.eventType : '';
  const correlationId = data.correlationId;
  const q: {
    step_id?: string;
    hook_id?: string;
    wait_id?: string;
    token?: string;
    recorded?: { correlation_id: string; event_type: string };
  } = {};
  if (correlationId !== undefined) {
    const id = checkId('correlationId', correlationId);
    if (type.startsWith('step_')) q.step_id = id;
    else if (type.startsWith('hook_')) q.hook_id = id;
    else if (type.startsWith('wait_')) q.wait_id = id;
    else if (type === 'attr_set') q.recorded = { correlation_id: id, event_type: 'attr_set' };
  }
  if (type === 'hook_created') {
    const eventData = data.eventData as { token?: unknown } | undefined;
    if (eventData !== undefined && typeof eventData === 'object' && eventData !== null) {
      q.token = checkId('token', eventData.token, false);
    }
  }
  return { run_id: runId, ...q };
}

/** The backend's plan of a decision: entity rows and the events, as the codec builds them. */
function planOf(
  d: CreateEventDecision,
  now: number,
  actor: string,
  waitCorrelationId: string | undefined,
): WorkflowCreatePlan {
  const plan: WorkflowCreatePlan = {
    removals: d.removals.map((r) =>
      r.kind === 'hook' ? { kind: 'hook', hook_id: r.hookId } : { kind: r.kind, run_id: r.runId },
    ),
    events: d.events.map((e) => {
      const draft = e as { runId: string; eventType: string; correlationId?: string; eventData?: unknown };
      return workflowEvent(
        {
          runId: draft.runId,
          eventType: draft.eventType,
          correlationId: draft.correlationId,
          eventData: draft.eventData,
          specVersion: e.specVersion,
        },
        now,
        actor,
      );
    }),
  };
  if (d.run) plan.run = { op: d.run.op, row: runRow(d.run.value) };
  if (d.step) plan.step = { op: d.step.op, row: stepRow(d.step.value) };
  if (d.hook) plan.hook = { op: d.hook.op, row: hookRow(d.hook.value) };
  if (d.wait) {
    // A wait event always names its wait: the row is keyed by the run and that correlationId.
    if (waitCorrelationId === undefined) throw new WorkflowWorldError('a wait event without a correlationId');
    plan.wait = { op: d.wait.op, row: waitRow(d.wait.value, waitCorrelationId) };
  }
  return plan;
}

/** The store's conflict of an insert as the SDK's (the runtime reads it as "someone else did this first"). */
function sdkError(err: unknown): unknown {
  if (err instanceof StateConflictError && typeof err.details.entity === 'string') {
    return new EntityConflictError(
      `${String(err.details.entity)} ${JSON.stringify(err.details.id)} already exists`,
    );
  }
  return err;
}

function runsOf(store: WorldStorageStore): WorkflowRunBackend {
  const runs = store.backend.workflowRuns;
  if (!runs) throw new WorkflowWorldError(`the ${store.backend.name} backend does not store workflow runs`);
  return runs;
}

/** The SDK's event types as span names take them (a short snake_case word); anything else is left out. */
const SPAN_EVENT_TYPE = /^[a-z][a-z_]{0,39}$/;

/**
 * Runs one `events.create` inside its span, `workflow_event <eventType>` (active while it runs, so the
 * caller's span is its parent): the run, the event type and the correlation id (the step, hook or wait) as
 * attributes, the id of the event it recorded, and a refusal as the span's error (`error.type` the store's
 * code, or the SDK error's name). Through @opentelemetry/api only: without an SDK registered, a no-op.
 */
function tracedCreate(
  create: (runId: string | null, data: unknown, params?: CreateEventParams) => Promise<EventResult>,
): typeof create {
  return (runId, data, params) => {
    const request = (typeof data === 'object' && data !== null ? data : {}) as Record<string, unknown>;
    const type = typeof request.eventType === 'string' ? request.eventType : '';
    const attributes: Attributes = {};
    if (SPAN_EVENT_TYPE.test(type)) attributes['agentstate.workflow.event_type'] = type;
    if (typeof runId === 'string') attributes['agentstate.workflow.run_id'] = runId;
    if (typeof request.correlationId === 'string')
      attributes['agentstate.workflow.correlation_id'] = request.correlationId;
    const name = SPAN_EVENT_TYPE.test(type) ? `${WORKFLOW_EVENT} ${type}` : WORKFLOW_EVENT;
    return trace
      .getTracer(TRACER_NAME)
      .startActiveSpan(name, { kind: SpanKind.INTERNAL, attributes }, async (span) => {
        try {
          const result = await create(runId, data, params);
          if (span.isRecording() && result.event) {
            span.setAttribute('agentstate.workflow.run_id', result.event.runId);
            span.setAttribute('agentstate.workflow.event_id', result.event.eventId);
          }
          return result;
        } catch (err) {
          if (span.isRecording()) {
            span.setAttribute('error.type', isAgentStateError(err) ? err.code : (err as Error).name);
            span.recordException(err as Error);
            span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
          }
          throw err;
        } finally {
          span.end();
        }
      });
  };
}

/**
 * The SDK's `Storage` (runs, steps, events, hooks) over a store: every change through `events.create`, one
 * transaction per call on the store's backend. Misses are the SDK's errors: `WorkflowRunNotFoundError`,
 * `HookNotFoundError`, `WorkflowWorldError` with status 404 (a step or an event); invalid input is a
 * `WorkflowWorldError` with status 400 (413 for a request over WORKFLOW_REQUEST_BYTES), and writes nothing.
 * @example const storage = createWorldStorage(await openInstance({ dir: '.agentstate' }));
 */
export function createWorldStorage(store: WorldStorageStore, options: WorldStorageOptions = {}): Storage {
  const backend = runsOf(store);
  const hookOwner = options.hookOwner ?? DEFAULT_OWNER;
  const actor = options.actor ?? 'workflow-world';

  async function create(
    runIdIn: string | null,
    data: unknown,
    params?: CreateEventParams,
  ): Promise<EventResult> {
    const now = store.clock();
    if (typeof data !== 'object' || data === null || Array.isArray(data)) {
      throw new WorkflowWorldError('Invalid event request: must be an object', { status: 400 });
    }
    const request = data as Record<string, unknown>;
    const runId =
      runIdIn === null && request.eventType === 'run_created'
        ? newId('wrun', now)
        : checkId('runId', runIdIn);
    let size: number;
    try {
      size = Buffer.byteLength(JSON.stringify(toTagged(request)), 'utf8');
    } catch (err) {
      throw new WorkflowWorldError(`Invalid event request: ${(err as Error).message}`, {
        status: 400,
        cause: err,
      });
    }
    if (size > WORKFLOW_REQUEST_BYTES) {
      throw new WorkflowWorldError(
        `Event request of ${size} bytes is over the ${WORKFLOW_REQUEST_BYTES} the store keeps in one event`,
        { status: 413 },
      );
    }
    const reads = readsOf(runId, request);
    let decision: CreateEventDecision | null = null;
    const decide = (read: WorkflowCreateRead): WorkflowCreatePlan => {
      decision = decideCreateEvent({
        runId,
        request,
        now,
        run: decoded<WorkflowRun>(read.run),
        step: decoded<Step>(read.step),
        hook: decoded<Hook>(read.hook),
        wait: decoded<Wait>(read.wait),
        tokenHolder: read.token_holder && {
          runId: read.token_holder.run_id,
          hookId: read.token_holder.hook_id,
        },
        attrSetRecorded: read.recorded,
        hookOwner,
      });
      return planOf(decision, now, actor, reads.wait_id);
    };
    let records: EventRecord[];
    try {
      records = await backend.createEvent({ ...reads, decide });
    } catch (err) {
      throw sdkError(err);
    }
    const d = decision as CreateEventDecision | null;
    if (d === null) throw new WorkflowWorldError('events.create: the store made no decision');
    const last = records.at(-1);
    return {
      ...(last === undefined ? {} : { event: sdkEvent(last, params?.resolveData) }),
      ...d.reply,
    };
  }

  async function listEvents(
    read: (after: number | null, limit: number, reverse: boolean) => Promise<EventRecord[]>,
    cursorOf: (r: EventRecord) => number,
    pagination: PaginationOptions | undefined,
    resolve: ResolveData | undefined,
  ): Promise<PaginatedResponse<Event>> {
    const p = pageOf(pagination, 'asc');
    const rows = await read(numberCursor(p.cursor), p.limit + 1, p.reverse);
    return page(
      rows,
      p.limit,
      (r) => sdkEvent(r, resolve),
      (r) => String(cursorOf(r)),
      p.cursor,
    );
  }

  const runData = ['input', 'output'];

  return {
    runs: {
      async get(id: string, params?: { resolveData?: ResolveData }) {
        const row = storable(id) ? await backend.getRun(id) : null;
        if (row === null) throw new WorkflowRunNotFoundError(String(id));
        return withoutData(decodeWorkflowEntity<WorkflowRun>(row.body), params?.resolveData, runData);
      },
      async list(params?: {
        workflowName?: string;
        status?: string;
        pagination?: PaginationOptions;
        resolveData?: ResolveData;
      }) {
        const p = pageOf(params?.pagination, 'desc');
        const rows = await backend.listRuns({
          workflow_name: params?.workflowName ?? null,
          status: params?.status ?? null,
          after: keyCursor(p.cursor),
          limit: p.limit + 1,
          reverse: p.reverse,
        });
        return page(
          rows,
          p.limit,
          (r) => withoutData(decodeWorkflowEntity<WorkflowRun>(r.body), params?.resolveData, runData),
          (r) => keyOf(r.created_at, r.run_id),
          p.cursor,
        );
      },
    } as Storage['runs'],
    steps: {
      async get(runId: string, stepId: string, params?: { resolveData?: ResolveData }) {
        const row = storable(runId) && storable(stepId) ? await backend.getStep(runId, stepId) : null;
        if (row === null) {
          throw new WorkflowWorldError(
            `Step ${JSON.stringify(stepId)} in run ${JSON.stringify(runId)} not found`,
            {
              status: 404,
            },
          );
        }
        return withoutData(decodeWorkflowEntity<Step>(row.body), params?.resolveData, runData);
      },
      async list(params: { runId: string; pagination?: PaginationOptions; resolveData?: ResolveData }) {
        const p = pageOf(params.pagination, 'desc');
        const after = keyCursor(p.cursor);
        const rows = storable(params.runId)
          ? await backend.listSteps({ run_id: params.runId, after, limit: p.limit + 1, reverse: p.reverse })
          : [];
        return page(
          rows,
          p.limit,
          (r) => withoutData(decodeWorkflowEntity<Step>(r.body), params.resolveData, runData),
          (r) => keyOf(r.created_at, r.step_id),
          p.cursor,
        );
      },
    } as Storage['steps'],
    events: {
      create: tracedCreate(create) as Storage['events']['create'],
      async get(runId, eventId, params) {
        const seq = typeof eventId === 'string' ? workflowEventSeq(eventId) : null;
        const record = seq !== null && storable(runId) ? await backend.getEvent(runId, seq) : null;
        if (record === null) {
          throw new WorkflowWorldError(
            `Event ${JSON.stringify(eventId)} in run ${JSON.stringify(runId)} not found`,
            {
              status: 404,
            },
          );
        }
        return sdkEvent(record, params?.resolveData);
      },
      async list(params) {
        const runId = params.runId;
        return listEvents(
          async (after, limit, reverse) =>
            storable(runId) ? backend.listEvents({ run_id: runId, after, limit, reverse }) : [],
          (r) => r.stream_seq,
          params.pagination,
          params.resolveData,
        );
      },
      async listByCorrelationId(params) {
        const id = params.correlationId;
        return listEvents(
          async (after, limit, reverse) =>
            storable(id)
              ? backend.listEventsByCorrelation({ correlation_id: id, after, limit, reverse })
              : [],
          (r) => r.position,
          params.pagination,
          params.resolveData,
        );
      },
    },
    hooks: {
      async get(hookId, params) {
        const row = storable(hookId) ? await backend.getHook(hookId) : null;
        if (row === null) throw new HookNotFoundError(String(hookId));
        return withoutData(decodeWorkflowEntity<Hook>(row.body), params?.resolveData, ['metadata']);
      },
      async getByToken(token, params) {
        const row = storable(token, false) ? await backend.getHookByToken(token) : null;
        if (row === null) throw new HookNotFoundError(String(token));
        return withoutData(decodeWorkflowEntity<Hook>(row.body), params?.resolveData, ['metadata']);
      },
      async list(params) {
        const p = pageOf(params.pagination, 'asc');
        const runId = params.runId ?? null;
        const rows =
          runId === null || storable(runId)
            ? await backend.listHooks({
                run_id: runId,
                after: keyCursor(p.cursor),
                limit: p.limit + 1,
                reverse: p.reverse,
              })
            : [];
        return page(
          rows,
          p.limit,
          (r) => withoutData(decodeWorkflowEntity<Hook>(r.body), params.resolveData, ['metadata']),
          (r) => keyOf(r.created_at, r.hook_id),
          p.cursor,
        );
      },
    },
  };
}
