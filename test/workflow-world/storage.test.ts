// The storage of a Workflow SDK World (issue 42) on both backends: a run's life through events.create, its
// events as events of the instance's hash chain with dense ids, concurrent creates on one run serialized
// (dense ids, the rules never passed on a stale read), hook tokens unique among live hooks and released when
// the run ends, runs listed by name and status with keyset paging, resolveData 'none', events paged by
// cursor and found by correlation id, bytes with NUL round-tripping, and hostile input refused with nothing
// written. The clock is injected; nothing waits for wall time.
import type { Event, Hook, Step, Storage, WorkflowRun } from '@workflow/world';
import { afterAll, describe, expect, it } from 'vitest';
import { WORKFLOW_EVENT, workflowEventId } from '../../src/core/codecs/workflow-events/codec.js';
import {
  EntityConflictError,
  HookNotFoundError,
  WorkflowRunNotFoundError,
  WorkflowWorldError,
} from '../../src/core/codecs/workflow-events/errors.js';
import type { Instance } from '../../src/instance/instance.js';
import { createWorldStorage } from '../../src/workflow-world/storage.js';
import { backendsForThisFile } from '../helpers/backends.js';
import { rejection } from '../helpers/refusals.js';

const backends = await backendsForThisFile({ pooled: true });

const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
const bytes = (...b: number[]) => new Uint8Array(b);
const INPUT = bytes(0x5b, 0x00, 0xff, 0x00, 0x5d);
const STEP = 'step_ü|a+b φ';
const HOOK = 'hook|ä+1';
const TOKEN = 'tok|€+x 漢';

/** `wrun_` and a ULID whose time is `ms`, its random part `tail` (16 Crockford characters). */
function runIdAt(ms: number, tail = 'Z9Y8X7W6V5T4S3R2'): string {
  const crockford = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  let time = '';
  for (let t = ms, i = 0; i < 10; i++, t = Math.floor(t / 32)) time = crockford[t % 32]! + time;
  return `wrun_${time}${tail}`;
}

const open: Instance[] = [];
afterAll(async () => {
  await Promise.all(open.map((i) => i.close()));
});

/** The error `p` rejects with (the test fails if it resolves). */

const runCreated = (workflowName = 'workflow//./src/w//ƒ|1', input: unknown = INPUT) => ({
  eventType: 'run_created' as const,
  eventData: { deploymentId: 'dpl|1', workflowName, input },
});

