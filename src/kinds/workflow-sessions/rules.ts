// The workflow-state skill's enforcement gates A–H as pure checks over the state files of a project
// (`.copilot/state/*.json`, read and parsed by the caller; `gateFile` parses one). Each returns
// { gate, ok, failures } where every failure is one human-readable line naming the file. Bodies are read
// defensively: a file that does not match the schema yields failures, never a crash.
//
// What each gate checks here:
//   A Start        the workflow's file exists, parses, has a sessions array and an active session that
//                  activeSessionId names.
//   B Transition   the file is in sync: it carries an agentstate stamp; when the store's latest version
//                  is given, the file shows that version and exactly that body (no drift either way);
//                  updatedAt is not older than anything recorded in the file; with `now` and `maxAgeMs`,
//                  the active session changed within maxAgeMs.
//   C Resume       activeSessionId resolves to the active session; no delegation is still in-progress.
//   D New task     every session but the last is closed (completed or abandoned, with endedAt); at most
//                  one is active; the latest session carries the directives of the most recent completed
//                  session before it.
//   E Completion   no session in any state file is active (the workflow filter does not apply).
//   F Pre-deleg.   there is an active session to record delegations in, every delegation has id, agent,
//                  task and startedAt, and `options.delegation` (the one about to be spawned), if given,
//                  is persisted in-progress in the active session.
//   G Post-deleg.  every completed delegation has a resultSummary and outputArtifacts (failed ones a
//                  resultSummary); `options.delegation` (the one that returned), if given, is no longer
//                  in-progress.
//   H Directives   every session holds each active directive of the most recent completed session before
//                  it (directives are cumulative until revoked).
// F, G and H are for orchestrator agents; callers that are not orchestrators need not run them.

import fastJsonPatch from 'fast-json-patch';
import type { CommitContext, FileStamp } from '../../core/kind.js';
import type { Json, JsonObject } from '../../core/types.js';
import {
  checkAppendOnly,
  checkTransition,
  checkUniqueIds,
  checkUpdatedLatest,
  deepEqual,
  fail,
  indexBy,
  isoMs,
  isPlainObject,
  ptr,
  type TransitionTable,
  touchUpdated,
} from '../rules.js';
import { sessionsFile } from './file.js';
import {
  BLOCKER_TRANSITIONS,
  DELEGATION_TRANSITIONS,
  DIRECTIVE_TRANSITIONS,
  directivesToCarry,
  isClosed,
  isoTime,
  latestTime,
  SESSION_TRANSITIONS,
  type Session,
  sessionId,
  times,
  type WorkflowSessions,
} from './model.js';

// Kind `workflow-sessions`: the multi-session state file of the workflow-state skill
// (`.copilot/state/<workflow>.json`). The schema checks structure; `check` enforces the skill's rules,
// each refusal naming the JSON pointer and the rule:
//   sessions: sessions-append-only, closed-session-frozen, session-transition (INVALID_TRANSITION; a
//   session appended to an existing file starts active), session-id-format (schema),
//   session-id-sequential, one-active-session and previous-session-closed (Gate D), active-session-id,
//   session-ended-at, session-complete-delegations, directives-carried-forward (Gates D, H);
//   inside a session: unique-ids, decisions-append-only, lessons-append-only,
//   workaround-fields-required, workaround-type-flag, blockers-append-only, blocker-transition,
//   blocker-resolution-required, delegations-append-only, delegation-transition,
//   delegation-result-recorded (Gate G), directives-append-only, directive-transition,
//   directive-revoked-at; times: iso-8601, updated-at-latest.
// `updatedAt` (of the file, and of the active session when it changed) is maintained on every change.

const asItems = (v: unknown[] | undefined) => (v ?? []) as unknown as JsonObject[];

// ---------------------------------------------------------------------------------------------------
// Sessions: append-only, one active, sequential ids

