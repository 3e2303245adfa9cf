// Checks operation inputs (library, CLI and workflow payloads alike): types, unknown fields, size limits.
//
// A JSON Schema validator (ajv) costs ~70 ms to load and compile, which would double the start-up of
// every workflow subprocess; these inputs are flat, so a small declarative checker does the job.
import { InvalidInputError } from '../errors.js';
import { toPointer } from './json.js';
import { parseIsoTime } from './time.js';
import type { Json } from './types.js';

/** Size limits on inputs; larger values are refused with INVALID_INPUT. Documented in docs/concepts.md (Limits). */
export const LIMITS = {
  /** Characters in a title. */
  title: 1000,
  /** Characters in a short name: id, kind, worker, stream, event type, idempotency key. */
  name: 200,
  /** Characters in an error message. */
  error: 10_000,
  /** Bytes of any one JSON value (payload, result, notes, event data) once serialized. */
  jsonBytes: 1024 * 1024,
  /** Nesting depth of any one JSON value. */
  jsonDepth: 256,
  /** Entries in blocked_by. */
  blockedBy: 100,
  /** Items claimed at once. */
  claimLimit: 1000,
  /** Longest lease, ms (one day). */
  leaseMs: 86_400_000,
  /** Bytes of text read from outside: a state file, stdin (`-b -`, `--payload -`), a body file. */
  inputBytes: 4 * 1024 * 1024,
} as const;

export type FieldType = 'string' | 'name' | 'text' | 'int' | 'bool' | 'json' | 'object' | 'names' | 'time';

export interface FieldSpec {
  type: FieldType;
  required?: boolean;
  nullable?: boolean;
  min?: number;
  max?: number;
  enum?: readonly string[];
}

export type InputSpec = Record<string, FieldSpec>;

function hasControlChar(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) < 0x20 || s.charCodeAt(i) === 0x7f) return true;
  return false;
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function fail(op: string, field: string, message: string): never {
  throw new InvalidInputError(`${op}: ${field} ${message}`, { field, operation: op });
}

/**
 * Text every backend stores and hashes identically: no NUL (PostgreSQL cannot store it) and no lone
 * UTF-16 surrogates (SQLite would store U+FFFD instead, and the event hash would no longer verify).
 */
export function isPortableText(s: string): boolean {
  return !s.includes('\u0000') && (s as string & { isWellFormed(): boolean }).isWellFormed();
}

/**
 * Object keys refused anywhere in JSON that enters the store (bodies, patches, notes, payloads, event data,
 * files, dumps). Assigning `out["__proto__"]` sets an object's prototype instead of a key, so a merge
 * patch or a kind rule would see inherited fields that are never stored; `constructor` / `prototype` are
 * the other half of the same trick. One policy: such keys are refused with INVALID_INPUT, never reinterpreted.
 */
export const RESERVED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * The first problem in a JSON value (too deep, a reserved key, a number JSON cannot carry, a string or key
 * that is not portable text), with the path to it, and while at it an upper bound of its UTF-8 JSON size,
 * or -1 when the value holds anything JSON.stringify could treat specially (toJSON, non-plain objects, ...).
 */
class JsonWalk {
  problem: string | null = null;
  /** Segments from the root to the problem, filled in while unwinding. */
  readonly path: Array<string | number> = [];
  bound = 0;

