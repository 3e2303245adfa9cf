// JSON Schema (draft 2020-12) of a workflow state file of the workflow-state skill, kind
// `workflow-sessions`: `.copilot/state/<workflow>.json` with its multi-session layout (seed:
// workflow-state-skill.md). Shipped as schemas/workflow-sessions.schema.json (generated:
// `npx tsx scripts/gen-schemas.ts`). Field names follow the seed: camelCase for the file and session
// fields (`activeSessionId`, `lessonsLearned`, `appliesTo`, `outputArtifacts`), snake_case inside
// decisions as the seed's decision example writes them (`alternatives_considered`). The schema checks
// structure; append-only sessions, transitions and the gates' invariants are enforced by `check`.

export const SESSION_STATUSES = ['active', 'completed', 'abandoned'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** The statuses of VS Code's manage_todo_list, which the todos mirror. */
export const TODO_STATUSES = ['not-started', 'in-progress', 'completed'] as const;
export type TodoStatus = (typeof TODO_STATUSES)[number];

export const DECISION_TYPES = [
  'architecture',
  'workaround',
  'platform-limitation',
  'user-requirement',
] as const;
export type DecisionType = (typeof DECISION_TYPES)[number];

export const LESSON_CATEGORIES = [
  'platform-quirk',
  'tool-limitation',
  'pattern-that-worked',
  'pattern-to-avoid',
  'performance',
  'security',
  'ux-insight',
  'process',
] as const;
export type LessonCategory = (typeof LESSON_CATEGORIES)[number];

/** low: nice to know; medium: saves time next run; high: would cause bugs or failure if ignored. */
export const LESSON_SEVERITIES = ['low', 'medium', 'high'] as const;
export type LessonSeverity = (typeof LESSON_SEVERITIES)[number];

export const BLOCKER_STATUSES = ['open', 'resolved'] as const;
export const DELEGATION_STATUSES = ['in-progress', 'completed', 'failed'] as const;
export type DelegationStatus = (typeof DELEGATION_STATUSES)[number];
export const DIRECTIVE_STATUSES = ['active', 'revoked'] as const;

/** `session-<n>`: the n-th session of the file (sequential, from 1). */
export const SESSION_ID_PATTERN = '^session-[1-9][0-9]*$';
/** ISO-8601 date-time: date, `T`, time, optional fraction and offset. */
export const ISO_8601_PATTERN =
  '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,9})?)?(Z|[+-][0-9]{2}:?[0-9]{2})?$';

const text = { type: 'string', minLength: 1 };
const id = { $ref: '#/$defs/id' };
const time = { $ref: '#/$defs/time' };
const strings = { type: 'array', items: { type: 'string' } };

export const workflowSessionsSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'urn:agentstate:schema:workflow-sessions:1.0.0',
  'x-kernel-abi': '1.0.0',
  title: 'Workflow state (sessions)',
  description:
    'The state file of one workflow (kind `workflow-sessions`), mirrored to .copilot/state/<workflow>.json. Sessions are appended, never overwritten or deleted; at most one is active and activeSessionId names it.',
  type: 'object',
  required: ['updatedAt', 'activeSessionId', 'sessions'],
  additionalProperties: false,
  properties: {
    workflow: { ...text, description: 'The workflow name (the file is .copilot/state/<workflow>.json).' },
    createdAt: time,
    updatedAt: { ...time, description: 'Last change to the file (maintained by the kind on every change).' },
    activeSessionId: {
      anyOf: [{ $ref: '#/$defs/sessionId' }, { type: 'null' }],
      description: 'The active session; null when every session is closed (or before the first one).',
    },
    sessions: {
      type: 'array',
      description: 'Every session ever started, in order; appended, never overwritten or deleted.',
      items: { $ref: '#/$defs/session' },
    },
  },
  $defs: {
    id: { type: 'string', minLength: 1, maxLength: 200 },
    time: {
      type: 'string',
      pattern: ISO_8601_PATTERN,
      'x-rule': 'iso-8601',
      description: 'ISO-8601 date-time, e.g. 2026-01-31T10:00:00Z.',
    },
    sessionId: {
      type: 'string',
      pattern: SESSION_ID_PATTERN,
      'x-rule': 'session-id-format',
      description: 'session-1, session-2, … in order.',
    },
    session: {
      type: 'object',
      required: ['id', 'label', 'status', 'startedAt', 'todos'],
      additionalProperties: false,
      properties: {
        id: { $ref: '#/$defs/sessionId' },
        label: { ...text, description: 'Human-readable label of the task.' },
        status: {
          enum: [...SESSION_STATUSES],
          description:
            'active → completed | abandoned; a closed session is final and frozen (never rewritten).',
        },
        startedAt: time,
        updatedAt: { ...time, description: 'Last change to this session (maintained by the kind).' },
        endedAt: { ...time, description: 'When the session was completed or abandoned (required then).' },
        summary: { type: 'string', description: 'What the session achieved, or why it was abandoned.' },
        currentPhase: { anyOf: [{ type: 'string' }, { type: 'null' }] },
        todos: {
          type: 'array',
          description: 'Mirror of manage_todo_list (ids unique).',
          items: { $ref: '#/$defs/todo' },
        },
        decisions: { type: 'array', description: 'Append-only.', items: { $ref: '#/$defs/decision' } },
        blockers: { type: 'array', items: { $ref: '#/$defs/blocker' } },
        artifacts: { ...strings, description: 'Paths of key artifacts.' },
        lessonsLearned: {
          type: 'array',
          description: 'Append-only.',
          items: { $ref: '#/$defs/lesson' },
        },
        delegations: {
          type: 'array',
          description: 'Sub-agent work (Gates F, G): persisted in-progress before the spawn.',
          items: { $ref: '#/$defs/delegation' },
        },
        directives: {
          type: 'array',
          description:
            'Standing user directives: carried forward from the most recent completed session (Gates D, H) until revoked.',
          items: { $ref: '#/$defs/directive' },
        },
      },
    },
    todo: {
      type: 'object',
      required: ['id', 'title', 'status'],
      additionalProperties: false,
      properties: {
        id: { anyOf: [{ type: 'integer', minimum: 0 }, id] },
        title: text,
        description: { type: 'string' },
        status: { enum: [...TODO_STATUSES] },
      },
    },
    decision: {
      type: 'object',
      required: ['type', 'description', 'workaround'],
      additionalProperties: false,
      properties: {
        type: { enum: [...DECISION_TYPES] },
        description: text,
        rationale: { type: 'string' },
        alternatives_considered: strings,
        workaround: { type: 'boolean' },
        correct_solution: { ...text, description: 'Workarounds: what the correct solution would be.' },
        why_not_implemented: { ...text, description: "Workarounds: why it couldn't be implemented." },
        revisit_when: { ...text, description: 'Workarounds: what would need to change to revisit.' },
        timestamp: time,
      },
    },
    blocker: {
      type: 'object',
      required: ['id', 'description', 'status', 'raisedAt'],
      additionalProperties: false,
      properties: {
        id,
        description: text,
        status: { enum: [...BLOCKER_STATUSES], description: 'open → resolved; resolved is final.' },
        raisedAt: time,
        resolvedAt: time,
        resolution: text,
      },
    },
    lesson: {
      type: 'object',
      required: ['category', 'summary', 'severity'],
      additionalProperties: false,
      properties: {
        category: { enum: [...LESSON_CATEGORIES] },
        summary: text,
        detail: { type: 'string' },
        appliesTo: { ...strings, description: 'Skills or agents that should incorporate this lesson.' },
        severity: { enum: [...LESSON_SEVERITIES] },
        recordedAt: time,
      },
    },
    delegation: {
      type: 'object',
      required: ['id', 'agent', 'task', 'status', 'startedAt'],
      additionalProperties: false,
      properties: {
        id,
        agent: text,
        task: text,
        status: {
          enum: [...DELEGATION_STATUSES],
          description: 'in-progress → completed | failed; completed and failed are final.',
        },
        startedAt: time,
        completedAt: time,
        resultSummary: text,
        outputArtifacts: strings,
      },
    },
    directive: {
      type: 'object',
      required: ['id', 'text', 'status', 'issuedAt'],
      additionalProperties: false,
      properties: {
        id,
        text,
        status: { enum: [...DIRECTIVE_STATUSES], description: 'active → revoked; revoked is final.' },
        issuedAt: time,
        carriedFrom: { ...id, description: 'The session this directive was carried forward from.' },
        revokedAt: time,
        revokedReason: { type: 'string' },
      },
    },
  },
};
