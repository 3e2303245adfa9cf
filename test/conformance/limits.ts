// Store conformance, keyed limits: a concurrency key's max_in_flight and start rate hold within one
// claimMany, across claims and coalesced claims, skip only that key's items, and leave the log verifiable.
import { describe, expect } from 'vitest';
import type { DumpRecord } from '../../src/core/backend.js';
import type { WorkItem } from '../../src/core/types.js';
import { type ConformanceTest, expectCode, T0 } from './setup.js';

const titles = (items: WorkItem[]) => items.map((i) => i.title);

export function limitConformance(name: string, t: ConformanceTest): void {
  describe(`${name}: keyed limits`, () => {
    t('max_in_flight holds within one claimMany, skipping only the key at its limit', async (c) => {
      await c.work.setLimit({ key: 'openai:org-1', max_in_flight: 2 });
      // Keyed items first in claim order: a claim of 5 must pass the third and fourth and take the rest.
      await c.work.enqueueMany([
        { title: 'k1', priority: 9, concurrency_key: 'openai:org-1' },
        { title: 'k2', priority: 8, concurrency_key: 'openai:org-1' },
        { title: 'k3', priority: 7, concurrency_key: 'openai:org-1' },
        { title: 'k4', priority: 6, concurrency_key: 'openai:org-1' },
        { title: 'free1', priority: 5 },
        { title: 'other', priority: 4, concurrency_key: 'unlimited-key' },
        { title: 'free2', priority: 3 },
      ]);
      const first = await c.work.claimMany({ worker: 'w', limit: 5 });
      expect(titles(first)).toEqual(['k1', 'k2', 'free1', 'other', 'free2']);
      expect(first[0]!.concurrency_key).toBe('openai:org-1');
      // At its limit: nothing of the key, whatever the claim asks for.
      expect(await c.work.claimMany({ worker: 'w', limit: 5 })).toEqual([]);
      expect(await c.work.claim({ worker: 'w' })).toBeNull();
      // One done: exactly one more of the key.
      await c.work.resolve({ id: first[0]!.id, worker: 'w', status: 'done' });
      expect(titles(await c.work.claimMany({ worker: 'w', limit: 5 }))).toEqual(['k3']);
      expect(await c.work.claimMany({ worker: 'w', limit: 5 })).toEqual([]);
      // The key's items in flight, by the list filter.
      expect(titles(await c.work.list({ concurrency_key: 'openai:org-1', status: 'in_flight' }))).toEqual([
        'k2',
        'k3',
      ]);
    });

    t(
      'where limits exist, equal items go in id order across keys, and a lock is still never handed out',
      async (c) => {
        await c.work.setLimit({ key: 'k', max_in_flight: 5 });
        // One priority, one time: claim order falls to the id, which grows in the order they were made. The
        // free item comes first, though the limited key's candidates are read apart from the free ones.
        const free = await c.work.enqueue({ title: 'free' });
        const keyed = await c.work.enqueue({ title: 'keyed', concurrency_key: 'k' });
        await c.work.enqueue({ title: 'keyed2', concurrency_key: 'k' });
        expect(free.id < keyed.id).toBe(true);
        const lock = (await c.work.claim({ key: 'path:a|b', worker: 'holder' }))!;
        await c.work.release({ id: lock.id, worker: 'holder' });
        expect(titles(await c.work.claimMany({ worker: 'w', limit: 1 }))).toEqual(['free']);
        // A claim that takes a limited key's items (under the limit locks) passes the free lock by.
        expect(titles(await c.work.claimMany({ worker: 'w', limit: 5 }))).toEqual(['keyed', 'keyed2']);
        expect((await c.work.get(lock.id)).status).toBe('pending');
      },
    );

    t('single and coalesced claims respect the limit; an expired lease frees its place', async (c) => {
      await c.work.setLimit({ key: 'k', max_in_flight: 1 });
      await c.work.enqueueMany([
        { title: 'a', priority: 2, concurrency_key: 'k' },
        { title: 'b', priority: 1, concurrency_key: 'k' },
        { title: 'c' },
      ]);
      // Three overlapping claim() calls on one handle coalesce into one claim of three claimers.
      const got = await Promise.all([1, 2, 3].map((n) => c.work.claim({ worker: `w${n}`, lease_ms: 1000 })));
      expect(got.map((i) => i?.title ?? null)).toEqual(['a', 'c', null]);
      expect(await c.work.claim({ worker: 'w4' })).toBeNull();
      // The leases expire: the claim reclaims them first, and the key has room for one again (a, first in
      // order); c goes to the next claim, and b still waits for a.
      c.advance(1001);
      const again = await c.work.claim({ worker: 'w5' });
      expect(again?.title).toBe('a');
      expect(again?.attempts).toBe(2);
      expect((await c.work.claim({ worker: 'w6' }))?.title).toBe('c');
      expect(await c.work.claim({ worker: 'w7' })).toBeNull();
    });

    t('a rate limit counts starts per window on the injected clock', async (c) => {
      await c.work.setLimit({ key: 'api', rate: { count: 2, period_ms: 1000 } });
      await c.work.enqueueMany(
        Array.from({ length: 6 }, (_, k) => ({ title: `r${k}`, priority: -k, concurrency_key: 'api' })),
      );
      const w1 = await c.work.claimMany({ worker: 'w', limit: 10 });
      expect(titles(w1)).toEqual(['r0', 'r1']);
      // Resolving does not give a start back: the rate counts claims started, not items in flight.
      for (const i of w1) await c.work.resolve({ id: i.id, worker: 'w', status: 'done' });
      c.advance(999);
      expect(await c.work.claimMany({ worker: 'w', limit: 10 })).toEqual([]);
      // The window (opened at the first claim, T0) closes at T0 + 1000: a new one opens at the next claim.
      c.advance(1);
      expect(titles(await c.work.claimMany({ worker: 'w', limit: 1 }))).toEqual(['r2']);
      c.advance(500);
      expect(titles(await c.work.claimMany({ worker: 'w', limit: 10 }))).toEqual(['r3']);
      c.advance(499);
      expect(await c.work.claimMany({ worker: 'w', limit: 10 })).toEqual([]);
      c.advance(1);
      expect(titles(await c.work.claimMany({ worker: 'w', limit: 10 }))).toEqual(['r4', 'r5']);
    });

    t('max_in_flight and rate together: the tighter one wins', async (c) => {
      await c.work.setLimit({ key: 'both', max_in_flight: 3, rate: { count: 2, period_ms: 100 } });
      await c.work.enqueueMany(
        Array.from({ length: 5 }, (_, k) => ({ title: `b${k}`, priority: -k, concurrency_key: 'both' })),
      );
      expect(titles(await c.work.claimMany({ worker: 'w', limit: 10 }))).toEqual(['b0', 'b1']);
      c.advance(100);
      // The rate allows two more, in flight allows one more.
      expect(titles(await c.work.claimMany({ worker: 'w', limit: 10 }))).toEqual(['b2']);
    });

    t('set, replace, list and remove a limit, each with its event; removal frees the key', async (c) => {
      const set = await c.work.setLimit({ key: 'k', max_in_flight: 1, actor: 'ops', actor_kind: 'human' });
      expect(set).toMatchObject({
        key: 'k',
        max_in_flight: 1,
        rate: null,
        created_at: new Date(T0).toISOString(),
      });
      c.advance(5);
      const replaced = await c.work.setLimit({
        key: 'k',
        max_in_flight: 1,
        rate: { count: 5, period_ms: 60_000 },
      });
      expect(replaced).toMatchObject({ key: 'k', max_in_flight: 1, rate: { count: 5, period_ms: 60_000 } });
      expect(replaced.created_at).toBe(new Date(T0).toISOString());
      expect(replaced.updated_at).toBe(new Date(T0 + 5).toISOString());
      await c.work.setLimit({ key: 'a-first', max_in_flight: 7 });
      expect((await c.work.limits()).map((l) => l.key)).toEqual(['a-first', 'k']);

      await c.work.enqueueMany([
        { title: 'x', concurrency_key: 'k', priority: 1 },
        { title: 'y', concurrency_key: 'k' },
      ]);
      expect(titles(await c.work.claimMany({ worker: 'w', limit: 10 }))).toEqual(['x']);
      const removed = await c.work.removeLimit({ key: 'k' });
      expect(removed.key).toBe('k');
      expect(titles(await c.work.claimMany({ worker: 'w', limit: 10 }))).toEqual(['y']);
      await expectCode(c.work.removeLimit({ key: 'k' }), 'NOT_FOUND');

      const audit = await c.events.read({ type: ['work_limit_set', 'work_limit_removed'] });
      expect(audit.map((e) => [e.type, e.stream, e.actor])).toEqual([
        ['work_limit_set', 'work_limit:k', 'ops'],
        ['work_limit_set', 'work_limit:k', 'agent'],
        ['work_limit_set', 'work_limit:a-first', 'agent'],
        ['work_limit_removed', 'work_limit:k', 'agent'],
      ]);
      expect(audit[0]!.data).toEqual({ key: 'k', max_in_flight: 1, rate: null, actor_kind: 'human' });
      expect(audit[1]!.data).toMatchObject({ rate: { count: 5, period_ms: 60_000 } });
    });

    t('hostile limit input is INVALID_INPUT and writes nothing', async (c) => {
      const before = (await c.events.head())?.position ?? 0;
      const bad: unknown[] = [
        {},
        { key: '' },
        { key: 'k' },
        { key: 'k', max_in_flight: null, rate: null },
        { key: 'k', max_in_flight: 0 },
        { key: 'k', max_in_flight: 1.5 },
        { key: 'k', max_in_flight: '2' },
        { key: 'k', rate: { count: 0, period_ms: 10 } },
        { key: 'k', rate: { count: 1 } },
        { key: 'k', rate: { count: 1, period_ms: 10, extra: 1 } },
        { key: 'k', rate: [1, 10] },
        { key: 'k', rate: 'fast' },
        { key: 'a\u0000b', max_in_flight: 1 },
        { key: 'x'.repeat(10_000), max_in_flight: 1 },
        { key: 'k', max_in_flight: 1, surprise: true },
      ];
      for (const input of bad) await expectCode(c.work.setLimit(input as never), 'INVALID_INPUT');
      // A limit of nothing names what to give, and the field to give it in.
      for (const input of [{ key: 'k' }, { key: 'k', max_in_flight: null, rate: null }]) {
        await expect(c.work.setLimit(input as never)).rejects.toMatchObject({
          message: 'set_limit: give max_in_flight, rate, or both (remove_limit removes a limit)',
          details: { field: 'max_in_flight' },
        });
      }
      await expectCode(c.work.removeLimit({} as never), 'INVALID_INPUT');
      await expectCode(c.work.enqueue({ title: 't', concurrency_key: '' }), 'INVALID_INPUT');
      await expectCode(c.work.enqueue({ title: 't', concurrency_key: 7 as never }), 'INVALID_INPUT');
      expect((await c.events.head())?.position ?? 0).toBe(before);
      expect(await c.work.limits()).toEqual([]);
    });

    t(
      'the key is in the enqueued event, verified against the row, and kept by a dump and load',
      async (c) => {
        await c.work.setLimit({ key: 'k', max_in_flight: 1 });
        const keyed = await c.work.enqueue({ title: 'keyed', concurrency_key: 'k' });
        const plain = await c.work.enqueue({ title: 'plain' });
        expect(keyed.concurrency_key).toBe('k');
        expect(plain.concurrency_key).toBeNull();
        const [enq] = await c.events.read({ work_item_id: keyed.id, type: 'work_item_enqueued' });
        expect(enq!.data).toMatchObject({ concurrency_key: 'k' });
        const [plainEnq] = await c.events.read({ work_item_id: plain.id, type: 'work_item_enqueued' });
        expect(plainEnq!.data).not.toHaveProperty('concurrency_key');
        await c.work.claim({ worker: 'w' });

        const records: DumpRecord[] = [];
        for await (const r of c.backend.dump!()) records.push(r as DumpRecord);
        expect(records.filter((r) => r.t === 'limit').map((r) => r.row)).toEqual([
          expect.objectContaining({ key: 'k', max_in_flight: 1, rate_count: null }),
        ]);
        const other = await c.another();
        await other.backend.load!(records);
        expect((await other.work.get(keyed.id)).concurrency_key).toBe('k');
        expect((await other.work.get(plain.id)).concurrency_key).toBeNull();
        // The limit came along and still holds: its one item is in flight.
        expect(await other.work.limits()).toEqual(await c.work.limits());
        const more = await other.work.enqueue({ title: 'more', concurrency_key: 'k' });
        expect(await other.work.claim({ worker: 'w', id: more.id })).toBeNull();
        expect((await other.events.verify()).ok).toBe(true);
      },
    );

    t('verify checks the limit rows against their events', async (c) => {
      await c.work.setLimit({ key: 'k', max_in_flight: 2 });
      await c.work.setLimit({ key: 'gone', max_in_flight: 1 });
      await c.work.removeLimit({ key: 'gone' });
      const records: DumpRecord[] = [];
      for await (const r of c.backend.dump!()) records.push(r as DumpRecord);
      // A limit row edited behind the log's back, and one the log never set.
      const edited = records.map((r) =>
        r.t === 'limit' ? { ...r, row: { ...r.row, max_in_flight: 50 } } : r,
      ) as DumpRecord[];
      const forged = records.find((r) => r.t === 'limit')!;
      edited.push({ ...forged, row: { ...forged.row, key: 'forged' } } as DumpRecord);
      const other = await c.another();
      await other.backend.load!(edited);
      const v = await other.events.verify();
      expect(v.problems.map((p) => [p.problem, p.table, p.key, p.field ?? null])).toEqual([
        ['event_missing', 'work_limits', 'forged', null],
        ['row_differs', 'work_limits', 'k', 'max_in_flight'],
      ]);
      // Put right, so the suite's closing verify of this store passes too.
      await other.work.setLimit({ key: 'k', max_in_flight: 50 });
      await other.work.setLimit({ key: 'forged', max_in_flight: 2 });
    });
  });
}