  /** Returns false once a problem is found. */
  visit(v: unknown, limit: number): boolean {
    switch (typeof v) {
      case 'string':
        if (!isPortableText(v)) {
          this.problem = 'contains NUL or an unpaired surrogate in a string';
          return false;
        }
        // Escaped, one UTF-16 unit takes at most 6 bytes (\uXXXX).
        if (this.bound >= 0) this.bound += 6 * v.length + 2;
        return true;
      case 'number':
        if (!Number.isFinite(v)) {
          this.problem = `holds ${v}, which JSON cannot carry (a literal such as 1e400 overflows to it)`;
          return false;
        }
        if (v === 0 && 1 / v < 0) {
          this.problem = 'holds -0, which JSON text cannot tell apart from 0: write 0';
          return false;
        }
        if (this.bound >= 0) this.bound += 32;
        return true;
      case 'boolean':
        if (this.bound >= 0) this.bound += 32;
        return true;
      case 'object':
        break;
      case 'bigint':
        this.problem = 'holds a bigint, which JSON cannot carry';
        return false;
      default:
        this.bound = -1;
        return true;
    }
    if (v === null) {
      if (this.bound >= 0) this.bound += 4;
      return true;
    }
    if (limit === 0) {
      this.problem = `is nested deeper than ${LIMITS.jsonDepth} levels`;
      return false;
    }
    if (Array.isArray(v)) {
      if (this.bound >= 0) {
        if (Object.getPrototypeOf(v) === Array.prototype && !Object.hasOwn(v, 'toJSON'))
          this.bound += 2 + v.length;
        else this.bound = -1;
      }
      for (let i = 0; i < v.length; i++) {
        if (!this.visit(v[i], limit - 1)) {
          this.path.push(i);
          return false;
        }
      }
      return true;
    }
    const obj = v as Record<string, unknown>;
    if (this.bound >= 0) {
      const proto = Object.getPrototypeOf(obj);
      if ((proto !== Object.prototype && proto !== null) || typeof obj.toJSON === 'function') this.bound = -1;
      else this.bound += 2;
    }
    for (const k of Object.keys(obj)) {
      if (RESERVED_KEYS.has(k)) {
        this.problem = `has the key ${JSON.stringify(k)}, which is refused (${[...RESERVED_KEYS].join(', ')} are never accepted as keys)`;
        this.path.push(k);
        return false;
      }
      if (!isPortableText(k)) {
        this.problem = 'contains NUL or an unpaired surrogate in a key';
        this.path.push(k);
        return false;
      }
      if (this.bound >= 0) this.bound += 6 * k.length + 4;
      if (!this.visit(obj[k], limit - 1)) {
        this.path.push(k);
        return false;
      }
    }
    return true;
  }

  /** The pointer to the problem (segments were pushed innermost first). */
  pointer(): string {
    return toPointer([...this.path].reverse());
  }
}

function walkFailure(op: string | null, field: string, walk: JsonWalk): never {
  const pointer = walk.pointer();
  const at = pointer === '/' ? '' : ` at ${pointer.length > 80 ? `${pointer.slice(0, 80)}…` : pointer}`;
  throw new InvalidInputError(`${op ? `${op}: ` : ''}${field}${at} ${walk.problem!}`, {
    field,
    pointer,
    ...(op ? { operation: op } : {}),
  });
}

/**
 * The one JSON policy of the store, for a value that did not come through an input spec (a parsed file, a
 * dump record): nesting depth, reserved keys, finite numbers and no -0, portable text. Throws INVALID_INPUT
 * naming `field` and the JSON pointer of the first problem. Checks inputs' JSON fields the same way.
 */
export function checkJsonValue(value: unknown, field: string, depth: number = LIMITS.jsonDepth): void {
  const walk = new JsonWalk();
  if (!walk.visit(value, depth)) walkFailure(null, field, walk);
}

function jsonSize(op: string, field: string, v: unknown): void {
  const walk = new JsonWalk();
  if (!walk.visit(v, LIMITS.jsonDepth)) walkFailure(op, field, walk);
  // Plain data whose size bound is within the limit needs no serializing.
  if (walk.bound >= 0 && walk.bound <= LIMITS.jsonBytes) return;
  let text: string | undefined;
  try {
    text = JSON.stringify(v);
  } catch {
    fail(op, field, 'is not serializable as JSON');
  }
  if (text === undefined) fail(op, field, 'is not a JSON value');
  if (Buffer.byteLength(text) > LIMITS.jsonBytes) {
    fail(op, field, `is larger than the ${LIMITS.jsonBytes} byte limit`);
  }
}

