// JSON Schema (draft 2020-12) of an AIOS workflow execution state, kind `aios-workflow`: the file
// `.aios/{instance-id}-state.yaml` of Synkra AIOS (seed: aios-workflow-state-schema.md, schema 1.0.0).
// Shipped as schemas/aios-workflow.schema.json (generated: `npx tsx scripts/gen-schemas.ts`).
// The schema checks structure; step, artifact and decision rules are enforced by the kind's `check`.

import { closed, iso8601TimeDef, kindSchema, listOf, ref, text } from '../schema-parts.js';

export const TARGET_CONTEXTS = ['core', 'squad', 'hybrid'] as const;
export type TargetContext = (typeof TARGET_CONTEXTS)[number];

export const WORKFLOW_STATUSES = ['active', 'paused', 'completed', 'aborted'] as const;
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];

export const STEP_STATUSES = ['pending', 'in_progress', 'completed', 'skipped'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

export const ARTIFACT_STATUSES = ['created', 'pending'] as const;
export type ArtifactStatus = (typeof ARTIFACT_STATUSES)[number];

/** The seed's schema version this kind implements. */
export const AIOS_SEED_SCHEMA_VERSION = '1.0.0';

/**
 * Defaults the seed gives to required fields; a file that omits one of them gets the default when parsed.
 * (Optional step fields with defaults — `status: pending`, `optional: false` — are read as their default
 * when absent and never written in for the reader.)
 */
export const AIOS_DEFAULTS = { target_context: 'core', status: 'active', current_step_index: 0 } as const;

/** A name safe in a file name: letters, digits, `.`, `_`, `-`; not starting with a dot or dash. */
export const WORKFLOW_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$';
/** `{workflow_id}-YYYYMMDD-{random}` (the seed's instance id format); the prefix is checked by `check`. */
export const INSTANCE_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]*-[0-9]{8}-[A-Za-z0-9]{1,32}$';
/** ISO-8601 date-time (the seed's `format: iso-8601`). */
export { ISO_8601_PATTERN } from '../schema-parts.js';

const time = ref('time');
const index = { type: 'integer', minimum: 0 };

export const aiosWorkflowSchema = kindSchema({
  kind: 'aios-workflow',
  title: 'AIOS workflow state',
  description:
    'One execution of an AIOS workflow (kind `aios-workflow`), mirrored to .aios/{instance_id}-state.yaml. Implements the AIOS workflow state schema 1.0.0. Step order, step status, artifact and decision rules are enforced by the kind.',
  required: [
    'workflow_id',
    'workflow_name',
    'instance_id',
    'target_context',
    'started_at',
    'updated_at',
    'status',
    'current_step_index',
    'steps',
  ],
  properties: {
    workflow_id: {
      type: 'string',
      pattern: WORKFLOW_ID_PATTERN,
      'x-rule': 'workflow-id-format',
      description: 'ID from the workflow YAML (e.g. greenfield-service).',
    },
    workflow_name: { ...text, description: 'Human-readable workflow name.' },
    instance_id: {
      type: 'string',
      pattern: INSTANCE_ID_PATTERN,
      'x-rule': 'instance-id-format',
      description:
        'Unique execution instance ID: {workflow_id}-YYYYMMDD-{random}, e.g. greenfield-service-20260131-a1b2c3.',
    },
    target_context: {
      enum: [...TARGET_CONTEXTS],
      default: AIOS_DEFAULTS.target_context,
      description: 'Whether the workflow is from AIOS core, a squad, or hybrid (agents from both).',
    },
    squad_name: { ...text, description: 'Squad name; required when target_context is squad or hybrid.' },
    started_at: { ...time, description: 'When the workflow execution started.' },
    updated_at: { ...time, description: 'Last state update (maintained by the kind on every change).' },
    status: {
      enum: [...WORKFLOW_STATUSES],
      default: AIOS_DEFAULTS.status,
      description:
        'Transitions: active → paused | completed | aborted; paused → active | completed | aborted; completed and aborted are final. Completed needs every step completed or skipped.',
    },
    current_phase: { type: 'string', description: 'Name/description of the current phase.' },
    current_step_index: {
      ...index,
      default: AIOS_DEFAULTS.current_step_index,
      description:
        'Zero-based index of the current step: steps before it are completed or skipped, steps after it pending.',
    },
    steps: listOf(
      ref('step'),
      'Mirrors the workflow sequence with execution state; steps[i].step_index is i.',
    ),
    artifacts: listOf(
      ref('artifact'),
      'Global artifact registry tracking all created outputs (names unique).',
    ),
    decisions: listOf(ref('decision'), 'Decision log for audit and continuity (append-only).'),
  },
  $defs: {
    time: iso8601TimeDef,
    step: closed(['step_index'], {
      step_index: { ...index, description: 'Zero-based index in the sequence.' },
      phase: { type: 'string', description: 'Phase name or agent name for this step.' },
      agent: { type: 'string', description: 'Agent responsible for this step.' },
      action: { type: 'string', description: 'What this step does (creates/updates/validates/action).' },
      status: {
        enum: [...STEP_STATUSES],
        default: 'pending',
        description:
          'Transitions: pending → in_progress | skipped; in_progress → completed | skipped; completed and skipped are final. Only optional steps may be skipped.',
      },
      optional: { type: 'boolean', default: false, description: 'Whether this step can be skipped.' },
      started_at: { ...time, description: 'When this step was started (required once in progress).' },
      completed_at: { ...time, description: 'When this step was completed (required once completed).' },
      artifacts_created: {
        type: 'array',
        items: { type: 'string' },
        description: 'Artifacts produced during this step.',
      },
      notes: { type: 'string', description: 'Notes or observations from execution.' },
      session_id: { type: 'string', description: 'Claude Code session ID where this step was executed.' },
    }),
    artifact: closed(['name'], {
      name: { ...text, description: 'Artifact identifier (e.g. project-brief.md).' },
      created_by_step: { ...index, description: 'Step index that created this artifact.' },
      path: { type: 'string', description: 'File path where the artifact is stored.' },
      status: {
        enum: [...ARTIFACT_STATUSES],
        description: 'Whether the artifact has been created (pending → created; created is final).',
      },
    }),
    decision: closed(['step_index', 'decision'], {
      step_index: { ...index, description: 'Step where the decision was made.' },
      decision: { ...text, description: 'What was decided.' },
      rationale: { type: 'string', description: 'Why this decision was made.' },
      timestamp: time,
    }),
  },
});