function checkSessionList(next: WorkflowSessions, prev: WorkflowSessions | null): void {
  const before = prev?.sessions ?? [];
  const after = next.sessions;
  before.forEach((old, i) => {
    const now = after[i];
    if (!now || now.id !== old.id) {
      fail(
        now ? ptr('sessions', i, 'id') : '/sessions',
        'sessions-append-only',
        `/sessions: ${old.id} cannot be ${now ? 'replaced' : 'removed'}; sessions are appended, never overwritten or deleted`,
        { session: old.id },
      );
    }
  });

  const active = after.filter((s) => s.status === 'active');
  if (active.length > 1) {
    fail(
      '/sessions',
      'one-active-session',
      `only one session may be active: ${active.map((s) => s.id).join(', ')}`,
    );
  }
  after.forEach((s, i) => {
    const at = ptr('sessions', i);
    if (s.id !== sessionId(i + 1)) {
      fail(
        `${at}/id`,
        'session-id-sequential',
        `${at}/id is ${JSON.stringify(s.id)}; session ${i + 1} must be ${sessionId(i + 1)} (ids are sequential)`,
      );
    }
    const old = before[i];
    checkTransition(SESSION_TRANSITIONS, old ? old.status : null, s.status, {
      pointer: `${at}/status`,
      rule: 'session-transition',
      subject: `session ${s.id}`,
      ...(prev ? { initial: ['active'] } : {}),
    });
    if (old && isClosed(old) && !deepEqual(old, s)) {
      fail(
        at,
        'closed-session-frozen',
        `${old.id} is ${old.status} and cannot be rewritten; start a new session instead`,
        {
          session: old.id,
        },
      );
    }
    if (s.status === 'active' && i !== after.length - 1) {
      fail(
        `${at}/status`,
        'previous-session-closed',
        `${s.id} is still active but ${after[after.length - 1]?.id} was started after it: close a session (completed or abandoned) before starting a new one`,
      );
    }
    const started = isoMs(s.startedAt, `${at}/startedAt`);
    if (isClosed(s)) {
      if (s.endedAt === undefined) {
        fail(`${at}/endedAt`, 'session-ended-at', `${s.id} is ${s.status} but has no endedAt`);
      }
      if (isoMs(s.endedAt, `${at}/endedAt`) < started) {
        fail(`${at}/endedAt`, 'session-ended-at', `${s.id}: endedAt precedes startedAt`);
      }
    } else if (s.endedAt !== undefined) {
      fail(`${at}/endedAt`, 'session-ended-at', `${s.id} is active but has an endedAt`);
    }
    if (s.status === 'completed') {
      const k = (s.delegations ?? []).findIndex((d) => d.status === 'in-progress');
      const d = s.delegations?.[k];
      if (d) {
        fail(
          ptr('sessions', i, 'delegations', k, 'status'),
          'session-complete-delegations',
          `${s.id} cannot be completed while delegation ${d.id} (${d.agent}) is in progress; record its result or abandon the session`,
        );
      }
    }
  });

  const want = active[0]?.id ?? null;
  if (next.activeSessionId !== want) {
    fail(
      '/activeSessionId',
      'active-session-id',
      want
        ? `/activeSessionId must name the active session ${want}, not ${JSON.stringify(next.activeSessionId)}`
        : `/activeSessionId must be null: no session is active (it names ${JSON.stringify(next.activeSessionId)})`,
    );
  }

  // Gates D and H: a new session starts with the directives of the most recent completed session.
  after.forEach((s, i) => {
    if (i < before.length) return;
    const have = new Set((s.directives ?? []).map((d) => d.id));
    for (const d of directivesToCarry(after, i)) {
      if (!have.has(d.id)) {
        fail(
          ptr('sessions', i, 'directives'),
          'directives-carried-forward',
          `${s.id} must carry forward directive ${d.id} (${JSON.stringify(d.text)}) of the most recent completed session; directives hold until the user revokes them`,
          { directive: d.id },
        );
      }
    }
  });
}

