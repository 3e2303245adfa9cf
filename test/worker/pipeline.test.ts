// The worker runtime's pipelined loop (issue 41), on every backend: the next claim is under way while
// handlers run and a commit is held; completions that finish together share one resolve transaction (one
// work_items_resolved event); claims pause while a full batch waits for its commit; the 'auto' prefetch
// grows once the first runs have ended, not after a sampling period; stop() during a claim waits for it and
// releases what it took; a listener that throws stops the worker cleanly. No test asserts a duration: each waits for a condition (a gate the test opens, an event of the
// worker); one bounds how long it watches.
import { describe, expect, it } from 'vitest';
import type { WorkQueue } from '../../src/core/work/queue.js';
import type { Instance } from '../../src/instance/instance.js';
import { createWorker } from '../../src/worker/worker.js';
import { backendsForThisFile } from '../helpers/backends.js';

const LONG = 3_600_000;

/** A promise and its resolver: a gate the test opens. */
function gate<T = void>(): { promise: Promise<T>; open: (v: T) => void } {
  let open!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    open = r;
  });
  return { promise, open };
}

/**
 * `inst.work` (the real store) with its claimMany and resolveMany calls recorded; `holdFirstResolve`: the
 * first resolveMany waits for `release` before it goes to the store (a commit under way, held).
 */
