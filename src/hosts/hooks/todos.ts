// The hosts' todo and task tools, read as changes to a session's todo list: Claude Code's TodoWrite (the
// whole list), TaskCreate and TaskUpdate (one task each), and Codex's update_plan (the whole plan). And the
// last whole list in a host transcript, for when a tool call's own hook never ran (a host without the hook,
// a hook that timed out): PreCompact and Stop read it from the transcript's tail.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { InvalidInputError } from '../../errors.js';
import type { TodoStatus } from '../../kinds/workflow-sessions/schema.js';

/** The todo tools whose PostToolUse the hook mirrors (Claude Code's matcher). */
export const TODO_TOOLS = ['TodoWrite', 'TaskCreate', 'TaskUpdate', 'update_plan'] as const;

/** A todo as the session document keeps it (the workflow-sessions kind's shape). */
export interface TodoEntry {
  id: number | string;
  title: string;
  status: TodoStatus;
  description?: string;
}

/** What one tool call does to the list. */
export type TodoChange =
  | { op: 'replace'; todos: TodoEntry[] }
  | { op: 'upsert'; id?: string; title?: string; status?: TodoStatus; description?: string }
  | { op: 'remove'; id: string };

/** The most todos one list may hold. */
export const MAX_TODOS = 1000;
const MAX_TITLE = 1000;

/** pending | in_progress | completed (both hosts' words) → the kind's statuses. */
const STATUS: Record<string, TodoStatus> = {
  pending: 'not-started',
  in_progress: 'in-progress',
  completed: 'completed',
};

function bad(tool: string, field: string, why: string): never {
  throw new InvalidInputError(`${tool}: ${field} ${why}`, { field });
}

function status(tool: string, field: string, v: unknown): TodoStatus {
  if (typeof v !== 'string' || !Object.hasOwn(STATUS, v)) {
    bad(tool, field, `must be one of ${Object.keys(STATUS).join(', ')}`);
  }
  return STATUS[v]!;
}

function title(tool: string, field: string, v: unknown): string {
  if (typeof v !== 'string' || v.trim() === '') bad(tool, field, 'must be a non-empty string');
  return v.length > MAX_TITLE ? `${v.slice(0, MAX_TITLE - 1)}…` : v;
}

/** A whole list (`[{content|step, status}]`) numbered from 1 in its order. */
function wholeList(tool: string, field: string, list: unknown, key: 'content' | 'step'): TodoEntry[] {
  if (!Array.isArray(list)) bad(tool, field, 'must be a list');
  if (list.length > MAX_TODOS) bad(tool, field, `holds more than ${MAX_TODOS} items`);
  return list.map((t: unknown, i) => {
    if (t === null || typeof t !== 'object' || Array.isArray(t))
      bad(tool, `${field}[${i}]`, 'must be an object');
    const o = t as Record<string, unknown>;
    return {
      id: i + 1,
      title: title(tool, `${field}[${i}].${key}`, o[key]),
      status: status(tool, `${field}[${i}].status`, o.status),
    };
  });
}

/** The task id a TaskCreate answered with: `{task: {id}}`, `{id}`, `{taskId}`, or "Task #3 created…". */
function createdId(response: unknown): string | undefined {
  const pick = (v: unknown) =>
    typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v)) ? String(v) : undefined;
  if (response !== null && typeof response === 'object' && !Array.isArray(response)) {
    const r = response as Record<string, unknown>;
    const task = r.task;
    const fromTask =
      task !== null && typeof task === 'object' ? pick((task as Record<string, unknown>).id) : undefined;
    return fromTask ?? pick(r.id) ?? pick(r.taskId) ?? pick(r.task_id);
  }
  if (typeof response === 'string') return /#(\w+)/.exec(response)?.[1];
  return undefined;
}

