// Store conformance, blockers that fail (issue 17): dependants of a failed or cancelled blocker are reported
// blocked on the failure (wait) or cancelled with it in the same transaction (cascade); a retry puts the
// blocker back to pending with a fresh attempt budget and re-opens what its failure cancelled.
import { describe, expect } from 'vitest';
import type { DumpRecord } from '../../src/core/backend.js';
import type { WorkItem } from '../../src/core/types.js';
import { type ConformanceTest, type Ctx, eventCount, expectCode, typesOf } from './setup.js';

/** a → b → c: b waits for a, c for b. */
async function chain(c: Ctx, policy?: 'wait' | 'cascade'): Promise<[WorkItem, WorkItem, WorkItem]> {
  const on = policy ? { on_blocker_failure: policy } : {};
  const a = await c.work.enqueue({ title: 'a', priority: 3 });
  const b = await c.work.enqueue({ title: 'b', priority: 2, blocked_by: [a.id], ...on });
  const d = await c.work.enqueue({ title: 'c', priority: 1, blocked_by: [b.id], ...on });
  return [a, b, d];
}

async function failByResolve(c: Ctx, id: string, error = 'boom'): Promise<WorkItem> {
  const held = await c.work.claim({ worker: 'w', id });
  expect(held?.id).toBe(id);
  return c.work.resolve({ id, status: 'failed', error, worker: 'w', attempt: held!.attempts });
}

/** Claims the next ready item, expects it to be `id`, and finishes it done. */
async function finishNext(c: Ctx, id: string): Promise<void> {
  const next = await c.work.claim({ worker: 'w' });
  expect(next?.id).toBe(id);
  await c.work.resolve({ id, status: 'done', worker: 'w', attempt: next!.attempts });
}

async function lastEvent(c: Ctx, id: string) {
  const events = await c.events.read({ work_item_id: id });
  return events[events.length - 1]!;
}

