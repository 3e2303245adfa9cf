// Operations of kind `workflow-sessions` (`agentstate session <operation> <workflow> …`): pure functions
// from the current body to the next, run by the store as one CAS commit. Each one that changes the
// active session stamps its `updatedAt` and the file's `updatedAt` with now (Gate B: every change is
// persisted at once, one commit per change). The kind also brings two operations of the service table,
// `gate` and `resume_workflow`, over the project's `.copilot/state/*.json` files and the store.
// What an agent needs to resume a workflow (the skill's Resume steps and rule 4: task status alone is not
// enough): the session activeSessionId names, its phase, its todos (to rebuild manage_todo_list), its
// decisions (standing workarounds first, with what the correct solution would be and when to revisit),
// unresolved blockers, high-severity lessons across all sessions, standing directives and delegations
// still in progress (Gate C). Plus a compact text rendering: agents pay per token, so empty sections are
// left out and long lists are cut, saying how many more `--json` holds (it holds everything, uncut).

import { join } from 'node:path';
import { inputSchema } from '../../core/json-schema.js';
import type { KindOperation } from '../../core/kind.js';
import { OBJECT } from '../../core/output-schemas.js';
import { type StoreServices, serviceOperation } from '../../core/services.js';
import type { Json, JsonObject } from '../../core/types.js';
import { InvalidInputError, InvalidTransitionError, NotFoundError } from '../../errors.js';
import { PROJECT, PROJECT_DOC, root } from '../project.js';
import { isPlainObject, ptr } from '../rules.js';
import {
  type Blocker,
  type Decision,
  type Delegation,
  type Directive,
  directivesToCarry,
  isoTime,
  type Lesson,
  lastCompleted,
  type Session,
  sessionId,
  type Todo,
  type WorkflowSessions,
} from './model.js';
import {
  DECISION_TYPES,
  type DecisionType,
  LESSON_CATEGORIES,
  LESSON_SEVERITIES,
  type LessonCategory,
  type LessonSeverity,
  TODO_STATUSES,
  type TodoStatus,
} from './schema.js';

const KIND = 'workflow-sessions';
const out = (w: WorkflowSessions): JsonObject => w as unknown as JsonObject;

function load(body: JsonObject | null, op: string): WorkflowSessions {
  if (body === null) {
    throw new NotFoundError(`${op}: the ${KIND} document does not exist; create it with start-session`, {
      operation: op,
    });
  }
  return structuredClone(body) as unknown as WorkflowSessions;
}

/** The active session (and its index), or INVALID_TRANSITION: there is nothing to record into. */
function active(w: WorkflowSessions, op: string): [Session, number] {
  const i = w.sessions.findIndex((s) => s.status === 'active');
  const s = w.sessions[i];
  if (!s) {
    throw new InvalidTransitionError(
      `${op}: no session is active; start one with start-session (Gate A: a session must be active before work)`,
      { pointer: '/activeSessionId', rule: 'active-session-required', operation: op },
    );
  }
  return [s, i];
}

function touch(w: WorkflowSessions, s: Session | undefined, now: number): void {
  const t = isoTime(now);
  if (s) s.updatedAt = t;
  w.updatedAt = t;
}

/** An operation on the active session: runs `fn` on it, then stamps the times. */
function onActive(
  op: string,
  fn: (s: Session, args: Record<string, unknown>, now: string, w: WorkflowSessions) => void,
): KindOperation['apply'] {
  return (body, args, ctx) => {
    const w = load(body, op);
    const [s] = active(w, op);
    fn(s, args, isoTime(ctx.now), w);
    touch(w, s, ctx.now);
    return out(w);
  };
}

function badInput(op: string, field: string, why: string): never {
  throw new InvalidInputError(`${op}: ${field} ${why}`, { field, operation: op });
}

/**
 * The entry of the active session's `list` (its blockers, delegations or directives) that the argument
 * `field` (`blocker`, `delegation`, `directive`) names; INVALID_INPUT when it has none of that id.
 */
function entry<T extends { id: string }>(
  list: T[] | undefined,
  field: string,
  s: Session,
  args: Record<string, unknown>,
  op: string,
): T {
  const e = (list ?? []).find((x) => x.id === args[field]);
  if (!e) badInput(op, field, `${JSON.stringify(args[field])} is not a ${field} of ${s.id}`);
  return e;
}

