// How LangGraph's ids become document ids, and serialized values become JSON the store can hold.
import { createHash } from 'node:crypto';
import type { SerializerProtocol } from '@langchain/langgraph-checkpoint';
import { InvalidInputError } from '../../index.js';

/** A part of a document id that is used as is: no control characters, no separator, short. */
function plain(part: string): boolean {
  if (part.length > 90) return false;
  for (let i = 0; i < part.length; i++) {
    const c = part.charCodeAt(i);
    if (c < 0x20 || c === 0x7f || c === 0x23 /* # */ || c === 0x25 /* % */) return false;
  }
  return true;
}

const digest = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 40);

/**
 * A document id made of parts joined by `#`: readable when every part is plain (what LangGraph's uuids and
 * usual thread names are), otherwise `%` and a hash of all parts (the real values are in the body).
 */
export function joinId(parts: string[]): string {
  const joined = parts.join('#');
  if (joined.length > 0 && joined.length <= 200 && parts.every(plain)) return joined;
  return `%${digest(JSON.stringify(parts))}`;
}

/** The thread id of a LangGraph config, checked: a non-empty string. */
export function threadIdOf(value: unknown, where: string): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new InvalidInputError(`${where}: config.configurable.thread_id must be a non-empty string`, {
      field: 'thread_id',
    });
  }
  if (value.length > 10_000) {
    throw new InvalidInputError(`${where}: thread_id is longer than 10000 characters`, {
      field: 'thread_id',
    });
  }
  return value;
}

/** A namespace or checkpoint id, checked: a string ('' allowed for the root namespace). */
export function textOf(value: unknown, field: string, where: string): string {
  if (typeof value !== 'string' || value.length > 10_000) {
    throw new InvalidInputError(`${where}: ${field} must be a string of at most 10000 characters`, { field });
  }
  return value;
}

/** A serialized value as the store keeps it: JSON text as text, anything else as base64. */
export type Stored = { t: string; s: string } | { t: string; b: string };

export async function dump(serde: SerializerProtocol, value: unknown): Promise<Stored> {
  const [t, bytes] = await serde.dumpsTyped(value);
  if (t === 'json') return { t, s: typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('utf8') };
  return { t, b: Buffer.from(bytes).toString('base64') };
}

export async function load(serde: SerializerProtocol, stored: Stored): Promise<unknown> {
  if ('s' in stored) return serde.loadsTyped(stored.t, stored.s);
  return serde.loadsTyped(stored.t, new Uint8Array(Buffer.from(stored.b, 'base64')));
}

/**
 * A channel value stored as what it appends to an earlier one: a JSON array whose text starts with the
 * earlier array's text (a growing message list) keeps only the new tail. `a` is the document version
 * holding the earlier value, `n` how many deltas lead to a full value.
 */
export interface StoredDelta {
  t: 'json';
  a: number;
  n: number;
  tail: string;
}

export type StoredBlob = Stored | StoredDelta;

export const isDelta = (b: StoredBlob): b is StoredDelta => 'tail' in b;

/** The delta of `next` over `base` (both JSON texts of arrays), or null when `next` does not extend it. */
export function appendedTail(base: string, next: string): string | null {
  if (base.length < 2 || next.length <= base.length || base[0] !== '[' || base[base.length - 1] !== ']')
    return null;
  if (next[next.length - 1] !== ']') return null;
  const open = base.slice(0, -1);
  if (!next.startsWith(open)) return null;
  // "[]" grows to "[x]"; "[a]" grows to "[a,x]".
  const tail = next.slice(open.length);
  if (base === '[]' ? tail.startsWith(',') : !tail.startsWith(',')) return null;
  return tail;
}

/** Keys the store's JSON policy never accepts (they would reach an object's prototype). */
const RESERVED = new Set(['__proto__', 'constructor', 'prototype']);

/** A channel name used as a key of the stored body: refused when it is a reserved key. */
export function checkChannels(names: Iterable<string>, where: string): void {
  for (const n of names) {
    if (RESERVED.has(n)) {
      throw new InvalidInputError(`${where}: channel name ${JSON.stringify(n)} is refused (a reserved key)`, {
        field: 'channel',
      });
    }
  }
}

/** JSON text with object keys sorted, to compare values that went through the store (which sorts keys). */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}
