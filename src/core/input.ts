// Checks operation inputs (library, CLI and workflow payloads alike): types, unknown fields, size limits.
//
// A JSON Schema validator (ajv) costs ~70 ms to load and compile, which would double the start-up of
// every workflow subprocess; these inputs are flat, so a small declarative checker does the job.
import { channel } from 'node:diagnostics_channel';
import { InvalidInputError } from '../errors.js';
import { toPointer } from './json.js';
import { parseTime } from './time.js';
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
  /** An int's largest value; the most entries of `names` (@default LIMITS.blockedBy). */
  max?: number;
  enum?: readonly string[];
  /** A string field matches this regular expression (an ASCII format such as a W3C traceparent); `what` names it. */
  pattern?: { source: string; what: string };
  /** The field holds one such value, or an array of at most this many (a filter by several statuses). */
  many?: number;
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
 * that is not portable text), with the path to it, and while at it an upper bound of its UTF-8 JSON size.
 * It stops at anything JSON.stringify writes other than as itself (a toJSON method, an instance of a class,
 * undefined, a function): `special` is then set and the value is checked again as `copy` makes it.
 */
class JsonWalk {
  problem: string | null = null;
  /** Segments from the root to the problem, filled in while unwinding. */
  readonly path: Array<string | number> = [];
  bound = 0;
  special = false;

  /** Returns false once a problem (or something special) is found. */
  visit(v: unknown, limit: number): boolean {
    switch (typeof v) {
      case 'string':
        if (!isPortableText(v)) {
          this.problem = 'contains NUL or an unpaired surrogate in a string';
          return false;
        }
        // Escaped, one UTF-16 unit takes at most 6 bytes (\uXXXX).
        this.bound += 6 * v.length + 2;
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
        this.bound += 32;
        return true;
      case 'boolean':
        this.bound += 32;
        return true;
      case 'object':
        break;
      case 'bigint':
        this.problem = BIGINT;
        return false;
      default:
        this.special = true;
        return false;
    }
    if (v === null) {
      this.bound += 4;
      return true;
    }
    if (limit === 0) {
      this.problem = `is nested deeper than ${LIMITS.jsonDepth} levels`;
      return false;
    }
    const proto = Object.getPrototypeOf(v);
    if (
      (proto !== Object.prototype && proto !== Array.prototype && proto !== null) ||
      typeof (v as { toJSON?: unknown }).toJSON === 'function'
    ) {
      this.special = true;
      return false;
    }
    if (Array.isArray(v)) {
      this.bound += 2 + v.length;
      for (let i = 0; i < v.length; i++) {
        if (!this.visit(v[i], limit - 1)) {
          this.path.push(i);
          return false;
        }
      }
      return true;
    }
    const obj = v as Record<string, unknown>;
    this.bound += 2;
    for (const k of Object.keys(obj)) {
      if (RESERVED_KEYS.has(k)) {
        this.problem = reservedKey(k);
        this.path.push(k);
        return false;
      }
      if (!isPortableText(k)) {
        this.problem = 'contains NUL or an unpaired surrogate in a key';
        this.path.push(k);
        return false;
      }
      this.bound += 6 * k.length + 4;
      if (!this.visit(obj[k], limit - 1)) {
        this.path.push(k);
        return false;
      }
    }
    return true;
  }

