// Who may write which fields of `.grid/STATE.md` (seed §4). The field lists are §4.2's AGENT_PERMISSIONS,
// verbatim; §4.1's coarse table is kept as data too (the tests check the two agree). A write is compared
// with the version it replaces field by field (JSON pointers), so a role is refused only for what it
// actually changes — unlike the seed's flatten_keys, which would refuse an executor's
// `{resume: {last_agent}}` update for naming the parent key `resume`.
//
// Roles are the seed's lowercase names (`mc`, `executor`, `planner`, `recognizer`, `scout`, `memory`);
// `MC`, `Executor` … are accepted and lowercased. A write without a role:
//   - by a human or the system (actor_kind `human` / `system`, the store's default) is Master Control's:
//     MC is the owner's orchestrator, the seed grants it `*`, and the writers without a role are the
//     owner's side — creating the mission, importing a hand-edited STATE.md, recovering a corrupted file
//     (§9.2);
//   - by a model or a tool (an agent) is refused (PERMISSION_DENIED, rule `role-required`): an agent must
//     say which Grid role it writes as, or the matrix would be bypassed by leaving the role out.

import type { CommitContext } from '../../core/kind.js';
import type { JsonObject } from '../../core/types.js';
import { PermissionDeniedError } from '../../errors.js';
import { forbiddenChanges, type PermissionMatrix } from '../rules.js';

export const GRID_ROLES = ['mc', 'executor', 'planner', 'recognizer', 'scout', 'memory'] as const;
export type GridRole = (typeof GRID_ROLES)[number];

/** §4.2 AGENT_PERMISSIONS `write` lists, verbatim (dotted paths; a path covers everything inside it). */
export const GRID_PERMISSIONS = {
  mc: '*',
  executor: [
    'position',
    'agents.active',
    'agents.completed',
    'warnings',
    'resume.last_agent',
    'resume.last_commit',
    'updated_at',
  ],
  planner: ['phases.definitions', 'position', 'persistent.decisions', 'warnings', 'updated_at'],
  recognizer: ['warnings', 'blockers', 'updated_at'],
  scout: [],
  memory: ['persistent.decisions', 'persistent.artifacts', 'persistent.tech_stack', 'updated_at'],
} as const satisfies PermissionMatrix;

/** §4.1's permission matrix (YES / NO / the planner's "YES (decisions only)"), by column. */
export const GRID_PERMISSION_TABLE = {
  columns: ['position', 'agents', 'persistent', 'warnings', 'blockers', 'status'],
  rows: {
    mc: ['YES', 'YES', 'YES', 'YES', 'YES', 'YES'],
    executor: ['YES', 'YES', 'NO', 'YES', 'NO', 'NO'],
    planner: ['YES', 'NO', 'YES (decisions only)', 'YES', 'NO', 'NO'],
    recognizer: ['NO', 'NO', 'NO', 'YES', 'YES', 'NO'],
    scout: ['NO', 'NO', 'NO', 'NO', 'NO', 'NO'],
    memory: ['NO', 'NO', 'YES', 'NO', 'NO', 'NO'],
  },
} as const;

/** Actor kinds whose role-less writes count as Master Control's. */
export const OWNER_ACTOR_KINDS = ['human', 'system'] as const;

/**
 * The Grid role a write is made as: ctx.role lowercased; for a role-less write, `mc` when the writer is a
 * human or the system, else PERMISSION_DENIED (`role-required`). An unknown role is PERMISSION_DENIED
 * (`unknown-role`).
 */
export function resolveRole(ctx: Pick<CommitContext, 'role' | 'actor' | 'actor_kind'>): GridRole {
  if (ctx.role === null || ctx.role === '') {
    if ((OWNER_ACTOR_KINDS as readonly string[]).includes(ctx.actor_kind)) return 'mc';
    throw new PermissionDeniedError(
      `${ctx.actor_kind} ${JSON.stringify(ctx.actor)} must name its Grid role (${GRID_ROLES.join(', ')}) to write STATE.md`,
      { pointer: '/', rule: 'role-required', role: null, actor_kind: ctx.actor_kind, roles: [...GRID_ROLES] },
    );
  }
  const role = ctx.role.toLowerCase();
  if (!(GRID_ROLES as readonly string[]).includes(role)) {
    throw new PermissionDeniedError(
      `unknown Grid role ${JSON.stringify(ctx.role)}; roles: ${GRID_ROLES.join(', ')}`,
      { pointer: '/', rule: 'unknown-role', role: ctx.role, roles: [...GRID_ROLES] },
    );
  }
  return role as GridRole;
}

/**
 * Throws PERMISSION_DENIED (details: pointer, rule `field-permission`, role, fields, allowed) at the first
 * changed field `role` may not write. `updated_at` is maintained on every write, so a role whose list
 * lacks it (scout) may write nothing at all.
 */
export function checkGridPermissions(prev: JsonObject | null, next: JsonObject, role: GridRole): void {
  const grant: '*' | readonly string[] = GRID_PERMISSIONS[role];
  if (grant === '*') return;
  const bad = forbiddenChanges(prev, next, { role, matrix: GRID_PERMISSIONS, ignore: ['updated_at'] });
  if (!grant.includes('updated_at')) bad.push('/updated_at');
  const first = bad[0];
  if (first === undefined) return;
  const allowed = grant.length > 0 ? grant.join(', ') : 'nothing';
  throw new PermissionDeniedError(
    `role ${JSON.stringify(role)} may not write ${first || 'the document'} (it may write: ${allowed})`,
    { pointer: first || '/', rule: 'field-permission', role, fields: bad, allowed: [...grant] },
  );
}
