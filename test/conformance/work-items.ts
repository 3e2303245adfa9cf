// Store conformance, work items: enqueue, claim, leases, resolve and the other transitions, annotate,
// list and replay.
import { describe, expect } from 'vitest';
import type { WorkItem } from '../../src/core/types.js';
import { type ConformanceTest, eventCount, expectCode, T0, typesOf } from './setup.js';

export function workItemConformance(name: string, t: ConformanceTest): void {
  describe(`${name}: enqueue`, () => {
    t('returns a pending item with defaults and appends work_item_enqueued', async (c) => {
      const item = await c.work.enqueue({ title: 'write tests' });
      expect(item).toMatchObject({
        title: 'write tests',
        kind: null,
        status: 'pending',
        priority: 0,
        payload: null,
        notes: {},
        result: null,
        error: null,
        attempts: 0,
        max_attempts: 3,
        lease_owner: null,
        lease_expires_at: null,
        blocked_by: [],
        created_at: new Date(T0).toISOString(),
      });
      expect(item.id).toMatch(/^wi_[0-9A-Z]{26}$/);
      expect(await typesOf(c, item.id)).toEqual(['work_item_enqueued']);
    });

    t('keeps payload, kind, priority, max_attempts, not_before', async (c) => {
      const item = await c.work.enqueue({
        title: 'x',
        kind: 'build',
        payload: { a: [1, 'two', null], b: { c: true } },
        priority: 7,
        max_attempts: 5,
        not_before: '2026-01-02T00:00:00.000Z',
      });
      const got = await c.work.get(item.id);
      expect(got).toMatchObject({
        kind: 'build',
        payload: { a: [1, 'two', null], b: { c: true } },
        priority: 7,
        max_attempts: 5,
        not_before: '2026-01-02T00:00:00.000Z',
      });
    });

    t(
      'a retried enqueue with the same idempotency_key returns the existing item and writes nothing',
      async (c) => {
        const a = await c.work.enqueue({ title: 'once', idempotency_key: 'k-1' });
        const before = await eventCount(c);
        const b = await c.work.enqueue({ title: 'twice', idempotency_key: 'k-1' });
        expect(b.id).toBe(a.id);
        expect(b.title).toBe('once');
        expect(await eventCount(c)).toBe(before);
        expect((await c.work.list()).length).toBe(1);
      },
    );

    t('enqueueMany is all-or-nothing', async (c) => {
      const ok = await c.work.enqueue({ title: 'ok' });
      await expectCode(
        c.work.enqueueMany([{ title: 'a' }, { title: 'b', blocked_by: [ok.id, 'wi_nope'] }]),
        'INVALID_INPUT',
      );
      expect((await c.work.list()).map((i) => i.title)).toEqual(['ok']);
      expect(await eventCount(c)).toBe(1);
    });

    t('blocked_by must name existing items', async (c) => {
      const details = await expectCode(
        c.work.enqueue({ title: 'x', blocked_by: ['wi_missing'] }),
        'INVALID_INPUT',
      );
      expect(details.field).toBe('blocked_by');
      expect(await eventCount(c)).toBe(0);
    });

    t('bad input is refused with INVALID_INPUT and writes nothing', async (c) => {
      const bad: unknown[] = [
        {},
        { title: '' },
        { title: '   ' },
        { title: 5 },
        { title: 'x', priority: 1.5 },
        { title: 'x', priority: '1' },
        { title: 'x', unknown_field: 1 },
        { title: 'x', blocked_by: 'wi_1' },
        { title: 'x', not_before: 'tomorrow' },
        { title: 'x', max_attempts: 0 },
        { title: 'x'.repeat(1001) },
        { title: 'x', payload: { big: 'y'.repeat(1024 * 1024 + 1) } },
        null,
        [],
      ];
      for (const input of bad) {
        await expectCode(c.work.enqueue(input as never), 'INVALID_INPUT');
      }
      expect(await eventCount(c)).toBe(0);
      expect(await c.work.list()).toEqual([]);
    });
  });

  describe(`${name}: claim`, () => {
    t('claims the highest priority first, then the oldest', async (c) => {
      const low = await c.work.enqueue({ title: 'low', priority: -1 });
      c.advance(1);
      const old = await c.work.enqueue({ title: 'old' });
      c.advance(1);
      const high = await c.work.enqueue({ title: 'high', priority: 5 });
      c.advance(1);
      const young = await c.work.enqueue({ title: 'young' });
      const order: string[] = [];
      for (;;) {
        const item = await c.work.claim({ worker: 'w' });
        if (!item) break;
        order.push(item.id);
      }
      expect(order).toEqual([high.id, old.id, young.id, low.id]);
    });

    t(
      'a claim sets in_flight, lease owner and expiry, attempts + 1, and appends work_item_claimed',
      async (c) => {
        const item = await c.work.enqueue({ title: 'x' });
        c.advance(10);
        const claimed = await c.work.claim({ worker: 'w1', lease_ms: 5000 });
        expect(claimed).toMatchObject({
          id: item.id,
          status: 'in_flight',
          lease_owner: 'w1',
          attempts: 1,
          lease_expires_at: new Date(c.now() + 5000).toISOString(),
          claimed_at: new Date(c.now()).toISOString(),
        });
        const events = await c.events.read({ work_item_id: item.id });
        expect(events.map((e) => e.type)).toEqual(['work_item_enqueued', 'work_item_claimed']);
        expect(events[1]!.data).toMatchObject({ worker: 'w1', attempt: 1 });
      },
    );

    t('returns null when nothing is ready, and writes nothing', async (c) => {
      expect(await c.work.claim()).toBeNull();
      expect(await eventCount(c)).toBe(0);
    });

    t('an item is ready only once every blocker is done', async (c) => {
      const a = await c.work.enqueue({ title: 'a' });
      const b = await c.work.enqueue({ title: 'b' });
      const d = await c.work.enqueue({ title: 'd', blocked_by: [a.id, b.id], priority: 100 });
      expect((await c.work.claim({ worker: 'w' }))?.id).toBe(a.id);
      await c.work.resolve({ id: a.id, status: 'done', worker: 'w' });
      expect((await c.work.list({ ready: false })).map((i) => i.id)).toEqual([d.id]);
      expect((await c.work.claim({ worker: 'w' }))?.id).toBe(b.id);
      await c.work.resolve({ id: b.id, status: 'failed', worker: 'w', error: 'boom' });
      // A failed blocker keeps the dependent blocked.
      expect(await c.work.claim({ worker: 'w' })).toBeNull();
      expect((await c.work.get(d.id)).status).toBe('pending');
    });

    t('no claim hands out an item while one of its blockers is in flight', async (c) => {
      await c.work.setLimit({ key: 'k', max_in_flight: 5 });
      const a = await c.work.enqueue({ title: 'blocker' });
      const plain = await c.work.enqueue({ title: 'plain', kind: 'job', blocked_by: [a.id], priority: 100 });
      const keyed = await c.work.enqueue({
        title: 'keyed',
        kind: 'job',
        blocked_by: [a.id],
        priority: 100,
        concurrency_key: 'k',
      });
      const other = await c.work.enqueue({ title: 'other', priority: 1 });
      const held = (await c.work.claim({ id: a.id, worker: 'w', lease_ms: 60_000 }))!;
      expect(held.status).toBe('in_flight');
      // A claim of any shape: the next ready item, many, by id, by kind; each passes the blocked ones.
      expect((await c.work.claim({ worker: 'w2' }))?.id).toBe(other.id);
      expect(await c.work.claim({ worker: 'w2' })).toBeNull();
      expect(await c.work.claimMany({ worker: 'w2', limit: 10 })).toEqual([]);
      expect(await c.work.claim({ worker: 'w2', kind: 'job' })).toBeNull();
      for (const id of [plain.id, keyed.id]) {
        expect(await c.work.claim({ id, worker: 'w2' })).toBeNull();
        expect((await c.work.get(id)).status).toBe('pending');
      }
      // Once the blocker is done, both are handed out.
      await c.work.resolve({ id: a.id, worker: 'w', attempt: held.attempts, status: 'done' });
      const freed = await c.work.claimMany({ worker: 'w2', limit: 10 });
      expect(freed.map((i) => i.id).sort()).toEqual([plain.id, keyed.id].sort());
    });

    t('not_before holds an item back until its time', async (c) => {
      const later = new Date(T0 + 60_000).toISOString();
      const item = await c.work.enqueue({ title: 'later', not_before: later });
      expect(await c.work.claim()).toBeNull();
      c.advance(60_000);
      expect((await c.work.claim())?.id).toBe(item.id);
    });

    t('filters by kind and by id', async (c) => {
      const a = await c.work.enqueue({ title: 'a', kind: 'x', priority: 9 });
      const b = await c.work.enqueue({ title: 'b', kind: 'y' });
      const d = await c.work.enqueue({ title: 'd', kind: 'y' });
      expect((await c.work.claim({ kind: 'y' }))?.id).toBe(b.id);
      expect((await c.work.claim({ id: d.id }))?.id).toBe(d.id);
      expect(await c.work.claim({ id: d.id })).toBeNull();
      expect(await c.work.claim({ kind: 'z' })).toBeNull();
      expect((await c.work.claim())?.id).toBe(a.id);
    });

    t('claimMany claims up to limit in claim order', async (c) => {
      for (let i = 0; i < 5; i++) await c.work.enqueue({ title: `t${i}`, priority: i });
      const got = await c.work.claimMany({ worker: 'w', limit: 3 });
      expect(got.map((i) => i.title)).toEqual(['t4', 't3', 't2']);
      expect(got.every((i) => i.status === 'in_flight' && i.lease_owner === 'w')).toBe(true);
      expect((await c.work.counts()).pending).toBe(2);
    });
  });

  describe(`${name}: leases`, () => {
    t('heartbeat extends the lease; another worker gets LEASE_LOST', async (c) => {
      const item = await c.work.enqueue({ title: 'x' });
      await c.work.claim({ worker: 'w1', lease_ms: 1000 });
      c.advance(900);
      const hb = await c.work.heartbeat({ id: item.id, worker: 'w1', lease_ms: 1000 });
      expect(hb.lease_expires_at).toBe(new Date(c.now() + 1000).toISOString());
      c.advance(900);
      // Without the heartbeat this claim would have reclaimed it.
      expect(await c.work.claim({ worker: 'w2' })).toBeNull();
      await expectCode(c.work.heartbeat({ id: item.id, worker: 'w2' }), 'LEASE_LOST');
    });

    t('a refused heartbeat or release names the action, the item and who holds the lease', async (c) => {
      const item = await c.work.enqueue({ title: 'x' });
      await c.work.claim({ worker: 'w1|ü', lease_ms: 1000 });
      const message = async (p: Promise<unknown>) => {
        try {
          await p;
        } catch (err) {
          return (err as Error).message;
        }
        throw new Error('expected a refusal, got none');
      };
      expect(await message(c.work.heartbeat({ id: item.id, worker: 'w2+1' }))).toBe(
        `cannot heartbeat work item ${item.id}: it is leased to w1|ü, not w2+1`,
      );
      expect(await message(c.work.release({ id: item.id, worker: 'w2+1' }))).toBe(
        `cannot release work item ${item.id}: it is leased to w1|ü, not w2+1`,
      );
    });

    t(
      'an expired lease is reclaimed by the next claim, with work_item_reclaimed, and the old owner gets LEASE_LOST',
      async (c) => {
        const item = await c.work.enqueue({ title: 'x' });
        const first = await c.work.claim({ worker: 'w1', lease_ms: 1000 });
        c.advance(1000);
        await expectCode(c.work.heartbeat({ id: item.id, worker: 'w1' }), 'LEASE_LOST');
        const second = await c.work.claim({ worker: 'w2', lease_ms: 1000 });
        expect(second).toMatchObject({ id: item.id, attempts: 2, lease_owner: 'w2' });
        expect(await typesOf(c, item.id)).toEqual([
          'work_item_enqueued',
          'work_item_claimed',
          'work_item_reclaimed',
          'work_item_claimed',
        ]);
        await expectCode(
          c.work.resolve({ id: item.id, worker: 'w1', attempt: first!.attempts, status: 'done' }),
          'LEASE_LOST',
        );
        expect((await c.work.get(item.id)).status).toBe('in_flight');
        await c.work.resolve({ id: item.id, worker: 'w2', status: 'done' });
      },
    );

    t(
      'a late resolve after another worker finished the item is LEASE_LOST, not a silent success',
      async (c) => {
        const item = await c.work.enqueue({ title: 'x', max_attempts: 1 });
        const mine = await c.work.claim({ worker: 'w1', lease_ms: 100 });
        // A sweep before the lease runs out finds nothing and records nothing.
        c.advance(99);
        const before = (await c.events.read({})).length;
        expect(await c.work.reclaimExpired()).toEqual([]);
        expect((await c.events.read({})).length).toBe(before);
        c.advance(1);
        expect((await c.work.reclaimExpired()).map((i) => i.status)).toEqual(['failed']);
        // The reclaimed item no longer names the old owner.
        expect((await c.work.get(item.id)).lease_owner).toBeNull();
        await expectCode(
          c.work.resolve({ id: item.id, worker: 'w1', attempt: mine!.attempts, status: 'failed' }),
          'LEASE_LOST',
        );
        const other = await c.work.enqueue({ title: 'y' });
        await c.work.claim({ worker: 'w1', lease_ms: 100 });
        c.advance(100);
        await c.work.claim({ worker: 'w2' });
        await c.work.resolve({ id: other.id, worker: 'w2', status: 'done' });
        await expectCode(c.work.resolve({ id: other.id, worker: 'w1', status: 'done' }), 'LEASE_LOST');
        const reclaimed = await c.events.read({ work_item_id: other.id, type: 'work_item_reclaimed' });
        expect(reclaimed[0]!.data).toMatchObject({ previous_owner: 'w1', status: 'pending' });
      },
    );

    t('a resolve after the lease expired (not yet reclaimed) is LEASE_LOST', async (c) => {
      const item = await c.work.enqueue({ title: 'x' });
      await c.work.claim({ worker: 'w1', lease_ms: 1000 });
      c.advance(1001);
      await expectCode(c.work.resolve({ id: item.id, worker: 'w1', status: 'done' }), 'LEASE_LOST');
    });

    t(
      'a lease ends at its expiry instant: a resolve then, alone or in a batch, is LEASE_LOST and changes nothing',
      async (c) => {
        const [a, b, d] = await c.work.enqueueMany([{ title: 'a' }, { title: 'b' }, { title: 'd' }]);
        const held = await c.work.claimMany({ worker: 'w', limit: 3, lease_ms: 1000 });
        expect(held.map((i) => i.id)).toEqual([a!.id, b!.id, d!.id]);
        // One millisecond before its expiry the lease still holds.
        c.advance(999);
        expect((await c.work.resolve({ id: d!.id, worker: 'w', attempt: 1, status: 'done' })).status).toBe(
          'done',
        );
        c.advance(1);
        const before = await eventCount(c);
        const stored = [await c.work.get(a!.id), await c.work.get(b!.id)];
        const details = await expectCode(
          c.work.resolve({ id: a!.id, worker: 'w', attempt: 1, status: 'done', result: 'late' }),
          'LEASE_LOST',
        );
        expect(details).toMatchObject({
          lease_owner: 'w',
          lease_expires_at: new Date(c.now()).toISOString(),
        });
        // Two done resolves in one call (PostgreSQL's one-statement path), and a failure to retry.
        await expectCode(
          c.work.resolveMany([
            { id: a!.id, worker: 'w', attempt: 1, status: 'done' },
            { id: b!.id, worker: 'w', attempt: 1, status: 'done' },
          ]),
          'LEASE_LOST',
        );
        await expectCode(
          c.work.resolve({ id: b!.id, worker: 'w', status: 'failed', error: 'e', retry_at: '1s' }),
          'LEASE_LOST',
        );
        expect([await c.work.get(a!.id), await c.work.get(b!.id)]).toEqual(stored);
        expect(await eventCount(c)).toBe(before);
      },
    );

    t(
      "a stale attempt's resolve after the same worker's newer attempt finished the item is LEASE_LOST, not a repeat",
      async (c) => {
        // Finished done on the newer attempt; then sent back to wait for a retry on it.
        const done = await c.work.enqueue({ title: 'done' });
        const retried = await c.work.enqueue({ title: 'retried' });
        const retryAt = new Date(T0 + 60_000).toISOString();
        const finished: WorkItem[] = [];
        for (const item of [done, retried]) {
          const first = await c.work.claim({ id: item.id, worker: 'w', lease_ms: 1000 });
          expect(first!.attempts).toBe(1);
          c.advance(1000);
          // The same worker claims it again (its first run looked dead): attempt 2, the same lease owner.
          const second = await c.work.claim({ id: item.id, worker: 'w', lease_ms: 1000 });
          expect(second).toMatchObject({ attempts: 2, lease_owner: 'w' });
          finished.push(
            await c.work.resolve(
              item === done
                ? { id: item.id, worker: 'w', attempt: 2, status: 'done', result: 'second' }
                : { id: item.id, worker: 'w', attempt: 2, status: 'failed', error: 'e', retry_at: retryAt },
            ),
          );
        }
        expect(finished.map((i) => [i.status, i.attempts])).toEqual([
          ['done', 2],
          ['pending', 2],
        ]);
        const before = await eventCount(c);
        // The first run ends late with the very outcome the second committed: no retry of that resolve.
        await expectCode(
          c.work.resolve({ id: done.id, worker: 'w', attempt: 1, status: 'done', result: 'second' }),
          'LEASE_LOST',
        );
        await expectCode(
          c.work.resolve({
            id: retried.id,
            worker: 'w',
            attempt: 1,
            status: 'failed',
            error: 'e',
            retry_at: retryAt,
          }),
          'LEASE_LOST',
        );
        await expectCode(
          c.work.resolveMany([{ id: done.id, worker: 'w', attempt: 1, status: 'done', result: 'second' }]),
          'LEASE_LOST',
        );
        expect([await c.work.get(done.id), await c.work.get(retried.id)]).toEqual(finished);
        expect(await eventCount(c)).toBe(before);
        // The second attempt's own retry is still recognised, and writes nothing.
        expect(
          await c.work.resolve({ id: done.id, worker: 'w', attempt: 2, status: 'done', result: 'second' }),
        ).toEqual(finished[0]);
        expect(await eventCount(c)).toBe(before);
      },
    );

    t(
      'a single resolve by a worker that does not hold the unexpired lease is LEASE_LOST and changes nothing',
      async (c) => {
        const item = await c.work.enqueue({ title: 'x' });
        const held = (await c.work.claim({ worker: 'w1', lease_ms: 60_000 }))!;
        const stored = await c.work.get(item.id);
        const before = await eventCount(c);
        for (const q of [
          { status: 'done' as const, result: 'forged' },
          { status: 'done' as const, attempt: held.attempts },
          { status: 'failed' as const, attempt: held.attempts, error: 'forged' },
          { status: 'failed' as const, error: 'forged', retry_at: '1s' },
        ]) {
          const details = await expectCode(c.work.resolve({ id: item.id, worker: 'w2', ...q }), 'LEASE_LOST');
          expect(details).toMatchObject({ worker: 'w2', lease_owner: 'w1', status: 'in_flight' });
        }
        expect(await c.work.get(item.id)).toEqual(stored);
        expect(await eventCount(c)).toBe(before);
        // The holder's lease is intact: it finishes the item.
        const done = await c.work.resolve({
          id: item.id,
          worker: 'w1',
          attempt: held.attempts,
          status: 'done',
          result: 'mine',
        });
        expect(done).toMatchObject({ status: 'done', result: 'mine', lease_owner: 'w1' });
      },
    );

    t('the attempt number fences a worker that re-claimed under the same name', async (c) => {
      const item = await c.work.enqueue({ title: 'x' });
      const a1 = await c.work.claim({ worker: 'w', lease_ms: 1000 });
      c.advance(1000);
      const a2 = await c.work.claim({ worker: 'w', lease_ms: 1000 });
      expect(a2!.attempts).toBe(2);
      await expectCode(
        c.work.resolve({ id: item.id, worker: 'w', attempt: a1!.attempts, status: 'done' }),
        'LEASE_LOST',
      );
      await c.work.resolve({ id: item.id, worker: 'w', attempt: a2!.attempts, status: 'done' });
    });

    t('once max_attempts are spent an expiring lease fails the item', async (c) => {
      const item = await c.work.enqueue({ title: 'x', max_attempts: 2 });
      await c.work.claim({ worker: 'w', lease_ms: 10 });
      c.advance(10);
      await c.work.claim({ worker: 'w', lease_ms: 10 });
      c.advance(10);
      const reclaimed = await c.work.reclaimExpired();
      expect(reclaimed.map((i) => i.id)).toEqual([item.id]);
      const got = await c.work.get(item.id);
      expect(got).toMatchObject({ status: 'failed', attempts: 2 });
      expect(got.error).toMatch(/lease expired/);
      expect(await c.work.claim()).toBeNull();
    });

    t(
      'release hands the item back without spending the attempt, and never reuses an attempt number',
      async (c) => {
        const item = await c.work.enqueue({ title: 'x' });
        const first = await c.work.claim({ worker: 'w1' });
        const released = await c.work.release({ id: item.id, worker: 'w1' });
        expect(released).toMatchObject({
          status: 'pending',
          lease_owner: null,
          lease_expires_at: null,
          max_attempts: 4,
        });
        const second = await c.work.claim({ worker: 'w1' });
        expect(second!.attempts).toBe(first!.attempts + 1);
        // The holder of the released attempt cannot act on the new claim, even under the same name.
        await expectCode(
          c.work.resolve({ id: item.id, worker: 'w1', attempt: first!.attempts, status: 'done' }),
          'LEASE_LOST',
        );
        await expectCode(c.work.release({ id: item.id, worker: 'w2' }), 'LEASE_LOST');
      },
    );
  });

  describe(`${name}: resolve and other transitions`, () => {
    t('resolve done stores the result and appends work_item_resolved', async (c) => {
      const item = await c.work.enqueue({ title: 'x' });
      await c.work.claim({ worker: 'w' });
      c.advance(250);
      const done = await c.work.resolve({ id: item.id, worker: 'w', status: 'done', result: { files: 3 } });
      expect(done).toMatchObject({ status: 'done', result: { files: 3 }, lease_expires_at: null });
      expect(done.resolved_at).toBe(new Date(c.now()).toISOString());
      const [ev] = await c.events.read({ work_item_id: item.id, type: 'work_item_resolved' });
      expect(ev!.data).toMatchObject({ status: 'done', worker: 'w', attempt: 1, duration_ms: 250 });
    });

    t('resolve failed stores the error', async (c) => {
      const item = await c.work.enqueue({ title: 'x' });
      await c.work.claim({ worker: 'w' });
      expect(
        await c.work.resolve({ id: item.id, worker: 'w', status: 'failed', error: 'disk full' }),
      ).toMatchObject({
        status: 'failed',
        error: 'disk full',
      });
    });

    t('a repeated resolve by the same worker returns the item without a second event', async (c) => {
      const item = await c.work.enqueue({ title: 'x' });
      await c.work.claim({ worker: 'w' });
      await c.work.resolve({ id: item.id, worker: 'w', status: 'done' });
      const n = await eventCount(c);
      expect((await c.work.resolve({ id: item.id, worker: 'w', status: 'done' })).status).toBe('done');
      expect(await eventCount(c)).toBe(n);
      await expectCode(c.work.resolve({ id: item.id, worker: 'w', status: 'failed' }), 'INVALID_TRANSITION');
      // Someone who never held (or no longer holds) the lease is told so.
      await expectCode(c.work.resolve({ id: item.id, worker: 'other', status: 'done' }), 'LEASE_LOST');
    });

    t('resolving a pending item or an unknown id fails', async (c) => {
      const item = await c.work.enqueue({ title: 'x' });
      await expectCode(c.work.resolve({ id: item.id, status: 'done' }), 'INVALID_TRANSITION');
      await expectCode(c.work.resolve({ id: 'wi_nope', status: 'done' }), 'NOT_FOUND');
      await expectCode(c.work.resolve({ id: item.id, status: 'maybe' as 'done' }), 'INVALID_INPUT');
      expect((await c.work.get(item.id)).status).toBe('pending');
    });

    t(
      'resolveMany finishes a claimed batch in one transaction, one event naming each item, in order',
      async (c) => {
        await c.work.enqueueMany([{ title: 'a' }, { title: 'b' }, { title: 'c' }]);
        const held = await c.work.claimMany({ worker: 'w', limit: 3 });
        const parked = await c.work.enqueue({ title: 'needs a human', waiting_human: true });
        const before = await eventCount(c);
        const out = await c.work.resolveMany([
          { id: held[2]!.id, worker: 'w', status: 'done', result: { n: 3 }, attempt: held[2]!.attempts },
          { id: held[0]!.id, worker: 'w', status: 'failed', error: 'boom' },
          { id: parked.id, worker: 'human', status: 'done' },
          { id: held[1]!.id, worker: 'w', status: 'done' },
        ]);
        expect(out.map((i) => [i.id, i.status])).toEqual([
          [held[2]!.id, 'done'],
          [held[0]!.id, 'failed'],
          [parked.id, 'done'],
          [held[1]!.id, 'done'],
        ]);
        expect(out[0]!.result).toEqual({ n: 3 });
        const events = await c.events.read({ after: before, limit: 100 });
        expect(events.map((e) => [e.type, e.stream, e.work_item_id])).toEqual([
          ['work_items_resolved', 'work_items', null],
        ]);
        expect((events[0]!.data as { items: Array<{ id: string }> }).items.map((x) => x.id)).toEqual(
          out.map((i) => i.id),
        );
        // Read per item (by type or by item), the batch event is each item's own work_item_resolved.
        const perItem = await c.events.read({ after: before, type: 'work_item_resolved' });
        expect(perItem.map((e) => [e.type, e.work_item_id])).toEqual(
          out.map((i) => ['work_item_resolved', i.id]),
        );
        for (const i of out) {
          const [own] = await c.events.read({ after: before, work_item_id: i.id });
          expect(own).toMatchObject({ type: 'work_item_resolved', work_item_id: i.id, position: before + 1 });
        }
        expect((await c.events.verify()).ok).toBe(true);
        // Repeated by the same worker: the same items back, nothing written.
        const again = await c.work.resolveMany([{ id: held[1]!.id, worker: 'w', status: 'done' }]);
        expect(again[0]!.status).toBe('done');
        expect(await eventCount(c)).toBe(before + 1);
        expect(await c.work.resolveMany([])).toEqual([]);
      },
    );

    t('resolveMany writes nothing when any one resolve is refused', async (c) => {
      await c.work.enqueueMany([{ title: 'a' }, { title: 'b' }, { title: 'c' }]);
      const mine = await c.work.claimMany({ worker: 'w', limit: 2 });
      const theirs = (await c.work.claim({ worker: 'other' }))!;
      const before = await eventCount(c);
      const ok = mine.map((i) => ({ id: i.id, worker: 'w', status: 'done' as const }));
      await expectCode(
        c.work.resolveMany([...ok, { id: theirs.id, worker: 'w', status: 'done' }]),
        'LEASE_LOST',
      );
      await expectCode(
        c.work.resolveMany([...ok, { id: 'wi_nope', worker: 'w', status: 'done' }]),
        'NOT_FOUND',
      );
      await expectCode(c.work.resolveMany([ok[0]!, ok[0]!]), 'INVALID_INPUT');
      await expectCode(
        c.work.resolveMany([ok[0]!, { id: mine[1]!.id, worker: 'w', status: 'maybe' as 'done' }]),
        'INVALID_INPUT',
      );
      expect(await eventCount(c)).toBe(before);
      for (const i of mine) expect((await c.work.get(i.id)).status).toBe('in_flight');
      expect((await c.work.resolveMany(ok)).map((i) => i.status)).toEqual(['done', 'done']);
    });

    t('cancel, park and unpark follow the transition table', async (c) => {
      const a = await c.work.enqueue({ title: 'a' });
      expect((await c.work.park({ id: a.id, reason: 'needs a decision' })).status).toBe('waiting_human');
      expect(await c.work.claim()).toBeNull();
      expect((await c.work.unpark({ id: a.id })).status).toBe('pending');
      expect((await c.work.cancel({ id: a.id, reason: 'obsolete' })).status).toBe('cancelled');
      await expectCode(c.work.cancel({ id: a.id }), 'INVALID_TRANSITION');
      await expectCode(c.work.unpark({ id: a.id }), 'INVALID_TRANSITION');
      expect(await typesOf(c, a.id)).toEqual([
        'work_item_enqueued',
        'work_item_parked',
        'work_item_unparked',
        'work_item_cancelled',
      ]);
    });

    t('an item waiting for a human is resolved without a lease', async (c) => {
      const a = await c.work.enqueue({ title: 'approve?', waiting_human: true });
      expect(a.status).toBe('waiting_human');
      expect(await c.work.claim()).toBeNull();
      const done = await c.work.resolve({
        id: a.id,
        status: 'done',
        worker: 'human',
        result: { approved: true },
      });
      expect(done).toMatchObject({ status: 'done', result: { approved: true } });
    });

    t(
      'the identical retry of a resolve of a parked item returns it unchanged, writing nothing',
      async (c) => {
        // Parked before any claim, and parked after a claim was given back: neither has a lease to match.
        const fresh = await c.work.enqueue({ title: 'approve?' });
        const held = await c.work.enqueue({ title: 'deploy?' });
        await c.work.claim({ id: held.id, worker: 'w1' });
        await c.work.release({ id: held.id, worker: 'w1' });
        const answers = [
          { id: fresh.id, status: 'done' as const, actor: 'ana', result: { approved: true, at: 'noon' } },
          { id: held.id, status: 'failed' as const, actor: 'ana', error: 'not today' },
        ];
        for (const a of answers) {
          await c.work.park({ id: a.id, reason: 'needs a decision' });
          const first = await c.work.resolve(a);
          const n = await eventCount(c);
          // The same call again (the reply was lost), with the keys of its result in another order too.
          expect(await c.work.resolve(a)).toEqual(first);
          expect(await c.work.resolve({ ...a, result: a.result && { at: 'noon', approved: true } })).toEqual(
            first,
          );
          expect(await c.work.resolveMany([a])).toEqual([first]);
          expect(await eventCount(c)).toBe(n);
          // Not the same call: another outcome, or another actor, is still refused.
          await expectCode(
            c.work.resolve({ ...a, status: a.status === 'done' ? 'failed' : 'done' }),
            a.id === fresh.id ? 'INVALID_TRANSITION' : 'LEASE_LOST',
          );
          await expectCode(
            c.work.resolve({ ...a, actor: 'bob' }),
            a.id === fresh.id ? 'INVALID_TRANSITION' : 'LEASE_LOST',
          );
          await expectCode(
            c.work.resolve({ ...a, result: { approved: false } }),
            a.id === fresh.id ? 'INVALID_TRANSITION' : 'LEASE_LOST',
          );
        }
        // In a batch, the retried resolve comes back as it is and the rest commits.
        const other = await c.work.enqueue({ title: 'other' });
        await c.work.claim({ id: other.id, worker: 'w' });
        const out = await c.work.resolveMany([answers[0]!, { id: other.id, worker: 'w', status: 'done' }]);
        expect(out.map((i) => [i.id, i.status])).toEqual([
          [fresh.id, 'done'],
          [other.id, 'done'],
        ]);
        // A worker whose lease is gone is never taken for the retry, even with the outcome the item holds.
        const late = await c.work.enqueue({ title: 'late' });
        await c.work.claim({ id: late.id, worker: 'w1', lease_ms: 1000 });
        c.advance(2000);
        await c.work.claim({ id: late.id, worker: 'w2' });
        await c.work.resolve({ id: late.id, worker: 'w2', status: 'done' });
        await expectCode(c.work.resolve({ id: late.id, worker: 'w1', status: 'done' }), 'LEASE_LOST');
      },
    );

    t('terminal items accept no transition', async (c) => {
      const ids: Record<string, WorkItem> = {};
      for (const s of ['done', 'failed'] as const) {
        const i = await c.work.enqueue({ title: s });
        await c.work.claim({ id: i.id, worker: 'w' });
        ids[s] = await c.work.resolve({ id: i.id, worker: 'w', status: s });
      }
      const cancelled = await c.work.cancel({ id: (await c.work.enqueue({ title: 'c' })).id });
      for (const item of [ids.done!, ids.failed!, cancelled]) {
        await expectCode(c.work.cancel({ id: item.id }), 'INVALID_TRANSITION');
        await expectCode(c.work.park({ id: item.id }), 'INVALID_TRANSITION');
        await expectCode(c.work.unpark({ id: item.id }), 'INVALID_TRANSITION');
        await expectCode(c.work.heartbeat({ id: item.id, worker: 'w' }), 'INVALID_TRANSITION');
        expect(await c.work.claim({ id: item.id })).toBeNull();
      }
    });
  });

  describe(`${name}: who did it`, () => {
    t(
      "every work-item event records the actor kind of its call; the store's own acts are system",
      async (c) => {
        // A model's item that a tool works on, a human cancels another, a person releases a stuck lease.
        const a = await c.work.enqueue({ title: 'a', actor: 'planner', actor_kind: 'model' });
        const b = await c.work.enqueue({
          title: 'b',
          blocked_by: [a.id],
          on_blocker_failure: 'cascade',
          actor: 'planner',
          actor_kind: 'model',
        });
        const p = await c.work.enqueue({ title: 'p' });
        await c.work.annotate({ id: a.id, notes: { n: 1 }, actor: 'ana', actor_kind: 'human' });
        await c.work.claim({ id: a.id, worker: 'bot', actor_kind: 'tool', lease_ms: 100 });
        await c.work.release({ id: a.id, worker: 'bot', actor: 'ana', actor_kind: 'human' });
        await c.work.claim({ id: a.id, worker: 'bot', actor_kind: 'tool', lease_ms: 100 });
        c.advance(200);
        await c.work.reclaimExpired();
        const held = await c.work.claim({ id: a.id, worker: 'bot', actor_kind: 'tool' });
        await c.work.resolve({
          id: a.id,
          worker: 'bot',
          attempt: held!.attempts,
          status: 'failed',
          actor_kind: 'tool',
        });
        await c.work.retry({ id: a.id, actor: 'ana', actor_kind: 'human', reason: 'again' });
        await c.work.park({ id: p.id, actor: 'ana', actor_kind: 'human' });
        await c.work.unpark({ id: p.id, actor: 'bot', actor_kind: 'model' });
        await c.work.cancel({ id: p.id, actor: 'ana', actor_kind: 'human', reason: 'not needed' });
        await c.work.replayPending();

        const said = async (id: string) =>
          (await c.events.read({ work_item_id: id })).map((e) => [
            e.type,
            e.actor,
            (e.data as { actor_kind?: unknown }).actor_kind,
          ]);
        expect(await said(a.id)).toEqual([
          ['work_item_enqueued', 'planner', 'model'],
          ['work_item_annotated', 'ana', 'human'],
          ['work_item_claimed', 'bot', 'tool'],
          // Whose lease it was stays in the data; who handed it back is the actor.
          ['work_item_released', 'ana', 'human'],
          ['work_item_claimed', 'bot', 'tool'],
          ['work_item_reclaimed', 'agent', 'system'],
          ['work_item_claimed', 'bot', 'tool'],
          ['work_item_resolved', 'bot', 'tool'],
          ['work_item_retried', 'ana', 'human'],
          ['work_item_replayed', 'agent', 'system'],
        ]);
        // b was cancelled by its blocker's failure and re-opened by its retry: the store's acts.
        expect(await said(b.id)).toEqual([
          ['work_item_enqueued', 'planner', 'model'],
          ['work_item_cancelled', 'bot', 'system'],
          ['work_item_reopened', 'ana', 'system'],
          ['work_item_replayed', 'agent', 'system'],
        ]);
        expect(await said(p.id)).toEqual([
          ['work_item_enqueued', 'agent', 'system'],
          ['work_item_parked', 'ana', 'human'],
          ['work_item_unparked', 'bot', 'model'],
          ['work_item_cancelled', 'ana', 'human'],
        ]);
        const released = (await c.events.read({ work_item_id: a.id, type: 'work_item_released' }))[0]!;
        expect(released.data).toMatchObject({ worker: 'bot' });
        // A person's cancel and a model's call naming the same actor never look alike.
        const q = await c.work.enqueue({ title: 'q' });
        await c.work.cancel({ id: q.id, actor: 'ana', actor_kind: 'model' });
        const [cancel] = await c.events.read({ work_item_id: q.id, type: 'work_item_cancelled' });
        expect(cancel).toMatchObject({ actor: 'ana', data: { actor_kind: 'model' } });
      },
    );

    t(
      'an actor kind outside human, model, tool and system is INVALID_INPUT and writes nothing',
      async (c) => {
        const item = await c.work.enqueue({ title: 'x' });
        const before = await eventCount(c);
        const bad = { actor_kind: 'admin' } as unknown as { actor_kind: 'human' };
        await expectCode(c.work.enqueue({ title: 'y', ...bad }), 'INVALID_INPUT');
        await expectCode(c.work.claim({ id: item.id, ...bad }), 'INVALID_INPUT');
        await expectCode(c.work.cancel({ id: item.id, ...bad }), 'INVALID_INPUT');
        await expectCode(c.work.annotate({ id: item.id, notes: {}, ...bad }), 'INVALID_INPUT');
        await expectCode(c.work.release({ id: item.id, ...bad }), 'INVALID_INPUT');
        await expectCode(c.work.retry({ id: item.id, ...bad }), 'INVALID_INPUT');
        expect(await eventCount(c)).toBe(before);
      },
    );
  });

  describe(`${name}: annotate, get, list, replay`, () => {
    t('annotate merges notes atomically (null removes a key) and appends work_item_annotated', async (c) => {
      const item = await c.work.enqueue({ title: 'x' });
      await c.work.annotate({ id: item.id, notes: { session_id: 's1', pr: 12 } });
      const got = await c.work.annotate({ id: item.id, notes: { pr: null, host: 'h' } });
      expect(got.notes).toEqual({ session_id: 's1', host: 'h' });
      expect(await typesOf(c, item.id)).toEqual([
        'work_item_enqueued',
        'work_item_annotated',
        'work_item_annotated',
      ]);
      await expectCode(c.work.annotate({ id: 'wi_nope', notes: {} }), 'NOT_FOUND');
      await expectCode(c.work.annotate({ id: item.id, notes: [] as never }), 'INVALID_INPUT');
    });

    t('annotate with a worker is fenced by the lease', async (c) => {
      const item = await c.work.enqueue({ title: 'x' });
      await c.work.claim({ worker: 'w1' });
      await c.work.annotate({ id: item.id, notes: { step: 1 }, worker: 'w1' });
      await expectCode(c.work.annotate({ id: item.id, notes: { step: 2 }, worker: 'w2' }), 'LEASE_LOST');
      expect((await c.work.get(item.id)).notes).toEqual({ step: 1 });
    });

    t('get of an unknown id is NOT_FOUND; find returns null', async (c) => {
      await expectCode(c.work.get('wi_nope'), 'NOT_FOUND');
      expect(await c.work.find('wi_nope')).toBeNull();
    });

    t('list filters by status, kind, readiness; counts by status', async (c) => {
      const a = await c.work.enqueue({ title: 'a', kind: 'k' });
      await c.work.enqueue({ title: 'b', blocked_by: [a.id] });
      await c.work.enqueue({ title: 'c' });
      await c.work.claim({ id: a.id, worker: 'w' });
      expect((await c.work.list({ status: 'in_flight' })).map((i) => i.title)).toEqual(['a']);
      expect((await c.work.list({ kind: 'k' })).map((i) => i.title)).toEqual(['a']);
      expect((await c.work.list({ ready: true })).map((i) => i.title)).toEqual(['c']);
      expect((await c.work.list({ ready: false })).map((i) => i.title)).toEqual(['b']);
      expect((await c.work.list({ status: ['pending', 'in_flight'], limit: 2 })).length).toBe(2);
      expect(await c.work.counts()).toEqual({
        pending: 2,
        in_flight: 1,
        waiting_human: 0,
        done: 0,
        failed: 0,
        cancelled: 0,
      });
      await expectCode(c.work.list({ status: 'bogus' as never }), 'INVALID_INPUT');
    });

    t('replayPending reclaims expired leases and re-emits every unfinished item', async (c) => {
      const a = await c.work.enqueue({ title: 'a' });
      const b = await c.work.enqueue({ title: 'b' });
      const d = await c.work.enqueue({ title: 'd', waiting_human: true });
      const e = await c.work.enqueue({ title: 'e' });
      await c.work.claim({ id: a.id, worker: 'w', lease_ms: 100 });
      await c.work.claim({ id: e.id, worker: 'w', lease_ms: 100 });
      await c.work.resolve({ id: e.id, worker: 'w', status: 'done' });
      c.advance(100);
      const replayed = await c.work.replayPending();
      expect(replayed.map((i) => [i.id, i.status]).sort()).toEqual(
        [
          [a.id, 'pending'],
          [b.id, 'pending'],
          [d.id, 'waiting_human'],
        ].sort(),
      );
      expect(await typesOf(c, a.id)).toContain('work_item_reclaimed');
      expect((await c.events.read({ type: 'work_item_replayed' })).length).toBe(3);
    });
  });
}
