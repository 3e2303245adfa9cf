// Operations of kind `aios-workflow` (`agentstate aios <operation> <instance-id> …`): pure functions from
// the current body to the next, run by the store as one CAS commit. Each sets `updated_at` to now.
import { createHash } from 'node:crypto';
import type { KindOperation, OperationContext } from '../../core/kind.js';
import type { Json, JsonObject } from '../../core/types.js';
import { InvalidInputError, InvalidTransitionError, NotFoundError } from '../../errors.js';
import { checkTransition, fail, isPlainObject, ptr } from '../rules.js';
import {
  type AiosStep,
  type AiosWorkflow,
  isDone,
  isoTime,
  STEP_TRANSITIONS,
  stepStatus,
  WORKFLOW_TRANSITIONS,
} from './model.js';
import { TARGET_CONTEXTS, WORKFLOW_STATUSES } from './schema.js';

const KIND = 'aios-workflow';

function load(body: JsonObject | null, op: string): AiosWorkflow {
  if (body === null) {
    throw new NotFoundError(`${op}: the ${KIND} document does not exist; create it with init`, {
      operation: op,
    });
  }
  return structuredClone(body) as unknown as AiosWorkflow;
}

const out = (w: AiosWorkflow): JsonObject => w as unknown as JsonObject;

/**
 * The `apply` of an operation on an existing workflow: `change` edits a copy of the body (`now` is the
 * operation's time), which, its `updated_at` set to now, is the next body.
 */
function editing(
  op: string,
  change: (w: AiosWorkflow, args: Record<string, unknown>, now: string) => void,
): KindOperation['apply'] {
  return (body, args, ctx) => {
    const w = load(body, op);
    const now = isoTime(ctx.now);
    change(w, args, now);
    w.updated_at = now;
    return out(w);
  };
}

/** How a step is named in messages: `step 2 (architect)`. */
const stepName = (k: number, s: AiosStep): string => `step ${k}${s.phase ? ` (${s.phase})` : ''}`;

/** Step k of the workflow, which must have it. */
function stepAt(w: AiosWorkflow, k: number, op: string): [number, AiosStep] {
  const s = w.steps[k];
  if (!s)
    throw new InvalidInputError(`${op}: the workflow has no step ${k}`, { field: 'step', operation: op });
  return [k, s];
}

/** The step an operation acts on: the current one; `step`, when given, must name it. */
function currentStep(w: AiosWorkflow, args: Record<string, unknown>, op: string): [number, AiosStep] {
  const k = w.current_step_index;
  if (typeof args.step === 'number' && args.step !== k) {
    throw new InvalidInputError(
      `${op}: step ${args.step} is not the current step (${k}); steps run in sequence`,
      { field: 'step', operation: op, current_step_index: k },
    );
  }
  return stepAt(w, k, op);
}

/** Step operations need a running workflow; on a paused one they resume it. */
function running(w: AiosWorkflow, op: string): void {
  if (w.status === 'completed' || w.status === 'aborted') {
    throw new InvalidTransitionError(`${op}: the workflow is ${w.status}; nothing can run any more`, {
      from: w.status,
      pointer: '/status',
      rule: 'status-transition',
    });
  }
  if (w.status === 'paused') w.status = 'active';
}

/** Moves a step to `to`; staying put is refused too (starting a started step is a mistake). */
function moveStep(k: number, s: AiosStep, to: string): void {
  const from = stepStatus(s);
  if (from === to) {
    throw new InvalidTransitionError(`${stepName(k, s)} is already ${to}`, {
      from,
      to,
      pointer: ptr('steps', k, 'status'),
      rule: 'step-transition',
    });
  }
  checkTransition(STEP_TRANSITIONS, from, to, {
    pointer: ptr('steps', k, 'status'),
    rule: 'step-transition',
    subject: stepName(k, s),
  });
}

/**
 * The `apply` of a step operation: the current step (`step`, when given, must name it) of a running
 * workflow (a paused one resumes) moves to `to`, after `check` (which may refuse), and `then` records the
 * rest.
 */
function movingStep(
  op: string,
  to: 'in_progress' | 'completed' | 'skipped',
  then: (w: AiosWorkflow, k: number, s: AiosStep, args: Record<string, unknown>, now: string) => void,
  check?: (k: number, s: AiosStep) => void,
): KindOperation['apply'] {
  return editing(op, (w, args, now) => {
    running(w, op);
    const [k, s] = currentStep(w, args, op);
    check?.(k, s);
    moveStep(k, s, to);
    s.status = to;
    then(w, k, s, args, now);
  });
}