/** Todos as manage_todo_list gives them: `[{id, title, status?, description?}]` (status defaults to not-started). */
function todosFrom(value: unknown, op: string): Todo[] {
  if (!Array.isArray(value)) return badInput(op, 'todos', 'must be an array of {id, title, status}');
  return value.map((v: Json, i): Todo => {
    const f = `todos[${i}]`;
    if (!isPlainObject(v)) return badInput(op, f, 'must be an object {id, title, status}');
    const { id, title, status = 'not-started', description, ...extra } = v;
    if (Object.keys(extra).length > 0) badInput(op, f, `has unknown fields ${Object.keys(extra).join(', ')}`);
    if (
      !(typeof id === 'string' && id !== '') &&
      !(typeof id === 'number' && Number.isSafeInteger(id) && id >= 0)
    ) {
      badInput(op, `${f}.id`, 'must be a non-negative integer or a non-empty string');
    }
    if (typeof title !== 'string' || title === '') badInput(op, `${f}.title`, 'must be a non-empty string');
    if (typeof status !== 'string' || !(TODO_STATUSES as readonly string[]).includes(status)) {
      badInput(op, `${f}.status`, `must be one of ${TODO_STATUSES.join(', ')}`);
    }
    if (description !== undefined && typeof description !== 'string')
      badInput(op, `${f}.description`, 'must be a string');
    return {
      id: id as string | number,
      title: title as string,
      ...(description === undefined ? {} : { description: description as string }),
      status: status as TodoStatus,
    };
  });
}

/** The next free `<prefix>-<n>` id among `ids`. */
function nextId(prefix: string, ids: Iterable<string>): string {
  let max = 0;
  for (const id of ids) {
    const m = new RegExp(`^${prefix}-(\\d+)$`).exec(id);
    if (m) max = Math.max(max, Number(m[1]));
  }
  return `${prefix}-${max + 1}`;
}

function closeSession(
  w: WorkflowSessions,
  s: Session,
  status: 'completed' | 'abandoned',
  now: number,
  summary?: string,
): void {
  s.status = status;
  s.endedAt = isoTime(now);
  s.updatedAt = isoTime(now);
  if (summary !== undefined) s.summary = summary;
  w.activeSessionId = null;
}

const startSession: KindOperation = {
  name: 'start-session',
  summary:
    'Start a new session (creating the file if needed): closes the active one as you say, carries directives forward from the most recent completed session',
  positional: 'label',
  input: {
    label: { type: 'string', required: true },
    close_previous: { type: 'string', enum: ['completed', 'abandoned'] },
    previous_summary: { type: 'text' },
    todos: { type: 'json' },
    phase: { type: 'string' },
    workflow: { type: 'name' },
  },
  apply(body, args, ctx) {
    const now = isoTime(ctx.now);
    const w: WorkflowSessions =
      body === null
        ? {
            ...(typeof args.workflow === 'string' ? { workflow: args.workflow } : {}),
            createdAt: now,
            updatedAt: now,
            activeSessionId: null,
            sessions: [],
          }
        : load(body, 'start-session');
    if ((args.label as string).trim() === '') badInput('start-session', 'label', 'must not be empty');
    const i = w.sessions.findIndex((s) => s.status === 'active');
    const current = w.sessions[i];
    if (current) {
      const how = args.close_previous as 'completed' | 'abandoned' | undefined;
      if (!how) {
        throw new InvalidTransitionError(
          `start-session: ${current.id} (${current.label}) is still active; say how it ended with close_previous completed|abandoned (Gate D)`,
          { pointer: ptr('sessions', i, 'status'), rule: 'previous-session-closed', session: current.id },
        );
      }
      closeSession(w, current, how, ctx.now, args.previous_summary as string | undefined);
    }
    const from = lastCompleted(w.sessions);
    const directives: Directive[] = directivesToCarry(w.sessions).map((d) => ({
      ...structuredClone(d),
      carriedFrom: from!.id,
    }));
    const session: Session = {
      id: sessionId(w.sessions.length + 1),
      label: args.label as string,
      status: 'active',
      startedAt: now,
      updatedAt: now,
      ...(typeof args.phase === 'string' ? { currentPhase: args.phase } : {}),
      todos: args.todos === undefined ? [] : todosFrom(args.todos, 'start-session'),
      decisions: [],
      blockers: [],
      artifacts: [],
      lessonsLearned: [],
      delegations: [],
      directives,
    };
    w.sessions.push(session);
    w.activeSessionId = session.id;
    w.updatedAt = now;
    return out(w);
  },
};

