// The state machine of a Workflow SDK World's `events.create`, with no I/O: given the run's entities as the
// storage read them and a create-event request, decide what to record and write, or which error to throw.
// Both backends' storage run it inside the transaction that then applies the decision, so the rules live
// once. The semantics are those @workflow/world-local and world-postgres implement (the SDK's conformance
// suite runs against them); where the two differ, the comment at the rule says which this follows. What a
// decision reads and holds is in decision.ts.
import type { AnyEventRequest, AttributeChange, Hook, Step, Wait, WorkflowRun } from '@workflow/world';
import {
  CreateEventSchema,
  DEFAULT_TIMESTAMP_THRESHOLD_FUTURE_MS,
  DEFAULT_TIMESTAMP_THRESHOLD_PAST_MS,
  isChildEntityCreationEvent,
  isLegacySpecVersion,
  isTerminalRunEventType,
  isTerminalStepStatus,
  isTerminalWorkflowRunStatus,
  requiresNewerWorld,
  SPEC_VERSION_CURRENT,
  ulidToDate,
  validateAttributeChanges,
  workflowRunIdSchema,
} from '@workflow/world';
import type { CreateEventDecision, CreateEventInput, EventDraft, Removal } from './decision.js';
import {
  EntityConflictError,
  HookNotFoundError,
  RunExpiredError,
  RunNotSupportedError,
  TooEarlyError,
  WorkflowRunNotFoundError,
  WorkflowWorldError,
} from './errors.js';

type Request = AnyEventRequest;
type RequestOf<T extends Request['eventType']> = Extract<Request, { eventType: T }>;

/** What every rule reads: the input with the request validated, its spec version and its time. */
interface Context extends CreateEventInput {
  request: Request;
  specVersion: number;
  at: Date;
}

/**
 * Decides one `events.create`: validates the request (an invalid one is a `WorkflowWorldError` with status
 * 400), checks it against the run's state, and returns the events to record and the entities to write and
 * delete — or throws the error the SDK expects (`EntityConflictError`, `RunExpiredError`, `TooEarlyError`,
 * `WorkflowRunNotFoundError`, `HookNotFoundError`, `RunNotSupportedError`, `WorkflowWorldError`).
 * Payloads (`input`, `output`, `result`, `error`, `payload`, `metadata`) pass through untouched.
 */
export function decideCreateEvent(input: CreateEventInput): CreateEventDecision {
  const request = parseRequest(input.request);
  if (input.runId === '') throw invalid('runId must not be empty');
  const cx: Context = {
    ...input,
    request,
    specVersion: request.specVersion ?? SPEC_VERSION_CURRENT,
    at: new Date(input.now),
  };
  if (request.eventType === 'run_created') return runCreated(cx, request);
  const startedRun = cx.run === null ? materializeRun(cx) : null;
  const run = startedRun ?? cx.run;
  if (run === null) throw new WorkflowRunNotFoundError(cx.runId);
  if (requiresNewerWorld(run.specVersion)) {
    throw new RunNotSupportedError(run.specVersion ?? 0, SPEC_VERSION_CURRENT);
  }
  if (isLegacySpecVersion(run.specVersion)) {
    throw new WorkflowWorldError(
      `Run "${cx.runId}" is a legacy (spec version 1) run, which this World does not keep`,
    );
  }
  if (startedRun !== null) return runStarted(cx, startedRun, true);
  if (isTerminalWorkflowRunStatus(run.status)) {
    const early = onTerminalRun(cx, run);
    if (early) return early;
  }
  return dispatch(cx, run);
}

