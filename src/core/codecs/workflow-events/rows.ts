// The rows of a Workflow SDK World's tables (runs, steps, hooks, waits) as events.create writes them: each
// entity's key and status columns, its times in epoch ms, and its body as the codec encodes it (codec.ts).
// The World's storage (src/workflow-world/storage.ts) writes them; verify (core/integrity/workflow.ts) builds
// them from its fold of the World's events and compares them with the stored rows.
import type { Hook, Step, Wait, WorkflowRun } from '@workflow/world';
import type { WorkflowHookRow, WorkflowRunRow, WorkflowStepRow, WorkflowWaitRow } from '../../backend.js';
import { encodeWorkflowEntity } from './codec.js';

const ms = (d: Date | undefined): number => (d instanceof Date ? d.getTime() : 0);

/** The row events.create writes for this entity (its columns, and its body as the codec encodes it). */
export function runRow(run: WorkflowRun): WorkflowRunRow {
  return {
    run_id: run.runId,
    workflow_name: run.workflowName,
    status: run.status,
    created_at: ms(run.createdAt),
    updated_at: ms(run.updatedAt),
    body: encodeWorkflowEntity(run),
  };
}

/** The row events.create writes for this entity (its columns, and its body as the codec encodes it). */
export function stepRow(step: Step): WorkflowStepRow {
  return {
    run_id: step.runId,
    step_id: step.stepId,
    status: step.status,
    created_at: ms(step.createdAt),
    updated_at: ms(step.updatedAt),
    body: encodeWorkflowEntity(step),
  };
}

/** The row events.create writes for this entity (its columns, and its body as the codec encodes it). */
export function hookRow(hook: Hook): WorkflowHookRow {
  return {
    hook_id: hook.hookId,
    run_id: hook.runId,
    token: hook.token,
    created_at: ms(hook.createdAt),
    body: encodeWorkflowEntity(hook),
  };
}

/** A wait's row: keyed by its run and its events' correlationId (the wait's id is `<runId>-<correlationId>`). */
export function waitRow(wait: Wait, correlationId: string): WorkflowWaitRow {
  return {
    run_id: wait.runId,
    correlation_id: correlationId,
    status: wait.status,
    created_at: ms(wait.createdAt),
    updated_at: ms(wait.updatedAt),
    body: encodeWorkflowEntity(wait),
  };
}