const setTodos: KindOperation = {
  name: 'set-todos',
  summary: 'Replace the active session todos with the manage_todo_list state (Gate B: after every change)',
  input: { todos: { type: 'json', required: true } },
  apply: onActive('set-todos', (s, args) => {
    s.todos = todosFrom(args.todos, 'set-todos');
  }),
};

const updateTodo: KindOperation = {
  name: 'update-todo',
  summary: 'Set the status (and optionally the title) of one todo of the active session',
  positional: 'todo',
  input: {
    todo: { type: 'name', required: true },
    status: { type: 'string', required: true, enum: TODO_STATUSES },
    title: { type: 'string' },
  },
  apply: onActive('update-todo', (s, args) => {
    const t = s.todos.find((x) => String(x.id) === args.todo);
    if (!t) badInput('update-todo', 'todo', `${JSON.stringify(args.todo)} is not a todo of ${s.id}`);
    t.status = args.status as TodoStatus;
    if (typeof args.title === 'string' && args.title !== '') t.title = args.title;
  }),
};

/** A todo's id as an argument gives it: a number when it is one (`3`), else the string. */
const todoId = (v: string): string | number => (/^(0|[1-9]\d{0,14})$/.test(v) ? Number(v) : v);

const addTodo: KindOperation = {
  name: 'add-todo',
  summary:
    'Add a todo to the active session, or set the title, status and description of the todo with that id',
  positional: 'title',
  input: {
    title: { type: 'string', required: true },
    todo: { type: 'name' },
    status: { type: 'string', enum: TODO_STATUSES },
    description: { type: 'text' },
  },
  apply: onActive('add-todo', (s, args) => {
    if ((args.title as string).trim() === '') badInput('add-todo', 'title', 'must not be empty');
    const id =
      args.todo === undefined
        ? String(s.todos.reduce((n, t) => (typeof t.id === 'number' ? Math.max(n, t.id) : n), 0) + 1)
        : (args.todo as string);
    const t = s.todos.find((x) => String(x.id) === id);
    const description = typeof args.description === 'string' ? { description: args.description } : undefined;
    if (t) {
      t.title = args.title as string;
      if (args.status !== undefined) t.status = args.status as TodoStatus;
      if (description) t.description = description.description;
      return;
    }
    s.todos.push({
      id: todoId(id),
      title: args.title as string,
      ...description,
      status: (args.status as TodoStatus | undefined) ?? 'not-started',
    });
  }),
};

const removeTodo: KindOperation = {
  name: 'remove-todo',
  summary: 'Take a todo out of the active session (a todo that no longer applies; a done one is completed)',
  positional: 'todo',
  input: { todo: { type: 'name', required: true } },
  apply: onActive('remove-todo', (s, args) => {
    const at = s.todos.findIndex((x) => String(x.id) === args.todo);
    if (at < 0) badInput('remove-todo', 'todo', `${JSON.stringify(args.todo)} is not a todo of ${s.id}`);
    s.todos.splice(at, 1);
  }),
};

const setPhase: KindOperation = {
  name: 'set-phase',
  summary: 'Set the current phase of the active session',
  positional: 'phase',
  input: { phase: { type: 'string', required: true } },
  apply: onActive('set-phase', (s, args) => {
    s.currentPhase = args.phase as string;
  }),
};

