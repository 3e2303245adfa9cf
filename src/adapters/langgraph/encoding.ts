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

/** The document id of a (thread, namespace): its checkpoints, and which run holds it. */
export const threadDocId = (thread: string, ns: string): string =>
  joinId(ns === '' ? [thread] : [thread, ns]);

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

/** A value as the serializer gave it: JSON stays bytes until it must become text (most are stored as a delta). */
export type Dumped = { t: 'json'; bytes: Buffer } | Stored;

export async function dumpBytes(serde: SerializerProtocol, value: unknown): Promise<Dumped> {
  const [t, bytes] = await serde.dumpsTyped(value);
  if (t !== 'json') return { t, b: Buffer.from(bytes).toString('base64') };
  return {
    t,
    bytes:
      typeof bytes === 'string'
        ? Buffer.from(bytes, 'utf8')
        : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length),
  };
}

/** The stored form of a dumped value: JSON as its text. */
export const storedOf = (d: Dumped): Stored => ('bytes' in d ? { t: d.t, s: d.bytes.toString('utf8') } : d);

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

const OPEN = 0x5b;
const CLOSE = 0x5d;
const COMMA = 0x2c;

/**
 * The delta of `next` over `base` (both UTF-8 JSON texts of arrays) as text, or null when `next` does not
 * extend it: "[]" grows to "[x]", "[a]" to "[a,x]". A memory compare, with no decoding of the whole value;
 * the split falls on a character boundary, as it follows the bytes of `base` before its final ']'.
 */
export function appendedTail(base: Buffer, next: Buffer): string | null {
  const n = base.length - 1;
  if (n < 1 || next.length <= base.length || base[0] !== OPEN || base[n] !== CLOSE) return null;
  if (next[next.length - 1] !== CLOSE) return null;
  if (!base.subarray(0, n).equals(next.subarray(0, n))) return null;
  if (n === 1 ? next[n] === COMMA : next[n] !== COMMA) return null;
  return next.subarray(n).toString('utf8');
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
