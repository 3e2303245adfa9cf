// Store conformance, durable runs: a step's result is recorded under the attempt's lease and returned by every
// later attempt without running it again; occurrences tell a loop's steps apart; a stale attempt records
// nothing; failed steps and step retries; a durable sleep hands the item back without spending an attempt;
// a changed handler is STEP_MISMATCH; a person's reset re-runs a step and what follows. Every test ends with
// a clean verify, whose fold checks each record against the lease of its attempt.
import { describe, expect } from 'vitest';
import { isSuspended, JoinFailed, type RunSuspended } from '../../src/core/runs/errors.js';
import type { WorkItem } from '../../src/core/types.js';
import { type ConformanceTest, type Ctx, eventCount, expectCode, T0 } from './setup.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** Claims `id` as `worker` (a minute's lease by default). */
async function claim(c: Ctx, worker: string, lease_ms = 60_000): Promise<WorkItem> {
  const item = await c.work.claim({ worker, lease_ms });
  if (!item) throw new Error(`${worker} claimed nothing`);
  return item;
}

/** Notes the key a step was given under `name`, and returns `value` (the step's result). */
function keep<T>(keys: Record<string, string>, name: string, key: string, value: T): T {
  keys[name] = key;
  return value;
}

async function suspension(p: Promise<unknown>): Promise<RunSuspended> {
  try {
    await p;
  } catch (err) {
    if (isSuspended(err)) return err;
    throw err;
  }
  throw new Error('expected the run to be suspended, but the call returned');
}