function watched(inst: Instance, holdFirstResolve?: Promise<void>) {
  const claims: Array<{ limit: number; got: number }> = [];
  const resolves: number[] = [];
  const firstResolve = gate();
  const work = new Proxy(inst.work, {
    get(target, prop, receiver) {
      if (prop === 'claimMany') {
        return async (i: Parameters<WorkQueue['claimMany']>[0]) => {
          const got = await target.claimMany(i);
          claims.push({ limit: i?.limit ?? 1, got: got.length });
          return got;
        };
      }
      if (prop === 'resolveMany') {
        return async (xs: Parameters<WorkQueue['resolveMany']>[0]) => {
          resolves.push(xs.length);
          if (resolves.length === 1) {
            firstResolve.open();
            if (holdFirstResolve) await holdFirstResolve;
          }
          return target.resolveMany(xs);
        };
      }
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { work, claims, resolves, firstResolve: firstResolve.promise };
}

/** The batch resolve events of `inst`, each with how many items it names. */
async function resolveEvents(inst: Instance): Promise<number[]> {
  const events = await inst.events.read({ limit: 10_000 });
  return events
    .filter((e) => e.type === 'work_items_resolved' || e.type === 'work_item_resolved')
    .map((e) => (e.data as { items?: unknown[] }).items?.length ?? 1);
}

for (const backend of await backendsForThisFile()) {
  describe(`worker runtime, pipelined, on ${backend.name}`, () => {
    it('claims and runs the next items while a commit is under way (the claim does not wait for it)', async () => {
      const inst = await backend.open();
      try {
        await inst.work.enqueueMany(Array.from({ length: 40 }, (_, k) => ({ title: `p${k}` })));
        const release = gate();
        const { work, resolves, firstResolve } = watched(inst, release.promise);
        let started = 0;
        let target = Number.POSITIVE_INFINITY;
        const more = gate();
        const w = createWorker({
          instance: { work },
          handlers: {
            '*': () => {
              if (++started >= target) more.open();
            },
          },
          concurrency: 2,
          prefetch: 4,
          batchSize: 20,
          leaseMs: LONG,
          pollIntervalMs: 5,
        });
        const done = w.drain();
        await firstResolve;
        // The first commit is held: the worker goes on claiming and running (its next claims are under way
        // while that commit is): eight more items start, none committed, all leased to this worker.
        target = started + 8;
        if (started >= target) more.open();
        await more.promise;
        expect(resolves).toHaveLength(1);
        const inFlight = (await inst.work.list({ status: 'in_flight', limit: 100 })).filter(
          (i) => i.lease_owner === w.id,
        );
        expect(inFlight.length).toBeGreaterThanOrEqual(target);
        expect((await inst.work.counts()).done).toBe(0);
        release.open();
        await done;
        expect((await inst.work.counts()).done).toBe(40);
      } finally {
        await inst.close();
      }
    });

    it('completions of many handlers that finish together land in one resolve transaction', async () => {
      const inst = await backend.open();
      try {
        const n = 300;
        await inst.work.enqueueMany(Array.from({ length: n }, (_, k) => ({ title: `g${k}` })));
        const finish = gate();
        const allStarted = gate();
        let started = 0;
        const w = createWorker({
          instance: inst,
          handlers: {
            '*': async () => {
              if (++started === n) allStarted.open();
              await finish.promise;
              return 'ok';
            },
          },
          concurrency: n,
          prefetch: n,
          leaseMs: LONG,
          pollIntervalMs: 5,
        });
        const done = w.drain();
        await allStarted.promise;
        finish.open();
        await done;
        expect((await inst.work.counts()).done).toBe(n);
        // With the defaults: one commit for all of them (not one per batch of 100, not one per handler).
        expect(await resolveEvents(inst)).toEqual([n]);
      } finally {
        await inst.close();
      }
    });

    it('a busy drain with the defaults commits in batches of hundreds, not of what finished since the last', async () => {
      const inst = await backend.open();
      try {
        const n = 2_000;
        await inst.work.enqueueMany(Array.from({ length: n }, (_, k) => ({ title: `d${k}` })));
        await createWorker({
          instance: inst,
          handlers: { '*': () => null },
          concurrency: 8,
          leaseMs: LONG,
          pollIntervalMs: 5,
        }).drain();
        expect((await inst.work.counts()).done).toBe(n);
        // Each commit takes what finished while the previous one ran (on SQLite, whose calls never yield,
        // a full batch of 500): at least 100 a transaction on average, on either backend.
        expect((await resolveEvents(inst)).length).toBeLessThanOrEqual(n / 100);
      } finally {
        await inst.close();
      }
    });

    it('pauses its claims while a full batch of completions waits for its commit', async () => {
      const inst = await backend.open();
      try {
        await inst.work.enqueueMany(Array.from({ length: 60 }, (_, k) => ({ title: `b${k}` })));
        const release = gate();
        const { work, firstResolve } = watched(inst, release.promise);
        let claimed = 0;
        const w = createWorker({
          instance: { work },
          handlers: { '*': () => null },
          concurrency: 2,
          prefetch: 2,
          batchSize: 4,
          leaseMs: LONG,
          pollIntervalMs: 5,
        });
        const manyClaimed = gate();
        w.on('claimed', (items) => {
          claimed += items.length;
          if (claimed >= 30) manyClaimed.open();
        });
        const done = w.drain();
        await firstResolve;
        // While the first commit is held the worker may hold at most: the batch in it, a batch waiting, and
        // what ran meanwhile. Without the pause it goes on to claim everything; the window ends there, or
        // after a while.
        const window = setTimeout(() => manyClaimed.open(), 1_000);
        await manyClaimed.promise;
        clearTimeout(window);
        const whileHeld = claimed;
        release.open();
        await done;
        expect(whileHeld).toBeLessThanOrEqual(4 + 4 + 2 * 2);
        expect((await inst.work.counts()).done).toBe(60);
      } finally {
        await inst.close();
      }
    });

    it("the 'auto' prefetch grows once the first runs ended: its second claim holds more than it runs", async () => {
      const inst = await backend.open();
      try {
        await inst.work.enqueueMany(Array.from({ length: 100 }, (_, k) => ({ title: `a${k}` })));
        const { work, claims } = watched(inst);
        await createWorker({
          instance: { work },
          handlers: { '*': () => null },
          concurrency: 2,
          leaseMs: LONG,
          pollIntervalMs: 5,
        }).drain();
        expect((await inst.work.counts()).done).toBe(100);
        // No run has ended before the first claim: it takes what the slots run. Fast runs, then a deep queue.
        expect(claims[0]).toEqual({ limit: 2, got: 2 });
        expect(claims[1]!.limit).toBeGreaterThan(2);
        expect(claims[1]!.got).toBe(98);
      } finally {
        await inst.close();
      }
    });

    it('stop() while a claim is under way: the claim ends first, its items are released, none runs', async () => {
      const inst = await backend.open();
      try {
        await inst.work.enqueueMany(Array.from({ length: 6 }, (_, k) => ({ title: `s${k}` })));
        // The first claim has taken its items from the store but not yet handed them to the worker.
        const taken = gate<number>();
        const handOver = gate();
        let first = true;
        const work = new Proxy(inst.work, {
          get(target, prop, receiver) {
            if (prop === 'claimMany') {
              return async (i: Parameters<WorkQueue['claimMany']>[0]) => {
                const got = await target.claimMany(i);
                if (first) {
                  first = false;
                  taken.open(got.length);
                  await handOver.promise;
                }
                return got;
              };
            }
            const v = Reflect.get(target, prop, receiver);
            return typeof v === 'function' ? v.bind(target) : v;
          },
        });
        let ran = 0;
        const released: string[] = [];
        const w = createWorker({
          instance: { work },
          handlers: {
            '*': () => {
              ran += 1;
            },
          },
          concurrency: 2,
          prefetch: 6,
          leaseMs: LONG,
          pollIntervalMs: 5,
        });
        w.on('released', (item) => released.push(item.id));
        const running = w.start();
        expect(await taken.promise).toBe(6);
        expect((await inst.work.counts()).in_flight).toBe(6);
        let stopped = false;
        const stopping = w.stop().then(() => {
          stopped = true;
        });
        // stop() waits for the claim under way rather than leaving its leases behind.
        await new Promise((r) => setTimeout(r, 20));
        expect(stopped).toBe(false);
        handOver.open();
        await stopping;
        await running;
        expect(ran).toBe(0);
        expect(released).toHaveLength(6);
        const counts = await inst.work.counts();
        expect(counts.in_flight).toBe(0);
        expect(counts.pending).toBe(6);
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
      }
    });

    it('a listener that throws stops the worker: start() rejects with it, what it held is released', async () => {
      const inst = await backend.open();
      try {
        await inst.work.enqueueMany(Array.from({ length: 5 }, (_, k) => ({ title: `l${k}` })));
        const w = createWorker({
          instance: inst,
          handlers: { '*': () => null },
          concurrency: 1,
          prefetch: 5,
          leaseMs: LONG,
          pollIntervalMs: 5,
        });
        w.on('claimed', () => {
          throw new Error('listener failed');
        });
        await expect(w.drain()).rejects.toThrow('listener failed');
        expect(w.held).toBe(0);
        const counts = await inst.work.counts();
        expect(counts.in_flight).toBe(0);
        expect(counts.pending + counts.done).toBe(5);
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
      }
    });
  });
}
