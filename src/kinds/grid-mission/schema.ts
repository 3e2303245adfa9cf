// JSON Schema (draft 2020-12) of the Grid's `.grid/STATE.md` frontmatter, kind `grid-mission`, Kernel ABI
// 1.0.0. Shipped as schemas/grid-mission.schema.json (generated from this object: `npx tsx
// scripts/gen-schemas.ts`). Every field, default and enum of the seed (grid-state-schema.md §1–§3.1), in
// its snake_case. The identifier and timestamp formats of §3.1 are `pattern`s carrying an `x-rule`
// (`format.session-id` …), so a schema refusal names the same rule the kind's `check` names. Defaults
// (§2.2, §2.3) are `default` annotations; the kind fills them in on every write. The logical rules (§3.2,
// §3.3), the transitions (§7) and the role permissions (§4) are the kind's `check` — see README.md here.

import { closed, kindSchema, listOf, ref, text } from '../schema-parts.js';

export const MISSION_STATUSES = ['planning', 'in_progress', 'blocked', 'complete', 'failed'] as const;
export const MODES = ['autopilot', 'guided', 'hands_on'] as const;
export const PHASE_STATUSES = ['complete', 'in_progress', 'pending'] as const;
export const AGENT_TYPES = ['executor', 'planner', 'scout', 'recognizer', 'memory'] as const;
export const AGENT_RESULTS = ['success', 'failure', 'timeout', 'cancelled'] as const;
export const ARTIFACT_TYPES = ['schema', 'config', 'api', 'component', 'model'] as const;
export const BLOCKER_TYPES = ['missing_credential', 'external_api', 'permission', 'dependency'] as const;
export const WARNING_LEVELS = ['warning', 'info'] as const;

export type MissionStatus = (typeof MISSION_STATUSES)[number];
export type Mode = (typeof MODES)[number];
export type PhaseStatus = (typeof PHASE_STATUSES)[number];
export type AgentType = (typeof AGENT_TYPES)[number];
export type AgentResult = (typeof AGENT_RESULTS)[number];
export type ArtifactType = (typeof ARTIFACT_TYPES)[number];
export type BlockerType = (typeof BLOCKER_TYPES)[number];
export type WarningLevel = (typeof WARNING_LEVELS)[number];

/** The identifier and timestamp formats of §3.1 (VALIDATION_RULES), with the rule each one is named by. */
export const FORMATS = {
  session_id: { pattern: '^sess-\\d{8}T\\d{6}Z?-[a-z0-9]{6}$', rule: 'format.session-id' },
  mission_id: { pattern: '^mission-\\d{8}T\\d{6}Z?-[a-z0-9-]+$', rule: 'format.mission-id' },
  phase_id: { pattern: '^\\d{2}-[a-z0-9-]+$', rule: 'format.phase-id' },
  block_id: { pattern: '^\\d{2}-\\d{2}$', rule: 'format.block-id' },
  decision_id: { pattern: '^dec-\\d{3}$', rule: 'format.decision-id' },
  artifact_id: { pattern: '^art-\\d{3}$', rule: 'format.artifact-id' },
  blocker_id: { pattern: '^blocker-\\d{3}$', rule: 'format.blocker-id' },
  agent_id: { pattern: '^(executor|planner|scout|recognizer|memory)-\\d{3}$', rule: 'format.agent-id' },
  timestamp: {
    pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{3})?Z?$',
    rule: 'format.timestamp',
  },
} as const;
export type FormatName = keyof typeof FORMATS;

/** The enums of §3.1, with the rule each one is named by. */
export const ENUMS = {
  status: { values: MISSION_STATUSES, rule: 'format.status' },
  mode: { values: MODES, rule: 'format.mode' },
  phase_status: { values: PHASE_STATUSES, rule: 'format.phase-status' },
  agent_type: { values: AGENT_TYPES, rule: 'format.agent-type' },
  agent_result: { values: AGENT_RESULTS, rule: 'format.agent-result' },
  artifact_type: { values: ARTIFACT_TYPES, rule: 'format.artifact-type' },
  blocker_type: { values: BLOCKER_TYPES, rule: 'format.blocker-type' },
  warning_level: { values: WARNING_LEVELS, rule: 'format.warning-level' },
} as const;
export type EnumName = keyof typeof ENUMS;

/** The default energy level (§2.2): Tron aesthetic. */
export const DEFAULT_ENERGY = 9000;

