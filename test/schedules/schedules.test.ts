// Schedules on every backend: each tick of a cron expression enqueued exactly once however many schedulers
// run the same pass at once (the items' idempotency keys), the catch-up policies across a gap, time zones
// and DST, removal, and hostile definitions refused with nothing written. Time is the instances' injected
// clock; nothing waits on the wall clock.
import { describe, expect, it } from 'vitest';
import type { Instance } from '../../src/instance/instance.js';
import { dueTicks } from '../../src/kinds/schedule/model.js';
import { CATCH_UP_MAX } from '../../src/kinds/schedule/schema.js';
import { runOperation } from '../../src/service/invoke.js';
import { createScheduler } from '../../src/worker/scheduler.js';
import { backendsForThisFile } from '../helpers/backends.js';

const T0 = Date.parse('2026-12-03T10:00:30.000Z');
const MIN = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** A clock the test moves. */
function clock(start = T0) {
  let t = start;
  return {
    now: () => t,
    set: (ms: number) => {
      t = ms;
    },
    advance: (ms: number) => {
      t += ms;
    },
  };
}

const add = (inst: Instance, input: Record<string, unknown>) => runOperation(inst, 'schedule_add', input);

/** `{ a: { a: … } }`, `depth` levels deep. */
function deep(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let k = 0; k < depth; k++) v = { a: v };
  return v;
}

async function itemsOf(inst: Instance) {
  return (await inst.work.list({ limit: 10_000 })).filter((i) => i.idempotency_key?.startsWith('schedule:'));
}

