// Kind `task-ir` (TaskIR): the compiled task with explicit ambiguities, assembled from its schema
// (./schema.ts), rules (./rules.ts) and operations (`escalate`, ./operations.ts); body types: ./model.ts.

import type { KindDefinition } from '../../core/kind.js';
import { taskIrOperations, taskIrServiceOperations } from './operations.js';
import { check, onWorkItemResolved } from './rules.js';
import { taskIrSchema } from './schema.js';

export const taskIrKind: KindDefinition = {
  name: 'task-ir',
  description: 'TaskIR: the compiled task with explicit ambiguities.',
  schema: taskIrSchema,
  check,
  onWorkItemResolved,
  operations: taskIrOperations,
  serviceOperations: taskIrServiceOperations,
};

export type { Ambiguity, TaskIr } from './model.js';
