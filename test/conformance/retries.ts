// Store conformance, retries with backoff: a failed attempt resolved with `retry_at` goes back to pending,
// not claimable before that time (the injected clock), while attempts remain; the last attempt fails.
import { describe, expect } from 'vitest';
import { type ConformanceTest, eventCount, expectCode, T0 } from './setup.js';

const iso = (ms: number) => new Date(ms).toISOString();

export function retryConformance(name: string, t: ConformanceTest): void {
  describe(`${name}: retries with backoff`, () => {
    t('a failure with retry_at waits until then, then is claimed as the next attempt', async (c) => {
      const item = await c.work.enqueue({ title: 'call the API', max_attempts: 3 });
      const first = await c.work.claim({ worker: 'w1' });
      c.advance(500);
      const back = await c.work.resolve({
        id: item.id,
        worker: 'w1',
        attempt: first!.attempts,
        status: 'failed',
        error: '429 Too Many Requests',
        retry_at: '30s',
      });
      expect(back).toMatchObject({
        status: 'pending',
        attempts: 1,
        error: '429 Too Many Requests',
        lease_owner: null,
        lease_expires_at: null,
        resolved_at: null,
        not_before: iso(T0 + 500 + 30_000),
      });
      // Not before its time, by the injected clock: not listed as ready, not claimed.
      c.advance(29_999);
      expect(await c.work.claim({ worker: 'w2' })).toBeNull();
      expect((await c.work.list({ ready: false })).map((i) => i.id)).toEqual([item.id]);
      c.advance(1);
      const second = await c.work.claim({ worker: 'w2' });
      expect(second).toMatchObject({ id: item.id, attempts: 2, lease_owner: 'w2', status: 'in_flight' });
      // The first worker's attempt is fenced off for good.
      await expectCode(
        c.work.resolve({ id: item.id, worker: 'w1', attempt: 1, status: 'done' }),
        'LEASE_LOST',
      );
      const done = await c.work.resolve({ id: item.id, worker: 'w2', attempt: 2, status: 'done', result: 7 });
      expect(done).toMatchObject({ status: 'done', result: 7, error: null, attempts: 2 });
      const events = await c.events.read({ work_item_id: item.id });
      const resolved = events.filter((e) => e.type === 'work_item_resolved').map((e) => e.data);
      expect(resolved[0]).toMatchObject({
        status: 'pending',
        worker: 'w1',
        attempt: 1,
        error: '429 Too Many Requests',
        retry_at: iso(T0 + 500 + 30_000),
      });
      expect(resolved[1]).toMatchObject({ status: 'done', attempt: 2 });
    });

    t('the last attempt fails for good even with retry_at; its dependants see the failure', async (c) => {
      const item = await c.work.enqueue({ title: 'flaky', max_attempts: 2 });
      const after = await c.work.enqueue({
        title: 'after',
        blocked_by: [item.id],
        on_blocker_failure: 'cascade',
      });
      for (let attempt = 1; attempt <= 2; attempt++) {
        const it = await c.work.claim({ worker: 'w' });
        expect(it).toMatchObject({ id: item.id, attempts: attempt });
        const r = await c.work.resolve({
          id: item.id,
          worker: 'w',
          attempt,
          status: 'failed',
          error: `boom ${attempt}`,
          retry_at: iso(c.now() + 1000),
        });
        expect(r.status).toBe(attempt < 2 ? 'pending' : 'failed');
        // The dependant is cancelled only once the failure is final.
        expect((await c.work.get(after.id)).status).toBe(attempt < 2 ? 'pending' : 'cancelled');
        c.advance(1000);
      }
      const failed = await c.work.get(item.id);
      expect(failed).toMatchObject({ status: 'failed', error: 'boom 2', attempts: 2 });
      expect(failed.resolved_at).not.toBeNull();
      // Failed stays retryable in place: a retry re-opens it and its cascaded dependant.
      const again = await c.work.retry({ id: item.id, reason: 'the API is back' });
      expect(again.status).toBe('pending');
      expect((await c.work.get(after.id)).status).toBe('pending');
    });

    t(
      'an item that failed its last attempt is final: no claim and no resolve takes it, long past its retry time',
      async (c) => {
        // The last attempt spent two ways: a failure resolved with retry_at, and a lease left to expire.
        const resolved = await c.work.enqueue({ title: 'resolved', max_attempts: 2 });
        const expired = await c.work.enqueue({ title: 'expired', max_attempts: 2 });
        for (const attempt of [1, 2]) {
          const held = await c.work.claimMany({ worker: 'w', limit: 2, lease_ms: 1000 });
          expect(held.map((i) => [i.title, i.attempts])).toEqual([
            ['resolved', attempt],
            ['expired', attempt],
          ]);
          const r = await c.work.resolve({
            id: resolved.id,
            worker: 'w',
            attempt,
            status: 'failed',
            error: `boom ${attempt}`,
            retry_at: iso(c.now() + 500),
          });
          expect(r.status).toBe(attempt === 1 ? 'pending' : 'failed');
          c.advance(1000);
          expect((await c.work.reclaimExpired()).map((i) => [i.title, i.status])).toEqual([
            ['expired', attempt === 1 ? 'pending' : 'failed'],
          ]);
        }
        const last = [await c.work.get(resolved.id), await c.work.get(expired.id)];
        expect(last.map((i) => [i.status, i.attempts, i.error])).toEqual([
          ['failed', 2, 'boom 2'],
          ['failed', 2, 'lease expired on attempt 2 of 2'],
        ]);
        c.advance(3_600_000);
        const before = await eventCount(c);
        expect(await c.work.claim({ worker: 'w2' })).toBeNull();
        expect(await c.work.claimMany({ worker: 'w2', limit: 10 })).toEqual([]);
        for (const id of [resolved.id, expired.id]) {
          expect(await c.work.claim({ id, worker: 'w2' })).toBeNull();
          // Its last worker may not finish it after all; nobody else may either.
          // (Its own failure ended the first; the store took the second's lease back.)
          const theirs = id === resolved.id ? 'INVALID_TRANSITION' : 'LEASE_LOST';
          await expectCode(
            c.work.resolve({ id, worker: 'w', attempt: 2, status: 'done', result: 'late' }),
            theirs,
          );
          await expectCode(c.work.heartbeat({ id, worker: 'w', attempt: 2 }), theirs);
          await expectCode(c.work.resolve({ id, worker: 'w2', status: 'done' }), 'LEASE_LOST');
        }
        // The failure itself, sent again (a lost reply), is that resolve's retry: the item as it is.
        expect(
          await c.work.resolve({
            id: resolved.id,
            worker: 'w',
            attempt: 2,
            status: 'failed',
            error: 'boom 2',
            retry_at: iso(c.now() + 500),
          }),
        ).toEqual(last[0]);
        expect([await c.work.get(resolved.id), await c.work.get(expired.id)]).toEqual(last);
        expect(await eventCount(c)).toBe(before);
      },
    );

    t('failed without retry_at fails now, whatever attempts remain (fail now)', async (c) => {
      const item = await c.work.enqueue({ title: 'bad input', max_attempts: 5 });
      await c.work.claim({ worker: 'w' });
      const r = await c.work.resolve({ id: item.id, worker: 'w', status: 'failed', error: 'permanent' });
      expect(r).toMatchObject({ status: 'failed', attempts: 1, error: 'permanent' });
      expect(await c.work.claim({ worker: 'w' })).toBeNull();
    });

    t('a repeated retry resolve (the reply was lost) returns the item unchanged', async (c) => {
      const item = await c.work.enqueue({ title: 'x' });
      await c.work.claim({ worker: 'w' });
      const q = {
        id: item.id,
        worker: 'w',
        attempt: 1,
        status: 'failed' as const,
        error: 'timeout',
        retry_at: iso(T0 + 60_000),
      };
      const first = await c.work.resolve(q);
      const again = await c.work.resolve(q);
      expect(again).toEqual(first);
      expect(
        (await c.events.read({ work_item_id: item.id })).filter((e) => e.type === 'work_item_resolved'),
      ).toHaveLength(1);
      // Not the same failure (another time or error): refused, nothing written.
      await expectCode(c.work.resolve({ ...q, retry_at: iso(T0 + 61_000) }), 'LEASE_LOST');
    });

    t(
      'retry_at is refused on a done resolve, and malformed times are refused, nothing written',
      async (c) => {
        const item = await c.work.enqueue({ title: 'x' });
        await c.work.claim({ worker: 'w' });
        const base = { id: item.id, worker: 'w', attempt: 1 };
        await expectCode(c.work.resolve({ ...base, status: 'done', retry_at: '5s' }), 'INVALID_INPUT');
        for (const retry_at of ['soon', '2026-02-30T00:00:00Z', '5', '-5s', '1000y']) {
          await expectCode(c.work.resolve({ ...base, status: 'failed', retry_at }), 'INVALID_INPUT');
        }
        await expectCode(
          c.work.resolve({ ...base, status: 'failed', retry_at: 5000 as unknown as string }),
          'INVALID_INPUT',
        );
        expect((await c.work.get(item.id)).status).toBe('in_flight');
      },
    );

    t('resolveMany: failures to retry and successes in one transaction', async (c) => {
      const items = await c.work.enqueueMany(
        Array.from({ length: 6 }, (_, k) => ({ title: `i${k}`, max_attempts: 2 })),
      );
      const held = await c.work.claimMany({ worker: 'w', limit: 6 });
      expect(held).toHaveLength(6);
      const out = await c.work.resolveMany(
        held.map((h, k) =>
          k % 2 === 0
            ? { id: h.id, worker: 'w', attempt: h.attempts, status: 'done' as const }
            : {
                id: h.id,
                worker: 'w',
                attempt: h.attempts,
                status: 'failed' as const,
                error: 'e',
                retry_at: '10s',
              },
        ),
      );
      expect(out.map((i) => i.status)).toEqual(['done', 'pending', 'done', 'pending', 'done', 'pending']);
      c.advance(10_000);
      const retried = await c.work.claimMany({ worker: 'w', limit: 6 });
      expect(retried.map((i) => i.id).sort()).toEqual(
        items
          .filter((_, k) => k % 2 === 1)
          .map((i) => i.id)
          .sort(),
      );
      expect(retried.every((i) => i.attempts === 2)).toBe(true);
    });
  });
}