for (const backend of await backendsForThisFile()) {
  describe(`schedules on ${backend.name}`, () => {
    it('3 schedulers, 20 ticks: each tick enqueued exactly once, however the passes interleave', async () => {
      const c = clock();
      const key = `race-${Math.random().toString(36).slice(2)}`;
      const handles = [
        await backend.open(key, { clock: c.now }),
        await backend.open(key, { clock: c.now }),
        await backend.open(key, { clock: c.now }),
      ];
      try {
        const [first] = handles;
        await add(first!, { name: 'every-minute', cron: '* * * * *', title: 'sync ü|+', kind: 'sync' });
        const schedulers = handles.map((instance) => createScheduler({ instance }));
        for (let k = 1; k <= 20; k++) {
          c.set(T0 - 30_000 + k * MIN); // exactly on the minute
          // All three at once, and a late repeat: the same tick from every one of them.
          await Promise.all(schedulers.map((s) => s.tick()));
          await schedulers[k % 3]!.tick();
        }
        const items = await itemsOf(first!);
        expect(items).toHaveLength(20);
        const keys = items.map((i) => i.idempotency_key).sort();
        expect(new Set(keys).size).toBe(20);
        expect(keys[0]).toBe(`schedule:every-minute@${iso(T0 - 30_000 + MIN)}`);
        expect(items.every((i) => i.kind === 'sync' && i.title === 'sync ü|+')).toBe(true);
        const payloads = items.map((i) => (i.payload as { scheduled_for: string }).scheduled_for).sort();
        expect(payloads).toEqual(Array.from({ length: 20 }, (_, k) => iso(T0 - 30_000 + (k + 1) * MIN)));
        const [list] = (await runOperation(first!, 'schedule_list', {})) as Array<{ last_tick: string }>;
        expect(list!.last_tick).toBe(iso(T0 - 30_000 + 20 * MIN));
        for (const h of handles) expect((await h.events.verify()).ok).toBe(true);
      } finally {
        for (const h of handles) await h.close();
      }
    });

    it('catch-up after downtime: latest enqueues the newest missed tick, all each (oldest first), none none', async () => {
      const c = clock();
      const inst = await backend.open(undefined, { clock: c.now });
      try {
        for (const catch_up of ['latest', 'all', 'none']) {
          await add(inst, { name: `c-${catch_up}`, cron: '*/5 * * * *', title: catch_up, catch_up });
        }
        // Down for an hour: 12 ticks came due (10:05 … 11:00).
        c.advance(60 * MIN);
        const s = createScheduler({ instance: inst });
        const results = await s.tick();
        const by = (title: string) => results.find((r) => r.schedule === `c-${title}`);
        expect(by('latest')?.enqueued.map((e) => e.tick)).toEqual(['2026-12-03T11:00:00.000Z']);
        expect(by('latest')?.missed).toBe(11);
        expect(by('all')?.enqueued.map((e) => e.tick)).toEqual(
          Array.from({ length: 12 }, (_, k) => iso(Date.parse('2026-12-03T10:05:00.000Z') + k * 5 * MIN)),
        );
        // 11:00 came due 30 s ago, within the tolerance (60 s): none runs it; the older ones are skipped.
        expect(by('none')?.enqueued.map((e) => e.tick)).toEqual(['2026-12-03T11:00:00.000Z']);
        // Another hour: none is further behind than its tolerance now.
        c.advance(62 * MIN);
        const later = await s.tick();
        expect(later.find((r) => r.schedule === 'c-none')?.enqueued).toEqual([]);
        // Back in step: every schedule enqueues the next tick, and only it.
        c.set(Date.parse('2026-12-03T12:05:00.000Z'));
        const next = await s.tick();
        for (const t of ['latest', 'all', 'none']) {
          expect(next.find((r) => r.schedule === `c-${t}`)?.enqueued.map((e) => e.tick)).toEqual([
            '2026-12-03T12:05:00.000Z',
          ]);
        }
        const titles = (await itemsOf(inst)).map((i) => i.title);
        expect(titles.filter((t) => t === 'latest')).toHaveLength(3);
        expect(titles.filter((t) => t === 'all')).toHaveLength(12 + 13);
        expect(titles.filter((t) => t === 'none')).toHaveLength(2);
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
      }
    });

    it('never a tick from before the schedule was added; removal stops it, adding again starts afresh', async () => {
      const c = clock(Date.parse('2026-12-03T10:00:00.000Z'));
      const inst = await backend.open(undefined, { clock: c.now });
      try {
        // Added exactly on a tick: that tick is not the schedule's.
        await add(inst, { name: 'hourly', cron: '0 * * * *', title: 'h', catch_up: 'all' });
        const s = createScheduler({ instance: inst });
        expect(await s.tick()).toEqual([]);
        c.advance(60 * MIN);
        expect((await s.tick()).flatMap((r) => r.enqueued.map((e) => e.tick))).toEqual([
          '2026-12-03T11:00:00.000Z',
        ]);
        await runOperation(inst, 'schedule_remove', { name: 'hourly' });
        c.advance(3 * 60 * MIN);
        expect(await s.tick()).toEqual([]);
        expect((await runOperation(inst, 'schedule_list', {})) as unknown[]).toEqual([]);
        expect(((await runOperation(inst, 'schedule_list', { all: true })) as unknown[]).length).toBe(1);
        // Added again: the hours it was removed for are not caught up.
        await add(inst, { name: 'hourly', cron: '0 * * * *', title: 'h2', catch_up: 'all' });
        c.advance(60 * MIN);
        expect((await s.tick()).flatMap((r) => r.enqueued.map((e) => e.tick))).toEqual([
          '2026-12-03T15:00:00.000Z',
        ]);
        expect((await itemsOf(inst)).map((i) => i.title)).toEqual(['h', 'h2']);
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
      }
    });

    it('no one takes a tick’s key first: schedule: keys are the scheduler’s, refused to any other enqueue', async () => {
      const c = clock(Date.parse('2026-12-03T10:00:00.000Z'));
      const inst = await backend.open(undefined, { clock: c.now });
      try {
        await add(inst, { name: 'payroll', cron: '0 * * * *', title: 'pay', payload: { to: 'staff' } });
        const squat = {
          title: 'pay',
          payload: { to: 'mallory' },
          idempotency_key: 'schedule:payroll@2026-12-03T11:00:00.000Z',
        };
        const before = (await inst.events.head())?.position;
        // Through the library, the operation table (what HTTP and MCP call) and a batch: all refused.
        await expect(inst.work.enqueue(squat)).rejects.toMatchObject({
          code: 'INVALID_INPUT',
          details: { field: 'idempotency_key' },
        });
        await expect(runOperation(inst, 'enqueue', squat)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
        await expect(inst.work.enqueueMany([{ title: 'ok' }, squat])).rejects.toMatchObject({
          code: 'INVALID_INPUT',
        });
        expect((await inst.events.head())?.position).toBe(before);
        c.advance(60 * MIN);
        await createScheduler({ instance: inst }).tick();
        const [item] = await itemsOf(inst);
        expect(item!.idempotency_key).toBe(squat.idempotency_key);
        expect(item!.payload).toEqual({ to: 'staff', scheduled_for: '2026-12-03T11:00:00.000Z' });
      } finally {
        await inst.close();
      }
    });

    it('a running scheduler writes the cursor of a tick-a-second schedule once a minute, not each second', async () => {
      const c = clock(Date.parse('2026-12-03T10:00:00.000Z'));
      const inst = await backend.open(undefined, { clock: c.now });
      try {
        await add(inst, { name: 'sec', cron: '* * * * * *', title: 's' });
        const s = createScheduler({ instance: inst });
        for (let k = 1; k <= 90; k++) {
          c.advance(1000);
          await s.tick();
        }
        expect(await itemsOf(inst)).toHaveLength(90);
        // Added (v1), then the cursor at 60 s (v2): 90 ticks, two versions.
        const doc = await inst.docs.get({ kind: 'schedule', id: 'sec' });
        expect(doc.version).toBe(2);
        expect(doc.body.last_tick).toBe('2026-12-03T10:01:00.000Z');
        // Another scheduler (or this one restarted) starts from the stored cursor: the ticks after it are
        // found again and get their existing items, none twice.
        c.advance(1000);
        await createScheduler({ instance: inst }).tick();
        expect(await itemsOf(inst)).toHaveLength(91);
      } finally {
        await inst.close();
      }
    });

    it('hostile definitions are refused with the field named, and nothing is written', async () => {
      const inst = await backend.open();
      try {
        const before = (await inst.events.head())?.position ?? 0;
        const bad: Array<[Record<string, unknown>, string]> = [
          [{ name: 'x', cron: 'every minute', title: 't' }, 'cron'],
          [{ name: 'x', cron: '61 * * * *', title: 't' }, 'cron'],
          [{ name: 'x', cron: '* * * * * * *', title: 't' }, 'cron'],
          [{ name: 'x', cron: '* * * * *', title: 't', timezone: 'Mars/Base' }, 'timezone'],
          [{ name: 'x', cron: '* * * * *', title: 't', catch_up: 'some' }, 'catch_up'],
          [{ name: 'x\u0000y', cron: '* * * * *', title: 't' }, 'name'],
          [{ name: 'x', cron: '* * * * *' }, 'title'],
          [{ name: 'x', cron: '* * * * *', title: 't', priority: 1e9 }, 'priority'],
          [{ name: 'x', cron: '* * * * *', title: 't', extra: 1 }, 'extra'],
          // Wrong types, model-written shapes, prototype keys, sizes and depths beyond the limits.
          [{ name: { n: 1 }, cron: '* * * * *', title: 't' }, 'name'],
          [{ name: 'x', cron: 5, title: 't' }, 'cron'],
          [{ name: 'x', cron: '* * * * *', title: 't', catch_up: ['all'] }, 'catch_up'],
          [
            { name: 'x', cron: '* * * * *', title: 't', payload: JSON.parse('{"__proto__":{"polluted":1}}') },
            'payload',
          ],
          [
            { name: 'x', cron: '* * * * *', title: 't', payload: { big: 'x'.repeat(2 * 1024 * 1024) } },
            'payload',
          ],
          [{ name: 'x', cron: '* * * * *', title: 't', payload: deep(10_000) }, 'payload'],
        ];
        for (const [input, field] of bad) {
          await expect(add(inst, input), field).rejects.toMatchObject({
            code: 'INVALID_INPUT',
            details: expect.objectContaining({ field }),
          });
        }
        // A direct commit of a bad schedule document is refused by the kind's rules.
        await expect(
          inst.docs.commit({
            kind: 'schedule',
            id: 'direct',
            expected_version: 0,
            body: {
              cron: 'nope nope',
              item: { title: 't' },
              catch_up: 'latest',
              enabled: true,
              created_at: iso(T0),
              last_tick: null,
            },
          }),
        ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
        expect((await inst.events.head())?.position ?? 0).toBe(before);
        expect(await inst.docs.list({ kind: 'schedule' })).toEqual([]);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        // Removing or ticking what is not there: NOT_FOUND / nothing, still nothing written.
        await expect(
          runOperation(inst, 'schedule_remove', { name: '../../etc/passwd' }),
        ).rejects.toMatchObject({
          code: 'NOT_FOUND',
        });
        expect(await runOperation(inst, 'schedule_tick', {})).toEqual([]);
        expect((await inst.events.head())?.position ?? 0).toBe(before);
      } finally {
        await inst.close();
      }
    });
  });
}

describe('dueTicks: which ticks a pass enqueues', () => {
  const base = { created_at: '2026-03-28T00:00:00.000Z', last_tick: null } as const;
  it('reads the expression in its time zone, across a daylight-saving change', () => {
    // 02:30 in Berlin does not exist on 2026-03-29 (clocks go 02:00 → 03:00): that day's tick is at 03:00.
    const s = { ...base, cron: '30 2 * * *', timezone: 'Europe/Berlin', catch_up: 'all' as const };
    const { ticks } = dueTicks(s, Date.parse('2026-03-31T00:00:00.000Z'), 60_000);
    expect(ticks.map(iso)).toEqual([
      '2026-03-28T01:30:00.000Z', // 02:30 CET
      '2026-03-29T01:00:00.000Z', // 03:00 CEST, the first time after the gap
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
    ]);
    const utc = dueTicks({ ...s, timezone: null }, Date.parse('2026-03-29T12:00:00.000Z'), 60_000);
    expect(utc.ticks.map(iso)).toEqual(['2026-03-28T02:30:00.000Z', '2026-03-29T02:30:00.000Z']);
  });
  it('runs a fixed local time once when the clocks go back, and an interval at its real-time pace', () => {
    // 02:30 happens twice on 25 October 2026 in Berlin (CEST, then CET): one tick, at the first.
    const at = { ...base, created_at: '2026-10-24T22:00:00.000Z', timezone: 'Europe/Berlin' };
    const fixed = dueTicks(
      { ...at, cron: '30 2 * * *', catch_up: 'all' },
      Date.parse('2026-10-25T02:00:00.000Z'),
      1,
    );
    expect(fixed.ticks.map(iso)).toEqual(['2026-10-25T00:30:00.000Z']);
    // Every 30 minutes: the repeated hour is not skipped or doubled in real time.
    const every = dueTicks(
      { ...at, cron: '*/30 * * * *', catch_up: 'all' },
      Date.parse('2026-10-25T02:00:00.000Z'),
      1,
    );
    expect(every.ticks.map(iso)).toEqual(
      Array.from({ length: 8 }, (_, k) => iso(Date.parse('2026-10-24T22:30:00.000Z') + k * 30 * MIN)),
    );
  });

  it(`caps catch-up all at the newest ${CATCH_UP_MAX} ticks and counts the rest as missed`, () => {
    const s = { ...base, cron: '* * * * *', timezone: null, catch_up: 'all' as const };
    const r = dueTicks(s, Date.parse('2026-03-28T10:00:00.000Z'), 60_000);
    expect(r.ticks).toHaveLength(CATCH_UP_MAX);
    expect(iso(r.ticks.at(-1)!)).toBe('2026-03-28T10:00:00.000Z');
    expect(r.missed).toBeGreaterThan(0);
    // Nothing due at or before the last tick.
    expect(
      dueTicks({ ...s, last_tick: '2026-03-28T10:00:00.000Z' }, Date.parse('2026-03-28T10:00:59.000Z'), 1)
        .ticks,
    ).toEqual([]);
  });
});
