// Kind `agent-run` (AgentState): the canonical truth of one agent run, assembled from its schema
// (./schema.ts) and rules (./rules.ts); body types: ./model.ts.

import type { KindDefinition } from '../../core/kind.js';
import { check } from './rules.js';
import { agentRunSchema } from './schema.js';

export const agentRunKind: KindDefinition = {
  name: 'agent-run',
  description: 'AgentState: the canonical truth of one agent run.',
  schema: agentRunSchema,
  versionField: 'state_version',
  check,
};
