// An injected clock may return fractional milliseconds (performance.timeOrigin + performance.now(), a
// simulated clock): the store keeps whole milliseconds on every backend, so every write works and verifies.
import { describe, expect, it } from 'vitest';
import { backendsForThisFile } from '../helpers/backends.js';

for (const backend of await backendsForThisFile()) {
  describe(`a fractional clock on ${backend.name}`, () => {
    it('enqueue, claim, resolve, commit and append all work, with whole milliseconds kept', async () => {
      let t = Date.parse('2026-12-04T00:00:00.000Z') + 0.75;
      const inst = await backend.open(undefined, { clock: () => t });
      try {
        const item = await inst.work.enqueue({ title: 'fractional' });
        t += 10.4;
        await inst.work.claim({ worker: 'w', id: item.id });
        t += 0.3;
        const done = await inst.work.resolve({ id: item.id, worker: 'w', status: 'done' });
        expect(done.created_at).toBe('2026-12-04T00:00:00.000Z');
        expect(done.resolved_at).toBe('2026-12-04T00:00:00.011Z');
        const doc = await inst.docs.commit({ kind: 'json', id: 'x', expected_version: 0, body: { a: 1 } });
        expect(doc.version).toBe(1);
        const [e] = await inst.events.appendMany([{ type: 'note', data: { n: 1 } }]);
        expect(e!.created_at).toBe('2026-12-04T00:00:00.011Z');
        expect(inst.clock()).toBe(Date.parse('2026-12-04T00:00:00.011Z'));
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
      }
    });

    it('a clock that returns no number is a clear error, with nothing written', async () => {
      const inst = await backend.open(undefined, { clock: () => Number.NaN });
      try {
        await expect(inst.work.enqueue({ title: 'x' })).rejects.toThrow(/clock returned NaN/);
        expect(await inst.work.counts()).toMatchObject({ pending: 0 });
        expect(await inst.events.head()).toBeNull();
      } finally {
        await inst.close();
      }
    });
  });
}
