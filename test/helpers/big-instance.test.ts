// The large-instance fixture of issue 40 builds the state it says, on every backend: items per status, one
// work_items_enqueued event naming all 1,000 items, held items by worker under day-long leases, decisions
// waiting, and the large document's size — so the benchmarks and tests that measure answers against it measure
// what they claim to.
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/core/types.js';
import { backendsForThisFile } from './backends.js';
import { BIG_WORKERS, DEFAULT_SHAPE, fillBigInstance } from './big-instance.js';

const backends = await backendsForThisFile();

for (const b of backends) {
  describe(`fillBigInstance on ${b.name}`, () => {
    it('builds the default shape: 1,000 items in one batch, 300 held, 150 resolved, a 400 KB document', async () => {
      const inst = await b.open();
      try {
        const big = await fillBigInstance(inst, DEFAULT_SHAPE);

        expect(await inst.work.counts()).toEqual({
          pending: 1000 - 300 - 150,
          in_flight: 300,
          waiting_human: 3,
          done: 135,
          failed: 15,
          cancelled: 0,
        });
        expect(big.resolved.done).toHaveLength(135);
        expect(big.resolved.failed).toHaveLength(15);
        expect(big.decisions).toHaveLength(3);
        const waiting = await inst.work.list({ status: 'waiting_human' });
        expect(waiting.map((x) => x.id).sort()).toEqual([...big.decisions].sort());

        // One batch event names every enqueued item, with its title and keys.
        const enqueued = (await inst.events.read({ after: 0, limit: 1000 })).filter(
          (e) => e.type === 'work_items_enqueued',
        );
        expect(enqueued).toHaveLength(1);
        const entries = (enqueued[0]!.data as { items: Array<Record<string, unknown>> }).items;
        expect(entries).toHaveLength(1000);
        expect(entries.every((x) => typeof x.payload_hash === 'string')).toBe(true);
        const titles = entries.map((x) => x.title as string);
        expect(Math.min(...titles.map((t) => t.length))).toBeGreaterThanOrEqual(60);
        expect(Math.max(...titles.map((t) => t.length))).toBeLessThanOrEqual(120);
        expect(titles.filter((t) => /[^\x20-\x7e]/.test(t)).length).toBeGreaterThan(100);
        expect(entries[0]!.idempotency_key).toMatch(/\|.*\+.*ü/);

        // Held items: shared between the workers, leases a day long, a payload of a few hundred bytes.
        const inFlight = await inst.work.list({ status: 'in_flight', limit: 1000 });
        expect(inFlight).toHaveLength(300);
        for (const w of BIG_WORKERS) {
          expect(
            inFlight
              .filter((x) => x.lease_owner === w)
              .map((x) => x.id)
              .sort(),
          ).toEqual([...big.held[w]!].sort());
          expect(big.held[w]!.length).toBe(75);
        }
        const now = Date.now();
        expect(inFlight.every((x) => Date.parse(x.lease_expires_at!) > now + 23 * 3_600_000)).toBe(true);
        const payloadBytes = inFlight.map((x) => Buffer.byteLength(JSON.stringify(x.payload)));
        expect(Math.min(...payloadBytes)).toBeGreaterThan(300);
        expect(Math.max(...payloadBytes)).toBeLessThan(1000);

        expect(await inst.work.steps(big.stepsItem!.id)).toHaveLength(20);

        // The large document: about 400,000 characters, a tasks array of objects, three versions.
        const doc = await inst.docs.get(big.bigDoc);
        expect(doc.version).toBe(3);
        const chars = JSON.stringify(doc.body).length;
        expect(chars).toBeGreaterThanOrEqual(400_000);
        expect(chars).toBeLessThan(401_000);
        expect((doc.body.tasks as JsonObject[]).length).toBeGreaterThan(500);
        expect((await inst.docs.list()).length).toBe(big.docs.length);
        expect(big.docs.length).toBeGreaterThanOrEqual(5);
      } finally {
        await inst.close();
      }
    });

    it('enqueues a larger shape in as many batch events as batches', async () => {
      const inst = await b.open();
      try {
        await fillBigInstance(inst, {
          items: 2000,
          batches: 20,
          claimed: 10,
          done: 10,
          failures: 0,
          docChars: 1000,
        });
        const counts = await inst.work.counts();
        expect(counts).toMatchObject({ pending: 1980, in_flight: 10, done: 10, failed: 0 });
        const batches = (await inst.events.read({ after: 0, limit: 1000 })).filter(
          (e) => e.type === 'work_items_enqueued',
        );
        expect(batches.map((e) => (e.data as { items: unknown[] }).items.length)).toEqual(
          Array.from({ length: 20 }, () => 100),
        );
      } finally {
        await inst.close();
      }
    });
  });
}