const logDecision: KindOperation = {
  name: 'log-decision',
  summary:
    'Log a typed decision (architecture | workaround | platform-limitation | user-requirement); a workaround needs correct_solution, why_not_implemented, revisit_when',
  positional: 'description',
  input: {
    description: { type: 'text', required: true },
    type: { type: 'string', required: true, enum: DECISION_TYPES },
    rationale: { type: 'text' },
    alternatives: { type: 'names' },
    workaround: { type: 'bool' },
    correct_solution: { type: 'text' },
    why_not_implemented: { type: 'text' },
    revisit_when: { type: 'text' },
  },
  apply: onActive('log-decision', (s, args, now) => {
    const type = args.type as DecisionType;
    const pick = (k: string) => (typeof args[k] === 'string' ? { [k]: args[k] as string } : {});
    s.decisions ??= [];
    s.decisions.push({
      type,
      description: args.description as string,
      ...pick('rationale'),
      ...(args.alternatives === undefined ? {} : { alternatives_considered: args.alternatives as string[] }),
      workaround: (args.workaround as boolean | undefined) ?? type === 'workaround',
      ...pick('correct_solution'),
      ...pick('why_not_implemented'),
      ...pick('revisit_when'),
      timestamp: now,
    });
  }),
};

const logBlocker: KindOperation = {
  name: 'log-blocker',
  summary: 'Record a blocker in the active session',
  positional: 'description',
  input: { description: { type: 'text', required: true }, blocker: { type: 'name' } },
  apply: onActive('log-blocker', (s, args, now) => {
    s.blockers ??= [];
    const id =
      (args.blocker as string | undefined) ??
      nextId(
        'blk',
        s.blockers.map((b) => b.id),
      );
    if (s.blockers.some((b) => b.id === id))
      badInput('log-blocker', 'blocker', `${id} is already a blocker of ${s.id}`);
    s.blockers.push({ id, description: args.description as string, status: 'open', raisedAt: now });
  }),
};

const resolveBlocker: KindOperation = {
  name: 'resolve-blocker',
  summary: 'Resolve an open blocker of the active session',
  positional: 'blocker',
  input: { blocker: { type: 'name', required: true }, resolution: { type: 'text', required: true } },
  apply: onActive('resolve-blocker', (s, args, now) => {
    const b = entry(s.blockers, 'blocker', s, args, 'resolve-blocker');
    if (b.status === 'resolved') {
      throw new InvalidTransitionError(`resolve-blocker: blocker ${b.id} is already resolved`, {
        from: 'resolved',
        to: 'resolved',
        rule: 'blocker-transition',
      });
    }
    b.status = 'resolved';
    b.resolvedAt = now;
    b.resolution = args.resolution as string;
  }),
};

const logLesson: KindOperation = {
  name: 'log-lesson',
  summary: 'Append a lesson learned to the active session (category, severity low|medium|high)',
  positional: 'summary',
  input: {
    summary: { type: 'text', required: true },
    category: { type: 'string', required: true, enum: LESSON_CATEGORIES },
    severity: { type: 'string', required: true, enum: LESSON_SEVERITIES },
    detail: { type: 'text' },
    applies_to: { type: 'names' },
  },
  apply: onActive('log-lesson', (s, args, now) => {
    s.lessonsLearned ??= [];
    s.lessonsLearned.push({
      category: args.category as LessonCategory,
      summary: args.summary as string,
      ...(typeof args.detail === 'string' ? { detail: args.detail } : {}),
      ...(args.applies_to === undefined ? {} : { appliesTo: args.applies_to as string[] }),
      severity: args.severity as LessonSeverity,
      recordedAt: now,
    });
  }),
};

const addArtifact: KindOperation = {
  name: 'add-artifact',
  summary: 'Record the path of a key artifact in the active session',
  positional: 'path',
  input: { path: { type: 'string', required: true } },
  apply: onActive('add-artifact', (s, args) => {
    const path = args.path as string;
    if (path === '') badInput('add-artifact', 'path', 'must not be empty');
    s.artifacts ??= [];
    if (!s.artifacts.includes(path)) s.artifacts.push(path);
  }),
};

const openDelegation: KindOperation = {
  name: 'open-delegation',
  summary: 'Persist a delegation as in-progress before spawning the sub-agent (Gate F)',
  positional: 'task',
  input: {
    task: { type: 'text', required: true },
    agent: { type: 'name', required: true },
    delegation: { type: 'name' },
  },
  apply: onActive('open-delegation', (s, args, now, w) => {
    s.delegations ??= [];
    const all = w.sessions.flatMap((x) => (x.delegations ?? []).map((d) => d.id));
    const id = (args.delegation as string | undefined) ?? nextId('del', all);
    if (s.delegations.some((d) => d.id === id))
      badInput('open-delegation', 'delegation', `${id} is already a delegation of ${s.id}`);
    s.delegations.push({
      id,
      agent: args.agent as string,
      task: args.task as string,
      status: 'in-progress',
      startedAt: now,
    });
  }),
};

