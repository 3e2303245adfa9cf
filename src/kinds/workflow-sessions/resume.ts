// What an agent needs to resume a workflow (the skill's Resume steps): the session activeSessionId
// names, its phase, open todos (to rebuild manage_todo_list), unresolved blockers, high-severity
// lessons across all sessions, standing directives and delegations still in progress (Gate C). Plus a
// compact text rendering: agents pay per token, so empty sections are left out.

import type { JsonObject } from '../../core/types.js';
import {
  type Blocker,
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
  /** Todos not completed, in-progress first, in list order otherwise. */
  openTodos: Todo[];
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
  return {
    workflow: typeof w.workflow === 'string' ? w.workflow : null,
    activeSession: active ? { id: active.id, label: active.label, startedAt: active.startedAt } : null,
    lastSession: !active && last ? { id: last.id, label: last.label, status: last.status } : null,
    phase: active?.currentPhase ?? null,
    openTodos: [
      ...todos.filter((t) => t.status === 'in-progress'),
      ...todos.filter((t) => t.status === 'not-started'),
    ],
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

const clip = (s: string, n = 100) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/**
 * A few lines for an agent, e.g.
 * ```
 * deploy: session-3 "Add auth" phase=build
 * todos: [~] 2 Wire login | [ ] 3 Tests
 * blockers: blk-1 CI flaky
 * ```
 */
export function renderResume(r: ResumeSummary): string {
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
  if (r.openTodos.length > 0) {
    lines.push(
      `todos: ${r.openTodos.map((t) => `[${t.status === 'in-progress' ? '~' : ' '}] ${t.id} ${clip(t.title, 60)}`).join(' | ')}`,
    );
  }
  if (r.unresolvedBlockers.length > 0) {
    lines.push(
      `blockers: ${r.unresolvedBlockers.map((b) => `${b.id} ${clip(b.description, 80)}`).join(' | ')}`,
    );
  }
  if (r.delegationsInProgress.length > 0) {
    lines.push(
      `delegations in progress: ${r.delegationsInProgress.map((d) => `${d.session}/${d.id} ${d.agent}: ${clip(d.task, 60)}`).join(' | ')}`,
    );
  }
  if (r.directives.length > 0) {
    lines.push(`directives: ${r.directives.map((d) => `${d.id} ${clip(d.text)}`).join(' | ')}`);
  }
  for (const l of r.highSeverityLessons) {
    lines.push(`lesson! ${l.session} ${l.category}: ${clip(l.summary)}`);
  }
  return `${lines.join('\n')}\n`;
}
