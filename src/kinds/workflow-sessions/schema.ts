// JSON Schema (draft 2020-12) of a workflow state file of the workflow-state skill, kind
// `workflow-sessions`: `.copilot/state/<workflow>.json` with its multi-session layout (seed:
// workflow-state-skill.md). Shipped as schemas/workflow-sessions.schema.json (generated:
// `npx tsx scripts/gen-schemas.ts`). Field names follow the seed: camelCase for the file and session
// fields (`activeSessionId`, `lessonsLearned`, `appliesTo`, `outputArtifacts`), snake_case inside
// decisions as the seed's decision example writes them (`alternatives_considered`). The schema checks
// structure; append-only sessions, transitions and the gates' invariants are enforced by `check`.

import { closed, idDef, iso8601TimeDef, kindSchema, listOf, ref, text } from '../schema-parts.js';

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
export { ISO_8601_PATTERN } from '../schema-parts.js';

const id = ref('id');
const time = ref('time');
const strings = listOf({ type: 'string' });

export const workflowSessionsSchema = kindSchema({
  kind: 'workflow-sessions',
  title: 'Workflow state (sessions)',
  description:
    'The state file of one workflow (kind `workflow-sessions`), mirrored to .copilot/state/<workflow>.json. Sessions are appended, never overwritten or deleted; at most one is active and activeSessionId names it.',
  required: ['updatedAt', 'activeSessionId', 'sessions'],
  properties: {
    workflow: { ...text, description: 'The workflow name (the file is .copilot/state/<workflow>.json).' },
    createdAt: time,
    updatedAt: { ...time, description: 'Last change to the file (maintained by the kind on every change).' },
    activeSessionId: {
      anyOf: [ref('sessionId'), { type: 'null' }],
      description: 'The active session; null when every session is closed (or before the first one).',
    },
    sessions: listOf(
      ref('session'),
      'Every session ever started, in order; appended, never overwritten or deleted.',
    ),
  },
  $defs: {
    id: idDef,
    time: iso8601TimeDef,
    sessionId: {
      type: 'string',
      pattern: SESSION_ID_PATTERN,
      'x-rule': 'session-id-format',
      description: 'session-1, session-2, … in order.',
    },
    session: closed(['id', 'label', 'status', 'startedAt', 'todos'], {
      id: ref('sessionId'),
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
      todos: listOf(ref('todo'), 'Mirror of manage_todo_list (ids unique).'),
      decisions: listOf(ref('decision'), 'Append-only.'),
      blockers: listOf(ref('blocker')),
      artifacts: { ...strings, description: 'Paths of key artifacts.' },
      lessonsLearned: listOf(ref('lesson'), 'Append-only.'),
      delegations: listOf(
        ref('delegation'),
        'Sub-agent work (Gates F, G): persisted in-progress before the spawn.',
      ),
      directives: listOf(
        ref('directive'),
        'Standing user directives: carried forward from the most recent completed session (Gates D, H) until revoked.',
      ),
    }),
    todo: closed(['id', 'title', 'status'], {
      id: { anyOf: [{ type: 'integer', minimum: 0 }, id] },
      title: text,
      description: { type: 'string' },
      status: { enum: [...TODO_STATUSES] },
    }),
    decision: closed(['type', 'description', 'workaround'], {
      type: { enum: [...DECISION_TYPES] },
      description: text,
      rationale: { type: 'string' },
      alternatives_considered: strings,
      workaround: { type: 'boolean' },
      correct_solution: { ...text, description: 'Workarounds: what the correct solution would be.' },
      why_not_implemented: { ...text, description: "Workarounds: why it couldn't be implemented." },
      revisit_when: { ...text, description: 'Workarounds: what would need to change to revisit.' },
      timestamp: time,
    }),
    blocker: closed(['id', 'description', 'status', 'raisedAt'], {
      id,
      description: text,
      status: { enum: [...BLOCKER_STATUSES], description: 'open → resolved; resolved is final.' },
      raisedAt: time,
      resolvedAt: time,
      resolution: text,
    }),
    lesson: closed(['category', 'summary', 'severity'], {
      category: { enum: [...LESSON_CATEGORIES] },
      summary: text,
      detail: { type: 'string' },
      appliesTo: { ...strings, description: 'Skills or agents that should incorporate this lesson.' },
      severity: { enum: [...LESSON_SEVERITIES] },
      recordedAt: time,
    }),
    delegation: closed(['id', 'agent', 'task', 'status', 'startedAt'], {
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
    }),
    directive: closed(['id', 'text', 'status', 'issuedAt'], {
      id,
      text,
      status: { enum: [...DIRECTIVE_STATUSES], description: 'active → revoked; revoked is final.' },
      issuedAt: time,
      carriedFrom: { ...id, description: 'The session this directive was carried forward from.' },
      revokedAt: time,
      revokedReason: { type: 'string' },
    }),
  },
});
