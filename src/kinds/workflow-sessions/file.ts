// The file view of kind `workflow-sessions`: `.copilot/state/<workflow>.json`. JSON has no comments, so
// the version stamp is a top-level key written first — `"$agentstate": {"kind", "id", "version"}` — which
// `parse` strips before the body is validated (the schema refuses it inside a body). Agents that read the
// file as the skill describes ignore an unknown key; the stamp round-trips through any JSON tool.

import type { FileStamp, KindFile, ViewContext } from '../../core/kind.js';
import type { Json, JsonObject } from '../../core/types.js';
import { InvalidInputError } from '../../errors.js';
import { fileTextProblem, lineColumn } from '../file-text.js';
import { isPlainObject } from '../rules.js';

/** Largest file parsed, in bytes. */
export const MAX_SESSIONS_FILE_BYTES = 4 * 1024 * 1024;
/** The key holding the stamp. */
export const STAMP_KEY = '$agentstate';

const KIND = 'workflow-sessions';

/** Key order of the rendered file; unknown keys follow in their own order. */
const ORDER: Record<string, readonly string[]> = {
  top: [STAMP_KEY, 'workflow', 'createdAt', 'updatedAt', 'activeSessionId', 'sessions'],
  sessions: [
    'id',
    'label',
    'status',
    'startedAt',
    'updatedAt',
    'endedAt',
    'summary',
    'currentPhase',
    'todos',
    'decisions',
    'blockers',
    'artifacts',
    'lessonsLearned',
    'delegations',
    'directives',
  ],
  todos: ['id', 'title', 'description', 'status'],
  decisions: [
    'type',
    'description',
    'rationale',
    'alternatives_considered',
    'workaround',
    'correct_solution',
    'why_not_implemented',
    'revisit_when',
    'timestamp',
  ],
  blockers: ['id', 'description', 'status', 'raisedAt', 'resolvedAt', 'resolution'],
  lessonsLearned: ['category', 'summary', 'detail', 'appliesTo', 'severity', 'recordedAt'],
  delegations: [
    'id',
    'agent',
    'task',
    'status',
    'startedAt',
    'completedAt',
    'resultSummary',
    'outputArtifacts',
  ],
  directives: ['id', 'text', 'status', 'issuedAt', 'carriedFrom', 'revokedAt', 'revokedReason'],
};

function invalid(message: string, details: Record<string, unknown> = {}): never {
  throw new InvalidInputError(`${KIND} file: ${message}`, details);
}

/** Refuses oversize, binary and non-text input before any parsing. */
function checkText(text: string): void {
  const problem = fileTextProblem(text, MAX_SESSIONS_FILE_BYTES, 'a JSON state file');
  if (problem) invalid(problem.message, problem.details);
}

/** Where the first JSON syntax error is, and what it is (null if none is found). Iterative: any depth. */
export function locateJsonError(text: string): { pos: number; what: string } | null {
  const n = text.length;
  let i = 0;
  const stack: Array<'{' | '['> = [];
  const ws = () => {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const err = (what: string, pos = i) => ({
    pos,
    what: i >= n && pos === i ? `unexpected end of input: ${what}` : what,
  });
  const str = (): { pos: number; what: string } | null => {
    const start = i++;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return null;
      }
      if (c < 0x20) return err('control character inside a string (escape it)');
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return err('bad \\u escape');
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else return err('bad escape in a string');
      } else i++;
    }
    return err('unterminated string', start);
  };
  const key = () => {
    ws();
    if (text[i] !== '"') return err(`expected a property name in double quotes, found ${show(text[i])}`);
    const e = str();
    if (e) return e;
    ws();
    if (text[i] !== ':') return err(`expected ':' after the property name, found ${show(text[i])}`);
    i++;
    return null;
  };
  const number = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
  for (;;) {
    // A value.
    ws();
    const c = text[i];
    if (c === '{' || c === '[') {
      i++;
      ws();
      if (text[i] === (c === '{' ? '}' : ']')) i++;
      else {
        stack.push(c);
        if (c === '{') {
          const e = key();
          if (e) return e;
        }
        continue;
      }
    } else if (c === '"') {
      const e = str();
      if (e) return e;
    } else if (c !== undefined && (c === '-' || (c >= '0' && c <= '9'))) {
      number.lastIndex = i;
      if (!number.test(text)) return err('malformed number');
      i = number.lastIndex;
    } else if (text.startsWith('true', i)) i += 4;
    else if (text.startsWith('false', i)) i += 5;
    else if (text.startsWith('null', i)) i += 4;
    else return err(`expected a value, found ${show(c)}`);
    // After a value: close containers, or go on to the next element.
    for (;;) {
      ws();
      const top = stack[stack.length - 1];
      if (!top) return i < n ? err(`unexpected ${show(text[i])} after the JSON value`) : null;
      const close = top === '{' ? '}' : ']';
      if (text[i] === close) {
        stack.pop();
        i++;
        continue;
      }
      if (text[i] !== ',') return err(`expected ',' or '${close}', found ${show(text[i])}`);
      i++;
      if (top === '{') {
        const e = key();
        if (e) return e;
      }
      break;
    }
  }
}