// ---------------------------------------------------------------------------------------------------
// Inside a session

/**
 * One list of a session's records (`blockers`, `delegations`, `directives`): ids unique, statuses moving by
 * `table` (rule `<record>-transition`), and none removed or changed (rule `<list>-append-only`) but one in
 * status `open` moving on with only `changes` filled in.
 */
function checkRecords(
  s: Session,
  old: Session | undefined,
  at: (...rest: Array<string | number>) => string,
  list: 'blockers' | 'delegations' | 'directives',
  table: TransitionTable,
  open: string,
  changes: readonly string[],
): void {
  const next = asItems(s[list]);
  const prev = asItems(old?.[list]);
  const base = at(list);
  checkUniqueIds(next, base);
  const record = list.slice(0, -1);
  const was = indexBy(prev);
  next.forEach((item, k) => {
    const before = was.get(item.id as string)?.item;
    checkTransition(table, before ? (before.status as string) : null, item.status as string, {
      pointer: `${base}/${k}/status`,
      rule: `${record}-transition`,
      subject: `${record} ${item.id}`,
    });
  });
  checkAppendOnly(prev, next, base, `${list}-append-only`, {
    mayChange: (a, b) => a.status === open && onlyChanged(a, b, changes),
  });
}

/** True when `after` is `before` with only `fields` added or changed and its status moved. */
function onlyChanged<T extends object>(before: T, after: T, fields: readonly string[]): boolean {
  const strip = (o: T) =>
    Object.fromEntries(Object.entries(o).filter(([k]) => k !== 'status' && !fields.includes(k)));
  return (
    (before as { status?: unknown }).status !== (after as { status?: unknown }).status &&
    deepEqual(strip(before), strip(after))
  );
}

function checkSession(s: Session, old: Session | undefined, i: number): void {
  const at = (...rest: Array<string | number>) => ptr('sessions', i, ...rest);
  checkUniqueIds(asItems(s.todos), at('todos'));

  // Decisions and lessons are logs: appended, never edited.
  for (const [field, rule] of [
    ['decisions', 'decisions-append-only'],
    ['lessonsLearned', 'lessons-append-only'],
  ] as const) {
    const now = s[field] ?? [];
    (old?.[field] ?? []).forEach((x, k) => {
      if (!deepEqual(x, now[k])) {
        fail(
          now[k] ? at(field, k) : at(field),
          rule,
          `${s.id}: ${field} is append-only; entry ${k} cannot be ${now[k] ? 'changed' : 'removed'}`,
        );
      }
    });
  }
  (s.decisions ?? []).forEach((d, k) => {
    if (d.type === 'workaround' && !d.workaround) {
      fail(
        at('decisions', k, 'workaround'),
        'workaround-type-flag',
        `${s.id}: decision ${k} has type workaround, so workaround must be true`,
      );
    }
    if (d.workaround) {
      for (const f of ['correct_solution', 'why_not_implemented', 'revisit_when'] as const) {
        if (d[f] === undefined) {
          fail(
            at('decisions', k, f),
            'workaround-fields-required',
            `${s.id}: decision ${k} is a workaround and needs ${f} (what the correct solution would be, why it could not be implemented, when to revisit)`,
          );
        }
      }
    }
  });

  checkRecords(s, old, at, 'blockers', BLOCKER_TRANSITIONS, 'open', ['resolvedAt', 'resolution']);
  (s.blockers ?? []).forEach((b, k) => {
    if (b.status === 'resolved' && (b.resolution === undefined || b.resolvedAt === undefined)) {
      fail(
        at('blockers', k, b.resolution === undefined ? 'resolution' : 'resolvedAt'),
        'blocker-resolution-required',
        `${s.id}: blocker ${b.id} is resolved without ${b.resolution === undefined ? 'a resolution' : 'resolvedAt'}`,
      );
    }
  });

  checkRecords(s, old, at, 'delegations', DELEGATION_TRANSITIONS, 'in-progress', [
    'completedAt',
    'resultSummary',
    'outputArtifacts',
  ]);
  (s.delegations ?? []).forEach((d, k) => {
    if (d.status === 'in-progress') {
      if (d.completedAt !== undefined)
        fail(
          at('delegations', k, 'completedAt'),
          'delegation-result-recorded',
          `${s.id}: delegation ${d.id} is in progress but has a completedAt`,
        );
      return;
    }
    const missing =
      d.completedAt === undefined
        ? 'completedAt'
        : d.resultSummary === undefined
          ? 'resultSummary'
          : d.status === 'completed' && d.outputArtifacts === undefined
            ? 'outputArtifacts'
            : null;
    if (missing) {
      fail(
        at('delegations', k, missing),
        'delegation-result-recorded',
        `${s.id}: delegation ${d.id} is ${d.status} without ${missing}; record the result summary and outputArtifacts when a sub-agent returns`,
      );
    }
    if (
      isoMs(d.completedAt!, at('delegations', k, 'completedAt')) <
      isoMs(d.startedAt, at('delegations', k, 'startedAt'))
    ) {
      fail(
        at('delegations', k, 'completedAt'),
        'delegation-result-recorded',
        `${s.id}: delegation ${d.id} completes before it started`,
      );
    }
  });

  checkRecords(s, old, at, 'directives', DIRECTIVE_TRANSITIONS, 'active', ['revokedAt', 'revokedReason']);
  (s.directives ?? []).forEach((d, k) => {
    if (d.status === 'revoked' && d.revokedAt === undefined) {
      fail(
        at('directives', k, 'revokedAt'),
        'directive-revoked-at',
        `${s.id}: directive ${d.id} is revoked without revokedAt`,
      );
    }
  });
}

