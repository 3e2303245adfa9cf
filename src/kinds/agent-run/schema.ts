// JSON Schema (draft 2020-12) of AgentState, kind `agent-run`, Kernel ABI 1.0.0. Shipped as
// schemas/agent-run.schema.json (generated from this object: `npx tsx scripts/gen-schemas.ts`).
// The schema checks structure; the logical rules (evidence, completion, transitions, budgets, locks,
// ambiguities) are enforced by the kind's `check` — see schemas/README.md.

import { closed, idDef, kindSchema, listOf, ref, text } from '../schema-parts.js';

/** Field names that would hold the current model. Model changes are events, never state. */
export const MODEL_FIELDS = [
  'model',
  'current_model',
  'active_model',
  'loaded_model',
  'model_id',
  'model_name',
] as const;

export const RUN_STATUSES = [
  'created',
  'running',
  'blocked',
  'waiting',
  'succeeded',
  'failed',
  'cancelled',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

const modelFieldsRefused = Object.fromEntries(MODEL_FIELDS.map((f) => [f, ref('model_field')]));

const id = ref('id');
const time = { type: 'string', format: 'date-time' };
const idList = listOf(id);
const strings = listOf({ type: 'string' });
const eventPosition = { type: 'integer', minimum: 1 };
/** A list of records: closed objects whose first property is their `id`. */
const records = (required: string[], properties: Record<string, unknown>, description?: string) =>
  listOf(closed(required, { id, ...properties }), description);

export const agentRunSchema = kindSchema({
  kind: 'agent-run',
  title: 'AgentState',
  description:
    'The canonical truth of one agent run (kind `agent-run`). Arrays that are absent are empty. `state_version` is kept equal to the document version by the store.',
  required: ['run_id', 'agent', 'status', 'intent'],
  properties: {
    run_id: id,
    agent: { ...text, description: 'The agent (persona) running this run. Not a model: see model_field.' },
    state_version: {
      type: 'integer',
      minimum: 0,
      description: 'Set by the store to the document version on every write; callers cannot forge it.',
    },
    task_ir: closed(
      ['id'],
      {
        id,
        version: {
          type: 'integer',
          minimum: 1,
          description: 'The TaskIR version the run was planned from (informational).',
        },
      },
      'The TaskIR document this run executes. Fixed once the run has started.',
    ),
    status: { enum: [...RUN_STATUSES] },
    status_reason: { type: 'string', description: 'Why the run is blocked, waiting, failed or cancelled.' },
    intent: closed(
      ['text'],
      { text, source: { type: 'string' }, received_at: time },
      'What the user asked for, in their words.',
    ),
    acceptance_criteria: listOf(ref('criterion')),
    constraints: listOf(ref('constraint')),
    environment: {
      type: 'object',
      description: 'Where the run executes (os, runtime, cwd, tool versions …). Never the model.',
      properties: modelFieldsRefused,
    },
    repository: closed([], {
      root: { type: 'string' },
      remote: { type: 'string' },
      branch: { type: 'string' },
      commit: { type: 'string' },
      dirty: { type: 'boolean' },
      changed_files: strings,
    }),
    plan: closed(
      ['nodes'],
      {
        graph_id: { type: 'string' },
        nodes: records(['id', 'title', 'status'], {
          title: text,
          status: { enum: ['pending', 'in_progress', 'done', 'failed', 'skipped'] },
          depends_on: idList,
        }),
        position: { anyOf: [id, { type: 'null' }], description: 'Id of the current node.' },
      },
      'The plan graph and the current position in it.',
    ),
    hypotheses: records(
      ['id', 'statement', 'status'],
      {
        statement: text,
        status: { enum: ['open', 'promoted', 'rejected'] },
        confidence: { type: 'number', minimum: 0, maximum: 1 },
        promoted_to: { ...id, description: 'The fact it became (status promoted).' },
        rejected_reason: { type: 'string' },
      },
      'Guesses, kept apart from facts. A hypothesis becomes a fact only by promotion with evidence.',
    ),
    facts: records(
      ['id', 'statement', 'evidence'],
      {
        statement: text,
        evidence: { ...listOf(ref('evidence')), description: 'Non-empty (rule fact-needs-evidence).' },
        promoted_from: { ...id, description: 'The hypothesis this fact was promoted from.' },
        recorded_at: time,
        recorded_by: { type: 'string' },
        retracted: closed(['reason', 'at', 'by'], { reason: text, at: time, by: text }),
      },
      'Established facts. Each cites evidence present in this state; append-only (retract, never edit).',
    ),
    event_refs: listOf(
      closed(['position'], {
        position: eventPosition,
        type: { type: 'string' },
        summary: { type: 'string' },
      }),
      'Positions in the instance event log this run relies on (usable as evidence).',
    ),
    context: records(
      ['id', 'source'],
      {
        source: text,
        type: { enum: ['file', 'doc', 'url', 'memory', 'search', 'other'] },
        summary: { type: 'string' },
        hash: { type: 'string' },
      },
      'Selected context: what the run chose to look at.',
    ),
    artifacts: records(['id', 'path'], {
      path: text,
      type: { type: 'string' },
      hash: { type: 'string' },
      produced_by: { type: 'string', description: 'Plan node or receipt that produced it.' },
    }),
    receipts: records(
      ['id', 'type', 'name', 'status', 'at'],
      {
        type: { enum: ['mutation', 'tool'] },
        name: { ...text, description: 'Tool or operation name.' },
        target: { type: 'string' },
        status: { enum: ['ok', 'error'] },
        at: time,
        summary: { type: 'string' },
        output_hash: { type: 'string' },
        event_position: eventPosition,
      },
      'Mutation and tool receipts; append-only.',
    ),
    diagnostics: records(['severity', 'message'], {
      severity: { enum: ['error', 'warning', 'info'] },
      message: text,
      source: { type: 'string' },
      location: { type: 'string' },
    }),
    verifications: records(
      ['id', 'check', 'status', 'at'],
      {
        check: { ...text, description: 'What was verified, e.g. `npm test`.' },
        status: { enum: ['passed', 'failed', 'skipped', 'error'] },
        at: time,
        criteria: { ...idList, description: 'Acceptance criteria ids this verification covers.' },
        details: { type: 'string' },
        event_position: eventPosition,
      },
      'Verification results; append-only. A later entry with the same `check` (not skipped) supersedes an earlier one.',
    ),
    failures: records(
      ['id', 'summary', 'status'],
      {
        summary: text,
        status: { enum: ['unresolved', 'resolved'] },
        source: { type: 'string' },
        since: time,
        resolution: { type: 'string' },
      },
      'Failures of the run; never removed, only resolved.',
    ),
    permissions: closed([], { allow: strings, deny: strings }),
    budgets: {
      type: 'object',
      description: 'Budgets by name (tokens, usd, tool_calls, wall_ms …): limit and spend so far.',
      additionalProperties: closed(['limit', 'spent'], {
        limit: { type: 'number', minimum: 0 },
        spent: { type: 'number', minimum: 0 },
        unit: { type: 'string' },
      }),
    },
    subgoals: records(['id', 'title', 'status'], {
      title: text,
      status: { enum: ['pending', 'in_progress', 'done', 'failed', 'cancelled', 'blocked'] },
      parent: id,
    }),
    locks: listOf(
      closed(['resource', 'holder', 'acquired_at', 'expires_at'], {
        resource: text,
        holder: text,
        acquired_at: time,
        expires_at: time,
      }),
      'Locks held by actors on named resources, with expiry.',
    ),
    completion: closed(
      ['status', 'at', 'by', 'verification_ids'],
      {
        status: { enum: ['succeeded', 'failed', 'cancelled'] },
        at: time,
        by: text,
        verification_ids: { ...idList, description: 'The verification results the outcome rests on.' },
        summary: { type: 'string' },
      },
      'The explicit record of how the run ended. Required exactly when status is final.',
    ),
    ...modelFieldsRefused,
  },
  $defs: {
    id: idDef,
    criterion: closed(['id', 'text'], { id, text }),
    constraint: closed(['id', 'text'], { id, text, hard: { type: 'boolean' } }),
    evidence: {
      type: 'object',
      description:
        'Exactly one of: a receipt id, a verification result id, or an event position, present in this state.',
      minProperties: 1,
      maxProperties: 1,
      additionalProperties: false,
      properties: { receipt: id, verification: id, event: eventPosition },
    },
    model_field: {
      'x-rule': 'model-changes-are-events',
      description:
        'Refused: loading, swapping or losing a model is an event, never a state change, so AgentState has no field for the current model.',
      not: {},
    },
  },
});
