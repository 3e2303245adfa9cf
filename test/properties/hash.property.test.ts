// Property test: the event hash, assembled around eventHashTail (as PostgreSQL does it), is exactly
// SHA-256 of JSON.stringify of the whole field array, for any text (escapes, unicode, lone surrogates).
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { computeEventHash, GENESIS_HASH } from '../../src/core/hash.js';

function reference(prev: string, e: Parameters<typeof computeEventHash>[1]): string {
  const text = JSON.stringify([
    prev,
    e.position,
    e.stream,
    e.stream_seq,
    e.type,
    e.data,
    e.actor,
    e.correlation_id,
    e.causation_id,
    e.work_item_id,
    e.created_at,
  ]);
  return createHash('sha256').update(text).digest('hex');
}

const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('"', '\\', '\u2028', '\ud800'),
);
const maybe = fc.option(text, { nil: null });

it('computeEventHash equals SHA-256 of the JSON array of all fields', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.constant(GENESIS_HASH),
        fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 }),
        text,
      ),
      fc.record({
        position: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
        stream: text,
        stream_seq: fc.integer({ min: 1, max: 2 ** 40 }),
        type: text,
        data: fc.json(),
        actor: maybe,
        correlation_id: maybe,
        causation_id: maybe,
        work_item_id: maybe,
        created_at: fc.integer({ min: 0, max: 2 ** 45 }),
      }),
      (prev, e) => {
        expect(computeEventHash(prev, e)).toBe(reference(prev, e));
      },
    ),
    { numRuns: 500 },
  );
});
