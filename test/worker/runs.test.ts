// Durable runs in the worker runtime, on every backend: ctx.step's records survive a failed attempt (the
// retry returns them without running the steps again), a durable sleep frees the slot for the next item at
// concurrency 1 and the run continues after it, and a lease lost under a step aborts the handler with nothing
// recorded or resolved. Times come from an injected clock; nothing waits on wall time.
import { describe, expect, it } from 'vitest';
import { resumeAgent } from '../../src/service/operations/resume.js';
import { createWorker } from '../../src/worker/worker.js';
import { backendsForThisFile } from '../helpers/backends.js';

const LONG = 3_600_000;

for (const backend of await backendsForThisFile()) {
  describe(`durable runs in the worker on ${backend.name}`, () => {
    it('a failed attempt’s completed steps are not run again by its retry', async () => {
      const inst = await backend.open();
      try {
        const item = await inst.work.enqueue({ title: 'charge the card', max_attempts: 3 });
        const calls = { model: 0, charge: 0 };
        const keys: string[] = [];
        const w = createWorker({
          instance: inst,
          retry: { baseMs: 0 },
          leaseMs: LONG,
          pollIntervalMs: 5,
          handlers: {
            '*': async (_item, ctx) => {
              const plan = await ctx.step('call-model', () => {
                calls.model++;
                return { amount: 4200 };
              });
              const charge = await ctx.step('charge', (s) => {
                calls.charge++;
                keys.push(s.key);
                return { id: 'ch_1', amount: plan.amount };
              });
              if (ctx.attempt === 1) throw new Error('crashed after the charge');
              return charge;
            },
          },
        });
        await w.drain();
        const done = await inst.work.get(item.id);
        expect(done).toMatchObject({ status: 'done', attempts: 2, result: { id: 'ch_1', amount: 4200 } });
        expect(calls).toEqual({ model: 1, charge: 1 });
        expect((await inst.work.steps(item.id)).map((r) => r.type === 'step' && [r.name, r.attempt])).toEqual(
          [
            ['call-model', 1],
            ['charge', 1],
          ],
        );
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
      }
    });

    it('at concurrency 1 a sleeping item frees the slot for the next; after its time the run continues', async () => {
      let now = Date.parse('2026-12-06T09:00:00.000Z');
      const inst = await backend.open(undefined, { clock: () => now });
      try {
        const sleeper = await inst.work.enqueue({ title: 'follow up tomorrow', kind: 'mail', priority: 1 });
        const other = await inst.work.enqueue({ title: 'answer now', kind: 'mail' });
        const ran: string[] = [];
        const suspended: string[] = [];
        const worker = () => {
          const w = createWorker({
            instance: inst,
            concurrency: 1,
            leaseMs: LONG,
            pollIntervalMs: 5,
            handlers: {
              mail: async (item, ctx) => {
                ran.push(`${item.title}#${ctx.attempt}`);
                if (item.id !== sleeper.id) return 'answered';
                const draft = await ctx.step('draft', () => `draft at ${new Date(now).toISOString()}`);
                await ctx.sleep('until tomorrow', '1d');
                return await ctx.step('send', () => `sent ${draft}`);
              },
            },
          });
          w.on('suspended', (i, until) => suspended.push(`${i.id} ${until}`));
          return w;
        };
        const w = worker();
        await w.drain();
        expect(ran).toEqual(['follow up tomorrow#1', 'answer now#1']);
        expect(suspended).toEqual([`${sleeper.id} 2026-12-07T09:00:00.000Z`]);
        expect(await inst.work.get(other.id)).toMatchObject({ status: 'done' });
        expect(await inst.work.get(sleeper.id)).toMatchObject({
          status: 'pending',
          attempts: 1,
          lease_owner: null,
          not_before: '2026-12-07T09:00:00.000Z',
        });
        expect(w.held).toBe(0);
        now += 86_400_000;
        await worker().drain();
        expect(ran).toEqual(['follow up tomorrow#1', 'answer now#1', 'follow up tomorrow#2']);
        expect(await inst.work.get(sleeper.id)).toMatchObject({
          status: 'done',
          attempts: 2,
          result: 'sent draft at 2026-12-06T09:00:00.000Z',
        });
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
      }
    });

    it('at concurrency 1 an item waiting for a signal frees the slot; the signal wakes it and the run goes on with its payload', async () => {
      const inst = await backend.open();
      try {
        const waiter = await inst.work.enqueue({ title: 'deploy once approved', priority: 1 });
        const other = await inst.work.enqueue({ title: 'meanwhile' });
        const ran: string[] = [];
        const worker = () =>
          createWorker({
            instance: inst,
            concurrency: 1,
            leaseMs: LONG,
            pollIntervalMs: 5,
            handlers: {
              '*': async (item, ctx) => {
                ran.push(`${item.title}#${ctx.attempt}`);
                if (item.id !== waiter.id) return 'done meanwhile';
                const built = await ctx.step('build', () => 'artifact-1');
                const approval = await ctx.waitFor('approved', { timeout: '7d' });
                if (approval.timedOut) return 'not approved in time';
                return await ctx.step('deploy', () => `${built} deployed, approved by ${approval.sentBy}`);
              },
            },
          });
        await worker().drain();
        expect(ran).toEqual(['deploy once approved#1', 'meanwhile#1']);
        expect(await inst.work.get(other.id)).toMatchObject({ status: 'done' });
        expect(await inst.work.get(waiter.id)).toMatchObject({ status: 'pending', attempts: 1 });
        await inst.work.signal({
          id: waiter.id,
          name: 'approved',
          payload: { ok: true },
          actor: 'ada',
          actor_kind: 'human',
        });
        await worker().drain();
        expect(ran).toEqual(['deploy once approved#1', 'meanwhile#1', 'deploy once approved#2']);
        expect(await inst.work.get(waiter.id)).toMatchObject({
          status: 'done',
          result: 'artifact-1 deployed, approved by ada',
        });
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
      }
    });

    it('at concurrency 1 a parent joining its children holds no slot: the children run, their ends wake it, it sums them', async () => {
      const inst = await backend.open();
      try {
        const parent = await inst.work.enqueue({ title: 'sum of squares', kind: 'parent', priority: 5 });
        let spawnedTwice = false;
        const w = createWorker({
          instance: inst,
          concurrency: 1,
          leaseMs: LONG,
          pollIntervalMs: 5,
          handlers: {
            parent: async (_item, ctx) => {
              const ids = await ctx.spawn(
                'squares',
                [1, 2, 3].map((n) => ({ title: `square ${n}`, kind: 'square', payload: n })),
              );
              if (ids.length !== 3) spawnedTwice = true;
              const children = await ctx.join('squares');
              return children.reduce((sum, c) => sum + (c.result as number), 0);
            },
            square: (item) => (item.payload as number) ** 2,
          },
        });
        await w.drain();
        expect(await inst.work.get(parent.id)).toMatchObject({ status: 'done', result: 14 });
        expect(spawnedTwice).toBe(false);
        expect((await inst.work.list({ kind: 'square' })).map((i) => i.status)).toEqual([
          'done',
          'done',
          'done',
        ]);
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
      }
    });

    it('ask: the run waits for a person, holding nothing; a human answer wakes it with the answer', async () => {
      const inst = await backend.open();
      try {
        const item = await inst.work.enqueue({ title: 'refund' });
        const worker = () =>
          createWorker({
            instance: inst,
            leaseMs: LONG,
            pollIntervalMs: 5,
            handlers: {
              '*': async (_i, ctx) => {
                const a = await ctx.ask('approve', { question: 'Refund 42 €?', options: ['yes', 'no'] });
                return a.status === 'done'
                  ? `refunded: ${JSON.stringify(a.answer)}`
                  : `declined: ${a.reason}`;
              },
            },
          });
        await worker().drain();
        const [question] = await inst.work.list({ status: 'waiting_human' });
        expect(question).toMatchObject({ title: 'Refund 42 €?' });
        await inst.work.resolve({
          id: question!.id,
          status: 'done',
          result: 'yes',
          actor: 'ada',
          actor_kind: 'human',
        });
        await worker().drain();
        expect(await inst.work.get(item.id)).toMatchObject({ status: 'done', result: 'refunded: "yes"' });
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
      }
    });

    it('resume tells an agent where the runs it holds are: records, and the last in a few words', async () => {
      const inst = await backend.open();
      try {
        const a = await inst.work.enqueue({ title: 'with steps' });
        const b = await inst.work.enqueue({ title: 'without' });
        const held = await inst.work.claimMany({ worker: 'agent-1', limit: 2 });
        const ha = held.find((i) => i.id === a.id)!;
        const run = await inst.work.run({ id: a.id, worker: 'agent-1', attempt: ha.attempts });
        await run.step('plan', () => 1);
        await run.step('call-model', () => 2);
        await run.step('call-model', () => 3);
        const r = await resumeAgent(inst, { worker: 'agent-1' });
        const byId = new Map(r.held.map((h) => [h.id, h]));
        expect(byId.get(a.id)).toMatchObject({
          run: { recorded: 3, last: 'step "call-model" #2 completed' },
        });
        expect(byId.get(b.id)).not.toHaveProperty('run');
        const full = await resumeAgent(inst, { worker: 'agent-1', full: true });
        expect(full.held.find((h) => h.id === a.id)).toMatchObject({
          title: 'with steps',
          run: { recorded: 3 },
        });
      } finally {
        await inst.close();
      }
    });

    it('a lease lost under a step aborts the handler: nothing recorded, nothing resolved, the item stays the new holder’s', async () => {
      let now = Date.parse('2026-12-06T09:00:00.000Z');
      const inst = await backend.open(undefined, { clock: () => now });
      try {
        const item = await inst.work.enqueue({ title: 'slow one' });
        let aborted = false;
        let stepRan = false;
        const lost: string[] = [];
        const w = createWorker({
          instance: inst,
          leaseMs: 1000,
          pollIntervalMs: 5,
          handlers: {
            '*': async (_i, ctx) => {
              // The lease runs out (by the store's clock) and another worker takes the item.
              now += 2000;
              await inst.work.claim({ worker: 'thief' });
              ctx.signal.addEventListener('abort', () => {
                aborted = true;
              });
              await ctx.step('write', () => {
                stepRan = true;
                return 1;
              });
              return 'never committed';
            },
          },
        });
        w.on('lost', (id) => lost.push(id));
        await w.drain();
        expect(stepRan).toBe(true);
        expect(aborted).toBe(true);
        expect(lost).toEqual([item.id]);
        expect(await inst.work.steps(item.id)).toEqual([]);
        expect(await inst.work.get(item.id)).toMatchObject({
          status: 'in_flight',
          lease_owner: 'thief',
          attempts: 2,
        });
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
      }
    });
  });
}
