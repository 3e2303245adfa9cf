// Kind `grid-mission`: The Grid's `.grid/STATE.md` (seed grid-state-schema.md), the mission's global state.
// The body is the YAML frontmatter (plus an optional `markdown_body`); the file codec is ./file.ts and the
// operations (`agentstate grid …`) are ./operations.ts. On every write `check`:
//   1. resolves the writer's Grid role (./permissions.ts: role-less human/system writes are MC's; role-less
//      model/tool writes are refused, rule `role-required`; unknown roles `unknown-role`);
//   2. fills in the seed's defaults (§2.2, §2.3) and sets `updated_at` to the time of the write;
//   3. refuses any changed field the role may not write (§4.2, rule `field-permission`, PERMISSION_DENIED);
//   4. enforces identity-immutable, the formats (§3.1, `format.*`), the timestamps (§3.3,
//      `logic.timestamp-valid`, `logic.chronological-order`, `logic.phase-chronology`), the logical rules
//      (§3.2, `logic.*`) and the transitions (§7, `status-transition`, `phase-transition`,
//      `phase-status-transition`: INVALID_TRANSITION).
// It appends `grid_status_changed` and `grid_phase_advanced` events when the status or the phase moves.
// See README.md in this folder for the full rule table and the decisions behind it.

import type { CommitContext, CommitEffects, KindDefinition } from '../../core/kind.js';
import type { Json, JsonObject } from '../../core/types.js';
import { checkFileId } from '../file-id.js';
import { gridMissionFile } from './file.js';
import { gridOperations } from './operations.js';
import { checkGridPermissions, resolveRole } from './permissions.js';
import { type GridMission, gridMissionSchema } from './schema.js';
import {
  checkFormats,
  checkIdentity,
  checkLogic,
  checkTimestamps,
  checkTransitions,
  fillDefaults,
  gridTime,
} from './validate.js';

export const GRID_MISSION_KIND = 'grid-mission';

function check(
  nextBody: JsonObject,
  prevBody: JsonObject | null,
  ctx: CommitContext,
): CommitEffects | undefined {
  const role = resolveRole(ctx);
  fillDefaults(nextBody);
  nextBody.updated_at = gridTime(ctx.now);
  const prevFilled = prevBody ? fillDefaults(structuredClone(prevBody)) : null;
  checkGridPermissions(prevFilled, nextBody, role);

  const next = nextBody as unknown as GridMission;
  const prev = prevFilled as unknown as GridMission | null;
  checkIdentity(next, prev);
  checkFormats(next);
  checkTimestamps(next);
  checkLogic(next);
  checkTransitions(next, prev);

  if (!prev) return undefined;
  const events: Array<{ type: string; data?: Json }> = [];
  if (prev.status !== next.status) {
    events.push({
      type: 'grid_status_changed',
      data: { mission_id: next.mission_id, from: prev.status, to: next.status, role },
    });
  }
  if (prev.phases.current !== next.phases.current) {
    events.push({
      type: 'grid_phase_advanced',
      data: {
        mission_id: next.mission_id,
        from: prev.phases.current,
        to: next.phases.current,
        completed: next.phases.completed.slice(prev.phases.completed.length),
        phase_id: next.position.phase_id ?? null,
        role,
      },
    });
  }
  return events.length > 0 ? { events } : undefined;
}

export const gridMissionKind: KindDefinition = {
  name: GRID_MISSION_KIND,
  description:
    "The Grid's .grid/STATE.md: a mission's phases, position, agents, blockers, with per-role write permissions.",
  schema: gridMissionSchema,
  check,
  checkId: (id) => checkFileId(id, GRID_MISSION_KIND),
  file: gridMissionFile,
  operations: gridOperations,
  cli: 'grid',
};