// ---------------------------------------------------------------------------------------------------
// Times

/** Keeps `updatedAt` current on every change: the file's, and the active session's when it changed. */
function touch(next: WorkflowSessions, prev: WorkflowSessions | null, now: number): void {
  if (!prev) return;
  const stamp = (cur: string | undefined, before: string | undefined): string | undefined => {
    const t = cur === undefined ? Number.NaN : Date.parse(cur);
    if (cur !== undefined && Number.isNaN(t)) return cur;
    if (cur !== undefined && before !== undefined && t > Date.parse(before)) return cur;
    return isoTime(Math.max(now, Number.isNaN(t) ? now : t));
  };
  next.sessions.forEach((s, i) => {
    const old = prev.sessions[i];
    if (!old || isClosed(old)) return;
    const { updatedAt: _a, ...a } = s;
    const { updatedAt: _b, ...b } = old;
    if (!deepEqual(a, b)) s.updatedAt = stamp(s.updatedAt, old.updatedAt);
  });
  touchUpdated(next, prev, 'updatedAt', times(next), now);
}

export function check(nextBody: JsonObject, prevBody: JsonObject | null, ctx: CommitContext): undefined {
  const next = nextBody as unknown as WorkflowSessions;
  const prev = prevBody as unknown as WorkflowSessions | null;
  touch(next, prev, ctx.now);
  checkSessionList(next, prev);
  const before = new Map((prev?.sessions ?? []).map((s) => [s.id, s]));
  next.sessions.forEach((s, i) => {
    checkSession(s, before.get(s.id), i);
  });
  checkUpdatedLatest('/updatedAt', next.updatedAt, times(next), 'the last change to the file');
  return undefined;
}

export const GATES = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'] as const;
/** One of the workflow-state skill's gates, A (start) to H (directives); see `checkGate`. */
export type Gate = (typeof GATES)[number];

/** One state file as the caller read it: its body (and stamp), or why it could not be parsed. */
export interface GateFile {
  path: string;
  body?: JsonObject;
  stamp?: FileStamp | null;
  parseError?: string;
}