const formatDef = (name: FormatName, description: string) => ({
  type: 'string',
  pattern: FORMATS[name].pattern,
  'x-rule': FORMATS[name].rule,
  description,
});
const enumDef = (name: EnumName) => ({ enum: [...ENUMS[name].values], 'x-rule': ENUMS[name].rule });
const refList = (name: string) => listOf(ref(name));
const nullable = (name: string) => ({ anyOf: [ref(name), { type: 'null' }] });
/** An optional part of the file: closed, and empty (`{}`, its fields' defaults) when absent. */
const section = (properties: Record<string, unknown>) => ({
  type: 'object',
  additionalProperties: false,
  default: {},
  properties,
});
const nullableText = { anyOf: [{ type: 'string' }, { type: 'null' }] };
const count = { type: 'integer', minimum: 0 };
const money = { type: 'number', minimum: 0 };

export const gridMissionSchema = kindSchema({
  kind: 'grid-mission',
  title: 'Grid mission state (.grid/STATE.md)',
  description:
    "The YAML frontmatter of The Grid's `.grid/STATE.md` (kind `grid-mission`): the mission's L3 global state. Optional fields take the seed's defaults on every write; `updated_at` is set to the write time by the kind. `markdown_body` is agentstate's addition: the file's Markdown text when a caller supplied it (absent: the Markdown is regenerated from the frontmatter).",
  required: [
    'version',
    'session_id',
    'mission_id',
    'cluster',
    'created_at',
    'updated_at',
    'status',
    'mode',
    'phases',
    'position',
    'progress',
    'resume',
  ],
  properties: {
    // METADATA
    version: {
      ...text,
      description: 'Schema version of the file, e.g. "1.0" (a string, not the document version).',
    },
    session_id: ref('session_id'),
    mission_id: { ...ref('mission_id'), description: 'Fixed for the life of the document.' },
    cluster: { ...text, description: 'User-provided or inferred mission name.' },
    created_at: { ...ref('timestamp'), description: 'Fixed for the life of the document.' },
    updated_at: { ...ref('timestamp'), description: 'Set to the time of the write on every write.' },
    // MISSION STATUS
    status: {
      ...ref('mission_status'),
      description:
        'planning → in_progress; in_progress → blocked | complete | failed; blocked → in_progress | failed; complete and failed are terminal.',
    },
    mode: ref('mode'),
    // PHASE TRACKING
    phases: closed(['total', 'current'], {
      total: { ...count, description: 'Total number of phases.' },
      current: { type: 'integer', minimum: 1, description: 'Current phase number (1-indexed).' },
      completed: { ...refList('phase_id'), default: [], description: 'Completed phase ids, in order.' },
      definitions: { ...refList('phase_definition'), default: [] },
    }),
    // POSITION
    position: closed(['phase', 'block', 'wave', 'thread', 'thread_total'], {
      phase: { type: 'integer', minimum: 1, description: 'Current phase number.' },
      phase_id: ref('phase_id'),
      phase_name: { type: 'string' },
      block: { ...count, description: 'Current block number within the phase.' },
      block_id: ref('block_id'),
      block_name: { type: 'string' },
      wave: { ...count, description: 'Current wave within the block.' },
      thread: { ...count, description: 'Current thread within the wave.' },
      thread_total: { ...count, description: 'Total threads in the current wave.' },
    }),
    // PROGRESS METRICS
    progress: closed([], {
      blocks_complete: { ...count, default: 0 },
      blocks_total: { ...count, default: 0 },
      threads_complete: { ...count, default: 0 },
      threads_total: { ...count, default: 0 },
      percent: { type: 'number', minimum: 0, maximum: 100, default: 0 },
    }),
    // ACTIVE AGENTS REGISTRY
    agents: section({
      active: { ...refList('active_agent'), default: [] },
      completed: { ...refList('completed_agent'), default: [] },
    }),
    // CROSS-PHASE PERSISTENT DATA
    persistent: section({
      decisions: { ...refList('decision'), default: [] },
      artifacts: { ...refList('artifact'), default: [] },
      tech_stack: { ...ref('tech_stack'), default: {} },
    }),
    // RESUME INFORMATION
    resume: closed(['can_resume'], {
      checkpoint_file: {
        ...nullableText,
        default: null,
        description: 'Path to the checkpoint file, or null.',
      },
      last_agent: {
        ...nullableText,
        default: null,
        description: 'Last active agent id (or "mc", Master Control).',
      },
      last_commit: { ...nullableText, default: null, description: 'Git short hash.' },
      can_resume: { type: 'boolean' },
      resume_position: {
        type: 'object',
        required: ['phase', 'block', 'thread'],
        additionalProperties: false,
        default: { phase: 1, block: 1, thread: 1 },
        properties: { phase: count, block: count, thread: count },
      },
    }),
    // BUDGET TRACKING
    budget: section({
      total_cost_usd: { ...money, default: 0 },
      session_cost_usd: { ...money, default: 0 },
      spawns_this_session: { ...count, default: 0 },
    }),
    // WARNINGS AND BLOCKERS
    warnings: { ...refList('warning'), default: [] },
    blockers: { ...refList('blocker'), default: [] },
    // AESTHETIC
    energy: { type: 'integer', default: DEFAULT_ENERGY, description: 'Tron aesthetic energy level.' },
    // agentstate
    markdown_body: {
      type: 'string',
      pattern: '\\S',
      description:
        "The Markdown below the frontmatter, when a caller supplied it (an imported file's own text, or one edited by hand). Absent: the file's Markdown is regenerated from the frontmatter on every export. Only MC (or an owner writing without a role) may write it.",
    },
  },
  $defs: {
    session_id: formatDef('session_id', 'sess-{timestamp}-{random_6char}'),
    mission_id: formatDef('mission_id', 'mission-{timestamp}-{slug}'),
    phase_id: formatDef('phase_id', '{NN}-{slug}, e.g. 01-foundation'),
    block_id: formatDef('block_id', '{NN}-{NN}, e.g. 01-02'),
    decision_id: formatDef('decision_id', 'dec-{NNN}'),
    artifact_id: formatDef('artifact_id', 'art-{NNN}'),
    blocker_id: formatDef('blocker_id', 'blocker-{NNN}'),
    agent_id: formatDef('agent_id', '{type}-{NNN}, e.g. executor-001'),
    timestamp: formatDef(
      'timestamp',
      'ISO 8601: YYYY-MM-DDTHH:MM:SS, optionally .mmm, optionally Z (a time without Z is read as UTC)',
    ),
    mission_status: enumDef('status'),
    mode: enumDef('mode'),
    phase_status: enumDef('phase_status'),
    agent_type: enumDef('agent_type'),
    agent_result: enumDef('agent_result'),
    artifact_type: enumDef('artifact_type'),
    blocker_type: enumDef('blocker_type'),
    warning_level: enumDef('warning_level'),
    phase_definition: closed(['id', 'name', 'status', 'blocks', 'blocks_complete'], {
      id: ref('phase_id'),
      name: text,
      status: {
        ...ref('phase_status'),
        description: 'pending → in_progress | complete; in_progress → complete; complete is final.',
      },
      blocks: count,
      blocks_complete: count,
      started_at: nullable('timestamp'),
      completed_at: nullable('timestamp'),
    }),
    active_agent: closed(['id', 'type', 'spawned_at', 'task', 'phase', 'block', 'last_heartbeat'], {
      id: ref('agent_id'),
      type: ref('agent_type'),
      spawned_at: ref('timestamp'),
      task: text,
      phase: { ...ref('phase_id'), description: 'Phase id the agent is working in.' },
      block: { ...ref('block_id'), description: 'Block id the agent is working on.' },
      last_heartbeat: ref('timestamp'),
    }),
    completed_agent: closed(['id', 'type', 'result', 'duration_seconds'], {
      id: ref('agent_id'),
      type: ref('agent_type'),
      result: ref('agent_result'),
      duration_seconds: count,
    }),
    decision: closed(['id', 'decision', 'phase_decided', 'affects_phases', 'rationale'], {
      id: ref('decision_id'),
      decision: text,
      phase_decided: ref('phase_id'),
      affects_phases: refList('phase_id'),
      rationale: text,
    }),
    artifact: closed(['id', 'type', 'path', 'created_phase', 'used_by_phases'], {
      id: ref('artifact_id'),
      type: ref('artifact_type'),
      path: { ...text, description: 'File path relative to the project root.' },
      created_phase: ref('phase_id'),
      used_by_phases: refList('phase_id'),
    }),
    tech_stack: {
      type: 'object',
      description:
        'runtime, framework, database, orm, auth (e.g. "node-20", "next-14"), packages added during the mission; other string entries are allowed.',
      additionalProperties: { type: 'string' },
      properties: {
        runtime: { type: 'string' },
        framework: { type: 'string' },
        database: { type: 'string' },
        orm: { type: 'string' },
        auth: { type: 'string' },
        added_packages: listOf(
          closed(['name'], { name: text, added_phase: ref('phase_id'), purpose: { type: 'string' } }),
        ),
      },
    },
    warning: closed(['level', 'message', 'source', 'timestamp'], {
      level: ref('warning_level'),
      message: text,
      source: { ...text, description: 'Id of the agent (or "mc") that raised the warning.' },
      timestamp: ref('timestamp'),
    }),
    blocker: closed(['id', 'type', 'description', 'added_at'], {
      id: ref('blocker_id'),
      type: ref('blocker_type'),
      description: text,
      blocking_thread: { type: 'string', description: 'Thread id being blocked.' },
      added_at: ref('timestamp'),
    }),
  },
});
