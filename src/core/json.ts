// JSON helpers for documents: canonical form and hashing, RFC 7396 merge patch, JSON pointers.
import { InvalidInputError } from '../errors.js';
import { sha256Hex } from './hash.js';
import type { Json, JsonObject } from './types.js';

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A string that JSON.stringify writes as-is between quotes: no quote, backslash, control character or surrogate. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what JSON escapes
const PLAIN_STRING = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

function quote(s: string): string {
  return PLAIN_STRING.test(s) ? `"${s}"` : JSON.stringify(s);
}

/**
 * JSON with object keys sorted at every level, so equal values serialize identically.
 *
 * The content hash of every stored version is computed from this text, so its output must never change:
 * it is `[${value.map(canonicalJson).join(',')}]` for arrays, `{"k":<canonical>,…}` over the keys whose
 * value is not undefined in default sort order for other objects, and `JSON.stringify(value ?? null)`
 * for everything else; written as loops because every commit runs it.
 */
export function canonicalJson(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return quote(value);
    case 'object':
      if (value === null) return 'null';
      break;
    default:
      return JSON.stringify(value ?? null);
  }
  if (Array.isArray(value)) {
    let s = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) s += ',';
      const x: unknown = value[i];
      // A hole, or an element that has no JSON text (a function), adds nothing between the commas.
      if (x === undefined && !(i in value)) continue;
      const text = canonicalJson(x) as string | undefined;
      if (text !== undefined) s += text;
    }
    return `${s}]`;
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort();
  let s = '{';
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const x = obj[k];
    if (x === undefined) continue;
    if (s.length > 1) s += ',';
    s += `${quote(k)}:${canonicalJson(x)}`;
  }
  return `${s}}`;
}

const NOT_PLAIN = Symbol('not plain JSON');

function plainCopy(v: unknown): unknown {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      return Number.isFinite(v) && !Object.is(v, -0) ? v : NOT_PLAIN;
    case 'object':
      break;
    default:
      return NOT_PLAIN;
  }
  if (v === null) return null;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) return NOT_PLAIN;
    const out: unknown[] = new Array(v.length);
    for (let i = 0; i < v.length; i++) {
      const x = plainCopy(v[i]);
      if (x === NOT_PLAIN) return NOT_PLAIN;
      out[i] = x;
    }
    return out;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return NOT_PLAIN;
  const obj = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(obj)) {
    if (k === '__proto__' || k === 'toJSON') return NOT_PLAIN;
    const x = plainCopy(obj[k]);
    if (x === NOT_PLAIN) return NOT_PLAIN;
    out[k] = x;
  }
  return out;
}

/**
 * A deep copy of a JSON value exactly as it reads back from its JSON text, `JSON.parse(JSON.stringify(v))`:
 * plain data is copied directly, anything else (dates, undefined, -0, toJSON, ...) goes through the text.
 */
export function cloneJson<T>(value: T): T {
  const out = plainCopy(value);
  return (out === NOT_PLAIN ? JSON.parse(JSON.stringify(value)) : out) as T;
}

export function sha256(text: string): string {
  return sha256Hex(text);
}

/** SHA-256 of the canonical JSON of `value`. */
export function contentHash(value: unknown): string {
  return sha256(canonicalJson(value));
}

/** Applies an RFC 7396 JSON Merge Patch (null removes a key). */
export function applyMergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return patch;
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(Object.hasOwn(out, k) ? (out[k] as Json) : null, v);
  }
  return out;
}

/** Escapes one JSON-pointer segment (RFC 6901: `~` → `~0`, `/` → `~1`). */
export function escapeSegment(segment: string | number): string {
  return String(segment).replaceAll('~', '~0').replaceAll('/', '~1');
}

/** Undoes `escapeSegment`. */
export function unescapeSegment(segment: string): string {
  return segment.replaceAll('~1', '/').replaceAll('~0', '~');
}

/** Splits a JSON pointer (`/a/b~1c`) or a dot path (`a.b`) into segments. */
export function pathSegments(path: string): string[] {
  if (path === '' || path === '/') return [];
  if (path.startsWith('/')) return path.slice(1).split('/').map(unescapeSegment);
  if (path.split('.').some((s) => s === '')) {
    throw new InvalidInputError(`path ${JSON.stringify(path)} is not a JSON pointer or a dot path`, {
      field: 'paths',
    });
  }
  return path.split('.');
}

/** The value at `path`, or undefined when absent. */
export function getPath(value: Json, path: string): Json | undefined {
  let cur: Json | undefined = value;
  for (const seg of pathSegments(path)) {
    if (Array.isArray(cur)) {
      // RFC 6901 array indexes: no sign, no leading zero.
      if (!/^(0|[1-9]\d*)$/.test(seg)) return undefined;
      cur = cur[Number(seg)];
    } else if (isObject(cur)) {
      cur = Object.hasOwn(cur, seg) ? cur[seg] : undefined;
    } else return undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

/** A JSON pointer for a list of segments (RFC 6901 escaping); `/` for the whole document. */
export function toPointer(segments: readonly (string | number)[]): string {
  let s = '';
  for (const seg of segments) s += `/${escapeSegment(seg)}`;
  return s === '' ? '/' : s;
}

/** One part of a JSON value as an outline shows it: where it is, its type and its size. */
export interface OutlinePart {
  /** Its JSON Pointer (RFC 6901), to read it by. */
  path: string;
  type: 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null';
  /** Characters of its JSON. */
  chars: number;
  /** Entries of an array, keys of an object. */
  length?: number;
}

/** The JSON type of a value. */
function jsonType(v: Json): OutlinePart['type'] {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : (typeof v as OutlinePart['type']);
}

/**
 * The parts of `value` (at JSON Pointer `at`, `/` for the whole): one entry per key of an object or entry of
 * an array, in order, until their listing would pass `maxChars` or `maxParts`; `more` counts the rest. A
 * scalar is its own one part. What a reader needs to ask for a large value piece by piece.
 * @example outlineOf({ a: [1, 2], b: 'x' }, '/').parts // [{ path: '/a', type: 'array', chars: 5, length: 2 }, …]
 */
export function outlineOf(
  value: Json,
  at: string,
  maxChars = 20_000,
  maxParts = 200,
): { parts: OutlinePart[]; more: number } {
  const base = at === '/' ? '' : at;
  const entries: Array<[string, Json]> = Array.isArray(value)
    ? value.map((v, k) => [String(k), v])
    : isObject(value)
      ? Object.entries(value)
      : [];
  if (entries.length === 0) {
    return { parts: [{ path: at, type: jsonType(value), chars: JSON.stringify(value).length }], more: 0 };
  }
  const parts: OutlinePart[] = [];
  let used = 2;
  for (const [k, v] of entries) {
    const part: OutlinePart = {
      path: `${base}/${escapeSegment(k)}`,
      type: jsonType(v),
      chars: JSON.stringify(v).length,
    };
    if (Array.isArray(v)) part.length = v.length;
    else if (isObject(v)) part.length = Object.keys(v).length;
    const size = JSON.stringify(part).length + 1;
    if (parts.length >= maxParts || used + size > maxChars) break;
    parts.push(part);
    used += size;
  }
  return { parts, more: entries.length - parts.length };
}
