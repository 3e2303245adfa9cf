// Kind `aios-workflow`'s rules: the check every commit of a workflow run's YAML passes (step and phase
// transitions, timestamps in order), refusing with the JSON pointer and the rule.
import type { CommitContext } from '../../core/kind.js';
import type { JsonObject } from '../../core/types.js';
import {
  checkAppendOnly,
  checkTransition,
  checkUniqueIds,
  checkUpdatedLatest,
  deepEqual,
  fail,
  indexBy,
  isoMs,
  ptr,
  touchUpdated,
} from '../rules.js';
import {
  type AiosArtifact,
  type AiosStep,
  type AiosWorkflow,
  ARTIFACT_TRANSITIONS,
  isDone,
  STEP_TRANSITIONS,
  stepStatus,
  WORKFLOW_TRANSITIONS,
} from './model.js';

// Kind `aios-workflow`: one execution of an AIOS workflow (`.aios/{instance-id}-state.yaml`). The schema
// checks structure; `check` enforces the seed's logical rules, each refusal naming the JSON pointer and
// the rule:
//   identity-immutable, instance-id-format, squad-name-required, iso-8601, updated-at-latest,
//   status-transition, step-index-sequence, current-step-index, step-transition, skip-only-optional,
//   step-started-at, step-completed-at, step-time-order, in-progress-is-current,
//   steps-before-current-done, steps-after-current-pending, workflow-completed-steps, steps-not-removed,
//   step-final-frozen, unique-ids, artifact-step-ref, artifact-created-by-started-step,
//   artifact-transition, artifacts-not-removed, decision-step-ref, decisions-append-only.
// `updated_at` is maintained: a change that does not advance it gets the time of the write.

const asItems = (v: unknown[] | undefined) => (v ?? []) as unknown as JsonObject[];

// ---------------------------------------------------------------------------------------------------
// Rules

function checkIdentity(next: AiosWorkflow, prev: AiosWorkflow | null): void {
  const prefix = `${next.workflow_id}-`;
  if (!next.instance_id.startsWith(prefix)) {
    fail(
      '/instance_id',
      'instance-id-format',
      `/instance_id must be {workflow_id}-YYYYMMDD-{random}: ${JSON.stringify(next.instance_id)} does not start with ${JSON.stringify(prefix)}`,
    );
  }
  const date = next.instance_id.slice(prefix.length, prefix.length + 8);
  const y = Number(date.slice(0, 4));
  const m = Number(date.slice(4, 6));
  const d = Number(date.slice(6, 8));
  const day = new Date(Date.UTC(y, m - 1, d));
  if (
    !/^\d{8}$/.test(date) ||
    day.getUTCFullYear() !== y ||
    day.getUTCMonth() !== m - 1 ||
    day.getUTCDate() !== d
  ) {
    fail(
      '/instance_id',
      'instance-id-format',
      `/instance_id: ${JSON.stringify(date)} is not a date YYYYMMDD`,
    );
  }
  if (next.target_context !== 'core' && !next.squad_name) {
    fail(
      '/squad_name',
      'squad-name-required',
      `/squad_name is required when target_context is ${next.target_context}`,
    );
  }
  if (!prev) return;
  for (const f of ['workflow_id', 'instance_id', 'started_at'] as const) {
    if (next[f] !== prev[f])
      fail(`/${f}`, 'identity-immutable', `/${f} cannot change (was ${JSON.stringify(prev[f])})`);
  }
}

/** Every time field, with its pointer. */
function times(b: AiosWorkflow): Array<[string, string]> {
  const out: Array<[string, string]> = [
    ['/started_at', b.started_at],
    ['/updated_at', b.updated_at],
  ];
  b.steps.forEach((s, i) => {
    if (s.started_at !== undefined) out.push([ptr('steps', i, 'started_at'), s.started_at]);
    if (s.completed_at !== undefined) out.push([ptr('steps', i, 'completed_at'), s.completed_at]);
  });
  (b.decisions ?? []).forEach((d, i) => {
    if (d.timestamp !== undefined) out.push([ptr('decisions', i, 'timestamp'), d.timestamp]);
  });
  return out;
}