function dispatch(cx: Context, run: WorkflowRun): CreateEventDecision {
  const r = cx.request;
  switch (r.eventType) {
    case 'run_created':
      throw new EntityConflictError(`Workflow run "${cx.runId}" already exists`);
    case 'run_started':
      return runStarted(cx, run, false);
    case 'run_completed':
    case 'run_failed':
    case 'run_cancelled':
      return runEnded(cx, run, r);
    case 'attr_set':
      return attrSet(cx, run, r);
    case 'step_created':
      return stepCreated(cx, r);
    case 'step_started':
      return stepStarted(cx, run, r);
    case 'step_completed':
    case 'step_failed':
    case 'step_retrying':
      return stepChanged(cx, run, r);
    case 'hook_created':
      return hookCreated(cx, r);
    case 'hook_received':
    case 'hook_disposed':
      return hookUsed(cx, r);
    case 'wait_created':
      return waitCreated(cx, r);
    case 'wait_completed':
      return waitCompleted(cx, r);
  }
}

// ---- validation ---------------------------------------------------------------------------------------

function invalid(message: string, cause?: unknown): WorkflowWorldError {
  return new WorkflowWorldError(`Invalid event request: ${message}`, { status: 400, cause });
}

function parseRequest(raw: unknown): Request {
  const parsed = CreateEventSchema.safeParse(raw);
  if (!parsed.success) {
    const where = parsed.error.issues.map((i) => `${i.path.join('.') || '(request)'}: ${i.message}`);
    throw invalid(where.join('; '), parsed.error);
  }
  const request = parsed.data;
  // The schemas accept an empty correlationId; an entity named '' is a caller's bug, never a real step.
  if ('correlationId' in request && request.correlationId === '') {
    throw invalid('correlationId must not be empty');
  }
  return request;
}

/** Runs this World keeps are event-sourced: spec version 2 or later. A request for an older one is a 400. */
function checkNewRunSpecVersion(cx: Context): void {
  if (isLegacySpecVersion(cx.specVersion)) {
    throw invalid(`spec version ${cx.specVersion} is a legacy (pre-event-sourcing) version`);
  }
}

/** Attribute keys and values within the SDK's limits (`$` keys only when allowed): else a 400. */
function checkAttributes(changes: AttributeChange[], allowReserved: boolean, existing?: string[]): void {
  try {
    validateAttributeChanges(changes, {
      allowReservedAttributes: allowReserved,
      ...(existing ? { existingKeys: existing } : {}),
    });
  } catch (err) {
    throw invalid(err instanceof Error ? err.message : String(err), err);
  }
}

/**
 * A client's run id is `wrun_` and a ULID whose time is at most 24 h before now and 5 min after it (the
 * SDK's thresholds): the past bound lets a delayed queue message create its run, the future bound keeps a
 * client from minting ids that sort after everyone else's.
 */
function checkRunId(runId: string, now: number): void {
  if (!workflowRunIdSchema.safeParse(runId).success) throw invalid(`runId "${runId}" is not wrun_<ULID>`);
  const minted = ulidToDate(runId.slice('wrun_'.length))?.getTime() ?? Number.NaN;
  const age = now - minted;
  if (!(age <= DEFAULT_TIMESTAMP_THRESHOLD_PAST_MS && -age <= DEFAULT_TIMESTAMP_THRESHOLD_FUTURE_MS)) {
    throw invalid(`runId "${runId}" was minted at ${new Date(minted).toISOString()}, too far from now`);
  }
}

// ---- events -------------------------------------------------------------------------------------------

function draft(cx: Context, event: Record<string, unknown>): EventDraft {
  return { ...event, runId: cx.runId, createdAt: cx.at, specVersion: cx.specVersion } as EventDraft;
}

function withoutKey<T extends object, K extends keyof T>(value: T, key: K): Omit<T, K> {
  const { [key]: _dropped, ...rest } = value;
  return rest;
}

// ---- runs ---------------------------------------------------------------------------------------------

type RunBase = Omit<WorkflowRun, 'status' | 'output' | 'error' | 'errorCode' | 'completedAt'>;

/** The fields every run status shares, with `updatedAt` now. */
function runBase(run: WorkflowRun, at: Date): RunBase {
  const { status: _s, output: _o, error: _e, errorCode: _c, completedAt: _d, ...base } = run;
  return { ...base, updatedAt: at };
}