  /**
   * What JSON.stringify writes for `v` (found under `key`), as plain data: toJSON honoured (a Date is its ISO
   * string, a URL its href), boxed primitives unwrapped, undefined, functions and symbols left out of objects
   * (OMITTED; null in arrays), other objects by their own enumerable keys. Refuses what no JSON text carries:
   * a bigint, and the collections JSON.stringify writes as {} losing every entry. FAILED once a problem is
   * found (the numbers, strings and keys of the copy are checked by `visit` afterwards).
   */
  copy(v: unknown, key: string, limit: number): unknown {
    if ((typeof v === 'object' && v !== null) || typeof v === 'bigint') {
      const toJSON = (v as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') v = toJSON.call(v, key);
    }
    if (v instanceof Number || v instanceof String || v instanceof Boolean || v instanceof BigInt)
      v = v.valueOf();
    switch (typeof v) {
      case 'string':
      case 'number':
      case 'boolean':
        return v;
      case 'bigint':
        this.problem = BIGINT;
        return FAILED;
      case 'object':
        break;
      default:
        return OMITTED;
    }
    if (v === null) return null;
    const lost =
      v instanceof Map || v instanceof WeakMap
        ? 'Map'
        : v instanceof Set || v instanceof WeakSet
          ? 'Set'
          : null;
    if (lost) {
      this.problem = `holds a ${lost}, which JSON.stringify writes as {} (every entry would be lost): store ${lost === 'Map' ? 'Object.fromEntries(map) or [...map]' : '[...set]'} instead`;
      return FAILED;
    }
    if (limit === 0) {
      this.problem = `is nested deeper than ${LIMITS.jsonDepth} levels`;
      return FAILED;
    }
    if (Array.isArray(v)) {
      const out: unknown[] = new Array(v.length);
      for (let i = 0; i < v.length; i++) {
        const x = this.copy(v[i], String(i), limit - 1);
        if (x === FAILED) {
          this.path.push(i);
          return FAILED;
        }
        out[i] = x === OMITTED ? null : x;
      }
      return out;
    }
    const obj = v as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(obj)) {
      // Refused before it is assigned: out["__proto__"] = x would set the copy's prototype.
      if (RESERVED_KEYS.has(k)) {
        this.problem = reservedKey(k);
        this.path.push(k);
        return FAILED;
      }
      const x = this.copy(obj[k], k, limit - 1);
      if (x === FAILED) {
        this.path.push(k);
        return FAILED;
      }
      if (x !== OMITTED) out[k] = x;
    }
    return out;
  }

  /** The pointer to the problem (segments were pushed innermost first). */
  pointer(): string {
    return toPointer([...this.path].reverse());
  }
}

const BIGINT = 'holds a bigint, which JSON cannot carry: store it as a string or a number';
const OMITTED = Symbol('left out, as JSON.stringify leaves out undefined');
const FAILED = Symbol('refused');

