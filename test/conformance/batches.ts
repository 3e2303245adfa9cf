// Store conformance, batched calls: claimMany, resolveMany, enqueueMany and the expired-lease sweep write
// one event per batch and type, and every reader of an item's history sees exactly what a sequence of
// single calls would have written for it.
import { describe, expect } from 'vitest';
import { contentHash } from '../../src/core/json.js';
import type { EventRecord, Json, WorkItem } from '../../src/core/types.js';
import { type ConformanceTest, eventCount, expectCode, type Services, typesOf } from './setup.js';

/** An item's history as its readers see it: what each event says about it, in order. */
async function history(s: Pick<Services, 'events'>, id: string) {
  return (await s.events.read({ work_item_id: id })).map(said);
}

const said = (e: EventRecord) => ({
  type: e.type,
  data: e.data,
  actor: e.actor,
  work_item_id: e.work_item_id,
  created_at: e.created_at,
});

/** The same history with the item's id taken out, to compare items of two stores. */
const anonymous = (h: Array<ReturnType<typeof said>>) => h.map(({ work_item_id: _, ...rest }) => rest);

/** What a reader by type sees for `id`. */
async function byType(s: Pick<Services, 'events'>, types: string[], id: string) {
  return (await s.events.read({ type: types, limit: 100_000 }))
    .filter((e) => e.work_item_id === id)
    .map(said);
}

const KINDS = ['model', 'tool', 'human', 'system'] as const;
const TYPES = ['work_item_enqueued', 'work_item_claimed', 'work_item_resolved', 'work_item_reclaimed'];

