// What an agent needs to resume a workflow (the skill's Resume steps and rule 4: task status alone is not
// enough): the session activeSessionId names, its phase, its todos (to rebuild manage_todo_list), its
// decisions (standing workarounds first, with what the correct solution would be and when to revisit),
// unresolved blockers, high-severity lessons across all sessions, standing directives and delegations
// still in progress (Gate C). Plus a compact text rendering: agents pay per token, so empty sections are
// left out and long lists are cut, saying how many more `--json` holds (it holds everything, uncut).

import type { JsonObject } from '../../core/types.js';
import {
  type Blocker,
  type Decision,
  type Delegation,
  type Directive,
  directivesToCarry,
  type Lesson,
  type Session,
  type Todo,
  type WorkflowSessions,
} from './model.js';

export interface ResumeSummary {
  workflow: string | null;
  /** The session to continue (the one activeSessionId names), or null when none is active. */
  activeSession: { id: string; label: string; startedAt: string } | null;
  /** The most recent session when none is active (what was done last). */
  lastSession: { id: string; label: string; status: string } | null;
  phase: string | null;
  /** The active session's todos, all of them, in list order with their statuses and full titles. */
  todos: Todo[];
  /** Todos not completed, in-progress first, in list order otherwise. */
  openTodos: Todo[];
  /**
   * The active session's decisions: workarounds first (each with `correct_solution`,
   * `why_not_implemented`, `revisit_when`), then the others; in the order recorded within each.
   */
  decisions: Decision[];
  unresolvedBlockers: Blocker[];
  /** Lessons of severity high from every session, oldest first, with the session they come from. */
  highSeverityLessons: Array<Lesson & { session: string }>;
  /** Active directives: the active session's, or those a new session would carry forward. */
  directives: Directive[];
  /** Delegations still in progress in any session: incomplete sub-agent work (Gate C). */
  delegationsInProgress: Array<Delegation & { session: string }>;
}

/** Summarizes a `workflow-sessions` body for resumption. */
export function resumeSummary(body: JsonObject): ResumeSummary {
  const w = body as unknown as WorkflowSessions;
  const sessions: Session[] = Array.isArray(w.sessions) ? w.sessions : [];
  const active =
    sessions.find((s) => s.id === w.activeSessionId && s.status === 'active') ??
    sessions.find((s) => s.status === 'active');
  const last = sessions[sessions.length - 1];
  const todos = active?.todos ?? [];
  const decisions = active?.decisions ?? [];
  return {
    workflow: typeof w.workflow === 'string' ? w.workflow : null,
    activeSession: active ? { id: active.id, label: active.label, startedAt: active.startedAt } : null,
    lastSession: !active && last ? { id: last.id, label: last.label, status: last.status } : null,
    phase: active?.currentPhase ?? null,
    todos,
    openTodos: [
      ...todos.filter((t) => t.status === 'in-progress'),
      ...todos.filter((t) => t.status === 'not-started'),
    ],
    decisions: [...decisions.filter(isWorkaround), ...decisions.filter((d) => !isWorkaround(d))],
    unresolvedBlockers: (active?.blockers ?? []).filter((b) => b.status === 'open'),
    highSeverityLessons: sessions.flatMap((s) =>
      (s.lessonsLearned ?? []).filter((l) => l.severity === 'high').map((l) => ({ ...l, session: s.id })),
    ),
    directives: active
      ? (active.directives ?? []).filter((d) => d.status === 'active')
      : directivesToCarry(sessions),
    delegationsInProgress: sessions.flatMap((s) =>
      (s.delegations ?? []).filter((d) => d.status === 'in-progress').map((d) => ({ ...d, session: s.id })),
    ),
  };
}

const isWorkaround = (d: Decision): boolean => d.workaround === true || d.type === 'workaround';

/**
 * How many entries of each list the text form shows; the rest are counted (`+N more`) and are in
 * `--json`. Sized so that a file of 3 sessions, 100 todos, 20 decisions and 30 lessons renders in well
 * under 1,500 tokens (bench row 6).
 */
export const RESUME_TEXT_LIMITS = {
  todos: 15,
  workarounds: 5,
  decisions: 5,
  blockers: 5,
  delegations: 5,
  directives: 10,
  lessons: 8,
} as const;

