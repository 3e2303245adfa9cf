// Types, tables and small readers of kind `workflow-sessions`, shared by its rules, operations, gates,
// resume summary and file codec.
import { ptr, type TransitionTable } from '../rules.js';
import type {
  DecisionType,
  DelegationStatus,
  LessonCategory,
  LessonSeverity,
  SessionStatus,
  TodoStatus,
} from './schema.js';

export interface Todo {
  id: number | string;
  title: string;
  description?: string;
  status: TodoStatus;
}
export interface Decision {
  type: DecisionType;
  description: string;
  rationale?: string;
  alternatives_considered?: string[];
  workaround: boolean;
  correct_solution?: string;
  why_not_implemented?: string;
  revisit_when?: string;
  timestamp?: string;
}
export interface Blocker {
  id: string;
  description: string;
  status: 'open' | 'resolved';
  raisedAt: string;
  resolvedAt?: string;
  resolution?: string;
}
export interface Lesson {
  category: LessonCategory;
  summary: string;
  detail?: string;
  appliesTo?: string[];
  severity: LessonSeverity;
  recordedAt?: string;
}
export interface Delegation {
  id: string;
  agent: string;
  task: string;
  status: DelegationStatus;
  startedAt: string;
  completedAt?: string;
  resultSummary?: string;
  outputArtifacts?: string[];
}
export interface Directive {
  id: string;
  text: string;
  status: 'active' | 'revoked';
  issuedAt: string;
  carriedFrom?: string;
  revokedAt?: string;
  revokedReason?: string;
}
export interface Session {
  id: string;
  label: string;
  status: SessionStatus;
  startedAt: string;
  updatedAt?: string;
  endedAt?: string;
  summary?: string;
  currentPhase?: string | null;
  todos: Todo[];
  decisions?: Decision[];
  blockers?: Blocker[];
  artifacts?: string[];
  lessonsLearned?: Lesson[];
  delegations?: Delegation[];
  directives?: Directive[];
}
/** A workflow state file as stored (the typed view of a validated `workflow-sessions` body). */
export interface WorkflowSessions {
  workflow?: string;
  createdAt?: string;
  updatedAt: string;
  activeSessionId: string | null;
  sessions: Session[];
}

/** active → completed | abandoned; completed and abandoned are final. */
export const SESSION_TRANSITIONS: TransitionTable = {
  active: ['completed', 'abandoned'],
  completed: [],
  abandoned: [],
};
export const BLOCKER_TRANSITIONS: TransitionTable = { open: ['resolved'], resolved: [] };
export const DELEGATION_TRANSITIONS: TransitionTable = {
  'in-progress': ['completed', 'failed'],
  completed: [],
  failed: [],
};
export const DIRECTIVE_TRANSITIONS: TransitionTable = { active: ['revoked'], revoked: [] };

export const isClosed = (s: { status?: unknown }): boolean =>
  s.status === 'completed' || s.status === 'abandoned';

/** `session-<n>` for the n-th session (from 1). */
export const sessionId = (n: number): string => `session-${n}`;

/** The most recent completed session before index `before` (default: all), or undefined. */
export function lastCompleted(sessions: readonly Session[], before = sessions.length): Session | undefined {
  for (let i = Math.min(before, sessions.length) - 1; i >= 0; i--) {
    const s = sessions[i];
    if (s?.status === 'completed') return s;
  }
  return undefined;
}

/** The directives a new session starts with: the active ones of the most recent completed session. */
export function directivesToCarry(sessions: readonly Session[], before = sessions.length): Directive[] {
  const from = lastCompleted(sessions, before);
  return (from?.directives ?? []).filter((d) => d.status === 'active');
}

export { isoTime } from '../../core/time.js';

/** Calls `fn` for each object item of `v` (with its index), skipping anything else. */
function each<T>(v: T[] | undefined, fn: (item: T, i: number) => void): void {
  if (!Array.isArray(v)) return;
  v.forEach((x, i) => {
    if (typeof x === 'object' && x !== null) fn(x, i);
  });
}

/** Every time field, with its pointer (tolerates bodies that do not match the schema, for the gates). */
export function times(b: WorkflowSessions): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const at = (v: unknown, pointer: string) => {
    if (typeof v === 'string') out.push([pointer, v]);
  };
  at(b.updatedAt, '/updatedAt');
  at(b.createdAt, '/createdAt');
  each(b.sessions, (s, i) => {
    const add = (v: unknown, ...p: Array<string | number>) => at(v, ptr('sessions', i, ...p));
    add(s.startedAt, 'startedAt');
    add(s.updatedAt, 'updatedAt');
    add(s.endedAt, 'endedAt');
    each(s.decisions, (d, k) => add(d.timestamp, 'decisions', k, 'timestamp'));
    each(s.blockers, (d, k) => {
      add(d.raisedAt, 'blockers', k, 'raisedAt');
      add(d.resolvedAt, 'blockers', k, 'resolvedAt');
    });
    each(s.lessonsLearned, (d, k) => add(d.recordedAt, 'lessonsLearned', k, 'recordedAt'));
    each(s.delegations, (d, k) => {
      add(d.startedAt, 'delegations', k, 'startedAt');
      add(d.completedAt, 'delegations', k, 'completedAt');
    });
    each(s.directives, (d, k) => {
      add(d.issuedAt, 'directives', k, 'issuedAt');
      add(d.revokedAt, 'directives', k, 'revokedAt');
    });
  });
  return out;
}

/** The latest time recorded anywhere in the file (epoch ms), or -Infinity. */
export function latestTime(b: WorkflowSessions): number {
  let max = -Infinity;
  for (const [, v] of times(b)) {
    const t = Date.parse(v);
    if (t > max) max = t;
  }
  return max;
}