interface RunSeed {
  deploymentId: string;
  workflowName: string;
  input: unknown;
  executionContext?: Record<string, unknown> | undefined;
  attributes?: Record<string, string> | undefined;
  allowReservedAttributes?: true | undefined;
}

function newRun(cx: Context, seed: RunSeed): WorkflowRun {
  checkNewRunSpecVersion(cx);
  const attributes = seed.attributes ?? {};
  checkAttributes(
    Object.entries(attributes).map(([key, value]) => ({ key, value })),
    seed.allowReservedAttributes === true,
  );
  return {
    runId: cx.runId,
    status: 'pending',
    deploymentId: seed.deploymentId,
    workflowName: seed.workflowName,
    specVersion: cx.specVersion,
    ...(seed.executionContext === undefined ? {} : { executionContext: seed.executionContext }),
    input: seed.input,
    attributes,
    createdAt: cx.at,
    updatedAt: cx.at,
  };
}

/** `run_created`: a new pending run; a second for the same id is a conflict (the SDK treats it as done). */
function runCreated(cx: Context, r: RequestOf<'run_created'>): CreateEventDecision {
  if (cx.run !== null) throw new EntityConflictError(`Workflow run "${cx.runId}" already exists`);
  if (cx.replay !== true) checkRunId(cx.runId, cx.now);
  const run = newRun(cx, r.eventData);
  return { events: [draft(cx, r)], run: { op: 'insert', value: run }, removals: [], reply: { run } };
}

/**
 * The resilient start: `start()` writes `run_created` and enqueues the run at the same time, so `run_started`
 * can come first. When it carries the run's deployment, workflow name and input, it creates the run (and a
 * synthetic `run_created` event). Without them, a missing run is not found.
 */
function materializeRun(cx: Context): WorkflowRun | null {
  const r = cx.request;
  if (r.eventType !== 'run_started' || r.eventData === undefined) return null;
  const { deploymentId, workflowName, input } = r.eventData;
  if (deploymentId === undefined || workflowName === undefined || input === undefined) return null;
  return newRun(cx, { ...r.eventData, deploymentId, workflowName, input });
}

/**
 * `run_started`: pending → running at the clock time (once: only a pending run starts). On a running run it
 * records nothing and returns the run (concurrent invocations all proceed; replay is deterministic).
 * `fresh`: the run was just created.
 */
function runStarted(cx: Context, run: WorkflowRun, fresh: boolean): CreateEventDecision {
  if (run.status === 'running') return { events: [], removals: [], reply: { run } };
  const started: WorkflowRun = {
    ...runBase(run, cx.at),
    status: 'running',
    startedAt: cx.at,
  };
  // The run's creation data belongs on run_created; the run_started event carries none.
  const events = [draft(cx, withoutKey(cx.request as RequestOf<'run_started'>, 'eventData'))];
  if (fresh) {
    const data = (cx.request as RequestOf<'run_started'>).eventData!;
    events.unshift(draft(cx, { eventType: 'run_created', eventData: data }));
  }
  return {
    events,
    run: { op: fresh ? 'insert' : 'update', value: started },
    removals: [],
    reply: { run: started },
  };
}

/** Events refused on a run that is over. Returns the idempotent `run_cancelled` decision, else undefined. */
function onTerminalRun(cx: Context, run: WorkflowRun): CreateEventDecision | undefined {
  const r = cx.request;
  // Cancelling a cancelled run succeeds and is recorded (both reference worlds do), and changes nothing.
  if (r.eventType === 'run_cancelled' && run.status === 'cancelled') {
    return { events: [draft(cx, r)], removals: [], reply: { run } };
  }
  if (r.eventType === 'run_started') {
    throw new RunExpiredError(`Workflow run "${cx.runId}" is already in terminal state "${run.status}"`);
  }
  if (isTerminalRunEventType(r.eventType)) {
    throw new EntityConflictError(`Cannot transition run from terminal state "${run.status}"`);
  }
  if (isChildEntityCreationEvent(r)) {
    throw new EntityConflictError(`Cannot create new entities on run in terminal state "${run.status}"`);
  }
  if (r.eventType === 'attr_set') {
    throw new EntityConflictError(`Cannot set attributes on run in terminal state "${run.status}"`);
  }
  return undefined;
}