function checkSteps(next: AiosWorkflow, prev: AiosWorkflow | null): void {
  const steps = next.steps;
  const cur = next.current_step_index;
  steps.forEach((s, i) => {
    if (s.step_index !== i) {
      fail(
        ptr('steps', i, 'step_index'),
        'step-index-sequence',
        `steps[${i}].step_index is ${s.step_index}; steps mirror the workflow sequence, so it must be ${i}`,
      );
    }
  });
  if (steps.length === 0 ? cur !== 0 : cur >= steps.length) {
    fail(
      '/current_step_index',
      'current-step-index',
      steps.length === 0
        ? `/current_step_index must be 0 when there are no steps (is ${cur})`
        : `/current_step_index ${cur} names no step (there are ${steps.length})`,
    );
  }

  const before = prev?.steps ?? [];
  if (steps.length < before.length) {
    fail(
      '/steps',
      'steps-not-removed',
      `/steps: steps cannot be removed (had ${before.length}, now ${steps.length})`,
    );
  }
  steps.forEach((s, i) => {
    const at = ptr('steps', i);
    const status = stepStatus(s);
    const old = before[i];
    checkTransition(STEP_TRANSITIONS, old ? stepStatus(old) : null, status, {
      pointer: `${at}/status`,
      rule: 'step-transition',
      subject: `step ${i}`,
    });
    if (old && isDone(old)) {
      // A finished step is history: only notes and newly recorded artifacts may be added.
      const strip = ({ notes: _n, artifacts_created: _a, ...rest }: AiosStep) => rest;
      const grown = (old.artifacts_created ?? []).every((a, k) => s.artifacts_created?.[k] === a);
      if (!deepEqual(strip(old), strip(s)) || !grown) {
        fail(
          at,
          'step-final-frozen',
          `step ${i} is ${stepStatus(old)} and cannot change (except notes and new artifacts)`,
        );
      }
    }
    if (status === 'skipped' && s.optional !== true && old?.status !== 'skipped') {
      fail(
        `${at}/status`,
        'skip-only-optional',
        `step ${i}${s.phase ? ` (${s.phase})` : ''} is not optional and cannot be skipped`,
      );
    }
    if ((status === 'in_progress' || status === 'completed') && s.started_at === undefined) {
      fail(`${at}/started_at`, 'step-started-at', `step ${i} is ${status} but has no started_at`);
    }
    if (status === 'completed' && s.completed_at === undefined) {
      fail(`${at}/completed_at`, 'step-completed-at', `step ${i} is completed but has no completed_at`);
    }
    if (status !== 'completed' && s.completed_at !== undefined) {
      fail(`${at}/completed_at`, 'step-completed-at', `step ${i} is ${status} but has a completed_at`);
    }
    if (status === 'pending' && s.started_at !== undefined) {
      fail(`${at}/started_at`, 'step-started-at', `step ${i} is pending but has a started_at`);
    }
    if (
      s.started_at !== undefined &&
      s.completed_at !== undefined &&
      isoMs(s.completed_at, `${at}/completed_at`) < isoMs(s.started_at, `${at}/started_at`)
    ) {
      fail(`${at}/completed_at`, 'step-time-order', `step ${i}: completed_at precedes started_at`);
    }
    if (status === 'in_progress' && i !== cur) {
      fail(
        `${at}/status`,
        'in-progress-is-current',
        `step ${i} is in_progress but the current step is ${cur}; only the current step can be in progress`,
      );
    }
    if (i < cur && !isDone(s)) {
      fail(
        `${at}/status`,
        'steps-before-current-done',
        `step ${i} is ${status} but comes before the current step ${cur}: it must be completed or skipped`,
      );
    }
    if (i > cur && status !== 'pending') {
      fail(
        `${at}/status`,
        'steps-after-current-pending',
        `step ${i} is ${status} but comes after the current step ${cur}: it must be pending`,
      );
    }
    if (next.status === 'completed' && !isDone(s)) {
      fail(
        `${at}/status`,
        'workflow-completed-steps',
        `the workflow is completed but step ${i} is ${status}: every step must be completed or skipped`,
      );
    }
  });
}

function checkArtifacts(next: AiosWorkflow, prev: AiosWorkflow | null): void {
  const artifacts = next.artifacts ?? [];
  checkUniqueIds(asItems(artifacts), '/artifacts', 'name');
  checkAppendOnly(asItems(prev?.artifacts), asItems(artifacts), '/artifacts', 'artifacts-not-removed', {
    key: 'name',
    frozen: false,
  });
  const before = indexBy(asItems(prev?.artifacts), 'name');
  artifacts.forEach((a, i) => {
    const at = ptr('artifacts', i);
    if (a.created_by_step !== undefined) {
      const step = next.steps[a.created_by_step];
      if (!step) {
        fail(
          `${at}/created_by_step`,
          'artifact-step-ref',
          `artifact ${a.name}: created_by_step ${a.created_by_step} names no step`,
        );
      }
      if (a.status === 'created' && stepStatus(step) !== 'in_progress' && stepStatus(step) !== 'completed') {
        fail(
          `${at}/status`,
          'artifact-created-by-started-step',
          `artifact ${a.name} is created, but step ${a.created_by_step} that creates it is ${stepStatus(step)}`,
        );
      }
    }
    const old = before.get(a.name)?.item as AiosArtifact | undefined;
    if (old?.status !== undefined && a.status !== undefined) {
      checkTransition(ARTIFACT_TRANSITIONS, old.status, a.status, {
        pointer: `${at}/status`,
        rule: 'artifact-transition',
        subject: `artifact ${a.name}`,
      });
    }
  });
}

function checkDecisions(next: AiosWorkflow, prev: AiosWorkflow | null): void {
  const decisions = next.decisions ?? [];
  const before = prev?.decisions ?? [];
  before.forEach((d, i) => {
    if (!deepEqual(d, decisions[i])) {
      fail(
        decisions[i] ? ptr('decisions', i) : '/decisions',
        'decisions-append-only',
        `/decisions is an append-only log: decision ${i} cannot be ${decisions[i] ? 'changed' : 'removed'}`,
      );
    }
  });
  decisions.forEach((d, i) => {
    if (d.step_index >= next.steps.length) {
      fail(
        ptr('decisions', i, 'step_index'),
        'decision-step-ref',
        `decision ${i}: step_index ${d.step_index} names no step`,
      );
    }
  });
}

export function check(nextBody: JsonObject, prevBody: JsonObject | null, ctx: CommitContext): undefined {
  const next = nextBody as unknown as AiosWorkflow;
  const prev = prevBody as unknown as AiosWorkflow | null;
  touchUpdated(next, prev, 'updated_at', times(next), ctx.now);
  checkIdentity(next, prev);
  checkTransition(WORKFLOW_TRANSITIONS, prev ? prev.status : null, next.status, {
    pointer: '/status',
    rule: 'status-transition',
    subject: 'workflow',
  });
  checkSteps(next, prev);
  checkArtifacts(next, prev);
  checkDecisions(next, prev);
  checkUpdatedLatest('/updated_at', next.updated_at, times(next), 'the last state update');
  return undefined;
}
