// JSON Schema (draft 2020-12) of TaskIR, kind `task-ir`, Kernel ABI 1.0.0. Shipped as
// schemas/task-ir.schema.json (generated from this object: `npx tsx scripts/gen-schemas.ts`).
// The schema checks structure; ambiguity transitions and escalation are enforced by the kind's `check`.

export const AMBIGUITY_STATUSES = ['open', 'resolved', 'escalated'] as const;
export type AmbiguityStatus = (typeof AMBIGUITY_STATUSES)[number];

const id = { type: 'string', minLength: 1, maxLength: 200 };
const text = { type: 'string', minLength: 1 };
const time = { type: 'string', format: 'date-time' };

export const taskIrSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'urn:agentstate:schema:task-ir:1.0.0',
  'x-kernel-abi': '1.0.0',
  title: 'TaskIR',
  description:
    'The compiled, typed form of a request (kind `task-ir`). Ambiguity is explicit: an open ambiguity is resolved or escalated to a human, never guessed.',
  type: 'object',
  required: ['goal', 'acceptance_criteria', 'ambiguities'],
  additionalProperties: false,
  properties: {
    goal: { ...text, description: 'What the task must achieve, in one statement.' },
    request: { type: 'string', description: 'The request as the caller wrote it.' },
    inputs: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name'],
        additionalProperties: false,
        properties: {
          name: text,
          description: { type: 'string' },
          ref: { type: 'string', description: 'Where the input lives (path, url, document id).' },
          value: { description: 'The input value itself, any JSON.' },
        },
      },
    },
    constraints: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'text'],
        additionalProperties: false,
        properties: { id: { $ref: '#/$defs/id' }, text, hard: { type: 'boolean' } },
      },
    },
    acceptance_criteria: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'text'],
        additionalProperties: false,
        properties: { id: { $ref: '#/$defs/id' }, text },
      },
    },
    ambiguities: {
      type: 'array',
      description: 'Transitions: open → resolved | escalated, escalated → resolved; resolved is final.',
      items: { $ref: '#/$defs/ambiguity' },
    },
  },
  $defs: {
    id,
    ambiguity: {
      type: 'object',
      required: ['id', 'question', 'status'],
      additionalProperties: false,
      properties: {
        id: { $ref: '#/$defs/id' },
        question: text,
        status: { enum: [...AMBIGUITY_STATUSES] },
        options: { type: 'array', items: { type: 'string' }, description: 'Candidate answers, if known.' },
        resolution: { description: 'The answer (any JSON but null); required when resolved.' },
        resolved_by: { type: 'string' },
        resolved_at: time,
        escalation_work_item_id: {
          type: 'string',
          description:
            'The waiting_human work item asking a human (idempotency key task-ir:<doc id>:<ambiguity id>).',
        },
      },
    },
  },
};