/** The change a todo tool call makes, or null for a tool that is not one (or a read: TaskGet, TaskList). */
export function todoChange(
  tool: string,
  input: Record<string, unknown>,
  response?: unknown,
): TodoChange | null {
  switch (tool) {
    case 'TodoWrite':
      return { op: 'replace', todos: wholeList(tool, 'todos', input.todos, 'content') };
    case 'update_plan':
      return { op: 'replace', todos: wholeList(tool, 'plan', input.plan, 'step') };
    case 'TaskCreate': {
      const id = createdId(response);
      const description = input.description;
      return {
        op: 'upsert',
        ...(id !== undefined ? { id } : {}),
        title: title(tool, 'subject', input.subject),
        status: 'not-started',
        ...(typeof description === 'string' && description !== '' ? { description } : {}),
      };
    }
    case 'TaskUpdate': {
      const id = input.taskId;
      if (typeof id !== 'string' && !(typeof id === 'number' && Number.isSafeInteger(id))) {
        bad(tool, 'taskId', 'must be a string or an integer');
      }
      if (input.status === 'deleted') return { op: 'remove', id: String(id) };
      return {
        op: 'upsert',
        id: String(id),
        ...(input.subject === undefined ? {} : { title: title(tool, 'subject', input.subject) }),
        ...(input.status === undefined ? {} : { status: status(tool, 'status', input.status) }),
        ...(typeof input.description === 'string' ? { description: input.description } : {}),
      };
    }
    default:
      return null;
  }
}

/** How much of a transcript's end is read for its last whole list. */
export const TRANSCRIPT_TAIL_BYTES = 8 * 1024 * 1024;

/**
 * The last whole todo list (Claude Code's TodoWrite, Codex's update_plan) in the last
 * TRANSCRIPT_TAIL_BYTES of a JSONL transcript, with the time of its line (epoch ms, when the line has a
 * `timestamp`), or null when there is none there (or `path` is not a regular file). Lines that are not JSON or not a tool call are skipped; a
 * list that does not parse is skipped too (the one before it counts).
 */
export function lastListInTranscript(path: string): { todos: TodoEntry[]; at: number | null } | null {
  // Non-blocking, and not through a final symlink: `path` is the real path the caller checked, and a FIFO put
  // in its place cannot hold the hook at the open.
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  let text: string;
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return null;
    const length = Math.min(st.size, TRANSCRIPT_TAIL_BYTES);
    const buf = Buffer.alloc(length);
    readSync(fd, buf, 0, length, st.size - length);
    text = buf.toString('utf8');
  } finally {
    closeSync(fd);
  }
  const lines = text.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (!line.includes('"TodoWrite"') && !line.includes('"update_plan"')) continue;
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    for (const call of toolCalls(entry).reverse()) {
      try {
        const change = todoChange(call.name, call.input);
        const stamp = (entry as { timestamp?: unknown }).timestamp;
        const at = typeof stamp === 'string' ? Date.parse(stamp) : Number.NaN;
        if (change?.op === 'replace') return { todos: change.todos, at: Number.isFinite(at) ? at : null };
      } catch {
        // A malformed list in the transcript: the one before it counts.
      }
    }
  }
  return null;
}

/** The tool calls of one transcript line: Claude Code's `message.content[]` tool_use, Codex's function_call. */
function toolCalls(entry: unknown): Array<{ name: string; input: Record<string, unknown> }> {
  if (entry === null || typeof entry !== 'object') return [];
  const e = entry as Record<string, unknown>;
  const out: Array<{ name: string; input: Record<string, unknown> }> = [];
  const message = e.message as Record<string, unknown> | undefined;
  if (message && Array.isArray(message.content)) {
    for (const c of message.content as unknown[]) {
      if (c === null || typeof c !== 'object') continue;
      const b = c as Record<string, unknown>;
      if (b.type === 'tool_use' && typeof b.name === 'string' && isObject(b.input)) {
        out.push({ name: b.name, input: b.input });
      }
    }
  }
  const payload = (e.payload ?? e) as Record<string, unknown>;
  if (payload && payload.type === 'function_call' && typeof payload.name === 'string') {
    try {
      const input = typeof payload.arguments === 'string' ? JSON.parse(payload.arguments) : payload.arguments;
      if (isObject(input)) out.push({ name: payload.name, input });
    } catch {
      // not a call we can read
    }
  }
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);
