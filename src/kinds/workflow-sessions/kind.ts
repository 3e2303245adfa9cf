// Kind `workflow-sessions`: the workflow-state skill's `.copilot/state/<workflow>.json`, assembled from its
// schema (./schema.ts), rules (./rules.ts: the skill's rules and gates A–H), file codec (./file.ts) and
// operations (`agentstate session …`, gate and resume_workflow: ./operations.ts); body types: ./model.ts.

import type { KindDefinition } from '../../core/kind.js';
import { checkFileId } from '../file-id.js';
import { sessionsFile } from './file.js';
import { sessionOperations, sessionServiceOperations } from './operations.js';
import { check } from './rules.js';
import { workflowSessionsSchema } from './schema.js';

export const workflowSessionsKind: KindDefinition = {
  name: 'workflow-sessions',
  description:
    'Workflow state file of the workflow-state skill (.copilot/state/<workflow>.json): append-only sessions, todos, decisions, blockers, lessons, delegations, directives.',
  schema: workflowSessionsSchema,
  check,
  checkId: (id) => checkFileId(id, 'workflow-sessions'),
  file: sessionsFile,
  operations: sessionOperations,
  serviceOperations: sessionServiceOperations,
  cli: 'session',
};

export type {
  Blocker,
  Decision,
  Delegation,
  Directive,
  Lesson,
  Session,
  Todo,
  WorkflowSessions,
} from './model.js';
