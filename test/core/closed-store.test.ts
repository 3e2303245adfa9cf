// A store handle after close(): every call is a typed STORAGE_UNAVAILABLE (closed: true), never a raw
// driver error, and a tail running when the store closes simply ends (issue 11, point 3).
import { describe, expect, it } from 'vitest';
import { backendsForThisFile } from '../helpers/backends.js';

const backends = await backendsForThisFile();

for (const b of backends) {
  describe(`a closed ${b.name} store`, () => {
    it('refuses every call with STORAGE_UNAVAILABLE (closed), not a driver error', async () => {
      const inst = await b.open();
      const item = await inst.work.enqueue({ title: 'before close' });
      await inst.close();
      const calls: Array<() => Promise<unknown>> = [
        () => inst.work.enqueue({ title: 'x' }),
        () => inst.work.claim({ worker: 'w' }),
        () => inst.work.get(item.id),
        () => inst.work.list({}),
        () => inst.events.append({ type: 'note' }),
        () => inst.events.read({}),
        () => inst.events.verify(),
        () => inst.docs.commit({ kind: 'json', id: 'd', expected_version: 0, body: {} }),
        () => inst.docs.find('json', 'd'),
      ];
      for (const call of calls) {
        await expect(call()).rejects.toMatchObject({
          code: 'STORAGE_UNAVAILABLE',
          details: { closed: true },
          message: expect.stringContaining('closed'),
        });
      }
      await expect(inst.close()).resolves.toBeUndefined();
    });

    it('a tail running when the store closes ends instead of throwing', async () => {
      const inst = await b.open();
      await inst.events.append({ type: 'note' });
      const seen: number[] = [];
      const tail = (async () => {
        for await (const e of inst.events.tail({ pollMs: 20 })) seen.push(e.position);
      })();
      // Close once the tail has delivered what there is and is waiting for more (a condition, not a guess).
      while (seen.length === 0) await new Promise((r) => setTimeout(r, 10));
      await inst.close();
      await expect(tail).resolves.toBeUndefined();
      expect(seen).toEqual([1]);
    });
  });
}
