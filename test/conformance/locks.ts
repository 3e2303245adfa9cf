// Store conformance, locks: claim({ key }) holds a name (a file path, a resource) as an item of kind
// `lock`, made on first use. One holder at a time; a claim without an id never hands a lock out as work;
// released, it is free for the next holder; its lease running out frees it too; resolved done, it is over.
import { describe, expect } from 'vitest';
import { LOCK_KIND } from '../../src/core/types.js';
import { type ConformanceTest, expectCode } from './setup.js';

export function lockConformance(name: string, t: ConformanceTest): void {
  describe(`${name}: locks (claim by key)`, () => {
    t('one holder at a time; claims without an id never take a lock', async (c) => {
      const key = 'path:src/ü|a+b.ts';
      const held = (await c.work.claim({ key, worker: 'agent-a', lease_ms: 60_000 }))!;
      expect(held).toMatchObject({
        kind: LOCK_KIND,
        title: key,
        status: 'in_flight',
        lease_owner: 'agent-a',
      });
      // The holder asking again keeps it; anyone else is told who holds it.
      expect((await c.work.claim({ key, worker: 'agent-a' }))!.id).toBe(held.id);
      const denied = await expectCode(c.work.claim({ key, worker: 'agent-b' }), 'PERMISSION_DENIED');
      expect(denied).toMatchObject({ holder: 'agent-a', id: held.id });
      await c.work.release({ id: held.id, worker: 'agent-a' });
      // Released: pending, but not work for a worker that takes whatever is next.
      await c.work.enqueue({ title: 'real work' });
      expect((await c.work.claimMany({ worker: 'w', limit: 10 })).map((i) => i.title)).toEqual(['real work']);
      expect(await c.work.claim({ worker: 'w' })).toBeNull();
      // Not even to a claim of their kind: a lock is held by its name.
      expect(await c.work.claimMany({ worker: 'w', kind: LOCK_KIND, limit: 10 })).toEqual([]);
      expect(await c.work.claim({ worker: 'w', kind: LOCK_KIND })).toBeNull();
      const next = (await c.work.claim({ key, worker: 'agent-b' }))!;
      expect([next.id, next.lease_owner]).toEqual([held.id, 'agent-b']);
      // Its lease running out frees it too.
      c.advance(60_001);
      expect((await c.work.claim({ key, worker: 'agent-c' }))!.lease_owner).toBe('agent-c');
      // claimMany with a key holds that one lock.
      expect(
        (await c.work.claimMany({ key: 'path:README.md', worker: 'agent-c' })).map((i) => i.title),
      ).toEqual(['path:README.md']);
    });

    t('racing claims of one key: exactly one holder', async (c) => {
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, k) => c.work.claim({ key: 'path:shared.sql', worker: `w${k}` })),
      );
      const won = results.filter((r) => r.status === 'fulfilled');
      expect(won).toHaveLength(1);
      for (const r of results) {
        if (r.status === 'rejected') expect((r.reason as { code: string }).code).toBe('PERMISSION_DENIED');
      }
      expect(await c.work.list({ kind: LOCK_KIND })).toHaveLength(1);
    });

    t(
      'a lock resolved done is over; a key that is not a lock, or a key with an id, is refused',
      async (c) => {
        const l = (await c.work.claim({ key: 'deploy:staging', worker: 'a' }))!;
        await c.work.resolve({ id: l.id, worker: 'a', status: 'done' });
        await expectCode(c.work.claim({ key: 'deploy:staging', worker: 'b' }), 'INVALID_TRANSITION');
        await c.work.enqueue({ title: 'task', idempotency_key: 'task-1' });
        await expectCode(c.work.claim({ key: 'task-1', worker: 'b' }), 'INVALID_INPUT');
        await expectCode(c.work.claim({ key: 'x', id: l.id, worker: 'b' }), 'INVALID_INPUT');
        await expectCode(c.work.claim({ key: 'x', kind: 'build', worker: 'b' }), 'INVALID_INPUT');
        await expectCode(c.work.claim({ key: '', worker: 'b' }), 'INVALID_INPUT');
        await expectCode(c.work.claim({ key: 42 as unknown as string, worker: 'b' }), 'INVALID_INPUT');
        // Nothing was made by the refusals.
        expect((await c.work.list({ kind: LOCK_KIND })).map((i) => i.title)).toEqual(['deploy:staging']);
      },
    );
  });
}
