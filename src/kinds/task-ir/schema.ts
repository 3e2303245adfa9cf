// JSON Schema (draft 2020-12) of TaskIR, kind `task-ir`, Kernel ABI 1.0.0. Shipped as
// schemas/task-ir.schema.json (generated from this object: `npx tsx scripts/gen-schemas.ts`).
// The schema checks structure; ambiguity transitions and escalation are enforced by the kind's `check`.

import { closed, idDef, kindSchema, listOf, ref, text } from '../schema-parts.js';

export const AMBIGUITY_STATUSES = ['open', 'resolved', 'escalated'] as const;
export type AmbiguityStatus = (typeof AMBIGUITY_STATUSES)[number];

const id = ref('id');
const time = { type: 'string', format: 'date-time' };

export const taskIrSchema = kindSchema({
  kind: 'task-ir',
  title: 'TaskIR',
  description:
    'The compiled, typed form of a request (kind `task-ir`). Ambiguity is explicit: an open ambiguity is resolved or escalated to a human, never guessed.',
  required: ['goal', 'acceptance_criteria', 'ambiguities'],
  properties: {
    goal: { ...text, description: 'What the task must achieve, in one statement.' },
    request: { type: 'string', description: 'The request as the caller wrote it.' },
    inputs: listOf(
      closed(['name'], {
        name: text,
        description: { type: 'string' },
        ref: { type: 'string', description: 'Where the input lives (path, url, document id).' },
        value: { description: 'The input value itself, any JSON.' },
      }),
    ),
    constraints: listOf(closed(['id', 'text'], { id, text, hard: { type: 'boolean' } })),
    acceptance_criteria: listOf(closed(['id', 'text'], { id, text })),
    ambiguities: listOf(
      ref('ambiguity'),
      'Transitions: open → resolved | escalated, escalated → resolved; resolved is final.',
    ),
  },
  $defs: {
    id: idDef,
    ambiguity: closed(['id', 'question', 'status'], {
      id,
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
    }),
  },
});