/** What the gates check the files against: the workflow, the store's versions, the time, a delegation. */
export interface GateOptions {
  /** The workflow being worked on: gates A–D and F–H look at its file only (E always scans every file). */
  workflow?: string;
  /** Gate B: the store's latest version of each workflow document, by workflow id. */
  store?: Record<string, { version: number; body: JsonObject }>;
  /** Gate B: epoch ms now and the longest an active session may go unchanged (both needed to apply). */
  now?: number;
  /** Gate B: with `now`, the longest an active session may go unchanged, ms. @default no limit */
  maxAgeMs?: number;
  /** Gate F: the delegation about to be spawned. Gate G: the delegation that just returned. */
  delegation?: string;
}

/** One gate's verdict: `ok`, or the failures, one line each naming the file. */
export interface GateResult {
  gate: Gate;
  ok: boolean;
  failures: string[];
}

/** Parses file text into a GateFile, keeping a parse error as data. */
export function gateFile(path: string, text: string): GateFile {
  try {
    const { body, stamp } = sessionsFile.parse(text);
    return { path, body, stamp };
  } catch (err) {
    return { path, parseError: (err as Error).message };
  }
}

// ---------------------------------------------------------------------------------------------------
// Defensive readers

type Obj = Record<string, Json>;
const objects = (v: Json | undefined): Obj[] => (Array.isArray(v) ? v.filter(isPlainObject) : []);
const str = (v: Json | undefined): string | undefined => (typeof v === 'string' ? v : undefined);
const sessionsOf = (b: JsonObject): Obj[] => objects(b.sessions);
const closed = (s: Obj) => s.status === 'completed' || s.status === 'abandoned';
const name = (s: Obj) => `${str(s.id) ?? '?'}${str(s.label) ? ` "${str(s.label)}"` : ''}`;

/** The workflow id a file belongs to (from its path). */
export function workflowOf(path: string): string {
  return (
    sessionsFile.idFromPath(path) ??
    path
      .split(/[/\\]/)
      .pop()!
      .replace(/\.json$/, '')
  );
}

/** Active directives of the most recent completed session before index `before`. */
function carried(sessions: Obj[], before: number): Obj[] {
  for (let i = before - 1; i >= 0; i--) {
    const s = sessions[i];
    if (s?.status === 'completed') return objects(s.directives).filter((d) => d.status === 'active');
  }
  return [];
}

function missingDirectives(sessions: Obj[], i: number): Obj[] {
  const have = new Set(objects(sessions[i]?.directives).map((d) => d.id));
  return carried(sessions, i).filter((d) => !have.has(d.id ?? null));
}

// ---------------------------------------------------------------------------------------------------
// Gates

type Check = (f: { path: string; body: JsonObject; stamp: FileStamp | null }, o: GateOptions) => string[];

const gateA: Check = ({ body }) => {
  if (!Array.isArray(body.sessions)) return ['has no sessions array'];
  const active = sessionsOf(body).filter((s) => s.status === 'active');
  if (active.length === 0) return ['has no active session: start one before the first major step'];
  const id = str(active[0]?.id);
  return body.activeSessionId === id
    ? []
    : [`activeSessionId is ${JSON.stringify(body.activeSessionId ?? null)} but the active session is ${id}`];
};