const closeDelegation: KindOperation = {
  name: 'close-delegation',
  summary: 'Record the result of a delegation when the sub-agent returns (Gate G)',
  positional: 'delegation',
  input: {
    delegation: { type: 'name', required: true },
    result_summary: { type: 'text', required: true },
    output_artifacts: { type: 'names' },
    status: { type: 'string', enum: ['completed', 'failed'] },
  },
  apply: onActive('close-delegation', (s, args, now) => {
    const d = entry(s.delegations, 'delegation', s, args, 'close-delegation');
    if (d.status !== 'in-progress') {
      throw new InvalidTransitionError(`close-delegation: delegation ${d.id} is already ${d.status}`, {
        from: d.status,
        rule: 'delegation-transition',
      });
    }
    d.status = (args.status as 'completed' | 'failed' | undefined) ?? 'completed';
    d.completedAt = now;
    d.resultSummary = args.result_summary as string;
    d.outputArtifacts = (args.output_artifacts as string[] | undefined) ?? [];
  }),
};

const addDirective: KindOperation = {
  name: 'add-directive',
  summary: 'Add a standing user directive; it is carried into every later session until revoked (Gate H)',
  positional: 'text',
  input: { text: { type: 'text', required: true }, directive: { type: 'name' } },
  apply: onActive('add-directive', (s, args, now, w) => {
    if ((args.text as string).trim() === '') badInput('add-directive', 'text', 'must not be empty');
    s.directives ??= [];
    const all = w.sessions.flatMap((x) => (x.directives ?? []).map((d) => d.id));
    const id = (args.directive as string | undefined) ?? nextId('dir', all);
    if (all.includes(id))
      badInput('add-directive', 'directive', `${id} is already a directive of this workflow`);
    s.directives.push({ id, text: args.text as string, status: 'active', issuedAt: now });
  }),
};

const revokeDirective: KindOperation = {
  name: 'revoke-directive',
  summary: 'Revoke a directive, as the user asked; later sessions no longer carry it',
  positional: 'directive',
  input: { directive: { type: 'name', required: true }, reason: { type: 'text' } },
  apply: onActive('revoke-directive', (s, args, now) => {
    const d = entry(s.directives, 'directive', s, args, 'revoke-directive');
    if (d.status === 'revoked') {
      throw new InvalidTransitionError(`revoke-directive: directive ${d.id} is already revoked`, {
        from: 'revoked',
        rule: 'directive-transition',
      });
    }
    d.status = 'revoked';
    d.revokedAt = now;
    if (typeof args.reason === 'string') d.revokedReason = args.reason;
  }),
};

function closer(status: 'completed' | 'abandoned'): KindOperation {
  const name = status === 'completed' ? 'complete-session' : 'abandon-session';
  return {
    name,
    summary:
      status === 'completed'
        ? 'Complete the active session (refused while a delegation is in progress)'
        : 'Abandon the active session',
    ...(status === 'abandoned' ? { positional: 'summary' } : {}),
    input: { summary: { type: 'text' } },
    apply(body, args, ctx) {
      const w = load(body, name);
      const [s] = active(w, name);
      closeSession(w, s, status, ctx.now, args.summary as string | undefined);
      w.updatedAt = isoTime(ctx.now);
      return out(w);
    },
  };
}

export const sessionOperations: KindOperation[] = [
  startSession,
  setTodos,
  updateTodo,
  addTodo,
  removeTodo,
  setPhase,
  logDecision,
  logBlocker,
  resolveBlocker,
  logLesson,
  addArtifact,
  openDelegation,
  closeDelegation,
  addDirective,
  revokeDirective,
  closer('completed'),
  closer('abandoned'),
];