export function batchConformance(name: string, t: ConformanceTest): void {
  describe(`${name}: batched calls`, () => {
    t('a batch enqueue, claim, resolve and sweep reads, per item, as the single calls would', async (c) => {
      // The same work on two stores at the same moments: one item at a time (no coalescing) and in batches.
      const one = await c.another();
      const single = c.over(one.backend, { coalesce: false }).work;
      const specs = [
        { title: 'a', priority: 3, payload: { n: 1 }, kind: 'k' },
        { title: 'b', priority: 2, idempotency_key: 'key-b', max_attempts: 1 },
        { title: 'c', priority: 1, blocked_by: [] as string[] },
        { title: 'd', priority: 0, not_before: new Date(c.now()).toISOString() },
      ];
      const before = await eventCount(c);
      const many = await c.work.enqueueMany(specs);
      const singles: WorkItem[] = [];
      for (const s of specs) singles.push(await single.enqueue(s));
      expect(await eventCount(c)).toBe(before + 1);
      c.advance(10);

      const claimed = await c.work.claimMany({ worker: 'w', limit: 4, lease_ms: 1000 });
      for (let k = 0; k < 4; k++) await single.claim({ worker: 'w', lease_ms: 1000 });
      expect(claimed.map((i) => i.title)).toEqual(['a', 'b', 'c', 'd']);
      expect(await eventCount(c)).toBe(before + 2);
      c.advance(10);

      const byTitle = (items: WorkItem[], title: string) => items.find((i) => i.title === title)!;
      await c.work.resolveMany([
        { id: byTitle(many, 'a').id, worker: 'w', status: 'done', result: { ok: 1 }, attempt: 1 },
        { id: byTitle(many, 'c').id, worker: 'w', status: 'failed', error: 'broke' },
      ]);
      await single.resolve({
        id: byTitle(singles, 'a').id,
        worker: 'w',
        status: 'done',
        result: { ok: 1 },
        attempt: 1,
      });
      await single.resolve({ id: byTitle(singles, 'c').id, worker: 'w', status: 'failed', error: 'broke' });
      expect(await eventCount(c)).toBe(before + 3);

      // b (one attempt) and d (three) are left to expire: one sweep fails b and hands d back.
      c.advance(2000);
      expect((await c.work.reclaimExpired()).map((i) => [i.title, i.status])).toEqual([
        ['b', 'failed'],
        ['d', 'pending'],
      ]);
      expect(await eventCount(c)).toBe(before + 4);
      const [sweep] = await c.events.read({ after: before + 3 });
      expect(sweep).toMatchObject({ type: 'work_items_reclaimed', stream: 'work_items', work_item_id: null });

      // What one sweep per item would have said, and then the rest of d's life.
      const sweptAt = new Date(c.now()).toISOString();
      const reclaimed = (data: Json) => ({
        type: 'work_item_reclaimed',
        data,
        actor: 'agent',
        created_at: sweptAt,
      });
      const expected: Record<string, ReturnType<typeof reclaimed>> = {
        b: reclaimed({
          previous_owner: 'w',
          attempt: 1,
          status: 'failed',
          error: 'lease expired on attempt 1 of 1',
          actor_kind: 'system',
        }),
        d: reclaimed({
          previous_owner: 'w',
          attempt: 1,
          status: 'pending',
          error: null,
          actor_kind: 'system',
        }),
      };

      for (const title of ['a', 'b', 'c', 'd']) {
        const got = await history(c, byTitle(many, title).id);
        const want = anonymous(await history(one, byTitle(singles, title).id));
        if (expected[title]) want.push(expected[title]);
        expect(anonymous(got), title).toEqual(want);
        // A reader by type sees the same events of the item.
        expect(await byType(c, TYPES, byTitle(many, title).id)).toEqual(got);
        // Newest first, the same events the other way round.
        const reversed = (await c.events.read({ work_item_id: byTitle(many, title).id, reverse: true })).map(
          said,
        );
        expect(reversed).toEqual([...got].reverse());
      }
      // The rows agree (ids aside), and both stores verify (every test ends with that).
      for (const title of ['a', 'b', 'c', 'd']) {
        const { id: _a, ...batched } = await c.work.get(byTitle(many, title).id);
        const { id: _b, ...alone } = await one.work.get(byTitle(singles, title).id);
        if (title === 'b' || title === 'd') continue;
        expect(batched).toEqual(alone);
      }
    });

    t(
      'a claim that reclaims and claims again in one statement reads as a reclaim then a claim',
      async (c) => {
        await c.work.enqueueMany([{ title: 'x' }, { title: 'y' }]);
        const first = await c.work.claimMany({ worker: 'w1', limit: 2, lease_ms: 100, actor_kind: 'model' });
        c.advance(200);
        const before = await eventCount(c);
        const again = await c.work.claimMany({ worker: 'w2', limit: 2, actor_kind: 'tool' });
        expect(again.map((i) => i.id)).toEqual(first.map((i) => i.id));
        const stored = await c.events.read({ after: before });
        expect(stored.map((e) => e.type)).toEqual(['work_items_reclaimed', 'work_items_claimed']);
        for (const item of again) {
          const h = await history(c, item.id);
          expect(h.map((e) => [e.type, e.actor, e.data])).toEqual([
            ['work_item_enqueued', 'agent', expect.objectContaining({ actor_kind: 'system' })],
            [
              'work_item_claimed',
              'w1',
              { worker: 'w1', attempt: 1, lease_expires_at: expect.any(String), actor_kind: 'model' },
            ],
            // The sweep is the store's act, whoever's claim ran it.
            [
              'work_item_reclaimed',
              'w2',
              { previous_owner: 'w1', attempt: 1, status: 'pending', error: null, actor_kind: 'system' },
            ],
            [
              'work_item_claimed',
              'w2',
              { worker: 'w2', attempt: 2, lease_expires_at: item.lease_expires_at, actor_kind: 'tool' },
            ],
          ]);
        }
      },
    );

    t('a batch of one writes the item its own event, as a single call does', async (c) => {
      const [item] = await c.work.enqueueMany([{ title: 'alone' }]);
      const [held] = await c.work.claimMany({ worker: 'w', limit: 5 });
      await c.work.resolveMany([{ id: held!.id, worker: 'w', status: 'done' }]);
      const stored = await c.events.read({});
      expect(stored.map((e) => [e.type, e.stream])).toEqual([
        ['work_item_enqueued', `work_item:${item!.id}`],
        ['work_item_claimed', `work_item:${item!.id}`],
        ['work_item_resolved', `work_item:${item!.id}`],
      ]);
    });

    t(
      'a resolve records each result by its content hash: the batch event does not grow with the results',
      async (c) => {
        const items = await c.work.enqueueMany(
          Array.from({ length: 20 }, (_, k) => ({ title: `r${k}`, payload: { k } })),
        );
        const held = await c.work.claimMany({ worker: 'w', limit: 20 });
        // 20 results of 10,000 characters each (non-ASCII, a Date that serializes as its ISO text).
        const resultOf = (k: number): Json => ({
          text: `é|+${k}`.repeat(2_000),
          at: new Date(k * 1000).toISOString(),
        });
        const done = await c.work.resolveMany(
          held.map((h, k) => ({
            id: h.id,
            worker: 'w',
            status: 'done' as const,
            result: resultOf(k),
            attempt: 1,
          })),
        );
        expect(done.map((i) => i.result)).toEqual(held.map((_, k) => resultOf(k)));
        const [batch] = await c.events.read({ type: 'work_items_resolved' });
        // Each entry carries a 64-character hash, not the 10,000-character value.
        expect(JSON.stringify(batch!.data).length).toBeLessThan(20 * 400);
        for (const [k, h] of held.entries()) {
          const [resolved] = await c.events.read({ work_item_id: h.id, type: 'work_item_resolved' });
          expect(resolved!.data).toMatchObject({ status: 'done', result_hash: contentHash(resultOf(k)) });
          expect(resolved!.data).not.toHaveProperty('result');
          expect((await c.work.get(h.id)).result).toEqual(resultOf(k));
        }
        // A single resolve records it the same way (a human's answer: kind-effects).
        const extra = await c.work.enqueue({ title: 'single' });
        await c.work.claim({ worker: 'w', id: extra.id });
        await c.work.resolve({ id: extra.id, worker: 'w', status: 'done', result: { n: 1 } });
        const [single] = await c.events.read({ work_item_id: extra.id, type: 'work_item_resolved' });
        expect(single!.data).toMatchObject({ result_hash: contentHash({ n: 1 }) });
        expect(single!.data).not.toHaveProperty('result');
        expect(items).toHaveLength(20);
      },
    );

    t('a read that is not about items returns the batch event as stored', async (c) => {
      const items = await c.work.enqueueMany([{ title: 'p' }, { title: 'q' }, { title: 'r' }]);
      const all = await c.events.read({});
      expect(all).toHaveLength(1);
      expect(all[0]).toMatchObject({ type: 'work_items_enqueued', stream: 'work_items', work_item_id: null });
      expect(await c.events.read({ type: 'work_items_enqueued' })).toEqual(all);
      expect(await c.events.read({ stream: 'work_items' })).toEqual(all);
      // Per item: one record per item, sharing the stored event's position and hash.
      const perItem = await c.events.read({ type: 'work_item_enqueued' });
      expect(perItem.map((e) => [e.work_item_id, e.position, e.hash])).toEqual(
        items.map((i) => [i.id, all[0]!.position, all[0]!.hash]),
      );
      // The batch types are the store's own: nobody appends them.
      for (const type of ['work_items_enqueued', 'work_items_claimed', 'work_items_resolved']) {
        await expect(
          c.events.append({ type, data: { items: [{ id: items[0]!.id }] } }),
        ).rejects.toMatchObject({
          code: 'INVALID_INPUT',
        });
      }
    });

    t('an item named by many batches is found through the index, in position order', async (c) => {
      // Enough batches and items that a reader must find them by the item, not by scanning.
      const ids: string[] = [];
      for (let k = 0; k < 20; k++)
        ids.push(...(await c.work.enqueueMany([{ title: `a${k}` }, { title: `b${k}` }])).map((i) => i.id));
      const target = ids[17]!;
      const h = await c.events.read({ work_item_id: target });
      expect(h.map((e) => [e.type, e.work_item_id])).toEqual([['work_item_enqueued', target]]);
      await c.work.claimMany({ worker: 'w', limit: 40 });
      expect((await c.events.read({ work_item_id: target })).map((e) => e.type)).toEqual([
        'work_item_enqueued',
        'work_item_claimed',
      ]);
      expect(await c.events.read({ work_item_id: 'wi_none' })).toEqual([]);
    });
  });

  describe(`${name}: cancelMany`, () => {
    t(
      'cancels pending, in-flight and parked items in one call, one event each, with the reason',
      async (c) => {
        const [p, f, w, done] = await c.work.enqueueMany([
          { title: 'p' },
          { title: 'f' },
          { title: 'w', waiting_human: true },
          { title: 'd' },
        ]);
        await c.work.claim({ worker: 'w', id: f!.id });
        const before = await eventCount(c);
        const out = await c.work.cancelMany({
          ids: [p!.id, f!.id, w!.id],
          reason: 'not needed',
          actor: 'ops',
        });
        expect(out.map((i) => [i.id, i.status, i.error])).toEqual([
          [p!.id, 'cancelled', 'not needed'],
          [f!.id, 'cancelled', 'not needed'],
          [w!.id, 'cancelled', 'not needed'],
        ]);
        expect(await eventCount(c)).toBe(before + 3);
        for (const i of [p!, f!, w!]) {
          const last = (await c.events.read({ work_item_id: i.id })).at(-1)!;
          expect([last.type, last.actor]).toEqual(['work_item_cancelled', 'ops']);
        }
        expect((await c.work.get(done!.id)).status).toBe('pending');
      },
    );

    t('one refused item cancels none and writes nothing', async (c) => {
      const [a, b] = await c.work.enqueueMany([{ title: 'a' }, { title: 'b' }]);
      await c.work.claim({ worker: 'w', id: b!.id });
      await c.work.resolve({ id: b!.id, status: 'done', worker: 'w' });
      const before = await eventCount(c);
      const details = await expectCode(c.work.cancelMany({ ids: [a!.id, b!.id] }), 'INVALID_TRANSITION');
      expect(details).toMatchObject({ id: b!.id, from: 'done' });
      await expectCode(c.work.cancelMany({ ids: [a!.id, 'wi_nope'] }), 'NOT_FOUND');
      await expectCode(c.work.cancelMany({ ids: [a!.id, a!.id] }), 'INVALID_INPUT');
      expect((await c.work.get(a!.id)).status).toBe('pending');
      expect(await eventCount(c)).toBe(before);
    });

    t('an item named after its cascade blocker counts as cancelled, in either order', async (c) => {
      for (const order of ['blocker first', 'dependant first']) {
        const a = await c.work.enqueue({ title: `a ${order}` });
        const b = await c.work.enqueue({ title: 'b', blocked_by: [a.id], on_blocker_failure: 'cascade' });
        const ids = order === 'blocker first' ? [a.id, b.id] : [b.id, a.id];
        const out = await c.work.cancelMany({ ids, reason: 'drop' });
        expect(out.map((i) => i.status)).toEqual(['cancelled', 'cancelled']);
        const dependant = await c.work.get(b.id);
        expect(dependant.cascaded_from).toBe(order === 'blocker first' ? a.id : null);
        const types = (await c.events.read({ work_item_id: b.id })).map((e) => e.type);
        expect(types).toEqual(['work_item_enqueued', 'work_item_cancelled']);
      }
    });

    t('takes up to 1,000 ids; more, or ids that are not names, are INVALID_INPUT', async (c) => {
      const many = await c.work.enqueueMany(Array.from({ length: 150 }, (_, k) => ({ title: `m${k}` })));
      const out = await c.work.cancelMany({ ids: many.map((i) => i.id) });
      expect(out.every((i) => i.status === 'cancelled')).toBe(true);
      const before = await eventCount(c);
      for (const bad of [
        { ids: Array.from({ length: 1001 }, (_, k) => `wi_${k}`) },
        { ids: 'wi_1' },
        { ids: [5] },
        { ids: ['wi_\u0001'] },
        { ids: [] as string[], status: 'done' },
        {},
        null,
      ]) {
        await expectCode(c.work.cancelMany(bad as never), 'INVALID_INPUT');
      }
      expect(await eventCount(c)).toBe(before);
      expect(await c.work.cancelMany({ ids: [] })).toEqual([]);
      // retryMany takes as many.
      expect((await c.work.retryMany({ ids: many.map((i) => i.id) })).length).toBe(150);
    });
  });

  describe(`${name}: coalesced single calls`, () => {
    t(
      '32 overlapping claim() calls on one handle over 20 items: 20 distinct items and 12 nulls',
      async (c) => {
        await c.work.enqueueMany(Array.from({ length: 20 }, (_, k) => ({ title: `i${k}`, priority: -k })));
        const before = await eventCount(c);
        const got = await Promise.all(
          Array.from({ length: 32 }, (_, k) =>
            c.work.claim({ worker: `w${k % 4}`, lease_ms: 5000, actor_kind: KINDS[k % 4] }),
          ),
        );
        const items = got.filter((x): x is WorkItem => x !== null);
        expect(items).toHaveLength(20);
        expect(got.filter((x) => x === null)).toHaveLength(12);
        expect(new Set(items.map((i) => i.id)).size).toBe(20);
        // Each caller holds its item under its own name, and the earlier callers got the first items.
        for (const [k, item] of got.entries()) if (item) expect(item.lease_owner).toBe(`w${k % 4}`);
        expect(got.slice(0, 20).map((i) => i?.title)).toEqual(Array.from({ length: 20 }, (_, k) => `i${k}`));
        // The first call went alone (nothing was running), the other 31 as one batch: 2 events, not 20.
        expect(await eventCount(c)).toBe(before + 2);
        for (const [k, item] of got.entries()) {
          if (!item) continue;
          const h = (await c.events.read({ work_item_id: item.id })).map((e) => [e.type, e.actor, e.data]);
          // Each caller's own actor kind, though one batch event records all of them.
          expect(h.at(-1)).toEqual([
            'work_item_claimed',
            `w${k % 4}`,
            {
              worker: `w${k % 4}`,
              attempt: 1,
              lease_expires_at: item.lease_expires_at,
              actor_kind: KINDS[k % 4],
            },
          ]);
        }
      },
    );

    t(
      'overlapping resolve() calls where one lease was lost: that caller gets LEASE_LOST, the others commit',
      async (c) => {
        const five = await c.work.enqueueMany(Array.from({ length: 5 }, (_, k) => ({ title: `r${k}` })));
        // w holds r2 under a short lease, the other four under a long one.
        const r2 = (await c.work.claim({ worker: 'w', id: five[2]!.id, lease_ms: 1000 }))!;
        const all = await c.work.claimMany({ worker: 'w', limit: 4, lease_ms: 60_000 });
        // r2's lease expires and another worker takes it over.
        c.advance(1500);
        const thief = await c.work.claim({ worker: 'other', id: r2.id });
        expect(thief?.lease_owner).toBe('other');
        const before = await eventCount(c);
        const calls = [...all, r2].map((i) =>
          c.work.resolve({
            id: i.id,
            worker: 'w',
            status: 'done',
            result: { t: i.title },
            attempt: i.attempts,
          }),
        );
        const settled = await Promise.allSettled(calls);
        const outcome = settled.map((s) =>
          s.status === 'fulfilled' ? s.value.status : (s.reason as { code: string }).code,
        );
        expect(outcome).toEqual(['done', 'done', 'done', 'done', 'LEASE_LOST']);
        expect((await c.work.get(r2.id)).lease_owner).toBe('other');
        // One resolve went alone, the other four (three done, one refused) in one transaction.
        expect(await eventCount(c)).toBe(before + 2);
        const [last] = await c.events.read({ after: before + 1 });
        expect(last!.type).toBe('work_items_resolved');
        expect((last!.data as { items: Array<{ id: string }> }).items.map((x) => x.id)).toEqual(
          all.slice(1).map((i) => i.id),
        );
        // The refused resolve wrote nothing for r2: it is the thief's, in flight.
        expect((await c.events.read({ work_item_id: r2.id })).at(-1)).toMatchObject({
          type: 'work_item_claimed',
          actor: 'other',
        });
      },
    );

    t('overlapping heartbeat() calls share one statement; a lost lease fails only its caller', async (c) => {
      await c.work.enqueueMany([{ title: 'h0' }, { title: 'h1' }, { title: 'h2' }]);
      const held = await c.work.claimMany({ worker: 'w', limit: 3, lease_ms: 1000 });
      c.advance(500);
      const beats = await Promise.allSettled([
        c.work.heartbeat({ id: held[0]!.id, worker: 'w', lease_ms: 10_000 }),
        c.work.heartbeat({ id: held[1]!.id, worker: 'w', lease_ms: 10_000 }),
        c.work.heartbeat({ id: held[2]!.id, worker: 'someone-else', lease_ms: 10_000 }),
        c.work.heartbeat({ id: 'wi_missing', worker: 'w' }),
        c.work.heartbeat({ id: held[0]!.id, worker: 'w', lease_ms: 20_000 }),
      ]);
      const codes = beats.map((b) => (b.status === 'fulfilled' ? 'ok' : (b.reason as { code: string }).code));
      expect(codes).toEqual(['ok', 'ok', 'LEASE_LOST', 'NOT_FOUND', 'ok']);
      expect((await c.work.get(held[1]!.id)).lease_expires_at).toBe(new Date(c.now() + 10_000).toISOString());
      // The second beat of h0 went in the batch after the one holding the first: the later one wins.
      expect((await c.work.get(held[0]!.id)).lease_expires_at).toBe(new Date(c.now() + 20_000).toISOString());
      expect((await c.work.get(held[2]!.id)).lease_expires_at).toBe(new Date(c.now() + 500).toISOString());
    });

    t('a call with nothing else in flight goes alone and writes the single event', async (c) => {
      const item = await c.work.enqueue({ title: 'solo' });
      const held = await c.work.claim({ worker: 'w' });
      await c.work.resolve({ id: held!.id, worker: 'w', status: 'done' });
      expect(await typesOf(c, item.id)).toEqual([
        'work_item_enqueued',
        'work_item_claimed',
        'work_item_resolved',
      ]);
      expect((await c.events.read({})).every((e) => e.stream === `work_item:${item.id}`)).toBe(true);
      await expectCode(c.work.resolve({ id: item.id, worker: 'x', status: 'failed' }), 'LEASE_LOST');
    });

    t('with coalescing off, overlapping calls are each their own transaction', async (c) => {
      const plain = c.over(c.backend, { coalesce: false }).work;
      await plain.enqueueMany(Array.from({ length: 6 }, (_, k) => ({ title: `p${k}` })));
      const before = await eventCount(c);
      const got = await Promise.all(Array.from({ length: 8 }, () => plain.claim({ worker: 'w' })));
      expect(got.filter((x) => x !== null)).toHaveLength(6);
      expect(await eventCount(c)).toBe(before + 6);
    });
  });
}