function reservedKey(k: string): string {
  return `has the key ${JSON.stringify(k)}, which is refused (${[...RESERVED_KEYS].join(', ')} are never accepted as keys)`;
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
 * The one JSON rule of the store, for every value written anywhere (document bodies and patches, payloads,
 * results, notes, event data, adapters' values), on every backend: a value is stored as JSON.stringify writes
 * it — toJSON honoured (a Date is stored as its ISO string, a URL as its href), undefined, functions and
 * symbols left out of objects and written as null in arrays, an instance of a class as its own enumerable
 * fields — and its content hash is taken of that same form. Refused with INVALID_INPUT naming `field` and
 * the JSON pointer of the first problem: a bigint; a Map, Set, WeakMap or WeakSet (JSON.stringify would
 * write {} and lose their entries); NaN, ±Infinity and -0; the reserved keys; NUL or unpaired surrogates;
 * nesting deeper than `depth`. Returns the value to store (`value` itself when it is plain JSON data, which
 * costs one walk and no copy) and an upper bound of its JSON size in bytes; `undefined` when JSON.stringify
 * writes nothing for it (a function).
 */
export function toStoredJson(
  op: string | null,
  field: string,
  value: unknown,
  depth: number = LIMITS.jsonDepth,
): { value: unknown; bound: number } {
  const walk = new JsonWalk();
  if (walk.visit(value, depth)) return { value, bound: walk.bound };
  if (!walk.special) walkFailure(op, field, walk);
  const copier = new JsonWalk();
  const copy = copier.copy(value, '', depth);
  if (copy === FAILED) walkFailure(op, field, copier);
  if (copy === OMITTED) return { value: undefined, bound: 0 };
  const plain = new JsonWalk();
  if (!plain.visit(copy, depth)) walkFailure(op, field, plain);
  return { value: copy, bound: plain.bound };
}

/**
 * The store's JSON rule (`toStoredJson`) as a check, for a value that did not come through an input spec
 * (a parsed file, a dump record): throws INVALID_INPUT naming `field` and the JSON pointer of the first problem.
 */
export function checkJsonValue(value: unknown, field: string, depth: number = LIMITS.jsonDepth): void {
  toStoredJson(null, field, value, depth);
}

/**
 * A JSON field of an input, as it is stored (`toStoredJson`), within the size limit (LIMITS.jsonBytes);
 * INVALID_INPUT naming `field` otherwise (a function, a Map, a bigint, too large).
 */
export function jsonField(op: string, field: string, v: unknown): unknown {
  const stored = toStoredJson(op, field, v);
  if (stored.value === undefined) fail(op, field, 'is not a JSON value');
  // Plain data whose size bound is within the limit needs no serializing.
  if (stored.bound <= LIMITS.jsonBytes) return stored.value;
  if (Buffer.byteLength(JSON.stringify(stored.value)) > LIMITS.jsonBytes) {
    fail(op, field, `is larger than the ${LIMITS.jsonBytes} byte limit`);
  }
  return stored.value;
}

/**
 * A JSON object as the store keeps it (`toStoredJson`), within the size limit: the store's JSON rule for a
 * value the store's own code produced from checked input (a kind operation's new body), which is written
 * but is nobody's input. Throws INVALID_INPUT naming `field`.
 */
export function storedObject(op: string, field: string, v: unknown): Record<string, unknown> {
  const stored = jsonField(op, field, v);
  if (typeof stored !== 'object' || stored === null || Array.isArray(stored))
    fail(op, field, `must be a JSON object, got ${typeName(stored)}`);
  return stored as Record<string, unknown>;
}

/** Checks one field; returns the value to use (a JSON field as it is stored, anything else as given). */
function checkField(op: string, field: string, v: unknown, spec: FieldSpec): unknown {
  if (spec.many !== undefined && Array.isArray(v)) {
    if (v.length > spec.many) fail(op, field, `has more than ${spec.many} entries`);
    const one: FieldSpec = { ...spec, many: undefined };
    for (const [i, x] of v.entries()) {
      try {
        checkField(op, `${field}[${i}]`, x, one);
      } catch (err) {
        // The message names the entry; the details name the field, as for a single value.
        throw new InvalidInputError((err as Error).message, { field, operation: op });
      }
    }
    return v;
  }
  if (v === null) {
    if (spec.nullable || spec.type === 'json') return v;
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
      if (spec.pattern && !new RegExp(spec.pattern.source).test(v))
        fail(op, field, `must be ${spec.pattern.what}, got ${JSON.stringify(v.slice(0, 80))}`);
      return v;
    }
    case 'int': {
      if (typeof v !== 'number' || !Number.isSafeInteger(v))
        fail(op, field, `must be an integer, got ${JSON.stringify(v)}`);
      if (spec.min !== undefined && v < spec.min) fail(op, field, `must be at least ${spec.min}`);
      if (spec.max !== undefined && v > spec.max) fail(op, field, `must be at most ${spec.max}`);
      return v;
    }
    case 'bool':
      if (typeof v !== 'boolean') fail(op, field, `must be true or false, got ${typeName(v)}`);
      return v;
    case 'json':
      return jsonField(op, field, v);
    case 'object':
      // Checked as stored: a Date is a string, not an object.
      return storedObject(op, field, v);
    case 'names': {
      if (!Array.isArray(v)) fail(op, field, `must be an array of strings, got ${typeName(v)}`);
      const most = spec.max ?? LIMITS.blockedBy;
      if (v.length > most) fail(op, field, `has more than ${most} entries`);
      for (const [i, x] of v.entries()) checkField(op, `${field}[${i}]`, x, { type: 'name' });
      return v;
    }
    case 'time': {
      if (typeof v !== 'string')
        fail(op, field, `must be an ISO-8601 time or a duration such as 5m, got ${typeName(v)}`);
      if (v.length > LIMITS.title) fail(op, field, `is longer than ${LIMITS.title} characters`);
      try {
        parseTime(v, field, 0);
      } catch (err) {
        fail(op, field, (err as Error).message.slice(field.length + 1));
      }
      return v;
    }
  }
}

/**
 * Checks `input` against `spec`: an object, no unknown fields, required fields present, types and sizes.
 * `subject` names the check on the INPUT_CHECKS channel (default `op`; a kind operation's arguments are
 * `<kind>.<operation>`). Returns it typed as T: the same object, or, when a JSON field holds something JSON.stringify writes other
 * than as itself (a Date, a URL, undefined), a shallow copy with that field as it is stored (`toStoredJson`);
 * the caller's object is never changed. Throws INVALID_INPUT naming the first bad field.
 */
export function checkInput<T>(op: string, input: unknown, spec: InputSpec, subject: string = op): T {
  if (input === undefined) input = {};
  if (typeof input === 'object' && input !== null) {
    const passedSpec = passed.get(input);
    if (passedSpec !== undefined && satisfies(passedSpec, spec, input)) return input as T;
  }
  if (INPUT_CHECKS.hasSubscribers) INPUT_CHECKS.publish({ operation: subject });
  return checkFields<T>(op, input, spec);
}

/**
 * Checks an input once for a caller that hands it on (the operation table, a workflow process): a shallow
 * copy that passed `spec`, marked so that the public method it is handed to (`checkInput` with this spec, or
 * one whose fields it passed with the same field specs) takes it as checked instead of checking it again.
 * The copy belongs to the caller of `checkedCommand`, so nobody else can change it between the check and
 * its use.
 */
export function checkedCommand<T>(op: string, input: unknown, spec: InputSpec): Readonly<T> {
  if (input !== undefined && typeof input === 'object' && input !== null) {
    const passedSpec = passed.get(input);
    if (passedSpec !== undefined && satisfies(passedSpec, spec, input)) return input as T;
  }
  const checked = checkInput<Record<string, unknown>>(op, input, spec);
  // A copy, not frozen: a frozen object is slower to read on the hot path (measured: +40% of a commit's JS).
  const command = { ...checked };
  passed.set(command, spec);
  return command as T;
}

/**
 * A command built from a checked one (`source`, from `checkedCommand`) for a method that takes another shape
 * (the table's `escalate` { id, ambiguities } becoming the store's kind call { kind, id, args }): each field
 * carried unchanged from `source` under the same field spec is not checked again; every other field (a
 * constant, a value built from checked ones) is checked now with `spec`, and `spec`'s required fields must be
 * there. The result is marked as checked against `spec`, so each field is checked once along the way.
 */
export function derivedCommand<T>(
  op: string,
  source: object,
  value: Record<string, unknown>,
  spec: InputSpec,
): Readonly<T> {
  const from = passed.get(source);
  const src = source as Record<string, unknown>;
  for (const key of Object.keys(value)) {
    const fs = spec[key];
    if (fs === undefined) {
      throw new InvalidInputError(
        `${op}: unknown field ${JSON.stringify(key)} (allowed: ${Object.keys(spec).join(', ') || 'none'})`,
        { field: key, operation: op },
      );
    }
    const v = value[key];
    if (v === undefined || (from !== undefined && from[key] === fs && src[key] === v)) continue;
    value[key] = checkField(op, key, v, fs);
  }
  for (const key in spec) {
    if (Object.hasOwn(spec, key) && spec[key]!.required && value[key] === undefined)
      fail(op, key, 'is required');
  }
  const command = { ...value };
  passed.set(command, spec);
  return command as T;
}

/**
 * Every check of an operation's input publishes `{ operation }` on this channel (`node:diagnostics_channel`,
 * free when nobody subscribes): tests count the checks of one call with it (each input is checked once), and
 * tracing can see them.
 */
export const INPUT_CHECKS = channel('agentstate:input-check');

/** Commands `checkedCommand` made, with the spec each passed. */
const passed = new WeakMap<object, InputSpec>();
const satisfied = new WeakMap<InputSpec, WeakMap<InputSpec, boolean>>();

/**
 * Whether `input`, which passed `checked`, passes `wanted` without looking at its values: every field
 * `wanted` requires, `checked` required too, and each field it may hold (or, failing that, each it holds)
 * has the same field spec in `wanted` (one object, so the same rules).
 */
function satisfies(checked: InputSpec, wanted: InputSpec, input: object): boolean {
  if (checked === wanted) return true;
  let known = satisfied.get(checked);
  let ok = known?.get(wanted);
  if (ok === undefined) {
    ok = true;
    for (const field of Object.keys(checked)) if (wanted[field] !== checked[field]) ok = false;
    for (const field of Object.keys(wanted)) {
      if (wanted[field]!.required && !checked[field]?.required) ok = false;
    }
    if (!known) {
      known = new WeakMap();
      satisfied.set(checked, known);
    }
    known.set(wanted, ok);
  }
  if (ok) return true;
  for (const field of Object.keys(wanted))
    if (wanted[field]!.required && !checked[field]?.required) return false;
  for (const field of Object.keys(input))
    if (wanted[field] === undefined || wanted[field] !== checked[field]) return false;
  return true;
}

function checkFields<T>(op: string, input: unknown, spec: InputSpec): T {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new InvalidInputError(`${op}: input must be a JSON object, got ${typeName(input)}`, {
      operation: op,
    });
  }
  const obj = input as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
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
    const stored = checkField(op, field, v, fs);
    if (stored !== v) {
      out ??= { ...obj };
      out[field] = stored;
    }
  }
  return (out ?? obj) as T;
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
