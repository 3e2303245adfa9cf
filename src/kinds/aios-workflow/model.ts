// Types and tables of kind `aios-workflow`, shared by its rules, operations and file codec.
import type { TransitionTable } from '../rules.js';
import type { ArtifactStatus, StepStatus, TargetContext, WorkflowStatus } from './schema.js';

// ---------------------------------------------------------------------------------------------------
// Body types (what the schema admits)

export interface AiosStep {
  step_index: number;
  phase?: string;
  agent?: string;
  action?: string;
  /** @default 'pending' */
  status?: StepStatus;
  /** @default false */
  optional?: boolean;
  started_at?: string;
  completed_at?: string;
  artifacts_created?: string[];
  notes?: string;
  session_id?: string;
}
export interface AiosArtifact {
  name: string;
  created_by_step?: number;
  path?: string;
  status?: ArtifactStatus;
}
export interface AiosDecision {
  step_index: number;
  decision: string;
  rationale?: string;
  timestamp?: string;
}
/** An AIOS workflow state as stored (the typed view of a validated `aios-workflow` body). */
export interface AiosWorkflow {
  workflow_id: string;
  workflow_name: string;
  instance_id: string;
  target_context: TargetContext;
  squad_name?: string;
  started_at: string;
  updated_at: string;
  status: WorkflowStatus;
  current_phase?: string;
  current_step_index: number;
  steps: AiosStep[];
  artifacts?: AiosArtifact[];
  decisions?: AiosDecision[];
}

// ---------------------------------------------------------------------------------------------------
// Transitions

/** active → paused | completed | aborted; paused → active | completed | aborted; completed, aborted final. */
export const WORKFLOW_TRANSITIONS: TransitionTable = {
  active: ['paused', 'completed', 'aborted'],
  paused: ['active', 'completed', 'aborted'],
  completed: [],
  aborted: [],
};
/** pending → in_progress | skipped; in_progress → completed | skipped; completed, skipped final. */
export const STEP_TRANSITIONS: TransitionTable = {
  pending: ['in_progress', 'skipped'],
  in_progress: ['completed', 'skipped'],
  completed: [],
  skipped: [],
};
export const ARTIFACT_TRANSITIONS: TransitionTable = { pending: ['created'], created: [] };

export const stepStatus = (s: AiosStep): StepStatus => s.status ?? 'pending';
export const isDone = (s: AiosStep): boolean => stepStatus(s) === 'completed' || stepStatus(s) === 'skipped';

export { isoTime } from '../../core/time.js';