/** The project's `.copilot/state/*.json` files, each parsed or with why it could not be. */
async function readStateFiles(project: string) {
  const [{ existsSync, readdirSync }, { confineToProject }, { readViewFile }, { gateFile }] =
    await Promise.all([
      import('node:fs'),
      import('../../fs/confine.js'),
      import('../../fs/text.js'),
      import('./rules.js'),
    ]);
  const dir = join(project, '.copilot', 'state');
  if (!existsSync(dir)) return [];
  return readdirSync(confineToProject(project, dir))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => {
      const path = join(dir, f);
      try {
        return gateFile(path, readViewFile(path, project));
      } catch (err) {
        return { path, parseError: (err as Error).message };
      }
    });
}

/**
 * The operations of the service table this kind brings. They load with the table, so the gates, the resume
 * summary and the views are imported when one runs.
 */
export const sessionServiceOperations = [
  serviceOperation({
    name: 'gate',
    group: 'files',
    description:
      "Check a workflow-state gate (A-H, or all) over the project's .copilot/state files and, with an instance, the store.",
    input: inputSchema(
      {
        gate: { type: 'string', required: true, enum: ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'all'] },
        workflow: { type: 'name' },
        delegation: { type: 'name' },
        max_age_ms: { type: 'int', min: 1 },
        ...PROJECT,
      },
      {
        project: PROJECT_DOC,
        delegation: 'gates F/G: the delegation about to be spawned / just returned',
        max_age_ms: 'gate B: the longest the active session may go unchanged',
      },
    ),
    output: { anyOf: [OBJECT, { type: 'array', items: OBJECT }] },
    writes: false,
    local: true,
    instance: 'optional',
    async run(
      inst: StoreServices | null,
      i: { gate: string; workflow?: string; delegation?: string; max_age_ms?: number; project?: string },
    ) {
      const { checkGate, GATES } = await import('./rules.js');
      const files = await readStateFiles(root(i.project));
      let store: Record<string, { version: number; body: JsonObject }> | undefined;
      if (inst) {
        store = {};
        for (const d of await inst.docs.list({ kind: KIND })) {
          const doc = await inst.docs.get({ kind: KIND, id: d.id });
          store[d.id] = { version: doc.version, body: doc.body };
        }
      }
      const gates = i.gate === 'all' ? [...GATES] : [i.gate as (typeof GATES)[number]];
      const results = gates.map((g) =>
        checkGate(g, files, {
          ...(i.workflow !== undefined && { workflow: i.workflow }),
          ...(store && { store }),
          ...(i.delegation !== undefined && { delegation: i.delegation }),
          ...(i.max_age_ms !== undefined && { now: Date.now(), maxAgeMs: i.max_age_ms }),
        }),
      );
      return results.length === 1 ? results[0]! : results;
    },
  }),
  serviceOperation({
    name: 'resume_workflow',
    group: 'files',
    description:
      'What an agent needs to pick a workflow up: active session, phase, open todos, blockers, lessons, directives.',
    input: inputSchema({ workflow: { type: 'name', required: true }, ...PROJECT }, { project: PROJECT_DOC }),
    output: OBJECT,
    writes: false,
    local: true,
    instance: 'optional',
    async run(inst: StoreServices | null, i: { workflow: string; project?: string }) {
      const [{ existsSync }, { checkFileId }, { gateFile }, { readViewFile }] = await Promise.all([
        import('node:fs'),
        import('../file-id.js'),
        import('./rules.js'),
        import('../../fs/text.js'),
      ]);
      // The store is the truth; the file is the fallback when this store never saw the workflow.
      let body = inst ? ((await inst.docs.find(KIND, i.workflow))?.body ?? null) : null;
      if (!body) {
        // The workflow names the file: the same id rule as the kind's, so `../../package` reads nothing.
        checkFileId(i.workflow, KIND);
        const project = root(i.project);
        const path = join(project, '.copilot', 'state', `${i.workflow}.json`);
        const f = existsSync(path) ? gateFile(path, readViewFile(path, project)) : null;
        if (f?.parseError) {
          throw new NotFoundError(`${path} cannot be read: ${f.parseError}; try agentstate recover ${path}`);
        }
        body = f?.body ?? null;
      }
      if (!body) {
        throw new NotFoundError(
          `no workflow ${i.workflow}: neither the store nor .copilot/state/${i.workflow}.json has it`,
        );
      }
      return resumeSummary(body);
    },
  }),
] as const;

/** What `resumeSummary` reports: where the workflow stands and what to pick up next. */
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