/** After step k finished: the next step becomes current; after the last, the workflow is completed. */
function advance(w: AiosWorkflow, k: number): void {
  const next = w.steps[k + 1];
  if (next) {
    w.current_step_index = k + 1;
    if (next.phase !== undefined) w.current_phase = next.phase;
  } else if (w.steps.every(isDone)) {
    w.status = 'completed';
  }
}

/** Adds names to the step's artifacts_created and marks them created in the registry. */
function recordArtifacts(w: AiosWorkflow, k: number, names: readonly string[]): void {
  const step = w.steps[k];
  if (!step || names.length === 0) return;
  const created = new Set(step.artifacts_created ?? []);
  step.artifacts_created = [...(step.artifacts_created ?? []), ...names.filter((n) => !created.has(n))];
  w.artifacts ??= [];
  for (const name of names) {
    const a = w.artifacts.find((x) => x.name === name);
    if (a) {
      a.status = 'created';
      a.created_by_step ??= k;
    } else {
      w.artifacts.push({ name, created_by_step: k, status: 'created' });
    }
  }
}

function yyyymmdd(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10).replaceAll('-', '');
}

/** A new instance id `{workflow_id}-YYYYMMDD-{6 hex}`; the hex is derived from the inputs (deterministic). */
export function newInstanceId(workflowId: string, ctx: Pick<OperationContext, 'now' | 'actor'>): string {
  const hex = createHash('sha256')
    .update(`${workflowId}\n${ctx.now}\n${ctx.actor}`)
    .digest('hex')
    .slice(0, 6);
  return `${workflowId}-${yyyymmdd(ctx.now)}-${hex}`;
}

function stepsFrom(value: unknown, op: string): AiosStep[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw new InvalidInputError(`${op}: steps must be a non-empty array of phase names or step objects`, {
      field: 'steps',
      operation: op,
    });
  }
  return value.map((v: Json, i): AiosStep => {
    const bad = (why: string): never => {
      throw new InvalidInputError(`${op}: steps[${i}] ${why}`, { field: `steps[${i}]`, operation: op });
    };
    if (typeof v === 'string') return { step_index: i, phase: v, status: 'pending' };
    if (!isPlainObject(v)) return bad('must be a phase name or an object {phase, agent, action, optional}');
    const step: AiosStep = { step_index: i };
    for (const [k, x] of Object.entries(v)) {
      if (k === 'phase' || k === 'agent' || k === 'action') {
        if (typeof x !== 'string') bad(`.${k} must be a string`);
        step[k] = x as string;
      } else if (k === 'optional') {
        if (typeof x !== 'boolean') bad('.optional must be true or false');
        step.optional = x as boolean;
      } else {
        bad(`has unknown field ${JSON.stringify(k)} (allowed: phase, agent, action, optional)`);
      }
    }
    step.status = 'pending';
    return step;
  });
}

/**
 * Creates the document. `instance_id` is required and should be the document id (the file is
 * .aios/<document id>-state.yaml); operations do not see the document id, so it cannot default to it.
 * `newInstanceId` makes one in the seed's format.
 */
const init: KindOperation = {
  name: 'init',
  summary:
    'Create the workflow state (instance_id: the document id): its steps, all pending; the first one current',
  input: {
    workflow_id: { type: 'name', required: true },
    workflow_name: { type: 'string', required: true },
    steps: { type: 'json', required: true },
    instance_id: { type: 'name', required: true },
    target_context: { type: 'string', enum: TARGET_CONTEXTS },
    squad_name: { type: 'name' },
  },
  apply(body, args, ctx) {
    if (body !== null) {
      throw new InvalidInputError('init: this workflow state already exists', {
        field: 'instance_id',
        operation: 'init',
      });
    }
    const workflowId = args.workflow_id as string;
    const steps = stepsFrom(args.steps, 'init');
    const now = isoTime(ctx.now);
    const w: AiosWorkflow = {
      workflow_id: workflowId,
      workflow_name: args.workflow_name as string,
      instance_id: args.instance_id as string,
      target_context: (args.target_context as AiosWorkflow['target_context'] | undefined) ?? 'core',
      ...(args.squad_name === undefined ? {} : { squad_name: args.squad_name as string }),
      started_at: now,
      updated_at: now,
      status: 'active',
      ...(steps[0]?.phase === undefined ? {} : { current_phase: steps[0].phase }),
      current_step_index: 0,
      steps,
      artifacts: [],
      decisions: [],
    };
    return out(w);
  },
};

const startStep: KindOperation = {
  name: 'start-step',
  summary: 'Start the current step (step operations resume a paused workflow)',
  input: { step: { type: 'int', min: 0 }, session_id: { type: 'name' } },
  apply: movingStep('start-step', 'in_progress', (w, _k, s, args, now) => {
    s.started_at = now;
    if (typeof args.session_id === 'string') s.session_id = args.session_id;
    if (s.phase !== undefined) w.current_phase = s.phase;
  }),
};