export function blockerFailureConformance(name: string, t: ConformanceTest): void {
  describe(`${name}: a blocker fails (wait)`, () => {
    t(
      'a → b → c, a fails: b and c report blocked on a; retry a, then a, b, c become ready in turn',
      async (c) => {
        const [a, b, d] = await chain(c);
        expect(b.on_blocker_failure).toBe('wait');
        await failByResolve(c, a.id, 'the API was down');
        expect((await c.work.get(b.id)).blocked_on_failure).toEqual([a.id]);
        expect((await c.work.get(d.id)).blocked_on_failure).toEqual([a.id]);
        expect((await c.work.get(a.id)).blocked_on_failure).toBeUndefined();
        const listed = await c.work.list({ blocked_on_failure: true });
        expect(listed.map((i) => i.id)).toEqual([b.id, d.id]);
        expect(listed.every((i) => i.blocked_on_failure?.[0] === a.id)).toBe(true);
        expect((await c.work.list({ blocked_on_failure: false })).map((i) => i.id)).toEqual([a.id]);
        expect(await c.work.claim({ worker: 'w' })).toBeNull();

        const retried = await c.work.retry({ id: a.id, reason: 'the API is back', actor: 'ops' });
        expect(retried).toMatchObject({
          id: a.id,
          status: 'pending',
          error: null,
          attempts: 1,
          max_attempts: 4,
        });
        expect(retried.resolved_at).toBeNull();
        const e = await lastEvent(c, a.id);
        expect(e).toMatchObject({ type: 'work_item_retried', actor: 'ops' });
        expect(e.data).toMatchObject({
          status: 'pending',
          previous_status: 'failed',
          previous_error: 'the API was down',
          previous_attempts: 1,
          max_attempts: 4,
          reason: 'the API is back',
        });
        expect((await c.work.get(b.id)).blocked_on_failure).toBeUndefined();
        expect(await c.work.list({ blocked_on_failure: true })).toEqual([]);

        await finishNext(c, a.id);
        expect((await c.work.get(a.id)).attempts).toBe(2);
        await finishNext(c, b.id);
        await finishNext(c, d.id);
        expect((await c.work.counts()).done).toBe(3);
        expect(await typesOf(c, a.id)).toContain('work_item_retried');
      },
    );

    t('a cancelled blocker blocks too; retry works from cancelled', async (c) => {
      const [a, b] = await chain(c);
      await c.work.cancel({ id: a.id, reason: 'not now' });
      expect((await c.work.get(b.id)).blocked_on_failure).toEqual([a.id]);
      const r = await c.work.retry({ id: a.id });
      expect(r).toMatchObject({ status: 'pending', attempts: 0, max_attempts: 3 });
      expect((await lastEvent(c, a.id)).data).toMatchObject({
        previous_status: 'cancelled',
        previous_error: 'not now',
      });
      await finishNext(c, a.id);
      await finishNext(c, b.id);
    });

    t('a retry gives a fresh attempt budget to an item whose last lease expired', async (c) => {
      const a = await c.work.enqueue({ title: 'flaky', max_attempts: 1 });
      await c.work.claim({ worker: 'w', lease_ms: 1000 });
      c.advance(2000);
      const [failed] = await c.work.reclaimExpired();
      expect(failed).toMatchObject({ id: a.id, status: 'failed', attempts: 1 });
      const r = await c.work.retry({ id: a.id });
      expect(r).toMatchObject({ status: 'pending', attempts: 1, max_attempts: 2 });
      expect((await lastEvent(c, a.id)).data).toMatchObject({
        previous_error: 'lease expired on attempt 1 of 1',
        previous_attempts: 1,
      });
      const again = await c.work.claim({ worker: 'w2' });
      expect(again).toMatchObject({ id: a.id, attempts: 2 });
      // The old attempt's fencing token stays spent.
      await expectCode(c.work.resolve({ id: a.id, status: 'done', worker: 'w', attempt: 1 }), 'LEASE_LOST');
      await c.work.resolve({ id: a.id, status: 'done', worker: 'w2', attempt: 2 });
    });
  });

  describe(`${name}: a blocker fails (cascade)`, () => {
    t('a → b → c, a fails: b and c are cancelled naming the blocker; retry a re-opens them', async (c) => {
      const [a, b, d] = await chain(c, 'cascade');
      expect(b.on_blocker_failure).toBe('cascade');
      await failByResolve(c, a.id);
      expect(await c.work.get(b.id)).toMatchObject({
        status: 'cancelled',
        error: `blocker ${a.id} ended failed`,
        cascaded_from: a.id,
      });
      expect(await c.work.get(d.id)).toMatchObject({
        status: 'cancelled',
        error: `blocker ${b.id} ended cancelled`,
        cascaded_from: b.id,
      });
      expect(await lastEvent(c, b.id)).toMatchObject({
        type: 'work_item_cancelled',
        data: { status: 'cancelled', blocker: a.id },
      });

      await c.work.retry({ id: a.id });
      for (const [x, blocker] of [
        [b, a],
        [d, b],
      ] as const) {
        expect(await c.work.get(x.id)).toMatchObject({ status: 'pending', error: null, cascaded_from: null });
        expect(await lastEvent(c, x.id)).toMatchObject({
          type: 'work_item_reopened',
          data: { status: 'pending', blocker: blocker.id },
        });
      }
      await finishNext(c, a.id);
      await finishNext(c, b.id);
      await finishNext(c, d.id);
    });

    t(
      'the dependants one blocker cancels are recorded in claim order (priority first), not in the order written',
      async (c) => {
        const a = await c.work.enqueue({ title: 'a' });
        const low = await c.work.enqueue({
          title: 'low',
          priority: 1,
          blocked_by: [a.id],
          on_blocker_failure: 'cascade',
        });
        const high = await c.work.enqueue({
          title: 'high',
          priority: 9,
          blocked_by: [a.id],
          on_blocker_failure: 'cascade',
        });
        const mid = await c.work.enqueue({
          title: 'mid',
          priority: 5,
          blocked_by: [a.id],
          on_blocker_failure: 'cascade',
        });
        const head = await eventCount(c);
        await failByResolve(c, a.id);
        const cancelled = (await c.events.read({ after: head }))
          .filter((e) => e.type === 'work_item_cancelled' && e.work_item_id !== a.id)
          .map((e) => e.work_item_id);
        expect(cancelled).toEqual([high.id, mid.id, low.id]);
        // Tried again, the blocker reopens them in the same order.
        const before = await eventCount(c);
        await c.work.retry({ id: a.id });
        const reopened = (await c.events.read({ after: before }))
          .filter((e) => e.work_item_id !== a.id)
          .map((e) => [e.type, e.work_item_id]);
        expect(reopened).toEqual([high, mid, low].map((i) => ['work_item_reopened', i.id]));
      },
    );

    t('only cascade dependants are cancelled; a waiting one next to them is reported', async (c) => {
      const a = await c.work.enqueue({ title: 'a' });
      const cascade = await c.work.enqueue({ title: 'x', blocked_by: [a.id], on_blocker_failure: 'cascade' });
      const wait = await c.work.enqueue({ title: 'y', blocked_by: [a.id] });
      await c.work.cancel({ id: a.id });
      expect((await c.work.get(cascade.id)).status).toBe('cancelled');
      expect(await c.work.get(wait.id)).toMatchObject({ status: 'pending', blocked_on_failure: [a.id] });
    });

    t('the sweep failing an expired last attempt cancels the dependants in its transaction', async (c) => {
      const a = await c.work.enqueue({ title: 'a', max_attempts: 1 });
      const b = await c.work.enqueue({ title: 'b', blocked_by: [a.id], on_blocker_failure: 'cascade' });
      await c.work.claim({ worker: 'w', lease_ms: 1000 });
      c.advance(2000);
      // A claim sweeps too: a fails, b is cancelled, nothing is ready.
      expect(await c.work.claim({ worker: 'w2' })).toBeNull();
      expect(await c.work.get(a.id)).toMatchObject({ status: 'failed' });
      expect(await c.work.get(b.id)).toMatchObject({ status: 'cancelled', cascaded_from: a.id });
    });

    t('resolveMany failing two blockers cancels the dependants of both, in one transaction', async (c) => {
      const a1 = await c.work.enqueue({ title: 'a1' });
      const a2 = await c.work.enqueue({ title: 'a2' });
      const b1 = await c.work.enqueue({ title: 'b1', blocked_by: [a1.id], on_blocker_failure: 'cascade' });
      const b2 = await c.work.enqueue({ title: 'b2', blocked_by: [a2.id], on_blocker_failure: 'cascade' });
      const held = await c.work.claimMany({ worker: 'w', limit: 2 });
      expect(held).toHaveLength(2);
      await c.work.resolveMany(held.map((h) => ({ id: h.id, status: 'failed' as const, worker: 'w' })));
      expect((await c.work.get(b1.id)).cascaded_from).toBe(a1.id);
      expect((await c.work.get(b2.id)).cascaded_from).toBe(a2.id);
      // Retried together: both re-opened.
      await c.work.retryMany([{ id: a1.id }, { id: a2.id }]);
      expect((await c.work.list({ status: 'pending' })).length).toBe(4);
    });

    t('a human failing a parked item, and concurrent coalesced resolves, cascade too', async (c) => {
      const asked = await c.work.enqueue({ title: 'ask', waiting_human: true });
      const after = await c.work.enqueue({
        title: 'x',
        blocked_by: [asked.id],
        on_blocker_failure: 'cascade',
      });
      await c.work.resolve({ id: asked.id, status: 'failed', error: 'no', worker: 'ana' });
      expect(await c.work.get(after.id)).toMatchObject({ status: 'cancelled', cascaded_from: asked.id });
      expect(await lastEvent(c, after.id)).toMatchObject({ actor: 'ana' });
      // Overlapping single resolves on one handle go in one batch (resolveEach).
      const tops = await Promise.all([1, 2, 3].map((n) => c.work.enqueue({ title: `t${n}` })));
      const deps = await Promise.all(
        tops.map((t) => c.work.enqueue({ title: 'd', blocked_by: [t.id], on_blocker_failure: 'cascade' })),
      );
      const held = await c.work.claimMany({ worker: 'w', limit: 3 });
      expect(held.map((h) => h.id).sort()).toEqual(tops.map((t) => t.id).sort());
      await Promise.all(held.map((h) => c.work.resolve({ id: h.id, status: 'failed', worker: 'w' })));
      for (const [k, d] of deps.entries()) {
        expect(await c.work.get(d.id)).toMatchObject({ status: 'cancelled', cascaded_from: tops[k]!.id });
      }
    });

    t('a refused resolve batch rolls back its cascade too', async (c) => {
      const a = await c.work.enqueue({ title: 'a' });
      const x = await c.work.enqueue({ title: 'x' });
      const b = await c.work.enqueue({ title: 'b', blocked_by: [a.id], on_blocker_failure: 'cascade' });
      await c.work.claim({ worker: 'w', id: a.id });
      await expectCode(
        c.work.resolveMany([
          { id: a.id, status: 'failed', worker: 'w' },
          { id: x.id, status: 'done', worker: 'w' },
        ]),
        'INVALID_TRANSITION',
      );
      expect((await c.work.get(a.id)).status).toBe('in_flight');
      expect((await c.work.get(b.id)).status).toBe('pending');
    });

    t('an item retried directly after its cascade cancel waits on the failed blocker', async (c) => {
      const [a, b] = await chain(c, 'cascade');
      await failByResolve(c, a.id);
      const r = await c.work.retry({ id: b.id });
      expect(r).toMatchObject({ status: 'pending', cascaded_from: null, blocked_on_failure: [a.id] });
      expect((await lastEvent(c, b.id)).data).toMatchObject({ previous_blocker: a.id });
      expect((await c.work.get(b.id)).blocked_on_failure).toEqual([a.id]);
    });
  });

  describe(`${name}: listing what is blocked on a failure`, () => {
    t(
      'list({ blocked_on_failure }) names exactly the items that say so, through every path that changes it',
      async (c) => {
        /** The store's filtered lists against each item's own blocked_on_failure (the core's walk upstream). */
        const agrees = async (s: Pick<Ctx, 'work'>, step: string, expected: string[]) => {
          const all = await s.work.list({ limit: 1000 });
          const stuck = all.filter((i) => i.blocked_on_failure !== undefined).map((i) => i.id);
          expect(stuck.sort(), step).toEqual([...expected].sort());
          const yes = await s.work.list({ blocked_on_failure: true, limit: 1000 });
          expect(
            yes.map((i) => i.id),
            step,
          ).toEqual(all.filter((i) => stuck.includes(i.id)).map((i) => i.id));
          const no = await s.work.list({ blocked_on_failure: false, limit: 1000 });
          expect(
            no.map((i) => i.id),
            step,
          ).toEqual(all.filter((i) => !stuck.includes(i.id)).map((i) => i.id));
          const pending = await s.work.list({ status: 'pending', blocked_on_failure: true, limit: 1000 });
          expect(
            pending.map((i) => i.id),
            step,
          ).toEqual(yes.map((i) => i.id));
          expect((await s.work.list({ blocked_on_failure: true, limit: 1 })).length, step).toBe(
            Math.min(1, stuck.length),
          );
        };
        const [a, b, d] = await chain(c);
        const gate = await c.work.enqueue({ title: 'gate', priority: -1 });
        const both = await c.work.enqueue({ title: 'a and gate', blocked_by: [a.id, gate.id] });
        const diamond = await c.work.enqueue({ title: 'b and c', blocked_by: [b.id, d.id] });
        const afterC = await c.work.enqueue({ title: 'after c', blocked_by: [d.id] });
        const gone = await c.work.enqueue({ title: 'x', blocked_by: [a.id], on_blocker_failure: 'cascade' });
        const afterGone = await c.work.enqueue({ title: 'after x', blocked_by: [gone.id] });
        const flaky = await c.work.enqueue({ title: 'flaky', priority: -2, max_attempts: 1 });
        const afterFlaky = await c.work.enqueue({ title: 'after flaky', blocked_by: [flaky.id] });
        const asked = await c.work.enqueue({ title: 'ask', waiting_human: true });
        const afterAsked = await c.work.enqueue({ title: 'after ask', blocked_by: [asked.id] });
        await agrees(c, 'enqueued', []);

        // A resolve that fails: its chain, the diamond and the item waiting on a cascade-cancelled one.
        await failByResolve(c, a.id);
        const downstream = [b.id, d.id, both.id, diamond.id, afterC.id];
        await agrees(c, 'a failed', [...downstream, afterGone.id]);
        // Parked, c no longer carries the failure down to what waits on it alone; back, it does.
        await c.work.park({ id: d.id });
        await agrees(c, 'c parked', [b.id, both.id, diamond.id, afterGone.id]);
        await c.work.unpark({ id: d.id });
        await agrees(c, 'c unparked', [...downstream, afterGone.id]);
        // A stuck item cancelled by hand is itself a failed blocker for what waits on it.
        await c.work.cancel({ id: b.id });
        await agrees(c, 'b cancelled', [d.id, both.id, diamond.id, afterC.id, afterGone.id]);
        // Retried, a is pending again and re-opens x (cascade); b stays cancelled by hand.
        await c.work.retry({ id: a.id });
        await agrees(c, 'a retried', [d.id, diamond.id, afterC.id]);
        await c.work.retryMany([{ id: b.id }]);
        await agrees(c, 'b retried', []);

        // The sweep failing a last attempt, and a human failing what was asked.
        await c.work.claim({ worker: 'w', id: flaky.id, lease_ms: 1000 });
        c.advance(2000);
        await c.work.reclaimExpired();
        await agrees(c, 'flaky expired', [afterFlaky.id]);
        await c.work.resolve({ id: asked.id, status: 'failed', error: 'no', worker: 'ana' });
        await agrees(c, 'ask refused', [afterFlaky.id, afterAsked.id]);
        // Enqueued behind a failure or behind a stuck item: blocked from the start, in one batch.
        const late = await c.work.enqueueMany([
          { title: 'late 1', blocked_by: [flaky.id] },
          { title: 'late 2', blocked_by: [afterAsked.id, gate.id] },
        ]);
        const stuckNow = [afterFlaky.id, afterAsked.id, ...late.map((i) => i.id)];
        await agrees(c, 'enqueued behind failures', stuckNow);
        // A batch resolve failing two blockers at once.
        const tops = await c.work.enqueueMany([
          { title: 't1', priority: 9 },
          { title: 't2', priority: 9 },
        ]);
        const deps = await c.work.enqueueMany(tops.map((x) => ({ title: 'dep', blocked_by: [x.id] })));
        const held = await c.work.claimMany({ worker: 'w', limit: 2 });
        expect(held.map((h) => h.id).sort()).toEqual(tops.map((x) => x.id).sort());
        await c.work.resolveMany(held.map((h) => ({ id: h.id, status: 'failed' as const, worker: 'w' })));
        const final = [...stuckNow, ...deps.map((x) => x.id)];
        await agrees(c, 'resolveMany failed', final);

        // A copy loaded from the dump reads the same.
        const copy = await c.another();
        if (!c.backend.dump || !copy.backend.load) return; // a backend without dumps has nothing to load
        const records: DumpRecord[] = [];
        for await (const r of c.backend.dump()) records.push(r as DumpRecord);
        await copy.backend.load(records);
        await agrees(copy, 'loaded from a dump', final);
      },
    );
  });

  describe(`${name}: retry is refused`, () => {
    t(
      'for an item pending, in flight, waiting for a human or done: INVALID_TRANSITION, nothing written',
      async (c) => {
        const pending = await c.work.enqueue({ title: 'p' });
        const parked = await c.work.enqueue({ title: 'h', waiting_human: true });
        const done = await c.work.enqueue({ title: 'd', priority: 9 });
        await c.work.claim({ worker: 'w', id: done.id });
        await c.work.resolve({ id: done.id, status: 'done', worker: 'w' });
        const flying = await c.work.enqueue({ title: 'f' });
        await c.work.claim({ worker: 'w', id: flying.id });
        const before = await eventCount(c);
        for (const [item, status] of [
          [pending, 'pending'],
          [parked, 'waiting_human'],
          [done, 'done'],
          [flying, 'in_flight'],
        ] as const) {
          const details = await expectCode(c.work.retry({ id: item.id }), 'INVALID_TRANSITION');
          expect(details).toMatchObject({ id: item.id, from: status, to: 'pending' });
        }
        await expectCode(c.work.retry({ id: 'wi_nope' }), 'NOT_FOUND');
        expect(await eventCount(c)).toBe(before);
        expect((await c.work.get(flying.id)).status).toBe('in_flight');
      },
    );

    t('a batch with one refused item retries none', async (c) => {
      const a = await c.work.enqueue({ title: 'a' });
      const p = await c.work.enqueue({ title: 'p' });
      await c.work.cancel({ id: a.id });
      const before = await eventCount(c);
      await expectCode(c.work.retryMany([{ id: a.id }, { id: p.id }]), 'INVALID_TRANSITION');
      expect((await c.work.get(a.id)).status).toBe('cancelled');
      expect(await eventCount(c)).toBe(before);
      await expectCode(c.work.retryMany([{ id: a.id }, { id: a.id }]), 'INVALID_INPUT');
    });

    t('hostile input is INVALID_INPUT and writes nothing', async (c) => {
      const a = await c.work.enqueue({ title: 'a' });
      await c.work.cancel({ id: a.id });
      const before = await eventCount(c);
      for (const bad of [
        {},
        { id: 'wi_\u0001' },
        { id: 'x'.repeat(100_000) },
        { id: 5 },
        { id: a.id, reason: 7 },
        { id: a.id, actor: 'bad\nactor' },
        { id: a.id, status: 'done' },
        null,
        'x',
      ]) {
        await expectCode(c.work.retry(bad as never), 'INVALID_INPUT');
      }
      await expectCode(c.work.retryMany('x' as never), 'INVALID_INPUT');
      await expectCode(
        c.work.enqueue({ title: 'x', on_blocker_failure: 'explode' as never }),
        'INVALID_INPUT',
      );
      await expectCode(c.work.list({ blocked_on_failure: 'yes' as never }), 'INVALID_INPUT');
      // Nor can the log be forged: the retry events are the store's own.
      for (const type of ['work_item_retried', 'work_item_reopened']) {
        await expectCode(
          c.events.append({ type, work_item_id: a.id, data: { status: 'pending' } }),
          'INVALID_INPUT',
        );
      }
      expect(await eventCount(c)).toBe(before);
    });

    t('concurrent retries of one item: exactly one succeeds', async (c) => {
      const a = await c.work.enqueue({ title: 'a' });
      await failByResolve(c, a.id);
      // Separate handles, so nothing coalesces in the process: the store alone decides.
      const handles = Array.from({ length: 6 }, () => c.over(c.backend, { coalesce: false }).work);
      const results = await Promise.allSettled(handles.map((h) => h.retry({ id: a.id })));
      const ok = results.filter((r) => r.status === 'fulfilled');
      expect(ok).toHaveLength(1);
      for (const r of results) {
        if (r.status === 'rejected') expect((r.reason as { code: string }).code).toBe('INVALID_TRANSITION');
      }
      expect((await typesOf(c, a.id)).filter((x) => x === 'work_item_retried')).toHaveLength(1);
      expect((await c.work.get(a.id)).max_attempts).toBe(4);
    });
  });
}