/** `run_completed` / `run_failed` / `run_cancelled`: the run ends, and its hooks (tokens) and waits go. */
function runEnded(
  cx: Context,
  run: WorkflowRun,
  r: RequestOf<'run_completed' | 'run_failed' | 'run_cancelled'>,
): CreateEventDecision {
  const base = runBase(run, cx.at);
  let ended: WorkflowRun;
  if (r.eventType === 'run_completed') {
    ended = { ...base, status: 'completed', output: r.eventData.output, completedAt: cx.at };
  } else if (r.eventType === 'run_failed') {
    ended = {
      ...base,
      status: 'failed',
      error: r.eventData.error,
      ...(r.eventData.errorCode === undefined ? {} : { errorCode: r.eventData.errorCode }),
      completedAt: cx.at,
    };
  } else {
    ended = { ...base, status: 'cancelled', completedAt: cx.at };
  }
  return {
    events: [draft(cx, r)],
    run: { op: 'update', value: ended },
    removals: [
      { kind: 'hooks-of-run', runId: cx.runId },
      { kind: 'waits-of-run', runId: cx.runId },
    ],
    reply: { run: ended },
  };
}

/**
 * `attr_set`: merges the changes into `run.attributes` (`null` removes a key). A workflow's write is
 * correlated: a second one with the same correlationId is a conflict, decided before anything changes.
 */
function attrSet(cx: Context, run: WorkflowRun, r: RequestOf<'attr_set'>): CreateEventDecision {
  const { changes, writer, allowReservedAttributes } = r.eventData;
  if (r.correlationId !== undefined && writer.type === 'workflow' && cx.attrSetRecorded === true) {
    throw new EntityConflictError(`attr_set "${r.correlationId}" already exists in run "${cx.runId}"`);
  }
  checkAttributes(changes, allowReservedAttributes === true, Object.keys(run.attributes));
  const attributes = { ...run.attributes };
  for (const { key, value } of changes) {
    if (value === null) delete attributes[key];
    else attributes[key] = value;
  }
  const next = { ...run, attributes, updatedAt: cx.at };
  return { events: [draft(cx, r)], run: { op: 'update', value: next }, removals: [], reply: { run: next } };
}

// ---- steps --------------------------------------------------------------------------------------------

function newStep(cx: Context, stepId: string, stepName: string, input: unknown): Step {
  return {
    runId: cx.runId,
    stepId,
    stepName,
    status: 'pending',
    input,
    attempt: 0,
    createdAt: cx.at,
    updatedAt: cx.at,
    specVersion: cx.specVersion,
  };
}

function stepNotFound(stepId: string): WorkflowWorldError {
  return new WorkflowWorldError(`Step "${stepId}" not found`);
}

/** `step_created`: a new pending step at attempt 0; a second one for the same id is a conflict. */
function stepCreated(cx: Context, r: RequestOf<'step_created'>): CreateEventDecision {
  if (cx.step) throw new EntityConflictError(`Step "${r.correlationId}" already created`);
  const step = newStep(cx, r.correlationId, r.eventData.stepName, r.eventData.input);
  return { events: [draft(cx, r)], step: { op: 'insert', value: step }, removals: [], reply: { step } };
}

/**
 * What every event on an existing step checks: the step exists, is not terminal, and — on a run that is
 * over — is running (a step already running may still finish; nothing else may move).
 */
