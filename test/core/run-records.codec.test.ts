// The run-record codecs (src/core/codecs/run-records.ts) agree with what each backend stores, byte for byte:
// every record a run writes (a completed and a failed step, a sleep, a reset) is stored as the exact text
// `recordEvent` builds, `readRecord` reads it back to the record, and building that record again gives the
// stored text. No backend writes these events in SQL, so this is the whole of their shape.
import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/core/backend.js';
import {
  ITEM_SIGNALED,
  type NewRunRecord,
  RUN_RECORD_TYPES,
  readRecord,
  readSignal,
  recordEvent,
  signalEvent,
} from '../../src/core/codecs/run-records.js';
import { isSuspended } from '../../src/core/runs/errors.js';
import { backendsForThisFile } from '../helpers/backends.js';

for (const backend of await backendsForThisFile()) {
  describe(`run-record codecs on ${backend.name}`, () => {
    it('every record type is stored as recordEvent built it, and reads back to the record that builds it again', async () => {
      let now = Date.parse('2026-12-06T10:00:00.000Z');
      const inst = await backend.open(undefined, { clock: () => now });
      try {
        const item = await inst.work.enqueue({ title: 'codec |+ü' });
        const a1 = (await inst.work.claim({ worker: 'w|1+é' }))!;
        const run1 = await inst.work.run({ id: item.id, worker: 'w|1+é', attempt: a1.attempts });
        await run1.step('model ü', () => ({ text: 'héllo', at: new Date(now), n: [1.5, null, -0.25] }));
        await run1
          .step('flaky', () => {
            throw new Error('503 — upstream');
          })
          .catch(() => {});
        await run1.sleep('nap', '90s').catch((e) => {
          if (!isSuspended(e)) throw e;
        });
        now += 90_000;
        const a2 = (await inst.work.claim({ worker: 'w|1+é' }))!;
        const run2 = await inst.work.run({ id: item.id, worker: 'w|1+é', attempt: a2.attempts });
        await run2.step('model ü', () => 'replayed');
        await run2.step('flaky', () => 'fine now');
        await run2.sleep('nap', '90s');
        await run2.waitFor('approved', { timeout: '1h' }).catch((e) => {
          if (!isSuspended(e)) throw e;
        });
        await inst.work.signal({
          id: item.id,
          name: 'approved',
          payload: { ok: [true, null] },
          actor: 'ada|+',
        });
        const a3 = (await inst.work.claim({ worker: 'w|1+é' }))!;
        const run3 = await inst.work.run({ id: item.id, worker: 'w|1+é', attempt: a3.attempts });
        await run3.step('model ü', () => 'replayed');
        await run3.step('flaky', () => 'replayed');
        await run3.sleep('nap', '90s');
        await run3.waitFor('approved');
        await inst.work.resolve({
          id: item.id,
          worker: 'w|1+é',
          attempt: a3.attempts,
          status: 'failed',
          error: 'x',
        });
        await inst.work.resetStep({
          id: item.id,
          name: 'model ü',
          reason: 'redo',
          actor: 'ada',
          actor_kind: 'human',
        });
        const stored: StoredEvent[] = [];
        const signals: StoredEvent[] = [];
        for await (const r of inst.backend.dump!()) {
          if (r.t === 'event' && RUN_RECORD_TYPES.includes(r.row.type)) stored.push(r.row);
          if (r.t === 'event' && r.row.type === ITEM_SIGNALED) signals.push(r.row);
        }
        expect(stored.map((e) => e.type)).toEqual([
          'work_step_completed',
          'work_step_failed',
          'work_step_slept',
          'work_step_completed',
          'work_step_waiting',
          'work_step_waited',
          'work_step_reset',
        ]);
        expect(signals).toHaveLength(1);
        for (const e of signals) {
          const sig = readSignal({
            ...e,
            data: JSON.parse(e.data),
            created_at: new Date(e.created_at).toISOString(),
          });
          expect(sig).not.toBeNull();
          const data = JSON.parse(e.data) as { wakes?: boolean };
          // It woke the item from its wait for it.
          expect(data.wakes).toBe(true);
          const rebuilt = signalEvent(item.id, sig!, data.wakes === true, e.created_at);
          expect(JSON.stringify(rebuilt.data)).toBe(e.data);
          expect(rebuilt.actor).toBe(e.actor);
        }
        for (const e of stored) {
          const record = readRecord({
            ...e,
            data: JSON.parse(e.data),
            created_at: new Date(e.created_at).toISOString(),
          });
          expect(record).not.toBeNull();
          expect(record).not.toBe('malformed');
          const { position: _p, at: _a, ...fields } = record as Exclude<typeof record, null | 'malformed'>;
          const rebuilt = recordEvent(item.id, fields as NewRunRecord, e.created_at);
          // Byte for byte: the stored text is the text the codec builds, on this backend.
          expect(JSON.stringify(rebuilt.data)).toBe(e.data);
          expect({
            type: rebuilt.type,
            stream: rebuilt.stream,
            actor: rebuilt.actor,
            work_item_id: rebuilt.work_item_id,
          }).toEqual({
            type: e.type,
            stream: e.stream,
            actor: e.actor,
            work_item_id: e.work_item_id,
          });
        }
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
      }
    });
  });
}

describe('readRecord', () => {
  it('a record type whose data lacks what recordEvent writes is malformed; other types are no record', () => {
    const base = { position: 1, created_at: '2026-12-06T10:00:00.000Z', actor: 'w' };
    expect(
      readRecord({ ...base, type: 'work_step_completed', data: { seq: 1, name: 'a', occurrence: 1 } }),
    ).toBe('malformed');
    expect(
      readRecord({
        ...base,
        type: 'work_step_slept',
        data: { seq: 0, name: 'a', occurrence: 1, attempt: 1, worker: 'w', wake_at: 'x' },
      }),
    ).toBe('malformed');
    expect(readRecord({ ...base, type: 'work_step_reset', data: [] })).toBe('malformed');
    expect(readRecord({ ...base, type: 'work_item_claimed', data: {} })).toBeNull();
  });
});