const clip = (s: string | undefined, n = 100) =>
  s === undefined ? '?' : s.length > n ? `${s.slice(0, n - 1)}…` : s;

/** The first `max` of `items`, rendered, joined by ` | `, with a count of the rest. */
function list<T>(items: readonly T[], max: number, one: (x: T) => string, rest = 'more'): string {
  const shown = items.slice(0, max).map(one).join(' | ');
  return items.length > max ? `${shown} | +${items.length - max} ${rest}` : shown;
}

/**
 * A few lines for an agent, e.g.
 * ```
 * deploy: session-3 "Add auth" phase=build
 * todos: [~] 2 Wire login | [ ] 3 Tests; 1 of 3 done
 * blockers: blk-1 CI flaky
 * workaround: Poll the queue → correct: subscribe to its events; revisit: when the broker has webhooks
 * decisions: [architecture] Use short-lived JWTs
 * ```
 */
export function renderResume(r: ResumeSummary): string {
  const L = RESUME_TEXT_LIMITS;
  const head = r.workflow ? `${r.workflow}: ` : '';
  const lines: string[] = [];
  if (r.activeSession) {
    lines.push(
      `${head}${r.activeSession.id} "${r.activeSession.label}"${r.phase ? ` phase=${r.phase}` : ''}`,
    );
  } else {
    lines.push(
      `${head}no active session${r.lastSession ? ` (last: ${r.lastSession.id} "${r.lastSession.label}" ${r.lastSession.status})` : ''}; start one`,
    );
  }
  const done = r.todos.length - r.openTodos.length;
  if (r.openTodos.length > 0) {
    const open = list(
      r.openTodos,
      L.todos,
      (t) => `[${t.status === 'in-progress' ? '~' : ' '}] ${t.id} ${clip(t.title, 60)}`,
      'more open',
    );
    lines.push(`todos: ${open}${done > 0 ? `; ${done} of ${r.todos.length} done` : ''}`);
  } else if (done > 0) {
    lines.push(`todos: all ${done} done`);
  }
  if (r.unresolvedBlockers.length > 0) {
    lines.push(
      `blockers: ${list(r.unresolvedBlockers, L.blockers, (b) => `${b.id} ${clip(b.description, 80)}`)}`,
    );
  }
  const workarounds = r.decisions.filter(isWorkaround);
  for (const d of workarounds.slice(0, L.workarounds)) {
    lines.push(
      `workaround: ${clip(d.description, 80)} → correct: ${clip(d.correct_solution, 100)}; revisit: ${clip(d.revisit_when, 80)}`,
    );
  }
  if (workarounds.length > L.workarounds) {
    lines.push(`workaround: +${workarounds.length - L.workarounds} more`);
  }
  // The most recent decisions matter most when picking work up.
  const others = r.decisions.filter((d) => !isWorkaround(d));
  if (others.length > 0) {
    const recent = others.slice(-L.decisions);
    const earlier = others.length - recent.length;
    lines.push(
      `decisions: ${recent.map((d) => `[${d.type}] ${clip(d.description, 70)}`).join(' | ')}${earlier > 0 ? ` | +${earlier} earlier` : ''}`,
    );
  }
  if (r.delegationsInProgress.length > 0) {
    lines.push(
      `delegations in progress: ${list(r.delegationsInProgress, L.delegations, (d) => `${d.session}/${d.id} ${d.agent}: ${clip(d.task, 60)}`)}`,
    );
  }
  if (r.directives.length > 0) {
    lines.push(`directives: ${list(r.directives, L.directives, (d) => `${d.id} ${clip(d.text)}`)}`);
  }
  // The most recent high-severity lessons, oldest of them first.
  const earlierLessons = r.highSeverityLessons.length - L.lessons;
  if (earlierLessons > 0) lines.push(`lesson! +${earlierLessons} earlier`);
  for (const l of r.highSeverityLessons.slice(-L.lessons)) {
    lines.push(`lesson! ${l.session} ${l.category}: ${clip(l.summary)}`);
  }
  return `${lines.join('\n')}\n`;
}
