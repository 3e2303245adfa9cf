// JSON Schema (draft 2020-12) of AgentState, kind `agent-run`, Kernel ABI 1.0.0. Shipped as
// schemas/agent-run.schema.json (generated from this object: `npx tsx scripts/gen-schemas.ts`).
// The schema checks structure; the logical rules (evidence, completion, transitions, budgets, locks,
// ambiguities) are enforced by the kind's `check` — see schemas/README.md.

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

const modelFieldsRefused = Object.fromEntries(MODEL_FIELDS.map((f) => [f, { $ref: '#/$defs/model_field' }]));

const id = { type: 'string', minLength: 1, maxLength: 200 };
const text = { type: 'string', minLength: 1 };
const time = { type: 'string', format: 'date-time' };
const idList = { type: 'array', items: { $ref: '#/$defs/id' } };

export const agentRunSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'urn:agentstate:schema:agent-run:1.0.0',
  'x-kernel-abi': '1.0.0',
  title: 'AgentState',
  description:
    'The canonical truth of one agent run (kind `agent-run`). Arrays that are absent are empty. `state_version` is kept equal to the document version by the store.',
  type: 'object',
  required: ['run_id', 'agent', 'status', 'intent'],
  additionalProperties: false,
  properties: {
    run_id: { $ref: '#/$defs/id' },
    agent: { ...text, description: 'The agent (persona) running this run. Not a model: see model_field.' },
    state_version: {
      type: 'integer',
      minimum: 0,
      description: 'Set by the store to the document version on every write; callers cannot forge it.',
    },
    task_ir: {
      type: 'object',
      description: 'The TaskIR document this run executes. Fixed once the run has started.',
      required: ['id'],
      additionalProperties: false,
      properties: {
        id: { $ref: '#/$defs/id' },
        version: {
          type: 'integer',
          minimum: 1,
          description: 'The TaskIR version the run was planned from (informational).',
        },
      },
    },
    status: { enum: [...RUN_STATUSES] },
    status_reason: { type: 'string', description: 'Why the run is blocked, waiting, failed or cancelled.' },
    intent: {
      type: 'object',
      description: 'What the user asked for, in their words.',
      required: ['text'],
      additionalProperties: false,
      properties: { text, source: { type: 'string' }, received_at: time },
    },
    acceptance_criteria: { type: 'array', items: { $ref: '#/$defs/criterion' } },
    constraints: { type: 'array', items: { $ref: '#/$defs/constraint' } },
    environment: {
      type: 'object',
      description: 'Where the run executes (os, runtime, cwd, tool versions …). Never the model.',
      properties: modelFieldsRefused,
    },
    repository: {
      type: 'object',
      additionalProperties: false,
      properties: {
        root: { type: 'string' },
        remote: { type: 'string' },
        branch: { type: 'string' },
        commit: { type: 'string' },
        dirty: { type: 'boolean' },
        changed_files: { type: 'array', items: { type: 'string' } },
      },
    },
    plan: {
      type: 'object',
      description: 'The plan graph and the current position in it.',
      required: ['nodes'],
      additionalProperties: false,
      properties: {
        graph_id: { type: 'string' },
        nodes: {
          type: 'array',
          items: {
            type: 'object',
            required: ['id', 'title', 'status'],
            additionalProperties: false,
            properties: {
              id: { $ref: '#/$defs/id' },
              title: text,
              status: { enum: ['pending', 'in_progress', 'done', 'failed', 'skipped'] },
              depends_on: idList,
            },
          },
        },
        position: {
          anyOf: [{ $ref: '#/$defs/id' }, { type: 'null' }],
          description: 'Id of the current node.',
        },
      },
    },
    hypotheses: {
      type: 'array',
      description:
        'Guesses, kept apart from facts. A hypothesis becomes a fact only by promotion with evidence.',
      items: {
        type: 'object',
        required: ['id', 'statement', 'status'],
        additionalProperties: false,
        properties: {
          id: { $ref: '#/$defs/id' },
          statement: text,
          status: { enum: ['open', 'promoted', 'rejected'] },
          confidence: { type: 'number', minimum: 0, maximum: 1 },
          promoted_to: { $ref: '#/$defs/id', description: 'The fact it became (status promoted).' },
          rejected_reason: { type: 'string' },
        },
      },
    },
    facts: {
      type: 'array',
      description:
        'Established facts. Each cites evidence present in this state; append-only (retract, never edit).',
      items: {
        type: 'object',
        required: ['id', 'statement', 'evidence'],
        additionalProperties: false,
        properties: {
          id: { $ref: '#/$defs/id' },
          statement: text,
          evidence: {
            type: 'array',
            items: { $ref: '#/$defs/evidence' },
            description: 'Non-empty (rule fact-needs-evidence).',
          },
          promoted_from: { $ref: '#/$defs/id', description: 'The hypothesis this fact was promoted from.' },
          recorded_at: time,
          recorded_by: { type: 'string' },
          retracted: {
            type: 'object',
            required: ['reason', 'at', 'by'],
            additionalProperties: false,
            properties: { reason: text, at: time, by: text },
          },
        },
      },
    },
    event_refs: {
      type: 'array',
      description: 'Positions in the instance event log this run relies on (usable as evidence).',
      items: {
        type: 'object',
        required: ['position'],
        additionalProperties: false,
        properties: {
          position: { type: 'integer', minimum: 1 },
          type: { type: 'string' },
          summary: { type: 'string' },
        },
      },
    },
    context: {
      type: 'array',
      description: 'Selected context: what the run chose to look at.',
      items: {
        type: 'object',
        required: ['id', 'source'],
        additionalProperties: false,
        properties: {
          id: { $ref: '#/$defs/id' },
          source: text,
          type: { enum: ['file', 'doc', 'url', 'memory', 'search', 'other'] },
          summary: { type: 'string' },
          hash: { type: 'string' },
        },
      },
    },
    artifacts: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'path'],
        additionalProperties: false,
        properties: {
          id: { $ref: '#/$defs/id' },
          path: text,
          type: { type: 'string' },
          hash: { type: 'string' },
          produced_by: { type: 'string', description: 'Plan node or receipt that produced it.' },
        },
      },
    },
    receipts: {
      type: 'array',
      description: 'Mutation and tool receipts; append-only.',
      items: {
        type: 'object',
        required: ['id', 'type', 'name', 'status', 'at'],
        additionalProperties: false,
        properties: {
          id: { $ref: '#/$defs/id' },
          type: { enum: ['mutation', 'tool'] },
          name: { ...text, description: 'Tool or operation name.' },
          target: { type: 'string' },
          status: { enum: ['ok', 'error'] },
          at: time,
          summary: { type: 'string' },
          output_hash: { type: 'string' },
          event_position: { type: 'integer', minimum: 1 },
        },
      },
    },
    diagnostics: {
      type: 'array',
      items: {
        type: 'object',
        required: ['severity', 'message'],
        additionalProperties: false,
        properties: {
          id: { $ref: '#/$defs/id' },
          severity: { enum: ['error', 'warning', 'info'] },
          message: text,
          source: { type: 'string' },
          location: { type: 'string' },
        },
      },
    },
    verifications: {
      type: 'array',
      description:
        'Verification results; append-only. A later entry with the same `check` (not skipped) supersedes an earlier one.',
      items: {
        type: 'object',
        required: ['id', 'check', 'status', 'at'],
        additionalProperties: false,
        properties: {
          id: { $ref: '#/$defs/id' },
          check: { ...text, description: 'What was verified, e.g. `npm test`.' },
          status: { enum: ['passed', 'failed', 'skipped', 'error'] },
          at: time,
          criteria: { ...idList, description: 'Acceptance criteria ids this verification covers.' },
          details: { type: 'string' },
          event_position: { type: 'integer', minimum: 1 },
        },
      },
    },
    failures: {
      type: 'array',
      description: 'Failures of the run; never removed, only resolved.',
      items: {
        type: 'object',
        required: ['id', 'summary', 'status'],
        additionalProperties: false,
        properties: {
          id: { $ref: '#/$defs/id' },
          summary: text,
          status: { enum: ['unresolved', 'resolved'] },
          source: { type: 'string' },
          since: time,
          resolution: { type: 'string' },
        },
      },
    },
    permissions: {
      type: 'object',
      additionalProperties: false,
      properties: {
        allow: { type: 'array', items: { type: 'string' } },
        deny: { type: 'array', items: { type: 'string' } },
      },
    },
    budgets: {
      type: 'object',
      description: 'Budgets by name (tokens, usd, tool_calls, wall_ms …): limit and spend so far.',
      additionalProperties: {
        type: 'object',
        required: ['limit', 'spent'],
        additionalProperties: false,
        properties: {
          limit: { type: 'number', minimum: 0 },
          spent: { type: 'number', minimum: 0 },
          unit: { type: 'string' },
        },
      },
    },
    subgoals: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'title', 'status'],
        additionalProperties: false,
        properties: {
          id: { $ref: '#/$defs/id' },
          title: text,
          status: { enum: ['pending', 'in_progress', 'done', 'failed', 'cancelled', 'blocked'] },
          parent: { $ref: '#/$defs/id' },
        },
      },
    },
    locks: {
      type: 'array',
      description: 'Locks held by actors on named resources, with expiry.',
      items: {
        type: 'object',
        required: ['resource', 'holder', 'acquired_at', 'expires_at'],
        additionalProperties: false,
        properties: { resource: text, holder: text, acquired_at: time, expires_at: time },
      },
    },
    completion: {
      type: 'object',
      description: 'The explicit record of how the run ended. Required exactly when status is final.',
      required: ['status', 'at', 'by', 'verification_ids'],
      additionalProperties: false,
      properties: {
        status: { enum: ['succeeded', 'failed', 'cancelled'] },
        at: time,
        by: text,
        verification_ids: { ...idList, description: 'The verification results the outcome rests on.' },
        summary: { type: 'string' },
      },
    },
    ...modelFieldsRefused,
  },
  $defs: {
    id,
    criterion: {
      type: 'object',
      required: ['id', 'text'],
      additionalProperties: false,
      properties: { id: { $ref: '#/$defs/id' }, text },
    },
    constraint: {
      type: 'object',
      required: ['id', 'text'],
      additionalProperties: false,
      properties: { id: { $ref: '#/$defs/id' }, text, hard: { type: 'boolean' } },
    },
    evidence: {
      type: 'object',
      description:
        'Exactly one of: a receipt id, a verification result id, or an event position, present in this state.',
      minProperties: 1,
      maxProperties: 1,
      additionalProperties: false,
      properties: {
        receipt: { $ref: '#/$defs/id' },
        verification: { $ref: '#/$defs/id' },
        event: { type: 'integer', minimum: 1 },
      },
    },
    model_field: {
      'x-rule': 'model-changes-are-events',
      description:
        'Refused: loading, swapping or losing a model is an event, never a state change, so AgentState has no field for the current model.',
      not: {},
    },
  },
};
