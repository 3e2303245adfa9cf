// What a host's hook sends on stdin, checked as hostile input: Claude Code's and Codex's hook JSON (the same
// snake_case shape: session_id, cwd, hook_event_name, transcript_path, then the event's own fields). Only the
// fields agentstate acts on are read, each with its type; anything else in the payload is ignored.
import { checkJsonValue, isPortableText, LIMITS, parseJsonInput } from '../../core/input.js';
import { InvalidInputError } from '../../errors.js';

export const HOOK_EVENTS = [
  'session-start',
  'pre-compact',
  'post-tool-use',
  'subagent-start',
  'subagent-stop',
  'stop',
] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

export const HOOK_FORMATS = ['claude-code', 'codex'] as const;
export type HookFormat = (typeof HOOK_FORMATS)[number];

/** The host's name of each event (`hook_event_name`). */
export const HOST_EVENT_NAMES: Record<HookEvent, string> = {
  'session-start': 'SessionStart',
  'pre-compact': 'PreCompact',
  'post-tool-use': 'PostToolUse',
  'subagent-start': 'SubagentStart',
  'subagent-stop': 'SubagentStop',
  stop: 'Stop',
};

/** One hook call, as agentstate acts on it. */
export interface HookPayload {
  event: HookEvent;
  format: HookFormat;
  /** The host's session id (a Claude Code or Codex conversation). */
  session: string;
  cwd?: string;
  /** The host's transcript file (JSONL) of the session, or of the sub-agent at SubagentStop. */
  transcript?: string;
  /** SessionStart: startup, resume, clear, compact (or another the host adds). */
  source?: string;
  /** PreCompact: manual or auto. */
  trigger?: string;
  /** PostToolUse: the tool and what it was called with and answered. */
  tool?: { name: string; input: Record<string, unknown>; response?: unknown };
  /** The sub-agent the call comes from (SubagentStart/Stop, and tool calls made inside a sub-agent). */
  agent?: { id: string; type?: string; lastMessage?: string };
}

/** A host id the store can take into a document id and a worker name: letters, digits, `_`, `-`, `.`. */
const HOST_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

function bad(event: HookEvent, field: string, why: string): never {
  throw new InvalidInputError(`${field} ${why}`, { field, event });
}

function str(
  o: Record<string, unknown>,
  key: string,
  event: HookEvent,
  opts: { required?: boolean; max?: number; pattern?: RegExp } = {},
): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) {
    if (opts.required) bad(event, key, 'is required');
    return undefined;
  }
  if (typeof v !== 'string')
    bad(event, key, `must be a string, got ${Array.isArray(v) ? 'a list' : typeof v}`);
  if (v.length > (opts.max ?? 4096)) bad(event, key, `is longer than ${opts.max ?? 4096} characters`);
  if (!isPortableText(v) || v.includes('\u0000'))
    bad(event, key, 'must not contain NUL or unpaired surrogates');
  if (opts.pattern && !opts.pattern.test(v)) bad(event, key, `must match ${opts.pattern}`);
  return v;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** Parses and checks the hook JSON of `event` (INVALID_INPUT naming the field when it is not what the host sends). */
export function parseHookPayload(text: string, event: HookEvent, format: HookFormat): HookPayload {
  if (text.trim() === '') bad(event, 'stdin', 'is empty: the host sends the hook JSON on stdin');
  const value = parseJsonInput(text, 'the hook JSON on stdin');
  if (!isObject(value)) bad(event, 'stdin', 'must be a JSON object');
  // The store's JSON policy (depth, reserved keys such as __proto__), before any field is read.
  checkJsonValue(value, 'hook JSON');
  const name = str(value, 'hook_event_name', event, { max: 100 });
  if (name !== undefined && name !== HOST_EVENT_NAMES[event]) {
    bad(
      event,
      'hook_event_name',
      `is ${JSON.stringify(name)}, but this is the ${HOST_EVENT_NAMES[event]} hook: check the hook entry's event`,
    );
  }
  const p: HookPayload = {
    event,
    format,
    session: str(value, 'session_id', event, { required: true, max: 100, pattern: HOST_ID }) as string,
  };
  const cwd = str(value, 'cwd', event);
  if (cwd !== undefined) p.cwd = cwd;
  const transcript = str(
    value,
    event === 'subagent-stop' ? 'agent_transcript_path' : 'transcript_path',
    event,
  );
  if (transcript !== undefined) p.transcript = transcript;
  const source = str(value, 'source', event, { max: 100 });
  if (source !== undefined) p.source = source;
  const trigger = str(value, 'trigger', event, { max: 100 });
  if (trigger !== undefined) p.trigger = trigger;
  const agentId = str(value, 'agent_id', event, { max: 100, pattern: HOST_ID });
  if (agentId !== undefined) {
    const type = str(value, 'agent_type', event, { max: LIMITS.name });
    const last = str(value, 'last_assistant_message', event, { max: 1_000_000 });
    p.agent = { id: agentId, ...(type ? { type } : {}), ...(last ? { lastMessage: last } : {}) };
  } else if (event === 'subagent-start' || event === 'subagent-stop') {
    bad(event, 'agent_id', 'is required');
  }
  if (event === 'post-tool-use') {
    const tool = str(value, 'tool_name', event, { required: true, max: LIMITS.name }) as string;
    const input = value.tool_input ?? {};
    if (!isObject(input)) bad(event, 'tool_input', 'must be an object');
    p.tool = {
      name: tool,
      input,
      ...(value.tool_response === undefined ? {} : { response: value.tool_response }),
    };
  }
  return p;
}
