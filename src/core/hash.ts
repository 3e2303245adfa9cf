// The event hash chain: each event's SHA-256 covers its content and the previous event's hash.
import * as crypto from 'node:crypto';

/** prev_hash of the first event of an instance. */
// Stryker disable next-line StringLiteral,MethodExpression: a static mutant (a module constant), which this configuration leaves to test/core/hash.test.ts (it asserts the genesis hash)
export const GENESIS_HASH = '0'.repeat(64);

/** The fields an event hash covers; `data` is the exact JSON text stored. */
export interface HashedEventFields {
  position: number;
  stream: string;
  stream_seq: number;
  type: string;
  data: string;
  actor: string | null;
  correlation_id: string | null;
  causation_id: string | null;
  work_item_id: string | null;
  created_at: number;
}

/**
 * The hashed text after `[prev_hash, position, stream, stream_seq,`: the event's own fields as JSON
 * (`"type","data",actor,correlation_id,causation_id,work_item_id,created_at]`). A server that assigns
 * the position and sequence itself (PostgreSQL) gets this and the stream's JSON from here.
 */
export function eventHashTail(e: Omit<HashedEventFields, 'position' | 'stream' | 'stream_seq'>): string {
  return JSON.stringify([
    e.type,
    e.data,
    e.actor,
    e.correlation_id,
    e.causation_id,
    e.work_item_id,
    e.created_at,
  ]).slice(1);
}

/**
 * SHA-256 (hex) of JSON.stringify([prevHash, position, stream, stream_seq, type, data, actor,
 * correlation_id, causation_id, work_item_id, created_at]), assembled around `eventHashTail` (the
 * numbers are integers, which print the same either way).
 */
export function computeEventHash(prevHash: string, e: HashedEventFields): string {
  return sha256Hex(
    `[${JSON.stringify(prevHash)},${e.position},${JSON.stringify(e.stream)},${e.stream_seq},${eventHashTail(e)}`,
  );
}

// crypto.hash (Node >= 20.12, Bun) is a one-shot digest, about a third cheaper than createHash per event.
const oneShot = (crypto as { hash?: (alg: string, data: string, enc: 'hex') => string }).hash;

/** SHA-256 of a string, hex. */
export function sha256Hex(text: string): string {
  // Stryker disable next-line StringLiteral: the createHash fallback is for runtimes without crypto.hash (Node < 20.12); on the Node this runs on it never runs
  return oneShot ? oneShot('sha256', text, 'hex') : crypto.createHash('sha256').update(text).digest('hex');
}