function checkStep(cx: Context, run: WorkflowRun, stepId: string): Step {
  const step = cx.step;
  if (!step) throw stepNotFound(stepId);
  if (isTerminalStepStatus(step.status)) {
    throw new EntityConflictError(`Cannot modify step in terminal state "${step.status}"`);
  }
  if (isTerminalWorkflowRunStatus(run.status) && step.status !== 'running') {
    throw new RunExpiredError(`Cannot modify non-running step on run in terminal state "${run.status}"`);
  }
  return step;
}

/**
 * `step_started`: the step runs, `attempt` + 1, `startedAt` set on the first start only, `retryAfter`
 * cleared; refused (`TooEarlyError`, whole seconds) before the step's `retryAfter`. A lazy start (the request
 * carries `stepName` and `input`) first creates the step with a synthetic `step_created` event and reports
 * `stepCreated`; a lazy start of a step that exists lost the race to create it: a conflict.
 */
function stepStarted(cx: Context, run: WorkflowRun, r: RequestOf<'step_started'>): CreateEventDecision {
  const lazy = isChildEntityCreationEvent(r);
  let step: Step;
  const events: EventDraft[] = [];
  if (lazy) {
    if (cx.step) throw new EntityConflictError(`Step "${r.correlationId}" already created`);
    const { stepName, input } = r.eventData as { stepName: string; input: unknown };
    step = newStep(cx, r.correlationId, stepName, input);
    events.push(
      draft(cx, {
        eventType: 'step_created',
        correlationId: r.correlationId,
        eventData: { stepName, input },
      }),
    );
  } else {
    step = checkStep(cx, run, r.correlationId);
  }
  const retryAt = step.retryAfter?.getTime();
  if (retryAt !== undefined && retryAt > cx.now) {
    throw new TooEarlyError(
      `Cannot start step "${r.correlationId}": retryAfter timestamp has not been reached yet`,
      { retryAfter: Math.ceil((retryAt - cx.now) / 1000) },
    );
  }
  const { retryAfter: _cleared, ...rest } = step;
  const started: Step = {
    ...rest,
    status: 'running',
    attempt: step.attempt + 1,
    startedAt: step.startedAt ?? cx.at,
    updatedAt: cx.at,
  };
  // The input belongs on step_created; the step_started event keeps the rest (stepName, ownerMessageId).
  const data = r.eventData === undefined ? undefined : withoutKey(r.eventData, 'input');
  events.push(draft(cx, data === undefined ? withoutKey(r, 'eventData') : { ...r, eventData: data }));
  return {
    events,
    step: { op: lazy ? 'insert' : 'update', value: started },
    removals: [],
    reply: lazy ? { step: started, stepCreated: true } : { step: started },
  };
}

/**
 * `step_completed` (→ completed, `output` = the result), `step_failed` (→ failed, `error`) and
 * `step_retrying` (→ pending, `error`, `retryAfter`). Unlike the reference worlds, which skip the run read
 * for `step_completed`/`step_retrying` to save a query, the terminal-run check applies to all three.
 */
function stepChanged(
  cx: Context,
  run: WorkflowRun,
  r: RequestOf<'step_completed' | 'step_failed' | 'step_retrying'>,
): CreateEventDecision {
  const step = checkStep(cx, run, r.correlationId);
  let next: Step;
  if (r.eventType === 'step_completed') {
    next = { ...step, status: 'completed', output: r.eventData.result, completedAt: cx.at, updatedAt: cx.at };
  } else if (r.eventType === 'step_failed') {
    next = { ...step, status: 'failed', error: r.eventData.error, completedAt: cx.at, updatedAt: cx.at };
  } else {
    const { retryAfter: _previous, ...rest } = step;
    next = {
      ...rest,
      status: 'pending',
      error: r.eventData.error,
      ...(r.eventData.retryAfter === undefined ? {} : { retryAfter: r.eventData.retryAfter }),
      updatedAt: cx.at,
    };
  }
  return { events: [draft(cx, r)], step: { op: 'update', value: next }, removals: [], reply: { step: next } };
}

