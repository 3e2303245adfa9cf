// Kind `grid-mission`: The Grid's `.grid/STATE.md`, assembled from its names (./model.ts), schema
// (./schema.ts), rules (./rules.ts: roles, defaults, permissions, formats, transitions and the events of a
// write; see README.md), file codec (./file.ts) and operations (`agentstate grid …`, ./operations.ts).

import type { KindDefinition } from '../../core/kind.js';
import { checkFileId } from '../file-id.js';
import { gridMissionFile } from './file.js';
import { GRID_EVENT_TYPES, GRID_MISSION_KIND } from './model.js';
import { gridOperations } from './operations.js';
import { check } from './rules.js';
import { gridMissionSchema } from './schema.js';

export const gridMissionKind: KindDefinition = {
  name: GRID_MISSION_KIND,
  description:
    "The Grid's .grid/STATE.md: a mission's phases, position, agents, blockers, with per-role write permissions.",
  schema: gridMissionSchema,
  emits: GRID_EVENT_TYPES,
  check,
  checkId: (id) => checkFileId(id, GRID_MISSION_KIND),
  file: gridMissionFile,
  operations: gridOperations,
  cli: 'grid',
};

export { GRID_MISSION_KIND } from './model.js';
