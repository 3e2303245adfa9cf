// Kind `grid-mission`: The Grid's `.grid/STATE.md` (seed grid-state-schema.md), the mission's global state.
// The body is the YAML frontmatter (plus an optional `markdown_body`); the file codec is ./file.ts and the
// operations (`agentstate grid …`) are ./operations.ts. On every write `check`:
//   1. resolves the writer's Grid role (./permissions.ts: role-less human/system writes are MC's; role-less
//      model/tool writes are refused, rule `role-required`; unknown roles `unknown-role`);
//   2. checks `updated_at` as written (§3.3: a real time, not before `created_at`), then fills in the seed's
//      defaults (§2.2, §2.3) and sets `updated_at` to the time of the write;
//   3. refuses any changed field the role may not write (§4.2, rule `field-permission`, PERMISSION_DENIED);
//   4. enforces identity-immutable, the formats (§3.1, `format.*`), the timestamps (§3.3,
//      `logic.timestamp-valid`, `logic.chronological-order`, `logic.phase-chronology`), the logical rules
//      (§3.2, `logic.*`) and the transitions (§7, `status-transition`, `phase-transition`,
//      `phase-status-transition`: INVALID_TRANSITION).
// Every write appends `grid_state_updated` (§5.1 step 7: the agent, its role and the fields it changed);
// `grid_status_changed` and `grid_phase_advanced` follow when the status or the phase moves.
// See README.md in this folder for the full rule table and the decisions behind it.

import { unescapeSegment } from '../../core/json.js';
import type { CommitContext, CommitEffects, KindDefinition } from '../../core/kind.js';
import type { Json, JsonObject } from '../../core/types.js';
import { checkFileId } from '../file-id.js';
import { changedPaths } from '../rules.js';
import { gridMissionFile } from './file.js';
import { GRID_EVENT_TYPES, GRID_MISSION_KIND } from './names.js';
import { gridOperations } from './operations.js';
import { checkGridPermissions, resolveRole } from './permissions.js';
import { type GridMission, gridMissionSchema } from './schema.js';
import {
  checkFormats,
  checkIdentity,
  checkLogic,
  checkTimestamps,
  checkTransitions,
  checkWrittenUpdatedAt,
  fillDefaults,
  gridTime,
} from './validate.js';

export { GRID_MISSION_KIND } from './names.js';

/**
 * The fields a write changed, as dotted paths at the granularity of the §4.2 permission lists: at most two
 * levels, and never into a list (`position.thread`, `agents.active`, `warnings`). `updated_at` is left out:
 * the kind sets it on every write (the event carries it as `timestamp`).
 */
export function changedFields(prev: JsonObject | null, next: JsonObject): string[] {
  const out = new Set<string>();
  for (const pointer of changedPaths(prev ?? {}, next)) {
    const segs = pointer.split('/').slice(1).map(unescapeSegment);
    const kept: string[] = [];
    for (const seg of segs) {
      if (kept.length === 2 || /^\d+$/.test(seg)) break;
      kept.push(seg);
    }
    const field = kept.join('.');
    if (field !== '' && field !== 'updated_at') out.add(field);
  }
  return [...out];
}

function check(nextBody: JsonObject, prevBody: JsonObject | null, ctx: CommitContext): CommitEffects {
  const role = resolveRole(ctx);
  const written = { updated_at: nextBody.updated_at ?? null, created_at: nextBody.created_at ?? null };
  fillDefaults(nextBody);
  nextBody.updated_at = gridTime(ctx.now);
  const prevFilled = prevBody ? fillDefaults(structuredClone(prevBody)) : null;
  checkGridPermissions(prevFilled, nextBody, role);
  checkWrittenUpdatedAt(written);

  const next = nextBody as unknown as GridMission;
  const prev = prevFilled as unknown as GridMission | null;
  checkIdentity(next, prev);
  checkFormats(next);
  checkTimestamps(next);
  checkLogic(next);
  checkTransitions(next, prev);

  const events: Array<{ type: string; data?: Json }> = [];
  if (prev && prev.status !== next.status) {
    events.push({
      type: 'grid_status_changed',
      data: { mission_id: next.mission_id, from: prev.status, to: next.status, role },
    });
  }
  if (prev && prev.phases.current !== next.phases.current) {
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
  // §5.1 step 7: which agent, as which role, changed which fields; on every write, creation included.
  events.push({
    type: 'grid_state_updated',
    data: {
      mission_id: next.mission_id,
      version: ctx.toVersion,
      agent: ctx.actor,
      agent_type: role,
      fields: changedFields(prevFilled, nextBody),
      timestamp: next.updated_at,
    },
  });
  return { events };
}

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