export function runConformance(name: string, t: ConformanceTest): void {
  describe(`${name}: durable runs`, () => {
    t(
      'a completed step is recorded before it returns, and a later attempt gets the record without running it',
      async (c) => {
        const item = await c.work.enqueue({ title: 'charge', max_attempts: 3 });
        const a1 = await claim(c, 'w1', 1000);
        let calls = 0;
        const run1 = await c.work.run({ id: item.id, worker: 'w1', attempt: a1.attempts });
        const charged = await run1.step('charge', (s) => {
          calls++;
          return { charge: 'ch_1', key: s.key, when: new Date(T0) };
        });
        // Returned as stored: the Date as its ISO string, on the first run as on replay.
        expect(charged).toEqual({
          charge: 'ch_1',
          key: expect.stringMatching(/^as1_[\w-]{39}$/),
          when: iso(T0),
        });
        // The worker dies here; its lease runs out and another takes the item.
        c.advance(1001);
        const a2 = await claim(c, 'w2');
        expect(a2.attempts).toBe(2);
        const run2 = await c.work.run({ id: item.id, worker: 'w2', attempt: a2.attempts });
        const again = await run2.step('charge', () => {
          calls++;
          return { charge: 'ch_2' };
        });
        expect(again).toEqual(charged);
        expect(calls).toBe(1);
        const records = await c.work.steps(item.id);
        expect(records).toEqual([
          expect.objectContaining({
            type: 'step',
            status: 'completed',
            seq: 1,
            name: 'charge',
            occurrence: 1,
            attempt: 1,
            worker: 'w1',
            result: charged,
            tries: 1,
          }),
        ]);
        await c.work.resolve({ id: item.id, worker: 'w2', attempt: 2, status: 'done', result: again });
      },
    );

    t(
      'steps of one name in a loop are told apart by occurrence; their keys are stable across attempts',
      async (c) => {
        const item = await c.work.enqueue({ title: 'agent loop' });
        const a1 = await claim(c, 'w1', 1000);
        const keys1: string[] = [];
        for (let turn = 0; turn < 3; turn++) {
          await c.work.step({ id: item.id, worker: 'w1', attempt: a1.attempts, name: 'call-model' }, (s) => {
            keys1.push(s.key);
            expect(s).toMatchObject({
              name: 'call-model',
              occurrence: turn + 1,
              seq: turn + 1,
              attempt: 1,
              try: 1,
            });
            return `answer ${turn}`;
          });
        }
        expect(new Set(keys1).size).toBe(3);
        c.advance(1001);
        const a2 = await claim(c, 'w2');
        const run = await c.work.run({ id: item.id, worker: 'w2', attempt: a2.attempts });
        const replayed: unknown[] = [];
        for (let turn = 0; turn < 3; turn++) replayed.push(await run.step('call-model', () => 'ran again'));
        expect(replayed).toEqual(['answer 0', 'answer 1', 'answer 2']);
        // The fourth turn is new: it runs, with a key of its own.
        let fourthKey = '';
        expect(
          await run.step('call-model', (s) => {
            fourthKey = s.key;
            return 'answer 3';
          }),
        ).toBe('answer 3');
        expect(keys1).not.toContain(fourthKey);
        expect(
          (await c.work.steps(item.id)).map((r) => r.type === 'step' && [r.occurrence, r.attempt]),
        ).toEqual([
          [1, 1],
          [2, 1],
          [3, 1],
          [4, 2],
        ]);
        await c.work.resolve({ id: item.id, worker: 'w2', attempt: 2, status: 'done' });
      },
    );

    t(
      'a stale attempt’s step is LEASE_LOST and leaves no record; the current attempt runs the step',
      async (c) => {
        const item = await c.work.enqueue({ title: 'slow model call' });
        const a1 = await claim(c, 'w1', 1000);
        const stale = await c.work.run({ id: item.id, worker: 'w1', attempt: a1.attempts });
        c.advance(1001);
        const a2 = await claim(c, 'w2');
        const before = await eventCount(c);
        let staleRan = false;
        await expectCode(
          stale.step('call', () => {
            staleRan = true;
            return 'stale answer';
          }),
          'LEASE_LOST',
        );
        // fn ran (the lease ran out under it), but nothing of it was recorded.
        expect(staleRan).toBe(true);
        expect(await eventCount(c)).toBe(before);
        expect(await c.work.steps(item.id)).toEqual([]);
        // The same worker name on an older attempt is fenced too (the attempt is the token).
        await expectCode(
          c.work.step({ id: item.id, worker: 'w2', attempt: 1, name: 'call' }, () => 'x'),
          'LEASE_LOST',
        );
        const run = await c.work.run({ id: item.id, worker: 'w2', attempt: a2.attempts });
        expect(await run.step('call', () => 'fresh answer')).toBe('fresh answer');
        await c.work.resolve({ id: item.id, worker: 'w2', attempt: 2, status: 'done' });
      },
    );

    t(
      'a step retries inside its attempt; when its tries are spent it is recorded failed and the next attempt runs it again',
      async (c) => {
        const item = await c.work.enqueue({ title: 'flaky API', max_attempts: 2 });
        const a1 = await claim(c, 'w1');
        const run1 = await c.work.run({ id: item.id, worker: 'w1', attempt: a1.attempts });
        let tries = 0;
        expect(
          await run1.step(
            'fetch',
            (s) => {
              tries++;
              if (s.try < 3) throw new Error(`503 on try ${s.try}`);
              return 'fetched';
            },
            { attempts: 3, backoffMs: 0 },
          ),
        ).toBe('fetched');
        expect(tries).toBe(3);
        await expect(
          run1.step(
            'post',
            () => {
              throw new Error('422 Unprocessable');
            },
            { attempts: 2, backoffMs: 0 },
          ),
        ).rejects.toThrow('422 Unprocessable');
        await c.work.resolve({
          id: item.id,
          worker: 'w1',
          attempt: 1,
          status: 'failed',
          error: '422',
          retry_at: '0s',
        });
        const a2 = await claim(c, 'w1');
        const run2 = await c.work.run({ id: item.id, worker: 'w1', attempt: a2.attempts });
        expect(await run2.step('fetch', () => 'not again')).toBe('fetched');
        expect(await run2.step('post', () => 'posted')).toBe('posted');
        const records = await c.work.steps(item.id);
        expect(
          records.map((r) => (r.type === 'step' ? [r.name, r.status, r.attempt, r.tries] : r.type)),
        ).toEqual([
          ['fetch', 'completed', 1, 3],
          ['post', 'failed', 1, 2],
          ['post', 'completed', 2, 1],
        ]);
        expect(records[1]).toMatchObject({ error: '422 Unprocessable' });
        await c.work.resolve({ id: item.id, worker: 'w1', attempt: 2, status: 'done' });
      },
    );

    t(
      'a durable sleep hands the item back until its time without spending an attempt; the run continues after it',
      async (c) => {
        const item = await c.work.enqueue({ title: 'remind me', max_attempts: 2 });
        const a1 = await claim(c, 'w1');
        const run1 = await c.work.run({ id: item.id, worker: 'w1', attempt: a1.attempts });
        let drafted = 0;
        await run1.step('draft', () => ++drafted);
        const s = await suspension(run1.sleep('wait a day', '1d'));
        expect(s.until).toBe(iso(T0 + 86_400_000));
        const back = await c.work.get(item.id);
        expect(back).toMatchObject({
          status: 'pending',
          lease_owner: null,
          attempts: 1,
          max_attempts: 3,
          not_before: iso(T0 + 86_400_000),
        });
        // The attempt is over: its lease is gone.
        await expectCode(
          run1.step('after', () => 1),
          'LEASE_LOST',
        );
        c.advance(86_399_999);
        expect(await c.work.claim({ worker: 'w2' })).toBeNull();
        c.advance(1);
        const a2 = await claim(c, 'w2');
        const run2 = await c.work.run({ id: item.id, worker: 'w2', attempt: a2.attempts });
        expect(await run2.step('draft', () => ++drafted)).toBe(1);
        await run2.sleep('wait a day', '1d');
        expect(await run2.step('send', () => 'sent')).toBe('sent');
        expect(drafted).toBe(1);
        const records = await c.work.steps(item.id);
        expect(records.map((r) => r.type === 'reset' || [r.type, r.name, r.attempt])).toEqual([
          ['step', 'draft', 1],
          ['sleep', 'wait a day', 1],
          ['step', 'send', 2],
        ]);
        expect(records[1]).toMatchObject({ wake_at: iso(T0 + 86_400_000) });
        const done = await c.work.resolve({ id: item.id, worker: 'w2', attempt: 2, status: 'done' });
        expect(done.attempts).toBe(2);
      },
    );

    t('sleepUntil a time already past returns at once and records nothing', async (c) => {
      const item = await c.work.enqueue({ title: 'late' });
      const a = await claim(c, 'w1');
      const run = await c.work.run({ id: item.id, worker: 'w1', attempt: a.attempts });
      const before = await eventCount(c);
      await run.sleepUntil('deadline', new Date(T0 - 1));
      expect(await eventCount(c)).toBe(before);
      await c.work.resolve({ id: item.id, worker: 'w1', attempt: 1, status: 'done' });
    });

    t('a handler that changed under its run is STEP_MISMATCH naming the place and both names', async (c) => {
      const item = await c.work.enqueue({ title: 'changed code' });
      const a1 = await claim(c, 'w1', 1000);
      const run1 = await c.work.run({ id: item.id, worker: 'w1', attempt: a1.attempts });
      await run1.step('plan', () => 'the plan');
      await run1.step('act', () => 'acted');
      c.advance(1001);
      const a2 = await claim(c, 'w2');
      const run2 = await c.work.run({ id: item.id, worker: 'w2', attempt: a2.attempts });
      expect(await run2.step('plan', () => 'x')).toBe('the plan');
      let ran = false;
      const details = await expectCode(
        run2.step('review', () => {
          ran = true;
        }),
        'STEP_MISMATCH',
      );
      expect(ran).toBe(false);
      expect(details).toEqual({
        id: item.id,
        seq: 2,
        recorded: { type: 'step', name: 'act', occurrence: 1 },
        called: { type: 'step', name: 'review', occurrence: 1 },
      });
      // A sleep where a step was recorded is a mismatch too.
      const run3 = await c.work.run({ id: item.id, worker: 'w2', attempt: a2.attempts });
      await expectCode(run3.sleep('plan', '1m'), 'STEP_MISMATCH');
      await c.work.resolve({ id: item.id, worker: 'w2', attempt: 2, status: 'done' });
    });

    t(
      'a person’s reset re-runs the step and everything after it, with new keys; only while the item is not in flight',
      async (c) => {
        const item = await c.work.enqueue({ title: 'report', max_attempts: 5 });
        const a1 = await claim(c, 'w1');
        const run1 = await c.work.run({ id: item.id, worker: 'w1', attempt: a1.attempts });
        const keys: Record<string, string> = {};
        await run1.step('gather', (s) => keep(keys, 'gather1', s.key, 'facts'));
        await run1.step('write', (s) => keep(keys, 'write1', s.key, 'bad draft'));
        await run1.step('polish', () => 'polished bad draft');
        await expectCode(
          c.work.resetStep({ id: item.id, name: 'write', actor: 'ada', actor_kind: 'human' }),
          'INVALID_TRANSITION',
        );
        await c.work.resolve({
          id: item.id,
          worker: 'w1',
          attempt: 1,
          status: 'failed',
          error: 'bad',
          retry_at: '0s',
        });
        await expectCode(c.work.resetStep({ id: item.id, name: 'nope', actor: 'ada' }), 'NOT_FOUND');
        // Running a step again may repeat what it did outside: never a model's decision.
        await expectCode(
          c.work.resetStep({ id: item.id, name: 'write', actor: 'gpt', actor_kind: 'model' }),
          'PERMISSION_DENIED',
        );
        await expectCode(c.work.resetStep({ id: 'wi_missing', name: 'write', actor: 'ada' }), 'NOT_FOUND');
        const reset = await c.work.resetStep({
          id: item.id,
          name: 'write',
          reason: 'the draft was wrong',
          actor: 'ada',
          actor_kind: 'human',
        });
        expect(reset).toMatchObject({
          type: 'reset',
          from_seq: 2,
          name: 'write',
          occurrence: 1,
          actor: 'ada',
          actor_kind: 'human',
          reason: 'the draft was wrong',
        });
        const a2 = await claim(c, 'w1');
        const run2 = await c.work.run({ id: item.id, worker: 'w1', attempt: a2.attempts });
        expect(await run2.step('gather', (s) => keep(keys, 'gather2', s.key, 'again'))).toBe('facts');
        expect(await run2.step('write', (s) => keep(keys, 'write2', s.key, 'good draft'))).toBe('good draft');
        expect(await run2.step('polish', () => 'polished good draft')).toBe('polished good draft');
        expect(keys.gather2).toBeUndefined();
        expect(keys.write2).not.toBe(keys.write1);
        const events = await c.events.read({ work_item_id: item.id, type: 'work_step_reset' });
        expect(events).toEqual([
          expect.objectContaining({ actor: 'ada', data: expect.objectContaining({ actor_kind: 'human' }) }),
        ]);
        await c.work.resolve({ id: item.id, worker: 'w1', attempt: 2, status: 'done' });
      },
    );

    t(
      'a signal sent before the wait is kept for it: the wait returns it at once, and every later attempt the same',
      async (c) => {
        const item = await c.work.enqueue({ title: 'deploy after approval' });
        const sent = await c.work.signal({
          id: item.id,
          name: 'approved',
          payload: { by: 'ada', note: 'ship it ü' },
          actor: 'ada',
          actor_kind: 'human',
        });
        expect(sent).toMatchObject({ type: 'signal', name: 'approved', actor: 'ada', actor_kind: 'human' });
        const a1 = await claim(c, 'w1', 1000);
        const run1 = await c.work.run({ id: item.id, worker: 'w1', attempt: a1.attempts });
        const got = await run1.waitFor('approved', { timeout: '1d' });
        expect(got).toEqual({
          timedOut: false,
          payload: { by: 'ada', note: 'ship it ü' },
          sentBy: 'ada',
          position: sent.position,
        });
        c.advance(1001);
        const a2 = await claim(c, 'w2');
        const run2 = await c.work.run({ id: item.id, worker: 'w2', attempt: a2.attempts });
        expect(await run2.waitFor('approved')).toEqual(got);
        expect((await c.work.steps(item.id)).map((r) => r.type)).toEqual(['waited']);
        await c.work.resolve({ id: item.id, worker: 'w2', attempt: 2, status: 'done' });
      },
    );

    t(
      'a wait hands the item back until its signal wakes it; one wait takes one signal, in order',
      async (c) => {
        const item = await c.work.enqueue({ title: 'two approvals', max_attempts: 2 });
        const a1 = await claim(c, 'w1');
        const run1 = await c.work.run({ id: item.id, worker: 'w1', attempt: a1.attempts });
        const s1 = await suspension(run1.waitFor('approved'));
        expect(s1.until).toBe('9999-12-31T23:59:59.999Z');
        expect(await c.work.get(item.id)).toMatchObject({
          status: 'pending',
          lease_owner: null,
          attempts: 1,
          max_attempts: 3,
        });
        c.advance(86_400_000);
        expect(await c.work.claim({ worker: 'w2' })).toBeNull();
        // A signal of another name is kept, and wakes nothing.
        await c.work.signal({ id: item.id, name: 'rejected', payload: 'no' });
        expect(await c.work.claim({ worker: 'w2' })).toBeNull();
        await c.work.signal({ id: item.id, name: 'approved', payload: 1 });
        expect((await c.work.get(item.id)).not_before).toBe(iso(c.now()));
        const a2 = await claim(c, 'w2');
        const run2 = await c.work.run({ id: item.id, worker: 'w2', attempt: a2.attempts });
        expect(await run2.waitFor('approved')).toMatchObject({ timedOut: false, payload: 1 });
        // The second wait of the name takes the second signal: not there yet.
        await suspension(run2.waitFor('approved'));
        await c.work.signal({ id: item.id, name: 'approved', payload: 2 });
        await c.work.signal({ id: item.id, name: 'approved', payload: 3 });
        const a3 = await claim(c, 'w3');
        const run3 = await c.work.run({ id: item.id, worker: 'w3', attempt: a3.attempts });
        expect(await run3.waitFor('approved')).toMatchObject({ payload: 1 });
        expect(await run3.waitFor('approved')).toMatchObject({ payload: 2 });
        expect(await run3.waitFor('approved')).toMatchObject({ payload: 3 });
        expect(await run3.waitFor('rejected', { timeout: 0 })).toMatchObject({ payload: 'no' });
        expect(
          (await c.work.steps(item.id)).map((r) => r.type !== 'reset' && [r.type, r.seq, r.attempt]),
        ).toEqual([
          ['waiting', 1, 1],
          ['waited', 1, 2],
          ['waiting', 2, 2],
          ['waited', 2, 3],
          ['waited', 3, 3],
          ['waited', 4, 3],
        ]);
        await c.work.resolve({ id: item.id, worker: 'w3', attempt: a3.attempts, status: 'done' });
      },
    );

    t(
      'a wait with a timeout ends timed out when no signal came; a later signal is kept for the next wait',
      async (c) => {
        const item = await c.work.enqueue({ title: 'wait an hour at most' });
        const a1 = await claim(c, 'w1');
        const run1 = await c.work.run({ id: item.id, worker: 'w1', attempt: a1.attempts });
        const s = await suspension(run1.waitFor('reply', { timeout: '1h' }));
        expect(s.until).toBe(iso(T0 + 3_600_000));
        c.advance(3_599_999);
        expect(await c.work.claim({ worker: 'w2' })).toBeNull();
        c.advance(1);
        const a2 = await claim(c, 'w2');
        const run2 = await c.work.run({ id: item.id, worker: 'w2', attempt: a2.attempts });
        expect(await run2.waitFor('reply', { timeout: '1h' })).toEqual({ timedOut: true });
        await c.work.signal({ id: item.id, name: 'reply', payload: 'late' });
        expect(await run2.waitFor('reply')).toMatchObject({ timedOut: false, payload: 'late' });
        await c.work.resolve({ id: item.id, worker: 'w2', attempt: 2, status: 'done' });
      },
    );

    t(
      'a signal never wakes a sleep; a signal that came while the wait was being handed back is taken, not slept through',
      async (c) => {
        const item = await c.work.enqueue({ title: 'sleepy' });
        const a1 = await claim(c, 'w1');
        const run1 = await c.work.run({ id: item.id, worker: 'w1', attempt: a1.attempts });
        await suspension(run1.sleep('nap', '1h'));
        await c.work.signal({ id: item.id, name: 'nap', payload: null });
        expect((await c.work.get(item.id)).not_before).toBe(iso(T0 + 3_600_000));
        // The store refuses to hand an item back for a wait whose signal is already there.
        const other = await c.work.enqueue({ title: 'raced' });
        const held = await c.work.claim({ worker: 'w9', id: other.id });
        await c.work.signal({ id: other.id, name: 'go' });
        const [o] = await c.backend.work.record([
          {
            id: other.id,
            lease: { worker: 'w9', attempt: held!.attempts },
            events: [],
            release: { not_before: c.now() + 1000, actor: 'w9', actor_kind: 'system' },
            unless: { signal: 'go', count: 1 },
            now: c.now(),
          },
        ]);
        expect(o).toMatchObject({
          ok: false,
          error: { code: 'STATE_CONFLICT', details: { reason: 'signal_arrived' } },
        });
        expect(await c.work.get(other.id)).toMatchObject({ status: 'in_flight', lease_owner: 'w9' });
        await c.work.resolve({ id: other.id, worker: 'w9', attempt: held!.attempts, status: 'done' });
      },
    );

    t(
      'signals to unknown or finished items, bad names and payloads over the limit are refused with nothing written',
      async (c) => {
        const item = await c.work.enqueue({ title: 'target' });
        const before = await eventCount(c);
        await expectCode(c.work.signal({ id: 'wi_unknown', name: 'go' }), 'NOT_FOUND');
        for (const name of ['__proto__', 'x'.repeat(10_000), 'a\u0000b', '']) {
          await expectCode(c.work.signal({ id: item.id, name }), 'INVALID_INPUT');
        }
        await expectCode(
          c.work.signal({ id: item.id, name: 'big', payload: 'x'.repeat(10 * 1024 * 1024) }),
          'INVALID_INPUT',
        );
        await expectCode(c.work.signal({ id: item.id, name: 'go', unknown: 1 } as never), 'INVALID_INPUT');
        expect(await eventCount(c)).toBe(before);
        await c.work.cancel({ id: item.id });
        const after = await eventCount(c);
        await expectCode(c.work.signal({ id: item.id, name: 'go' }), 'INVALID_TRANSITION');
        expect(await eventCount(c)).toBe(after);
      },
    );

    t(
      'child runs: spawn enqueues once across attempts, join waits durably and returns them in order; their ends wake it',
      async (c) => {
        const parent = await c.work.enqueue({ title: 'fan out', priority: 10 });
        const a1 = await claim(c, 'w1');
        expect(a1.id).toBe(parent.id);
        const run1 = await c.work.run({ id: parent.id, worker: 'w1', attempt: a1.attempts });
        const ids = await run1.spawn('pages', [
          { title: 'page 1', kind: 'page', payload: { n: 1 } },
          { title: 'page 2', kind: 'page', payload: { n: 2 }, idempotency_key: 'ignored' },
        ]);
        expect(ids).toHaveLength(2);
        const s1 = await suspension(run1.join('pages'));
        expect(s1.until).toBe(iso(T0 + 600_000));
        // The children are ordinary items, keyed to the run (nobody else may write such a key).
        const children = await Promise.all(ids.map((id) => c.work.get(id)));
        expect(
          children.map((i) => [i.title, i.status, i.idempotency_key?.startsWith(`run:${parent.id}#spawn#`)]),
        ).toEqual([
          ['page 1', 'pending', true],
          ['page 2', 'pending', true],
        ]);
        await expectCode(
          c.work.enqueue({ title: 'x', idempotency_key: `run:${parent.id}#spawn#k#9` }),
          'INVALID_INPUT',
        );
        const p1 = await c.work.claim({ worker: 'w2', kind: 'page' });
        await c.work.resolve({
          id: p1!.id,
          worker: 'w2',
          attempt: p1!.attempts,
          status: 'done',
          result: { words: 10 },
        });
        // The child's end woke the parent: claimable now, not in ten minutes.
        expect((await c.work.get(parent.id)).not_before).toBe(iso(c.now()));
        const a2 = await claim(c, 'w1');
        expect(a2.id).toBe(parent.id);
        const run2 = await c.work.run({ id: parent.id, worker: 'w1', attempt: a2.attempts });
        expect(await run2.spawn('pages', [{ title: 'not enqueued again' }])).toEqual(ids);
        await suspension(run2.join('pages'));
        const p2 = await c.work.claim({ worker: 'w2', kind: 'page' });
        await c.work.resolveMany([
          { id: p2!.id, worker: 'w2', attempt: p2!.attempts, status: 'done', result: { words: 20 } },
        ]);
        const a3 = await claim(c, 'w1');
        const run3 = await c.work.run({ id: parent.id, worker: 'w1', attempt: a3.attempts });
        expect(await run3.spawn('pages', [{ title: 'x' }])).toEqual(ids);
        expect(await run3.join('pages')).toEqual([
          { id: ids[0], status: 'done', result: { words: 10 }, error: null },
          { id: ids[1], status: 'done', result: { words: 20 }, error: null },
        ]);
        expect((await c.work.list({ limit: 100 })).length).toBe(3);
        await c.work.resolve({ id: parent.id, worker: 'w1', attempt: a3.attempts, status: 'done' });
      },
    );

    t(
      'a failed child fails the join unless told otherwise; a join with no spawn before it is refused',
      async (c) => {
        const parent = await c.work.enqueue({ title: 'fan out', priority: 10, max_attempts: 5 });
        const a1 = await claim(c, 'w1');
        const run1 = await c.work.run({ id: parent.id, worker: 'w1', attempt: a1.attempts });
        await expectCode(run1.join('nothing'), 'INVALID_INPUT');
        const run = await c.work.run({ id: parent.id, worker: 'w1', attempt: a1.attempts });
        const [good, bad] = await run.spawn('jobs', [
          { title: 'good', kind: 'job' },
          { title: 'bad', kind: 'job' },
        ]);
        await c.work.cancel({ id: bad!, reason: 'not needed' });
        const g = await c.work.claim({ worker: 'w2', kind: 'job' });
        await c.work.resolve({ id: g!.id, worker: 'w2', attempt: g!.attempts, status: 'done', result: 'ok' });
        const err = await run.join('jobs').then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(JoinFailed);
        expect((err as JoinFailed).failed).toEqual([
          { id: bad, status: 'cancelled', result: null, error: 'not needed' },
        ]);
        // The same join, told to take failures: the children as they ended.
        await c.work.resolve({
          id: parent.id,
          worker: 'w1',
          attempt: a1.attempts,
          status: 'failed',
          error: 'x',
          retry_at: '0s',
        });
        const a2 = await claim(c, 'w1');
        const run2 = await c.work.run({ id: parent.id, worker: 'w1', attempt: a2.attempts });
        await run2.spawn('jobs', [
          { title: 'good', kind: 'job' },
          { title: 'bad', kind: 'job' },
        ]);
        expect((await run2.join('jobs', { allowFailures: true })).map((x) => [x.id, x.status])).toEqual([
          [good, 'done'],
          [bad, 'cancelled'],
        ]);
        await c.work.resolve({ id: parent.id, worker: 'w1', attempt: a2.attempts, status: 'done' });
      },
    );

    t('ask: a question only a human answers; the answer wakes the run and is returned to it', async (c) => {
      const item = await c.work.enqueue({ title: 'refund over the limit', priority: 10 });
      const a1 = await claim(c, 'w1');
      const run1 = await c.work.run({ id: item.id, worker: 'w1', attempt: a1.attempts });
      const s = await suspension(
        run1.ask('approve refund', { question: 'Refund 420 € to order 42?', options: ['yes', 'no'] }),
      );
      expect(s.until).toBe(iso(T0 + 3_600_000));
      const [q] = await c.work.list({ status: 'waiting_human' });
      expect(q).toMatchObject({
        title: 'Refund 420 € to order 42?',
        payload: {
          question: 'Refund 420 € to order 42?',
          options: ['yes', 'no'],
          run: item.id,
          ask: 'approve refund',
        },
      });
      // Not a model's, not a worker's, not the system's to answer, cancel or put back.
      await expectCode(
        c.work.resolve({ id: q!.id, status: 'done', result: 'yes', actor: 'gpt', actor_kind: 'model' }),
        'PERMISSION_DENIED',
      );
      await expectCode(c.work.resolve({ id: q!.id, status: 'done', result: 'yes' }), 'PERMISSION_DENIED');
      await expectCode(c.work.cancel({ id: q!.id, actor_kind: 'model' }), 'PERMISSION_DENIED');
      await expectCode(c.work.cancelMany({ ids: [q!.id] }), 'PERMISSION_DENIED');
      await expectCode(c.work.unpark({ id: q!.id }), 'PERMISSION_DENIED');
      expect(await c.work.claim({ worker: 'w2' })).toBeNull();
      await c.work.resolve({
        id: q!.id,
        status: 'done',
        result: { choice: 'yes' },
        actor: 'ada',
        actor_kind: 'human',
      });
      const a2 = await claim(c, 'w1');
      expect(a2.id).toBe(item.id);
      const run2 = await c.work.run({ id: item.id, worker: 'w1', attempt: a2.attempts });
      expect(await run2.ask('approve refund', { question: 'asked again?' })).toEqual({
        question: q!.id,
        status: 'done',
        answer: { choice: 'yes' },
        reason: null,
      });
      expect((await c.work.list({ status: 'waiting_human' })).length).toBe(0);
      await c.work.resolve({ id: item.id, worker: 'w1', attempt: a2.attempts, status: 'done' });
      // A question a person declined is not put back in the queue by a retry (a worker could take it): the run
      // took its end as the answer; asking again is a reset of the run's ask step.
      const other = await c.work.enqueue({ title: 'another', priority: 10 });
      const b1 = await claim(c, 'w1');
      expect(b1.id).toBe(other.id);
      const runB = await c.work.run({ id: other.id, worker: 'w1', attempt: b1.attempts });
      await suspension(runB.ask('ok?', { question: 'OK?' }));
      const [q2] = await c.work.list({ status: 'waiting_human' });
      await c.work.cancel({ id: q2!.id, reason: 'no time', actor: 'ada', actor_kind: 'human' });
      for (const retry of [
        () => c.work.retry({ id: q2!.id, actor: 'ada', actor_kind: 'human' }),
        () => c.work.retryMany({ ids: [q2!.id] }),
      ]) {
        await expectCode(retry(), 'INVALID_TRANSITION');
      }
      expect((await c.work.get(q2!.id)).status).toBe('cancelled');
    });

    t('bad names, results and options are INVALID_INPUT with nothing written', async (c) => {
      const item = await c.work.enqueue({ title: 'hostile' });
      const a = await claim(c, 'w1');
      const run = await c.work.run({ id: item.id, worker: 'w1', attempt: a.attempts });
      const before = await eventCount(c);
      for (const name of ['__proto__', 'constructor', 'x'.repeat(10_000), 'a\u0000b', '', 'tab\there', 42]) {
        await expectCode(
          run.step(name as string, () => 1),
          'INVALID_INPUT',
        );
      }
      await expectCode(run.sleep('__proto__', 1000), 'INVALID_INPUT');
      await expectCode(run.sleep('nap', -1), 'INVALID_INPUT');
      await expectCode(run.sleep('nap', 'soon'), 'INVALID_INPUT');
      await expectCode(
        run.step('opts', () => 1, { attempts: 0 }),
        'INVALID_INPUT',
      );
      await expectCode(run.step('fn', 'not a function' as never), 'INVALID_INPUT');
      for (const [label, value] of [
        ['a Map', new Map([['a', 1]])],
        ['a bigint', 10n],
        ['NaN', Number.NaN],
        ['a function', () => 1],
        ['over the limit', 'x'.repeat(1024 * 1024 + 1)],
      ] as const) {
        await expectCode(
          run.step(`result ${label}`, () => value),
          'INVALID_INPUT',
        );
      }
      await expectCode(
        c.work.step({ id: item.id, worker: 'w1', attempt: 0, name: 'x' } as never, () => 1),
        'INVALID_INPUT',
      );
      await expectCode(c.work.run({ id: 'wi\u0000x', worker: 'w1', attempt: 1 }), 'INVALID_INPUT');
      // Nobody forges a record through the log: it would be replayed as the step's result.
      for (const type of [
        'work_step_completed',
        'work_step_failed',
        'work_step_slept',
        'work_step_waiting',
        'work_step_waited',
        'work_step_reset',
        'work_item_signaled',
      ]) {
        await expectCode(
          c.events.append({ type, work_item_id: item.id, data: { seq: 1, name: 'x', occurrence: 1 } }),
          'INVALID_INPUT',
        );
      }
      expect(await eventCount(c)).toBe(before);
      await expectCode(c.work.steps('wi_unknown'), 'NOT_FOUND');
      await c.work.resolve({ id: item.id, worker: 'w1', attempt: 1, status: 'done' });
    });

    t(
      'concurrent steps of one run and of several runs commit together and each keeps its record',
      async (c) => {
        const items = await c.work.enqueueMany(Array.from({ length: 5 }, (_, k) => ({ title: `run ${k}` })));
        const claimed = await c.work.claimMany({ worker: 'w1', limit: 5 });
        const runs = await Promise.all(
          claimed.map((i) => c.work.run({ id: i.id, worker: 'w1', attempt: i.attempts })),
        );
        const out = await Promise.all(
          runs.flatMap((r, k) => [
            r.step('a', () => `${k}a`),
            r.step('b', () => `${k}b`),
            r.step('a', () => `${k}a2`),
          ]),
        );
        expect(out).toEqual(runs.flatMap((_, k) => [`${k}a`, `${k}b`, `${k}a2`]));
        expect(claimed.map((i) => i.id).sort()).toEqual(items.map((i) => i.id).sort());
        for (const [k, i] of claimed.entries()) {
          const recs = await c.work.steps(i.id);
          expect(
            recs.map(
              (r) => r.type === 'step' && r.status === 'completed' && [r.seq, r.name, r.occurrence, r.result],
            ),
          ).toEqual(
            expect.arrayContaining([
              [1, 'a', 1, `${k}a`],
              [2, 'b', 1, `${k}b`],
              [3, 'a', 2, `${k}a2`],
            ]),
          );
          expect(recs).toHaveLength(3);
        }
        await c.work.resolveMany(
          claimed.map((i) => ({ id: i.id, worker: 'w1', attempt: i.attempts, status: 'done' })),
        );
      },
    );
  });
}