const completeStep: KindOperation = {
  name: 'complete-step',
  summary: 'Complete the current step (recording the artifacts it created) and move to the next',
  input: {
    step: { type: 'int', min: 0 },
    notes: { type: 'text' },
    artifacts: { type: 'names' },
  },
  apply: movingStep('complete-step', 'completed', (w, k, s, args, now) => {
    s.completed_at = now;
    if (typeof args.notes === 'string') s.notes = args.notes;
    recordArtifacts(w, k, (args.artifacts as string[] | undefined) ?? []);
    advance(w, k);
  }),
};

const skipStep: KindOperation = {
  name: 'skip-step',
  summary: 'Skip the current step (only optional steps) and move to the next',
  positional: 'reason',
  input: { reason: { type: 'text', required: true }, step: { type: 'int', min: 0 } },
  apply: movingStep(
    'skip-step',
    'skipped',
    (w, k, s, args) => {
      s.notes = args.reason as string;
      advance(w, k);
    },
    (k, s) => {
      if (s.optional !== true) {
        fail(
          ptr('steps', k, 'status'),
          'skip-only-optional',
          `${stepName(k, s)} is not optional and cannot be skipped`,
        );
      }
    },
  ),
};

const registerArtifact: KindOperation = {
  name: 'register-artifact',
  summary: 'Add an artifact to the registry, or mark a pending one created',
  positional: 'name',
  input: {
    name: { type: 'string', required: true },
    path: { type: 'string' },
    step: { type: 'int', min: 0 },
    status: { type: 'string', enum: ['created', 'pending'] },
  },
  apply: editing('register-artifact', (w, args) => {
    const name = args.name as string;
    if (name === '') {
      throw new InvalidInputError('register-artifact: name must not be empty', {
        field: 'name',
        operation: 'register-artifact',
      });
    }
    const [k] = stepAt(w, (args.step as number | undefined) ?? w.current_step_index, 'register-artifact');
    const status = (args.status as 'created' | 'pending' | undefined) ?? 'pending';
    w.artifacts ??= [];
    const i = w.artifacts.findIndex((a) => a.name === name);
    const a = w.artifacts[i];
    if (a) {
      if (a.status !== undefined) {
        checkTransition({ pending: ['created'], created: [] }, a.status, status, {
          pointer: ptr('artifacts', i, 'status'),
          rule: 'artifact-transition',
          subject: `artifact ${name}`,
        });
      }
      if (args.step !== undefined && a.created_by_step !== undefined && a.created_by_step !== k) {
        throw new InvalidInputError(
          `register-artifact: ${name} is created by step ${a.created_by_step}, not ${k}`,
          { field: 'step', operation: 'register-artifact' },
        );
      }
      a.status = status;
      a.created_by_step ??= k;
      if (typeof args.path === 'string') a.path = args.path;
    } else {
      w.artifacts.push({
        name,
        created_by_step: k,
        ...(typeof args.path === 'string' ? { path: args.path } : {}),
        status,
      });
    }
    if (status === 'created') recordArtifacts(w, a?.created_by_step ?? k, [name]);
  }),
};

const logDecision: KindOperation = {
  name: 'log-decision',
  summary: 'Append a decision (and its rationale) to the decision log',
  positional: 'decision',
  input: {
    decision: { type: 'text', required: true },
    rationale: { type: 'text' },
    step: { type: 'int', min: 0 },
  },
  apply: editing('log-decision', (w, args, now) => {
    const [k] = stepAt(w, (args.step as number | undefined) ?? w.current_step_index, 'log-decision');
    w.decisions ??= [];
    w.decisions.push({
      step_index: k,
      decision: args.decision as string,
      ...(typeof args.rationale === 'string' ? { rationale: args.rationale } : {}),
      timestamp: now,
    });
  }),
};

const setStatus: KindOperation = {
  name: 'set-status',
  summary: 'Pause, resume, complete or abort the workflow',
  positional: 'status',
  input: { status: { type: 'string', required: true, enum: WORKFLOW_STATUSES } },
  apply: editing('set-status', (w, args) => {
    const to = args.status as AiosWorkflow['status'];
    checkTransition(WORKFLOW_TRANSITIONS, w.status, to, {
      pointer: '/status',
      rule: 'status-transition',
      subject: 'workflow',
    });
    w.status = to;
  }),
};

export const aiosOperations: KindOperation[] = [
  init,
  startStep,
  completeStep,
  skipStep,
  registerArtifact,
  logDecision,
  setStatus,
];