function show(c: string | undefined): string {
  return c === undefined ? 'the end' : JSON.stringify(c);
}

function readStamp(v: Json | undefined): FileStamp | null {
  if (v === undefined) return null;
  const bad = (why: string): never =>
    invalid(`/${STAMP_KEY} ${why}; expected {"kind": "${KIND}", "id": "<workflow>", "version": <n>}`, {
      pointer: `/${STAMP_KEY}`,
    });
  if (!isPlainObject(v)) return bad('must be an object');
  const { kind, id, version, ...extra } = v;
  if (typeof kind !== 'string' || kind === '') return bad('needs a kind');
  if (typeof id !== 'string' || id === '') return bad('needs an id');
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) {
    return bad('needs a positive integer version');
  }
  if (Object.keys(extra).length > 0) return bad(`has unknown keys ${Object.keys(extra).join(', ')}`);
  return { kind, id, version };
}

function parse(input: string): { body: JsonObject; stamp: FileStamp | null } {
  checkText(input);
  // A byte-order mark is accepted, as in the YAML files (RFC 8259 §8.1 lets a parser ignore it); JSON.parse
  // would refuse it with the invisible character in its message. Lines and columns count without it.
  const text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  if (text.trim() === '') invalid('the file is empty');
  let data: Json;
  try {
    data = JSON.parse(text) as Json;
  } catch (err) {
    // JSON.parse messages do not always carry a position (Node 20 often quotes the text instead).
    const found = locateJsonError(text);
    const at = lineColumn(text, found?.pos ?? text.length);
    invalid(`line ${at.line}, column ${at.column}: ${found?.what ?? (err as Error).message}`, at);
  }
  if (!isPlainObject(data)) invalid('the top level must be a JSON object of the state fields');
  const { [STAMP_KEY]: raw, ...body } = data;
  return { body, stamp: readStamp(raw) };
}

function ordered(value: Json, list: string | null): Json {
  if (Array.isArray(value)) return value.map((v) => ordered(v, list));
  if (!isPlainObject(value)) return value;
  const order = (list === null ? undefined : ORDER[list]) ?? [];
  const rank = (k: string) => {
    const i = order.indexOf(k);
    return i === -1 ? order.length : i;
  };
  const keys = Object.keys(value).sort((a, b) => rank(a) - rank(b));
  return Object.fromEntries(
    keys.map((k) => [k, ordered(value[k] as Json, list === 'top' || list === 'sessions' ? k : null)]),
  );
}

function render(body: JsonObject, stamp: FileStamp, _ctx: ViewContext, _previous?: string): string {
  const { [STAMP_KEY]: _drop, ...rest } = body;
  const doc = ordered(
    { [STAMP_KEY]: { kind: stamp.kind, id: stamp.id, version: stamp.version }, ...rest },
    'top',
  );
  return `${JSON.stringify(doc, null, 2)}\n`;
}

function idFromPath(path: string): string | null {
  const m = /(?:^|[/\\])\.copilot[/\\]state[/\\]([^/\\]+)\.json$/.exec(path);
  return m?.[1] ?? null;
}

export const sessionsFile: KindFile = {
  defaultPath: (id) => `.copilot/state/${id}.json`,
  idFromPath,
  parse,
  render,
};
