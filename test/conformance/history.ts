// Store conformance, the queue over time (work.history, the dashboard's charts): per span of a window, items
// created and items that ended done, failed or cancelled, and how many were unfinished at each span's end.
import { describe, expect } from 'vitest';
import { type ConformanceTest, expectCode } from './setup.js';

const MIN = 60_000;

export function historyConformance(name: string, t: ConformanceTest): void {
  describe(`${name}: queue history`, () => {
    t('counts each span’s created and ended items and the unfinished at its end', async (c) => {
      // Before the window: one item created and left pending, one created and done.
      const old = await c.work.enqueue({ title: 'old' });
      const oldDone = await c.work.enqueue({ title: 'old done' });
      await c.work.claim({ worker: 'w', id: oldDone.id });
      await c.work.resolve({ id: oldDone.id, status: 'done', worker: 'w' });
      c.advance(10 * MIN);
      const start = c.now();
      // Span 0 (10 minutes): three created, one of them done, and the old pending one cancelled.
      const [a, b, d] = await c.work.enqueueMany([
        { title: 'a' },
        { title: 'b' },
        { title: 'd', max_attempts: 1 },
      ]);
      await c.work.claim({ worker: 'w', id: a!.id });
      await c.work.resolve({ id: a!.id, status: 'done', worker: 'w' });
      await c.work.cancel({ id: old.id });
      c.advance(10 * MIN);
      // Span 1: d fails; g created.
      await c.work.claim({ worker: 'w', id: d!.id });
      await c.work.resolve({ id: d!.id, status: 'failed', error: 'x', worker: 'w' });
      const g = await c.work.enqueue({ title: 'g' });
      c.advance(10 * MIN);
      // Span 2: three created, one parked for a human, one claimed and left in flight; b done; g cancelled.
      const e = await c.work.enqueue({ title: 'e' });
      await c.work.enqueue({ title: 'f', waiting_human: true });
      await c.work.enqueue({ title: 'h' });
      await c.work.claim({ worker: 'w', id: b!.id });
      await c.work.resolve({ id: b!.id, status: 'done', worker: 'w' });
      await c.work.cancel({ id: g.id });
      await c.work.claim({ worker: 'w', id: e.id, lease_ms: 3_600_000 });
      c.advance(15 * MIN);
      // Now: 35 minutes after start; a 40-minute window of 4 spans ends just after now and starts 5 minutes
      // (less 1 ms) before `start`.
      const h = await c.work.history({ window_ms: 40 * MIN, buckets: 4 });
      expect(h.bucket_ms).toBe(10 * MIN);
      expect(Date.parse(h.since)).toBe(start - 5 * MIN + 1);
      expect(h.open).toBe(3);
      expect(h.buckets.map(({ start: s, ...n }) => [Date.parse(s) - (start - 5 * MIN + 1), n])).toEqual([
        [0, { created: 3, done: 1, failed: 0, cancelled: 1, open: 2 }],
        [10 * MIN, { created: 1, done: 0, failed: 1, cancelled: 0, open: 2 }],
        [20 * MIN, { created: 3, done: 1, failed: 0, cancelled: 1, open: 3 }],
        [30 * MIN, { created: 0, done: 0, failed: 0, cancelled: 0, open: 3 }],
      ]);
    });

    t('defaults to 48 spans over 24 hours; refuses a window or span count out of range', async (c) => {
      await c.work.enqueue({ title: 'x' });
      const h = await c.work.history();
      expect(h.buckets).toHaveLength(48);
      expect(h.bucket_ms).toBe(30 * MIN);
      expect(h.buckets.at(-1)).toMatchObject({ created: 1, open: 1 });
      for (const bad of [
        { window_ms: 59_999 },
        { window_ms: 31 * 86_400_000 },
        { buckets: 1 },
        { buckets: 201 },
        { buckets: 2.5 },
        { window_ms: '1h' },
        { since: 0 },
      ]) {
        await expectCode(c.work.history(bad as never), 'INVALID_INPUT');
      }
      await expect(c.work.history({ buckets: 1 })).rejects.toThrow(/^queue_history: buckets /);
    });
  });
}

export function statsConformance(name: string, t: ConformanceTest): void {
  describe(`${name}: queue stats`, () => {
    t(
      'counts every pending item on its last attempt and every item waiting long, not a page of them',
      async (c) => {
        // 600 pending items on their last attempt (more than any page the dashboard reads), 3 not.
        await c.work.enqueueMany(
          Array.from({ length: 600 }, (_, k) => ({ title: `l${k}`, max_attempts: 2 })),
        );
        const held = await c.work.claimMany({ worker: 'w', limit: 600 });
        expect(held).toHaveLength(600);
        await c.work.resolveMany(
          held.map((i) => ({ id: i.id, worker: 'w', status: 'failed' as const, error: 'x', retry_at: '0s' })),
        );
        await c.work.enqueueMany([{ title: 'fresh' }, { title: 'fresh, one attempt', max_attempts: 1 }]);
        const once = await c.work.enqueue({ title: 'failed once of three', max_attempts: 3 });
        await c.work.claim({ worker: 'w', id: once.id });
        await c.work.resolve({ id: once.id, worker: 'w', status: 'failed', error: 'x', retry_at: '0s' });
        // Two parked two hours ago, one parked now.
        await c.work.enqueueMany([
          { title: 'w1', waiting_human: true },
          { title: 'w2', waiting_human: true },
        ]);
        c.advance(2 * 3_600_000);
        await c.work.enqueue({ title: 'w3', waiting_human: true });
        const s = await c.work.stats({ expiringWithinMs: 0, bucketsMs: [], waitingLongerThanMs: 3_600_000 });
        expect([s.lastAttempt, s.waitingLong]).toEqual([600, 2]);
        // The default threshold is an hour; a longer one counts fewer.
        expect((await c.work.stats({ expiringWithinMs: 0, bucketsMs: [] })).waitingLong).toBe(2);
        const longer = await c.work.stats({
          expiringWithinMs: 0,
          bucketsMs: [],
          waitingLongerThanMs: 3 * 3_600_000,
        });
        expect(longer.waitingLong).toBe(0);
      },
    );
  });
}
