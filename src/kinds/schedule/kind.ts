// Kind `schedule`: a recurring work item, assembled from its schema (./schema.ts) and rules (./rules.ts);
// body types and the due-tick computation: ./model.ts; its service operations: ./operations.ts.

import type { KindDefinition } from '../../core/kind.js';
import { scheduleServiceOperations } from './operations.js';
import { check } from './rules.js';
import { scheduleSchema } from './schema.js';

export const scheduleKind: KindDefinition = {
  name: 'schedule',
  description:
    'A recurring work item: a cron expression and the item each tick enqueues, exactly once per tick.',
  schema: scheduleSchema,
  check,
  serviceOperations: scheduleServiceOperations,
};