// ---- hooks --------------------------------------------------------------------------------------------

/**
 * `hook_created`: a new hook holding its token. A token another live hook holds is not an error: the World
 * records a `hook_conflict` event instead (naming the holder's run) and creates no hook, so the workflow
 * fails when it awaits the hook. A second `hook_created` for the same hook is a conflict.
 */
function hookCreated(cx: Context, r: RequestOf<'hook_created'>): CreateEventDecision {
  const hookId = r.correlationId;
  const holder = cx.tokenHolder;
  if (cx.hook || (holder && holder.runId === cx.runId && holder.hookId === hookId)) {
    throw new EntityConflictError(`Hook "${hookId}" already created`);
  }
  if (holder) {
    const conflict = draft(cx, {
      eventType: 'hook_conflict',
      correlationId: hookId,
      eventData: { token: r.eventData.token, conflictingRunId: holder.runId },
    });
    return { events: [conflict], removals: [], reply: {} };
  }
  const { token, metadata, isWebhook, isSystem } = r.eventData;
  const hook: Hook = {
    runId: cx.runId,
    hookId,
    token,
    ...cx.hookOwner,
    ...(metadata === undefined ? {} : { metadata }),
    createdAt: cx.at,
    specVersion: cx.specVersion,
    isWebhook: isWebhook ?? false,
    isSystem: isSystem ?? false,
  };
  return { events: [draft(cx, r)], hook: { op: 'insert', value: hook }, removals: [], reply: { hook } };
}

/**
 * `hook_received` (a resume: recorded, no entity changes) and `hook_disposed` (the hook goes, its token is
 * free). Both need the live hook, of this run: a disposed hook — or one released when its run ended — is
 * not found, so a second disposal is `HookNotFoundError` too.
 */
function hookUsed(cx: Context, r: RequestOf<'hook_received' | 'hook_disposed'>): CreateEventDecision {
  const hook = cx.hook;
  if (!hook || hook.runId !== cx.runId) throw new HookNotFoundError(r.correlationId);
  const removals: Removal[] = r.eventType === 'hook_disposed' ? [{ kind: 'hook', hookId: hook.hookId }] : [];
  return { events: [draft(cx, r)], removals, reply: {} };
}

// ---- waits --------------------------------------------------------------------------------------------

/** `wait_created`: a waiting wait until `resumeAt`; a second one for the same id is a conflict. */
function waitCreated(cx: Context, r: RequestOf<'wait_created'>): CreateEventDecision {
  if (cx.wait) throw new EntityConflictError(`Wait "${r.correlationId}" already exists`);
  const wait: Wait = {
    // Both reference worlds name a wait `<runId>-<correlationId>`; tools show it, the runtime never reads it.
    waitId: `${cx.runId}-${r.correlationId}`,
    runId: cx.runId,
    status: 'waiting',
    resumeAt: r.eventData.resumeAt,
    createdAt: cx.at,
    updatedAt: cx.at,
    specVersion: cx.specVersion,
  };
  return { events: [draft(cx, r)], wait: { op: 'insert', value: wait }, removals: [], reply: { wait } };
}

/** `wait_completed`: waiting → completed; an unknown wait is not found, a completed one a conflict. */
function waitCompleted(cx: Context, r: RequestOf<'wait_completed'>): CreateEventDecision {
  const wait = cx.wait;
  if (!wait) throw new WorkflowWorldError(`Wait "${r.correlationId}" not found`);
  if (wait.status === 'completed')
    throw new EntityConflictError(`Wait "${r.correlationId}" already completed`);
  const next: Wait = { ...wait, status: 'completed', completedAt: cx.at, updatedAt: cx.at };
  return { events: [draft(cx, r)], wait: { op: 'update', value: next }, removals: [], reply: { wait: next } };
}