const gateB: Check = ({ path, body, stamp }, o) => {
  const out: string[] = [];
  const wf = workflowOf(path);
  if (!stamp) out.push('carries no agentstate stamp: it was not written through the store (import it)');
  const stored = o.store?.[wf];
  if (o.store && !stored) out.push(`the store has no workflow-sessions/${wf}: import the file`);
  if (stored && stamp) {
    if (stamp.version < stored.version) {
      out.push(`shows version ${stamp.version} but the store is at ${stored.version}: re-export it`);
    } else if (stamp.version > stored.version) {
      out.push(`claims version ${stamp.version} but the store is at ${stored.version}: the stamp is wrong`);
    } else if (!deepEqual(body, stored.body)) {
      const paths = [...new Set(fastJsonPatch.compare(stored.body, body).map((p) => p.path))];
      out.push(
        `differs from version ${stored.version} in the store at ${paths.slice(0, 5).join(', ')}${paths.length > 5 ? ', …' : ''}: import it (or re-export to discard)`,
      );
    }
  }
  const updated = typeof body.updatedAt === 'string' ? Date.parse(body.updatedAt) : Number.NaN;
  if (Number.isNaN(updated)) out.push('has no valid updatedAt');
  else {
    const latest = latestTime(body as unknown as WorkflowSessions);
    if (latest > updated) {
      out.push(
        `updatedAt ${String(body.updatedAt)} is older than a change recorded at ${new Date(latest).toISOString()}`,
      );
    }
  }
  if (o.now !== undefined && o.maxAgeMs !== undefined) {
    for (const s of sessionsOf(body).filter((x) => x.status === 'active')) {
      const t = Date.parse(str(s.updatedAt) ?? str(s.startedAt) ?? '');
      if (!Number.isNaN(t) && o.now - t > o.maxAgeMs) {
        out.push(
          `${name(s)} unchanged for ${Math.round((o.now - t) / 60_000)} min (limit ${Math.round(o.maxAgeMs / 60_000)})`,
        );
      }
    }
  }
  return out;
};

const gateC: Check = ({ body }) => {
  const out: string[] = [];
  const sessions = sessionsOf(body);
  const id = body.activeSessionId;
  const active = sessions.filter((s) => s.status === 'active');
  if (id === null || id === undefined) {
    if (active.length > 0) out.push(`activeSessionId is null but ${active.map(name).join(', ')} is active`);
  } else {
    const s = sessions.find((x) => x.id === id);
    if (!s) out.push(`activeSessionId ${JSON.stringify(id)} names no session`);
    else if (s.status !== 'active')
      out.push(`activeSessionId names ${name(s)}, which is ${String(s.status)}`);
  }
  for (const s of sessions) {
    for (const d of objects(s.delegations).filter((x) => x.status === 'in-progress')) {
      out.push(
        `${str(s.id)} delegation ${str(d.id)} (${str(d.agent) ?? '?'}: ${str(d.task) ?? '?'}) is still in-progress since ${str(d.startedAt) ?? '?'}: incomplete sub-agent work`,
      );
    }
  }
  return out;
};

const gateD: Check = ({ body }) => {
  const out: string[] = [];
  const sessions = sessionsOf(body);
  sessions.forEach((s, i) => {
    if (i < sessions.length - 1 && !closed(s)) {
      out.push(
        `${name(s)} is ${String(s.status)} but a later session was started: close it (completed or abandoned) first`,
      );
    }
    if (closed(s) && typeof s.endedAt !== 'string')
      out.push(`${name(s)} is ${String(s.status)} without endedAt`);
  });
  const last = sessions.length - 1;
  if (last > 0) {
    for (const d of missingDirectives(sessions, last)) {
      out.push(
        `${str(sessions[last]?.id)} did not carry forward directive ${str(d.id)} (${JSON.stringify(d.text)})`,
      );
    }
  }
  return out;
};