function checkField(op: string, field: string, v: unknown, spec: FieldSpec): void {
  if (v === null) {
    if (spec.nullable || spec.type === 'json') return;
    fail(op, field, 'must not be null');
  }
  switch (spec.type) {
    case 'string':
    case 'name':
    case 'text': {
      if (typeof v !== 'string') fail(op, field, `must be a string, got ${typeName(v)}`);
      const max =
        spec.max ?? (spec.type === 'name' ? LIMITS.name : spec.type === 'text' ? LIMITS.error : LIMITS.title);
      if (v.length > max) fail(op, field, `is longer than ${max} characters`);
      if (!isPortableText(v)) fail(op, field, 'must not contain NUL or unpaired surrogates');
      if (spec.type === 'name' && v.length === 0) fail(op, field, 'must not be empty');
      if (spec.type === 'name' && hasControlChar(v)) fail(op, field, 'must not contain control characters');
      if (spec.enum && !spec.enum.includes(v))
        fail(op, field, `must be one of ${spec.enum.join(', ')}, got ${JSON.stringify(v)}`);
      return;
    }
    case 'int': {
      if (typeof v !== 'number' || !Number.isSafeInteger(v))
        fail(op, field, `must be an integer, got ${JSON.stringify(v)}`);
      if (spec.min !== undefined && v < spec.min) fail(op, field, `must be at least ${spec.min}`);
      if (spec.max !== undefined && v > spec.max) fail(op, field, `must be at most ${spec.max}`);
      return;
    }
    case 'bool':
      if (typeof v !== 'boolean') fail(op, field, `must be true or false, got ${typeName(v)}`);
      return;
    case 'json':
      jsonSize(op, field, v);
      return;
    case 'object':
      if (typeof v !== 'object' || Array.isArray(v))
        fail(op, field, `must be a JSON object, got ${typeName(v)}`);
      jsonSize(op, field, v);
      return;
    case 'names': {
      if (!Array.isArray(v)) fail(op, field, `must be an array of strings, got ${typeName(v)}`);
      if (v.length > LIMITS.blockedBy) fail(op, field, `has more than ${LIMITS.blockedBy} entries`);
      for (const [i, x] of v.entries()) checkField(op, `${field}[${i}]`, x, { type: 'name' });
      return;
    }
    case 'time': {
      if (typeof v !== 'string') fail(op, field, `must be an ISO-8601 time string, got ${typeName(v)}`);
      try {
        parseIsoTime(v, field);
      } catch (err) {
        fail(
          op,
          field,
          `must be an ISO-8601 time, got ${JSON.stringify(v)}: ${(err as Error).message.split(': ').pop()}`,
        );
      }
      return;
    }
  }
}

/**
 * Checks `input` against `spec`: an object, no unknown fields, required fields present, types and sizes.
 * Returns the same object typed as T. Throws INVALID_INPUT naming the first bad field.
 */
export function checkInput<T>(op: string, input: unknown, spec: InputSpec): T {
  if (input === undefined) input = {};
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new InvalidInputError(`${op}: input must be a JSON object, got ${typeName(input)}`, {
      operation: op,
    });
  }
  const obj = input as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    if (!Object.hasOwn(spec, key)) {
      throw new InvalidInputError(
        `${op}: unknown field ${JSON.stringify(key)} (allowed: ${Object.keys(spec).join(', ') || 'none'})`,
        { field: key, operation: op },
      );
    }
  }
  // for-in (own fields only) walks a spec without allocating, unlike Object.entries.
  for (const field in spec) {
    if (!Object.hasOwn(spec, field)) continue;
    const fs = spec[field]!;
    const v = obj[field];
    if (v === undefined) {
      if (fs.required) fail(op, field, 'is required');
      continue;
    }
    checkField(op, field, v, fs);
  }
  return obj as T;
}

/** Parses JSON text from a user (env var, flag, stdin), turning syntax errors into INVALID_INPUT. */
export function parseJsonInput(text: string, source: string): Json {
  if (Buffer.byteLength(text) > LIMITS.jsonBytes * 4) {
    throw new InvalidInputError(`${source} is larger than the ${LIMITS.jsonBytes * 4} byte limit`, {
      source,
    });
  }
  // JSON.parse keeps what the JSON policy refuses visible (own __proto__ keys, Infinity, -0), so the
  // input check of the field the value goes to refuses it, naming that field.
  try {
    return JSON.parse(text) as Json;
  } catch (err) {
    throw new InvalidInputError(`${source} is not valid JSON: ${(err as Error).message}`, { source });
  }
}
