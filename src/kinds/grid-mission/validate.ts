// The rules of `.grid/STATE.md` (seed §3 and §7), each refusal naming the JSON pointer and the rule:
//   format.*  (§3.1)  identifier patterns, timestamps and enums        VALIDATION_FAILED
//   logic.*   (§3.2)  phase / position / progress / agents / resume    VALIDATION_FAILED
//   logic.*   (§3.3)  timestamps valid and in chronological order      VALIDATION_FAILED
//   status-transition, phase-transition, phase-status-transition (§7)  INVALID_TRANSITION
//   identity-immutable, logic.unique-ids (agentstate's own)            VALIDATION_FAILED

import type { Json, JsonObject } from '../../core/types.js';
import { InvalidTransitionError } from '../../errors.js';
import {
  checkTransition,
  checkUniqueIds,
  fail,
  indexBy,
  isPlainObject,
  ptr,
  type TransitionTable,
} from '../rules.js';
import {
  ENUMS,
  type EnumName,
  FORMATS,
  type FormatName,
  type GridMission,
  gridMissionSchema,
} from './schema.js';

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
export { isoTime as gridTime } from '../../core/time.js';

// ---------------------------------------------------------------------------------------------------
// §3.1 formats

type Target = [pointer: string, value: Json | undefined, format: FormatName | EnumName];

const each = <T>(list: T[] | undefined, fn: (item: T, i: number) => void) => {
  if (Array.isArray(list)) list.forEach(fn);
};

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
  each(b.phases?.definitions, (d, i) => {
    const at = (f: string) => ptr('phases', 'definitions', i, f);
    out.push([at('id'), d.id, 'phase_id'], [at('status'), d.status, 'phase_status']);
    out.push(
      [at('started_at'), d.started_at, 'timestamp'],
      [at('completed_at'), d.completed_at, 'timestamp'],
    );
  });
  each(b.agents?.active, (a, i) => {
    const at = (f: string) => ptr('agents', 'active', i, f);
    out.push([at('id'), a.id, 'agent_id'], [at('type'), a.type, 'agent_type']);
    out.push(
      [at('spawned_at'), a.spawned_at, 'timestamp'],
      [at('last_heartbeat'), a.last_heartbeat, 'timestamp'],
    );
    out.push([at('phase'), a.phase, 'phase_id'], [at('block'), a.block, 'block_id']);
  });
  each(b.agents?.completed, (a, i) => {
    const at = (f: string) => ptr('agents', 'completed', i, f);
    out.push(
      [at('id'), a.id, 'agent_id'],
      [at('type'), a.type, 'agent_type'],
      [at('result'), a.result, 'agent_result'],
    );
  });
  each(b.persistent?.decisions, (d, i) => {
    const at = (f: string) => ptr('persistent', 'decisions', i, f);
    out.push([at('id'), d.id, 'decision_id'], [at('phase_decided'), d.phase_decided, 'phase_id']);
    each(d.affects_phases, (p, j) =>
      out.push([ptr('persistent', 'decisions', i, 'affects_phases', j), p, 'phase_id']),
    );
  });
  each(b.persistent?.artifacts, (a, i) => {
    const at = (f: string) => ptr('persistent', 'artifacts', i, f);
    out.push([at('id'), a.id, 'artifact_id'], [at('type'), a.type, 'artifact_type']);
    out.push([at('created_phase'), a.created_phase, 'phase_id']);
    each(a.used_by_phases, (p, j) =>
      out.push([ptr('persistent', 'artifacts', i, 'used_by_phases', j), p, 'phase_id']),
    );
  });
  each(b.persistent?.tech_stack?.added_packages, (p, i) =>
    out.push([
      ptr('persistent', 'tech_stack', 'added_packages', i, 'added_phase'),
      p.added_phase,
      'phase_id',
    ]),
  );
  each(b.warnings, (w, i) => {
    out.push([ptr('warnings', i, 'level'), w.level, 'warning_level']);
    out.push([ptr('warnings', i, 'timestamp'), w.timestamp, 'timestamp']);
  });
  each(b.blockers, (x, i) => {
    out.push(
      [ptr('blockers', i, 'id'), x.id, 'blocker_id'],
      [ptr('blockers', i, 'type'), x.type, 'blocker_type'],
    );
    out.push([ptr('blockers', i, 'added_at'), x.added_at, 'timestamp']);
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