const gateF: Check = ({ body }, o) => {
  const out: string[] = [];
  const sessions = sessionsOf(body);
  const active = sessions.find((s) => s.status === 'active');
  if (!active) out.push('has no active session to record delegations in');
  for (const s of sessions) {
    objects(s.delegations).forEach((d, k) => {
      const missing = ['id', 'agent', 'task', 'startedAt'].filter((f) => typeof d[f] !== 'string');
      if (missing.length > 0)
        out.push(`${str(s.id)} delegation ${str(d.id) ?? `#${k}`} lacks ${missing.join(', ')}`);
    });
  }
  if (o.delegation !== undefined && active) {
    const d = objects(active.delegations).find((x) => x.id === o.delegation);
    if (!d)
      out.push(
        `delegation ${o.delegation} is not persisted in ${str(active.id)}: record it in-progress before spawning`,
      );
    else if (d.status !== 'in-progress')
      out.push(`delegation ${o.delegation} is ${String(d.status)}, not in-progress`);
  }
  return out;
};

const gateG: Check = ({ body }, o) => {
  const out: string[] = [];
  let found = false;
  for (const s of sessionsOf(body)) {
    for (const d of objects(s.delegations)) {
      if (d.id === o.delegation) {
        found = true;
        if (d.status === 'in-progress') {
          out.push(
            `delegation ${str(d.id)} (${str(d.agent) ?? '?'}) is still in-progress: record its status, result summary and outputArtifacts`,
          );
        }
      }
      if (d.status === 'in-progress') continue;
      if (typeof d.resultSummary !== 'string')
        out.push(`${str(s.id)} delegation ${str(d.id)} is ${String(d.status)} without a resultSummary`);
      if (d.status === 'completed' && !Array.isArray(d.outputArtifacts)) {
        out.push(`${str(s.id)} delegation ${str(d.id)} is completed without outputArtifacts`);
      }
    }
  }
  if (o.delegation !== undefined && !found) out.push(`delegation ${o.delegation} is not recorded`);
  return out;
};

const gateH: Check = ({ body }) => {
  const out: string[] = [];
  const sessions = sessionsOf(body);
  sessions.forEach((s, i) => {
    for (const d of missingDirectives(sessions, i)) {
      out.push(
        `${str(s.id)} is missing directive ${str(d.id)} (${JSON.stringify(d.text)}) carried from the most recent completed session`,
      );
    }
  });
  return out;
};

const gateE: Check = ({ body }) =>
  sessionsOf(body)
    .filter((s) => s.status === 'active')
    .map((s) => {
      const open = objects(s.todos).filter((t) => t.status !== 'completed').length;
      const phase = str(s.currentPhase);
      return `${name(s)} is still active (${phase ? `phase ${phase}, ` : ''}${open} open todo${open === 1 ? '' : 's'}): resume it before finishing`;
    });

const CHECKS: Record<Gate, Check> = {
  A: gateA,
  B: gateB,
  C: gateC,
  D: gateD,
  E: gateE,
  F: gateF,
  G: gateG,
  H: gateH,
};

/**
 * Checks one gate over the state files. Unreadable files fail every gate that looks at them (their state
 * cannot be verified).
 * @example checkGate('E', files) → { gate: 'E', ok: false, failures: ['.copilot/state/deploy.json: session-2 "ship" is still active (…)'] }
 */
export function checkGate(gate: Gate, files: readonly GateFile[], options: GateOptions = {}): GateResult {
  const check = CHECKS[gate];
  const scoped =
    gate === 'E' || options.workflow === undefined
      ? files
      : files.filter((f) => workflowOf(f.path) === options.workflow);
  const failures: string[] = [];
  if (gate !== 'E' && options.workflow !== undefined && scoped.length === 0) {
    failures.push(
      `${sessionsFile.defaultPath(options.workflow)}: does not exist (no state file, no execution)`,
    );
  } else if (gate === 'A' && scoped.length === 0) {
    failures.push('no state file in .copilot/state/: create one before the first major step');
  }
  for (const f of scoped) {
    if (f.parseError !== undefined || !f.body) {
      failures.push(`${f.path}: cannot be read: ${f.parseError ?? 'no body'}`);
      continue;
    }
    for (const line of check({ path: f.path, body: f.body, stamp: f.stamp ?? null }, options)) {
      failures.push(`${f.path}: ${line}`);
    }
  }
  return { gate, ok: failures.length === 0, failures };
}

/** Every gate, in order. */
export function checkGates(files: readonly GateFile[], options: GateOptions = {}): GateResult[] {
  return GATES.map((g) => checkGate(g, files, options));
}
