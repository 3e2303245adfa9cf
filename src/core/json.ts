// JSON helpers for documents: canonical form and hashing, RFC 7396 merge patch, JSON pointers.
import { InvalidInputError } from '../errors.js';
import { sha256Hex } from './hash.js';
import type { Json, JsonObject } from './types.js';

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** JSON with object keys sorted at every level, so equal values serialize identically. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isObject(value)) {
    return `{${Object.keys(value)
      .filter((k) => value[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
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
    else out[k] = applyMergePatch(out[k] ?? null, v);
  }
  return out;
}

/** Splits a JSON pointer (`/a/b~1c`) or a dot path (`a.b`) into segments. */
export function pathSegments(path: string): string[] {
  if (path === '' || path === '/') return [];
  if (path.startsWith('/'))
    return path
      .slice(1)
      .split('/')
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
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
      if (!/^\d+$/.test(seg)) return undefined;
      cur = cur[Number(seg)];
    } else if (isObject(cur)) {
      cur = Object.hasOwn(cur, seg) ? cur[seg] : undefined;
    } else return undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

/** A JSON pointer for a list of segments. */
export function toPointer(segments: string[]): string {
  return segments.length === 0
    ? '/'
    : `/${segments.map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
}
