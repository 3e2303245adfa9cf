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

import type { CommitContext, KindDefinition } from '../../core/kind.js';
import type { JsonObject } from '../../core/types.js';
import { checkFileId } from '../file-id.js';
import {
  checkAppendOnly,
  checkTransition,
  checkUniqueIds,
  deepEqual,
  fail,
  indexBy,
  ptr,
  type TransitionTable,
} from '../rules.js';
import { sessionsFile } from './file.js';
import {
  BLOCKER_TRANSITIONS,
  type Blocker,
  DELEGATION_TRANSITIONS,
  type Delegation,
  DIRECTIVE_TRANSITIONS,
  type Directive,
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
import { sessionOperations, sessionServiceOperations } from './operations.js';
import { workflowSessionsSchema } from './schema.js';

const asItems = (v: unknown[] | undefined) => (v ?? []) as unknown as JsonObject[];

/** Epoch ms of a time the schema admitted; VALIDATION_FAILED (`iso-8601`) for a date that does not exist. */
function ms(value: string, pointer: string): number {
  const t = Date.parse(value);
  if (Number.isNaN(t))
    fail(pointer, 'iso-8601', `${pointer}: ${JSON.stringify(value)} is not a valid date-time`);
  return t;
}

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
    const started = ms(s.startedAt, `${at}/startedAt`);
    if (isClosed(s)) {
      if (s.endedAt === undefined) {
        fail(`${at}/endedAt`, 'session-ended-at', `${s.id} is ${s.status} but has no endedAt`);
      }
      if (ms(s.endedAt, `${at}/endedAt`) < started) {
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

/** Items of `prev` stay; each may change only as `mayChange` allows, and status moves follow `table`. */
function checkRecords<T extends { id: string; status: string }>(
  prev: readonly T[] | undefined,
  next: readonly T[] | undefined,
  base: string,
  what: string,
  rules: { removed: string; transition: string },
  table: TransitionTable,
  mayChange: (before: T, after: T) => boolean,
): void {
  checkUniqueIds(asItems(next as unknown[] | undefined), base);
  const old = indexBy(asItems(prev as unknown[] | undefined));
  (next ?? []).forEach((item, k) => {
    const was = old.get(item.id)?.item as unknown as T | undefined;
    checkTransition(table, was ? was.status : null, item.status, {
      pointer: `${base}/${k}/status`,
      rule: rules.transition,
      subject: `${what} ${item.id}`,
    });
  });
  checkAppendOnly(
    asItems(prev as unknown[] | undefined),
    asItems(next as unknown[] | undefined),
    base,
    rules.removed,
    {
      mayChange: (a, b) => mayChange(a as unknown as T, b as unknown as T),
    },
  );
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

  checkRecords<Blocker>(
    old?.blockers,
    s.blockers,
    at('blockers'),
    'blocker',
    { removed: 'blockers-append-only', transition: 'blocker-transition' },
    BLOCKER_TRANSITIONS,
    (a, b) => a.status === 'open' && onlyChanged(a, b, ['resolvedAt', 'resolution']),
  );
  (s.blockers ?? []).forEach((b, k) => {
    if (b.status === 'resolved' && (b.resolution === undefined || b.resolvedAt === undefined)) {
      fail(
        at('blockers', k, b.resolution === undefined ? 'resolution' : 'resolvedAt'),
        'blocker-resolution-required',
        `${s.id}: blocker ${b.id} is resolved without ${b.resolution === undefined ? 'a resolution' : 'resolvedAt'}`,
      );
    }
  });

  checkRecords<Delegation>(
    old?.delegations,
    s.delegations,
    at('delegations'),
    'delegation',
    { removed: 'delegations-append-only', transition: 'delegation-transition' },
    DELEGATION_TRANSITIONS,
    (a, b) =>
      a.status === 'in-progress' && onlyChanged(a, b, ['completedAt', 'resultSummary', 'outputArtifacts']),
  );
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
      ms(d.completedAt!, at('delegations', k, 'completedAt')) <
      ms(d.startedAt, at('delegations', k, 'startedAt'))
    ) {
      fail(
        at('delegations', k, 'completedAt'),
        'delegation-result-recorded',
        `${s.id}: delegation ${d.id} completes before it started`,
      );
    }
  });

  checkRecords<Directive>(
    old?.directives,
    s.directives,
    at('directives'),
    'directive',
    { removed: 'directives-append-only', transition: 'directive-transition' },
    DIRECTIVE_TRANSITIONS,
    (a, b) => a.status === 'active' && onlyChanged(a, b, ['revokedAt', 'revokedReason']),
  );
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

function checkTimes(next: WorkflowSessions): void {
  const all = times(next).map(([p, v]) => [p, ms(v, p)] as const);
  const updated = ms(next.updatedAt, '/updatedAt');
  for (const [p, t] of all) {
    if (t > updated) {
      fail(
        '/updatedAt',
        'updated-at-latest',
        `/updatedAt (${next.updatedAt}) is older than ${p}: it must be the last change to the file`,
        { other: p },
      );
    }
  }
}

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
  const { updatedAt: _a, ...a } = next;
  const { updatedAt: _b, ...b } = prev;
  if (deepEqual(a, b)) return;
  const t = Date.parse(next.updatedAt);
  if (Number.isNaN(t) || t > Date.parse(prev.updatedAt)) return;
  // Never behind anything recorded in the file, even with a writer's clock behind the data.
  next.updatedAt = isoTime(Math.max(now, latestTime(next)));
}

function check(nextBody: JsonObject, prevBody: JsonObject | null, ctx: CommitContext): undefined {
  const next = nextBody as unknown as WorkflowSessions;
  const prev = prevBody as unknown as WorkflowSessions | null;
  touch(next, prev, ctx.now);
  checkSessionList(next, prev);
  const before = new Map((prev?.sessions ?? []).map((s) => [s.id, s]));
  next.sessions.forEach((s, i) => {
    checkSession(s, before.get(s.id), i);
  });
  checkTimes(next);
  return undefined;
}

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
