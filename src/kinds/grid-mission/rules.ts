// The rules of `.grid/STATE.md` (seed §3 and §7), each refusal naming the JSON pointer and the rule:
//   format.*  (§3.1)  identifier patterns, timestamps and enums        VALIDATION_FAILED
//   logic.*   (§3.2)  phase / position / progress / agents / resume    VALIDATION_FAILED
//   logic.*   (§3.3)  timestamps valid and in chronological order      VALIDATION_FAILED
//   status-transition, phase-transition, phase-status-transition (§7)  INVALID_TRANSITION
//   identity-immutable, logic.unique-ids (agentstate's own)            VALIDATION_FAILED
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

import { unescapeSegment } from '../../core/json.js';
import type { CommitContext, CommitEffects } from '../../core/kind.js';
import { isoTime as gridTime } from '../../core/time.js';
import type { Json, JsonObject } from '../../core/types.js';
import { InvalidTransitionError, PermissionDeniedError } from '../../errors.js';
import {
  changedPaths,
  checkTransition,
  checkUniqueIds,
  fail,
  forbiddenChanges,
  indexBy,
  isPlainObject,
  type PermissionMatrix,
  ptr,
  type TransitionTable,
} from '../rules.js';
import type { GridMission } from './model.js';
import { ENUMS, type EnumName, FORMATS, type FormatName, gridMissionSchema } from './schema.js';

// Kind `grid-mission`: The Grid's `.grid/STATE.md` (seed grid-state-schema.md), the mission's global state.
// The body is the YAML frontmatter (plus an optional `markdown_body`); the file codec is ./file.ts and the
// operations (`agentstate grid …`) are ./operations.ts. On every write `check`:
//   1. resolves the writer's Grid role (below: role-less human/system writes are MC's; role-less
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

