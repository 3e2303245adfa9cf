// Kind `aios-workflow`: AIOS workflow execution state (`.aios/<instance-id>-state.yaml`), assembled from
// its schema (./schema.ts), rules (./rules.ts), file codec (./file.ts) and operations (`agentstate aios …`,
// ./operations.ts); body types: ./model.ts.

import type { KindDefinition } from '../../core/kind.js';
import { checkFileId } from '../file-id.js';
import { aiosFile } from './file.js';
import { aiosOperations } from './operations.js';
import { check } from './rules.js';
import { aiosWorkflowSchema } from './schema.js';

export const aiosWorkflowKind: KindDefinition = {
  name: 'aios-workflow',
  description: 'AIOS workflow execution state (.aios/{instance-id}-state.yaml): steps, artifacts, decisions.',
  schema: aiosWorkflowSchema,
  check,
  checkId: (id) => checkFileId(id, 'aios-workflow'),
  file: aiosFile,
  operations: aiosOperations,
  cli: 'aios',
};

export type { AiosArtifact, AiosDecision, AiosStep, AiosWorkflow } from './model.js';
export { STEP_TRANSITIONS, WORKFLOW_TRANSITIONS } from './model.js';