describe.each(backends)('$name: World storage', (b) => {
  let k = 0;
  /** A fresh instance (its key, for more handles) with a clock the test moves, and its storage. */
  async function fresh() {
    const clock = { now: T0 };
    const key = `wst${++k}`;
    const inst = await b.open(key, { clock: () => clock.now });
    open.push(inst);
    return { key, clock, inst, s: createWorldStorage(inst) };
  }

  /** `count` more handles on the instance of `key` (each its own connection), as World storages. */
  async function handles(key: string, clock: { now: number }, count: number): Promise<Storage[]> {
    return Promise.all(
      Array.from({ length: count }, async () => {
        const h = await b.open(key, { clock: () => clock.now });
        open.push(h);
        return createWorldStorage(h);
      }),
    );
  }

  /** A running run of `s` (created and started), its id minted at the clock's time less 1 s. */
  async function runningRun(s: Storage, clock: { now: number }, tail?: string, name?: string) {
    const runId = runIdAt(clock.now - 1000, tail);
    await s.events.create(runId, runCreated(name));
    await s.events.create(runId, { eventType: 'run_started' });
    return runId;
  }

  it("records a run's life: dense event ids, the entities as each event left them, the events in the chain", async () => {
    const { inst, s, clock } = await fresh();
    const runId = runIdAt(T0 - 1000);
    const created = await s.events.create(runId, runCreated());
    expect(created.event?.eventId).toBe(workflowEventId(1));
    expect(created.event?.eventId).toBe('evnt_00000000000000000000000001');
    expect(created.run).toMatchObject({ runId, status: 'pending', input: INPUT });
    clock.now += 10;
    const started = await s.events.create(runId, { eventType: 'run_started' });
    expect(started.run).toMatchObject({ status: 'running', startedAt: new Date(T0 + 10) });
    // A second start records nothing and answers the run.
    expect((await s.events.create(runId, { eventType: 'run_started' })).event).toBeUndefined();
    clock.now += 10;
    const stepCreated = await s.events.create(runId, {
      eventType: 'step_created',
      correlationId: STEP,
      eventData: { stepName: 'step//./src/add', input: INPUT },
    });
    expect(stepCreated.step).toMatchObject({ stepId: STEP, status: 'pending', attempt: 0 });
    clock.now += 10;
    const stepStarted = await s.events.create(runId, { eventType: 'step_started', correlationId: STEP });
    expect(stepStarted.step).toMatchObject({ status: 'running', attempt: 1, startedAt: new Date(T0 + 30) });
    clock.now += 10;
    const output = bytes(0, 0, 7, 0);
    await s.events.create(runId, {
      eventType: 'step_completed',
      correlationId: STEP,
      eventData: { result: output },
    });
    clock.now += 10;
    const ended = await s.events.create(runId, { eventType: 'run_completed', eventData: { output } });
    expect(ended.event?.eventId).toBe(workflowEventId(6));
    expect(ended.run).toMatchObject({ status: 'completed', output, completedAt: new Date(T0 + 50) });

    const run = await s.runs.get(runId);
    expect(run).toEqual(ended.run);
    expect(run.input).toEqual(INPUT);
    const step = await s.steps.get(runId, STEP);
    expect(step).toMatchObject({ status: 'completed', attempt: 1, output, input: INPUT });
    expect(step.completedAt).toEqual(new Date(T0 + 40));

    const events = (await s.events.list({ runId })).data;
    expect(events.map((e) => [e.eventId, e.eventType])).toEqual([
      [workflowEventId(1), 'run_created'],
      [workflowEventId(2), 'run_started'],
      [workflowEventId(3), 'step_created'],
      [workflowEventId(4), 'step_started'],
      [workflowEventId(5), 'step_completed'],
      [workflowEventId(6), 'run_completed'],
    ]);
    expect(events[4]).toMatchObject({ runId, correlationId: STEP, eventData: { result: output } });
    expect(events[4]!.createdAt).toEqual(new Date(T0 + 40));

    // The same six, as events of the instance's log: the store's type, the correlation id in its column.
    const chain = await inst.events.read({ stream: `wf_run:${runId}` });
    expect(chain.map((e) => [e.type, e.stream_seq, e.correlation_id])).toEqual([
      [WORKFLOW_EVENT, 1, null],
      [WORKFLOW_EVENT, 2, null],
      [WORKFLOW_EVENT, 3, STEP],
      [WORKFLOW_EVENT, 4, STEP],
      [WORKFLOW_EVENT, 5, STEP],
      [WORKFLOW_EVENT, 6, null],
    ]);
    expect((await inst.events.verify()).ok).toBe(true);
  });

  it('serializes concurrent creates on one run: dense ids, and the rules see every commit before them', async () => {
    const { key, clock, s } = await fresh();
    const runId = await runningRun(s, clock);
    const others = await handles(key, clock, 8);
    // Eight handles create the same step at once: one does, seven find it there.
    const same = await Promise.allSettled(
      others.map((h) =>
        h.events.create(runId, {
          eventType: 'step_created',
          correlationId: STEP,
          eventData: { stepName: 'add', input: INPUT },
        }),
      ),
    );
    expect(same.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const lost = same.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(lost).toHaveLength(7);
    for (const r of lost) expect(r.reason).toBeInstanceOf(EntityConflictError);
    // Eight distinct steps at once: eight events at ids 4..11, none shared, none skipped.
    const distinct = await Promise.all(
      others.map((h, i) =>
        h.events.create(runId, {
          eventType: 'step_created',
          correlationId: `${STEP}#${i}`,
          eventData: { stepName: 'add', input: bytes(i) },
        }),
      ),
    );
    const ids = distinct.map((r) => r.event!.eventId).sort();
    expect(ids).toEqual(Array.from({ length: 8 }, (_, i) => workflowEventId(i + 4)));
    const all = (await s.events.list({ runId })).data.map((e) => e.eventId);
    expect(all).toEqual(Array.from({ length: 11 }, (_, i) => workflowEventId(i + 1)));
    expect((await s.steps.list({ runId })).data).toHaveLength(9);
  });

  it('never lets two concurrent creates decide on the same state: one completion, every start counted', async () => {
    const { key, clock, s } = await fresh();
    const runId = await runningRun(s, clock);
    const others = await handles(key, clock, 8);
    await s.events.create(runId, {
      eventType: 'step_created',
      correlationId: STEP,
      eventData: { stepName: 'add', input: INPUT },
    });
    // Eight starts at once: each reads the attempt the one before it committed.
    const starts = await Promise.all(
      others.map((h) => h.events.create(runId, { eventType: 'step_started', correlationId: STEP })),
    );
    expect(starts.map((r) => r.step!.attempt).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    // Eight completions at once: the first ends the step, the seven after it find it completed.
    const done = await Promise.allSettled(
      others.map((h, i) =>
        h.events.create(runId, {
          eventType: 'step_completed',
          correlationId: STEP,
          eventData: { result: bytes(i) },
        }),
      ),
    );
    const won = done.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const r of done) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(EntityConflictError);
    const step = await s.steps.get(runId, STEP);
    expect(step.attempt).toBe(8);
    expect(step.output).toEqual((won[0] as PromiseFulfilledResult<{ step?: Step }>).value.step!.output);
    const types = (await s.events.list({ runId })).data.map((e: Event) => e.eventType);
    expect(types.filter((t) => t === 'step_completed')).toHaveLength(1);
    expect(types).toHaveLength(3 + 8 + 1);
  });

  it('gives a token contended by eight runs at once to one hook; the others record hook_conflict', async () => {
    const { key, clock, s } = await fresh();
    const runs: string[] = [];
    for (let i = 0; i < 8; i++) runs.push(await runningRun(s, clock, `${'ABCDEFGH'[i]}`.repeat(16)));
    const others = await handles(key, clock, 8);
    const made = await Promise.all(
      others.map((h, i) =>
        h.events.create(runs[i]!, {
          eventType: 'hook_created',
          correlationId: `${HOOK}#${i}`,
          eventData: { token: TOKEN },
        }),
      ),
    );
    const hooks = made.filter((r) => r.hook !== undefined);
    expect(hooks).toHaveLength(1);
    const holder = hooks[0]!.hook!.runId;
    const conflicts = made.filter((r) => r.event?.eventType === 'hook_conflict');
    expect(conflicts).toHaveLength(7);
    for (const c of conflicts) expect(c.event).toMatchObject({ eventData: { conflictingRunId: holder } });
    expect((await s.hooks.getByToken(TOKEN)).runId).toBe(holder);
    // One hook id from eight runs at once, each with a token of its own: one hook, seven conflicts.
    const same = await Promise.allSettled(
      others.map((h, i) =>
        h.events.create(runs[i]!, {
          eventType: 'hook_created',
          correlationId: 'hook|one',
          eventData: { token: `t+${i}` },
        }),
      ),
    );
    expect(same.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of same) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(EntityConflictError);
    expect((await s.hooks.list({})).data.map((h: Hook) => h.hookId).sort()).toEqual(
      ['hook|one', `${HOOK}#${runs.indexOf(holder)}`].sort(),
    );
  });

  it("records a workflow's attr_set once per correlation id, and merges it into the run's attributes", async () => {
    const { clock, s } = await fresh();
    const runId = await runningRun(s, clock);
    const attrSet = (value: string) => ({
      eventType: 'attr_set' as const,
      correlationId: 'attr|1',
      eventData: { changes: [{ key: 'k|ü', value }], writer: { type: 'workflow' as const } },
    });
    const first = await s.events.create(runId, attrSet('v+1'));
    expect(first.run!.attributes).toEqual({ 'k|ü': 'v+1' });
    expect(await rejection(s.events.create(runId, attrSet('v+2')))).toBeInstanceOf(EntityConflictError);
    expect((await s.runs.get(runId)).attributes).toEqual({ 'k|ü': 'v+1' });
  });

  it('keeps a hook token to one live hook, records a hook_conflict for another run, and frees it when the run ends', async () => {
    const { inst, clock, s } = await fresh();
    const a = await runningRun(s, clock, 'AAAAAAAAAAAAAAAA');
    const c = await runningRun(s, clock, 'CCCCCCCCCCCCCCCC');
    const metadata = bytes(0, 1, 0);
    const made = await s.events.create(a, {
      eventType: 'hook_created',
      correlationId: HOOK,
      eventData: { token: TOKEN, metadata },
    });
    expect(made.hook).toMatchObject({ hookId: HOOK, runId: a, token: TOKEN, metadata });
    // The same hook again is a conflict; the token from another run is a hook_conflict event, no hook.
    expect(
      await rejection(
        s.events.create(a, { eventType: 'hook_created', correlationId: HOOK, eventData: { token: TOKEN } }),
      ),
    ).toBeInstanceOf(EntityConflictError);
    const conflict = await s.events.create(c, {
      eventType: 'hook_created',
      correlationId: `${HOOK}-c`,
      eventData: { token: TOKEN },
    });
    expect(conflict.hook).toBeUndefined();
    expect(conflict.event).toMatchObject({
      eventType: 'hook_conflict',
      eventData: { token: TOKEN, conflictingRunId: a },
    });
    expect(await s.hooks.getByToken(TOKEN)).toMatchObject({ hookId: HOOK, runId: a, metadata });
    expect((await s.hooks.list({ runId: a })).data.map((h: Hook) => h.hookId)).toEqual([HOOK]);
    expect((await s.hooks.list({ runId: c })).data).toEqual([]);
    await s.events.create(a, {
      eventType: 'wait_created',
      correlationId: 'wait|1',
      eventData: { resumeAt: new Date(T0 + 60_000) },
    });

    await s.events.create(a, {
      eventType: 'wait_created',
      correlationId: 'wait|2',
      eventData: { resumeAt: new Date(T0 + 1) },
    });
    const waited = await s.events.create(a, { eventType: 'wait_completed', correlationId: 'wait|2' });
    expect(waited.wait).toMatchObject({ waitId: `${a}-wait|2`, status: 'completed' });
    expect(
      await rejection(s.events.create(a, { eventType: 'wait_completed', correlationId: 'wait|2' })),
    ).toBeInstanceOf(EntityConflictError);

    // The run's end disposes its hooks and waits: the token is free for another run.
    await s.events.create(a, { eventType: 'run_completed', eventData: { output: bytes(1) } });
    expect(await rejection(s.hooks.get(HOOK))).toBeInstanceOf(HookNotFoundError);
    expect(await rejection(s.hooks.getByToken(TOKEN))).toBeInstanceOf(HookNotFoundError);
    const waitGone = await rejection(
      s.events.create(a, { eventType: 'wait_completed', correlationId: 'wait|1' }),
    );
    expect(waitGone.name).toBe('WorkflowWorldError');
    const again = await s.events.create(c, {
      eventType: 'hook_created',
      correlationId: `${HOOK}-c2`,
      eventData: { token: TOKEN },
    });
    expect(again.hook).toMatchObject({ runId: c, token: TOKEN });
    // Disposal frees it too, and a second disposal finds no hook.
    await s.events.create(c, { eventType: 'hook_disposed', correlationId: `${HOOK}-c2` });
    expect(await rejection(s.hooks.getByToken(TOKEN))).toBeInstanceOf(HookNotFoundError);
    expect(
      await rejection(s.events.create(c, { eventType: 'hook_disposed', correlationId: `${HOOK}-c2` })),
    ).toBeInstanceOf(HookNotFoundError);
    expect((await inst.events.verify()).ok).toBe(true);
  });

  it('lists runs by workflow name and status, newest first, in keyset pages; resolveData none strips the data', async () => {
    const { clock, s } = await fresh();
    const ids: Record<string, string[]> = { 'wf|a': [], 'wf+b': [] };
    for (let i = 0; i < 7; i++) {
      // Two runs at each time: their ids order them (the keyset's second key).
      if (i % 2 === 0) clock.now += 1000;
      const name = i % 3 === 2 ? 'wf+b' : 'wf|a';
      const runId = runIdAt(clock.now - 500, `${'0123456789ABCDEF'[i]}`.repeat(16));
      await s.events.create(runId, runCreated(name, bytes(i, 0)));
      ids[name]!.push(runId);
    }
    // Two of wf|a started: the status filter finds them.
    await s.events.create(ids['wf|a']![0]!, { eventType: 'run_started' });
    await s.events.create(ids['wf|a']![3]!, { eventType: 'run_started' });

    const pages: string[][] = [];
    let cursor: string | undefined;
    for (;;) {
      const r = await s.runs.list({
        workflowName: 'wf|a',
        pagination: { limit: 2, ...(cursor ? { cursor } : {}) },
      });
      pages.push(r.data.map((x: WorkflowRun) => x.runId));
      if (!r.hasMore) break;
      cursor = r.cursor!;
    }
    expect(pages).toEqual([
      [ids['wf|a']![4], ids['wf|a']![3]],
      [ids['wf|a']![2], ids['wf|a']![1]],
      [ids['wf|a']![0]],
    ]);
    const asc = await s.runs.list({ workflowName: 'wf+b', pagination: { sortOrder: 'asc' } });
    expect(asc.data.map((x: WorkflowRun) => x.runId)).toEqual(ids['wf+b']);
    expect(asc.hasMore).toBe(false);
    const running = await s.runs.list({ status: 'running' });
    expect(running.data.map((x: WorkflowRun) => x.runId)).toEqual([ids['wf|a']![3], ids['wf|a']![0]]);
    const both = await s.runs.list({ workflowName: 'wf+b', status: 'running' });
    expect(both.data).toEqual([]);

    const bare = await s.runs.list({ workflowName: 'wf+b', resolveData: 'none' });
    expect(bare.data).toHaveLength(2);
    for (const r of bare.data) {
      expect(r.input).toBeUndefined();
      expect(r.workflowName).toBe('wf+b');
    }
    const full = await s.runs.get(ids['wf+b']![0]!);
    expect(full.input).toEqual(bytes(2, 0));
    expect((await s.runs.get(ids['wf+b']![0]!, { resolveData: 'none' })).input).toBeUndefined();
    expect(await rejection(s.runs.list({ pagination: { cursor: 'not a cursor' } }))).toMatchObject({
      name: 'WorkflowWorldError',
      status: 400,
    });
  });

  it("pages a run's events by cursor both ways, gets one by id, and finds events by correlation id across runs", async () => {
    const { clock, s } = await fresh();
    const runId = await runningRun(s, clock, 'AAAAAAAAAAAAAAAA');
    const other = await runningRun(s, clock, 'BBBBBBBBBBBBBBBB');
    for (const r of [runId, other]) {
      await s.events.create(r, {
        eventType: 'step_created',
        correlationId: STEP,
        eventData: { stepName: 'add', input: INPUT },
      });
      await s.events.create(r, { eventType: 'step_started', correlationId: STEP });
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const r = await s.events.list({ runId, pagination: { limit: 3, ...(cursor ? { cursor } : {}) } });
      seen.push(...r.data.map((e: Event) => e.eventId));
      if (!r.hasMore) {
        // The last page still names where it ended: an incremental load continues from there.
        expect(r.cursor).toBe('4');
        break;
      }
      cursor = r.cursor!;
    }
    expect(seen).toEqual([1, 2, 3, 4].map(workflowEventId));
    const desc = await s.events.list({ runId, pagination: { sortOrder: 'desc', limit: 3 } });
    expect(desc.data.map((e: Event) => e.eventId)).toEqual([4, 3, 2].map(workflowEventId));
    const rest = await s.events.list({ runId, pagination: { sortOrder: 'desc', cursor: desc.cursor! } });
    expect(rest.data.map((e: Event) => e.eventId)).toEqual([workflowEventId(1)]);
    // Nothing new after the end: the same cursor back, no more.
    const after = await s.events.list({ runId, pagination: { cursor: '4' } });
    expect(after).toEqual({ data: [], cursor: '4', hasMore: false });

    const third = await s.events.get(runId, workflowEventId(3));
    expect(third).toMatchObject({ eventType: 'step_created', correlationId: STEP });
    expect(
      (await s.events.get(runId, workflowEventId(3), { resolveData: 'none' })).eventData,
    ).toBeUndefined();
    expect(await rejection(s.events.get(runId, workflowEventId(9)))).toMatchObject({ status: 404 });
    expect(await rejection(s.events.get(runId, 'evnt_3'))).toMatchObject({ status: 404 });

    const byStep = await s.events.listByCorrelationId({ correlationId: STEP });
    expect(byStep.data.map((e: Event) => [e.runId, e.eventType])).toEqual([
      [runId, 'step_created'],
      [runId, 'step_started'],
      [other, 'step_created'],
      [other, 'step_started'],
    ]);
    const firstTwo = await s.events.listByCorrelationId({ correlationId: STEP, pagination: { limit: 2 } });
    expect(firstTwo.hasMore).toBe(true);
    const nextTwo = await s.events.listByCorrelationId({
      correlationId: STEP,
      pagination: { limit: 2, cursor: firstTwo.cursor! },
    });
    expect(nextTwo.data.map((e: Event) => e.runId)).toEqual([other, other]);
    expect(nextTwo.hasMore).toBe(false);
    expect((await s.steps.list({ runId, resolveData: 'none' })).data.map((x: Step) => x.input)).toEqual([
      undefined,
    ]);
  });

  it('keeps bytes (NUL among them), dates, NUL characters and objects that look like tags as they were', async () => {
    const { clock, s } = await fresh();
    const runId = runIdAt(clock.now - 1000);
    const input = new Uint8Array(256).map((_, i) => i);
    const executionContext = { $t: 'bytes', v: 'AAAA', nested: { at: 'x\u0000y', list: [bytes(0), null] } };
    await s.events.create(runId, {
      eventType: 'run_created',
      eventData: { deploymentId: 'dpl', workflowName: 'w', input, executionContext },
    });
    await s.events.create(runId, { eventType: 'run_started' });
    const error = { message: 'broke \u0000 here ü', stack: 'at φ' };
    await s.events.create(runId, { eventType: 'run_failed', eventData: { error, errorCode: 'E|1' } });
    const run = await s.runs.get(runId);
    expect(run.input).toBeInstanceOf(Uint8Array);
    expect(run.input).toEqual(input);
    expect(run.executionContext).toEqual(executionContext);
    expect(run).toMatchObject({ status: 'failed', error, errorCode: 'E|1' });
    const created = (await s.events.get(runId, workflowEventId(1))) as Event & {
      eventData: { input: Uint8Array; executionContext: unknown };
    };
    expect(created.eventData.input).toEqual(input);
    expect(created.eventData.executionContext).toEqual(executionContext);
  });

  it("refuses an outsider's append of the World's event type or onto a run's stream", async () => {
    const { inst, clock, s } = await fresh();
    const runId = await runningRun(s, clock);
    expect(await rejection(inst.events.append({ type: WORKFLOW_EVENT, data: {} }))).toMatchObject({
      code: 'INVALID_INPUT',
    });
    expect(
      await rejection(inst.events.append({ type: 'note', stream: `wf_run:${runId}`, data: {} })),
    ).toMatchObject({ code: 'INVALID_INPUT' });
    expect((await s.events.list({ runId })).data).toHaveLength(2);
  });

  it('refuses hostile ids and oversized requests with typed errors, writing nothing', async () => {
    const { inst, clock, s } = await fresh();
    const runId = await runningRun(s, clock);
    const head = (await inst.events.read({ reverse: true, limit: 1 }))[0]!.position;
    const step = (correlationId: string, input: unknown = INPUT) => ({
      eventType: 'step_created' as const,
      correlationId,
      eventData: { stepName: 'add', input },
    });
    for (const bad of ['../etc', '__proto__', 'a\u0000b', '', 'x'.repeat(2000), '\uD800']) {
      const onRun = await rejection(s.events.create(bad, step(STEP)));
      expect(onRun, JSON.stringify(bad)).toBeInstanceOf(WorkflowWorldError);
      expect(onRun.status).toBe(400);
      const asStep = await rejection(s.events.create(runId, step(bad)));
      expect(asStep.name, JSON.stringify(bad)).toBe('WorkflowWorldError');
      expect(asStep.status).toBe(400);
      expect(await rejection(s.runs.get(bad))).toBeInstanceOf(WorkflowRunNotFoundError);
      expect(await rejection(s.hooks.get(bad))).toBeInstanceOf(HookNotFoundError);
    }
    for (const token of ['a\u0000b', '\uDC00x']) {
      const r = await rejection(
        s.events.create(runId, { eventType: 'hook_created', correlationId: HOOK, eventData: { token } }),
      );
      expect(r).toMatchObject({ name: 'WorkflowWorldError', status: 400 });
      expect(await rejection(s.hooks.getByToken(token))).toBeInstanceOf(HookNotFoundError);
    }
    // A run id that is no run, a run created under a path-like id, and a 10 MB payload.
    expect(await rejection(s.events.create(runIdAt(T0, 'QQQQQQQQQQQQQQQQ'), step(STEP)))).toBeInstanceOf(
      WorkflowRunNotFoundError,
    );
    expect(await rejection(s.events.create('wrun_../../x', runCreated()))).toMatchObject({ status: 400 });
    const huge = new Uint8Array(10 * 1024 * 1024).fill(7);
    expect(await rejection(s.events.create(runId, step(STEP, huge)))).toMatchObject({
      name: 'WorkflowWorldError',
      status: 413,
    });
    const big = await rejection(s.events.create(runIdAt(T0 - 5, 'HHHHHHHHHHHHHHHH'), runCreated('w', huge)));
    expect(big).toMatchObject({ status: 413 });
    expect((await inst.events.read({ reverse: true, limit: 1 }))[0]!.position).toBe(head);
    expect((await s.steps.list({ runId })).data).toEqual([]);
    expect((await s.runs.list()).data.map((r: WorkflowRun) => r.runId)).toEqual([runId]);
  });

  it('mints a run id at the store clock when run_created has none', async () => {
    const { s } = await fresh();
    const made = await s.events.create(null, runCreated());
    const runId = made.run!.runId;
    expect(runId).toMatch(/^wrun_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(runId.slice(5, 15)).toBe(runIdAt(T0).slice(5, 15));
    expect((await s.runs.get(runId)).createdAt).toEqual(new Date(T0));
  });
});