export function check(nextBody: JsonObject, prevBody: JsonObject | null, ctx: CommitContext): CommitEffects {
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

// ---------------------------------------------------------------------------------------------------
// Defaults (§2.2, §2.3)

/** Fills in every absent field that has a `default` in the schema, in place (nested objects too). */
export function fillDefaults(
  body: JsonObject,
  node: Record<string, unknown> = gridMissionSchema,
): JsonObject {
  const props = node.properties;
  if (!isPlainObject(props as Json)) return body;
  for (const [key, sub] of Object.entries(props as Record<string, Record<string, unknown>>)) {
    if (body[key] === undefined && sub.default !== undefined)
      body[key] = structuredClone(sub.default as Json);
    const v = body[key];
    if (isPlainObject(v)) fillDefaults(v, sub);
  }
  return body;
}

/** An ISO-8601 time as the seed writes it (§5.1: `%Y-%m-%dT%H:%M:%SZ`), keeping milliseconds when any. */
export { gridTime };

// ---------------------------------------------------------------------------------------------------
// §3.1 formats

type Rule = FormatName | EnumName;
type Target = [pointer: string, value: Json | undefined, format: Rule];

const each = <T>(list: T[] | undefined, fn: (item: T, i: number) => void) => {
  if (Array.isArray(list)) list.forEach(fn);
};

/**
 * Adds to `out` the fields of each record of `list` (at pointer `path`) that a §3.1 rule applies to, in
 * the order of `rules` (field → rule; `[rule]`: the field is a list whose every entry the rule applies to).
 */
function recordTargets(
  out: Target[],
  list: object[] | undefined,
  path: string[],
  rules: Record<string, Rule | [Rule]>,
): void {
  each(list, (x, i) => {
    for (const [field, rule] of Object.entries(rules)) {
      const v = (x as Record<string, Json | undefined>)[field];
      if (Array.isArray(rule))
        each(v as Json[] | undefined, (p, j) => out.push([ptr(...path, i, field, j), p, rule[0]]));
      else out.push([ptr(...path, i, field), v, rule]);
    }
  });
}

/** Every field of the body a §3.1 rule applies to. */
function formatTargets(b: GridMission): Target[] {
  const out: Target[] = [
    ['/session_id', b.session_id, 'session_id'],
    ['/mission_id', b.mission_id, 'mission_id'],
    ['/created_at', b.created_at, 'timestamp'],
    ['/updated_at', b.updated_at, 'timestamp'],
    ['/status', b.status, 'status'],
    ['/mode', b.mode, 'mode'],
    ['/position/phase_id', b.position?.phase_id, 'phase_id'],
    ['/position/block_id', b.position?.block_id, 'block_id'],
  ];
  each(b.phases?.completed, (id, i) => out.push([ptr('phases', 'completed', i), id, 'phase_id']));
  recordTargets(out, b.phases?.definitions, ['phases', 'definitions'], {
    id: 'phase_id',
    status: 'phase_status',
    started_at: 'timestamp',
    completed_at: 'timestamp',
  });
  recordTargets(out, b.agents?.active, ['agents', 'active'], {
    id: 'agent_id',
    type: 'agent_type',
    spawned_at: 'timestamp',
    last_heartbeat: 'timestamp',
    phase: 'phase_id',
    block: 'block_id',
  });
  recordTargets(out, b.agents?.completed, ['agents', 'completed'], {
    id: 'agent_id',
    type: 'agent_type',
    result: 'agent_result',
  });
  recordTargets(out, b.persistent?.decisions, ['persistent', 'decisions'], {
    id: 'decision_id',
    phase_decided: 'phase_id',
    affects_phases: ['phase_id'],
  });
  recordTargets(out, b.persistent?.artifacts, ['persistent', 'artifacts'], {
    id: 'artifact_id',
    type: 'artifact_type',
    created_phase: 'phase_id',
    used_by_phases: ['phase_id'],
  });
  recordTargets(
    out,
    b.persistent?.tech_stack?.added_packages,
    ['persistent', 'tech_stack', 'added_packages'],
    {
      added_phase: 'phase_id',
    },
  );
  recordTargets(out, b.warnings, ['warnings'], { level: 'warning_level', timestamp: 'timestamp' });
  recordTargets(out, b.blockers, ['blockers'], {
    id: 'blocker_id',
    type: 'blocker_type',
    added_at: 'timestamp',
  });
  return out;
}

const compiled = new Map<string, RegExp>();
function regex(name: FormatName): RegExp {
  let r = compiled.get(name);
  if (!r) {
    r = new RegExp(FORMATS[name].pattern, 'u');
    compiled.set(name, r);
  }
  return r;
}

/** §3.1: identifiers and timestamps match their patterns, enums hold one of their values. */
export function checkFormats(b: GridMission): void {
  for (const [pointer, value, name] of formatTargets(b)) {
    if (value === undefined || value === null) continue;
    if (name in ENUMS) {
      const e = ENUMS[name as EnumName];
      if (!(e.values as readonly Json[]).includes(value)) {
        fail(
          pointer,
          e.rule,
          `${pointer} must be one of ${e.values.join(', ')}, not ${JSON.stringify(value)}`,
        );
      }
      continue;
    }
    const f = FORMATS[name as FormatName];
    if (typeof value !== 'string' || !regex(name as FormatName).test(value)) {
      fail(pointer, f.rule, `${pointer} must match ${f.pattern}, not ${JSON.stringify(value)}`, {
        pattern: f.pattern,
      });
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// §3.3 timestamps

/** §3.3 validate_timestamp: `%Y-%m-%dT%H:%M:%S.%fZ`, `%Y-%m-%dT%H:%M:%SZ` or `%Y-%m-%dT%H:%M:%S`. */
const STRPTIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6})Z|Z)?$/;

/**
 * Epoch ms of a §3.3-valid timestamp (a real calendar date and time; no zone means UTC), or null.
 * Seconds run 00–59 (JavaScript has no leap seconds).
 */
export function timestampMs(ts: string): number | null {
  const m = STRPTIME.exec(ts);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const frac = m[7] ? Number(m[7].padEnd(3, '0').slice(0, 3)) : 0;
  if (mo < 1 || mo > 12 || h > 23 || mi > 59 || s > 59) return null;
  const days = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (d < 1 || d > days) return null;
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  t.setUTCHours(h, mi, s, frac);
  return t.getTime();
}

/** §3.3: every timestamp is valid; updated_at is not before created_at; no phase completes before it starts. */
export function checkTimestamps(b: GridMission): void {
  const times = new Map<string, number>();
  for (const [pointer, value, name] of formatTargets(b)) {
    if (name !== 'timestamp' || typeof value !== 'string') continue;
    const t = timestampMs(value);
    if (t === null) {
      fail(
        pointer,
        'logic.timestamp-valid',
        `${pointer} ${JSON.stringify(value)} is not a valid ISO 8601 date-time (YYYY-MM-DDTHH:MM:SS, .ffffffZ or Z)`,
      );
    }
    times.set(pointer, t);
  }
  const created = times.get('/created_at');
  const updated = times.get('/updated_at');
  if (created !== undefined && updated !== undefined && created > updated) {
    fail(
      '/updated_at',
      'logic.chronological-order',
      `updated_at (${b.updated_at}) cannot be before created_at (${b.created_at})`,
    );
  }
  each(b.phases.definitions, (d, i) => {
    const s = times.get(ptr('phases', 'definitions', i, 'started_at'));
    const c = times.get(ptr('phases', 'definitions', i, 'completed_at'));
    if (s !== undefined && c !== undefined && s > c) {
      fail(
        ptr('phases', 'definitions', i, 'completed_at'),
        'logic.phase-chronology',
        `phase ${d.id} completed (${d.completed_at}) before it started (${d.started_at})`,
      );
    }
  });
}

/**
 * §3.3 on `updated_at` as the writer sent it (a file as written, a body, a patch), before the kind stamps
 * the write time over it: a time that does not exist, or one before `created_at`, is refused rather than
 * silently replaced. A body without `updated_at` is left to the schema (required) and the stamp.
 */
export function checkWrittenUpdatedAt(b: { updated_at: Json; created_at: Json }): void {
  const u = b.updated_at;
  if (typeof u !== 'string') return;
  const f = FORMATS.timestamp;
  if (!regex('timestamp').test(u)) {
    fail('/updated_at', f.rule, `/updated_at must match ${f.pattern}, not ${JSON.stringify(u)}`, {
      pattern: f.pattern,
    });
  }
  const updated = timestampMs(u);
  if (updated === null) {
    fail(
      '/updated_at',
      'logic.timestamp-valid',
      `/updated_at ${JSON.stringify(u)} is not a valid ISO 8601 date-time (YYYY-MM-DDTHH:MM:SS, .ffffffZ or Z)`,
    );
  }
  const created = typeof b.created_at === 'string' ? timestampMs(b.created_at) : null;
  if (created !== null && created > updated) {
    fail(
      '/updated_at',
      'logic.chronological-order',
      `updated_at (${u}) cannot be before created_at (${b.created_at as string})`,
    );
  }
}

// ---------------------------------------------------------------------------------------------------
// §3.2 logical consistency

/** Statuses in which the completed-phase count need not equal current − 1 (§3.2). */
const COMPLETED_COUNT_EXEMPT = ['planning', 'failed'];

/** Tolerance of the progress percent (§3.2). */
const PERCENT_TOLERANCE = 0.1;

export function checkLogic(b: GridMission): void {
  const { phases, position: pos, progress: prog } = b;
  if (phases.current > phases.total) {
    fail(
      '/phases/current',
      'logic.current-phase',
      `current phase ${phases.current} exceeds the total of ${phases.total} phases`,
    );
  }
  if (phases.completed.length !== phases.current - 1 && !COMPLETED_COUNT_EXEMPT.includes(b.status)) {
    fail(
      '/phases/completed',
      'logic.completed-phases',
      `${phases.completed.length} completed phases, but current phase ${phases.current} needs ${phases.current - 1} (status ${b.status})`,
    );
  }
  if (pos.phase !== phases.current) {
    fail(
      '/position/phase',
      'logic.position-phase',
      `position phase ${pos.phase} does not match current phase ${phases.current}`,
    );
  }
  if (pos.thread > pos.thread_total) {
    fail(
      '/position/thread',
      'logic.thread-total',
      `current thread ${pos.thread} exceeds the thread total ${pos.thread_total}`,
    );
  }
  if (prog.blocks_total > 0) {
    const byBlocks = (prog.blocks_complete / prog.blocks_total) * 100;
    const byThreads = prog.threads_total > 0 ? (prog.threads_complete / prog.threads_total) * 100 : null;
    const near = (x: number) => Math.abs(prog.percent - x) <= PERCENT_TOLERANCE;
    if (!near(byBlocks) && !(byThreads !== null && near(byThreads))) {
      fail(
        '/progress/percent',
        'logic.progress-percent',
        `progress percent ${prog.percent} does not match the block counts (${prog.blocks_complete}/${prog.blocks_total} = ${round2(byBlocks)}%)${byThreads === null ? '' : ` nor the thread counts (${prog.threads_complete}/${prog.threads_total} = ${round2(byThreads)}%)`}`,
        { expected: round2(byBlocks) },
      );
    }
  }
  checkUniqueIds(
    b.agents.active as unknown as JsonObject[],
    '/agents/active',
    'id',
    'logic.unique-active-agents',
  );
  if (b.status === 'blocked' && !b.resume.checkpoint_file) {
    fail(
      '/resume/checkpoint_file',
      'logic.blocked-checkpoint',
      'status blocked requires a checkpoint file (resume.checkpoint_file)',
    );
  }
  // agentstate's own: ids that other records and operations refer to are unique in their list.
  for (const [list, pointer] of [
    [phases.definitions, '/phases/definitions'],
    [b.persistent.decisions, '/persistent/decisions'],
    [b.persistent.artifacts, '/persistent/artifacts'],
    [b.blockers, '/blockers'],
  ] as const) {
    checkUniqueIds(list as unknown as JsonObject[], pointer, 'id', 'logic.unique-ids');
  }
}

const round2 = (x: number) => Math.round(x * 100) / 100;

// ---------------------------------------------------------------------------------------------------
// §7 transitions

/** §7.1: planning → in_progress; in_progress → blocked | complete | failed; blocked → in_progress | failed. */
export const STATUS_TRANSITIONS: TransitionTable = {
  planning: ['in_progress'],
  in_progress: ['blocked', 'complete', 'failed'],
  blocked: ['in_progress', 'failed'],
  complete: [],
  failed: [],
};

/** A phase definition's status: pending → in_progress | complete, in_progress → complete; complete is final. */
export const PHASE_STATUS_TRANSITIONS: TransitionTable = {
  pending: ['in_progress', 'complete'],
  in_progress: ['complete'],
  complete: [],
};

/**
 * §7: the mission status follows STATUS_TRANSITIONS (a new document may hold any status: importing a
 * mission already under way is a creation); the current phase stays or advances by exactly one (§7.2),
 * completed phases are never taken back, a phase completed by the advance is `complete` in its definition,
 * and each definition's status follows PHASE_STATUS_TRANSITIONS.
 */
export function checkTransitions(next: GridMission, prev: GridMission | null): void {
  if (!prev) return;
  checkTransition(STATUS_TRANSITIONS, prev.status, next.status, {
    pointer: '/status',
    rule: 'status-transition',
    subject: 'mission status',
  });

  const from = prev.phases.current;
  const to = next.phases.current;
  if (to !== from && to !== from + 1) {
    throw new InvalidTransitionError(
      `the current phase can only advance one phase at a time: ${from} → ${to} (allowed: ${from}, ${from + 1})`,
      { from: String(from), to: String(to), pointer: '/phases/current', rule: 'phase-transition' },
    );
  }
  const before = prev.phases.completed;
  const after = next.phases.completed;
  const kept = before.every((id, i) => after[i] === id);
  if (!kept) {
    throw new InvalidTransitionError(
      `completed phases cannot be taken back or reordered: [${before.join(', ')}] → [${after.join(', ')}]`,
      { from: before.join(','), to: after.join(','), pointer: '/phases/completed', rule: 'phase-transition' },
    );
  }
  const defs = indexBy(next.phases.definitions as unknown as JsonObject[]);
  if (to === from + 1) {
    for (const id of after.slice(before.length)) {
      const d = defs.get(id);
      if (d && d.item.status !== 'complete') {
        throw new InvalidTransitionError(
          `phase ${id} is completed by the transition to phase ${to} but its definition is ${String(d.item.status)}`,
          {
            from: String(d.item.status),
            to: 'complete',
            pointer: ptr('phases', 'definitions', d.index, 'status'),
            rule: 'phase-transition',
          },
        );
      }
    }
  }
  const old = indexBy(prev.phases.definitions as unknown as JsonObject[]);
  next.phases.definitions.forEach((d, i) => {
    const o = old.get(d.id)?.item;
    checkTransition(PHASE_STATUS_TRANSITIONS, o ? String(o.status) : null, d.status, {
      pointer: ptr('phases', 'definitions', i, 'status'),
      rule: 'phase-status-transition',
      subject: `phase ${d.id}`,
    });
  });
}

/** mission_id and created_at name the mission: fixed for the life of the document. */
export function checkIdentity(next: GridMission, prev: GridMission | null): void {
  if (!prev) return;
  for (const f of ['mission_id', 'created_at'] as const) {
    if (next[f] !== prev[f]) {
      fail(
        `/${f}`,
        'identity-immutable',
        `/${f} cannot change (was ${JSON.stringify(prev[f])}); start a new mission document instead`,
      );
    }
  }
}

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
