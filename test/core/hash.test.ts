// The hash chain's contract as an outside verifier reads it (docs/concepts.md): the first event's prev_hash is
// 64 zeros, and each event's hash is the SHA-256 (hex) of JSON.stringify([prev_hash, position, stream,
// stream_seq, type, data as stored, actor, correlation_id, causation_id, work_item_id, created_at]). Computed
// here independently, with node:crypto's createHash, against events the store wrote on each backend — so a
// change that kept the chain consistent with itself but not with this formula (another genesis, another
// order of fields) would fail here, where verify alone would not notice.
import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { GENESIS_HASH } from '../../src/core/hash.js';
import type { Instance } from '../../src/instance/instance.js';
import { backendsForThisFile } from '../helpers/backends.js';

const backends = await backendsForThisFile();
const open: Instance[] = [];
afterAll(async () => {
  await Promise.all(open.map((i) => i.close()));
});

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe.each(backends)('$name: the hash chain as documented', (b) => {
  it('starts at 64 zeros and hashes each event by the documented formula', async () => {
    expect(GENESIS_HASH).toBe('0'.repeat(64));
    const inst = await b.open();
    open.push(inst);
    await inst.events.append({
      type: 'note',
      stream: 'chain:u-1',
      data: { a: 1, text: 'ü|+' },
      actor: 'tester',
    });
    await inst.events.append({
      type: 'note',
      stream: 'chain:u-1',
      data: { b: [true, null] },
      correlation_id: 'c1',
    });
    const events = await inst.events.read({});
    expect(events.length).toBeGreaterThanOrEqual(2);
    expect(events[0]!.prev_hash).toBe('0'.repeat(64));
    let prev = '0'.repeat(64);
    for (const e of events) {
      expect(e.prev_hash).toBe(prev);
      const text = JSON.stringify([
        prev,
        e.position,
        e.stream,
        e.stream_seq,
        e.type,
        JSON.stringify(e.data),
        e.actor,
        e.correlation_id,
        e.causation_id,
        e.work_item_id,
        Date.parse(e.created_at),
      ]);
      expect(e.hash, `event ${e.position}`).toBe(sha(text));
      prev = e.hash;
    }
  });
});
