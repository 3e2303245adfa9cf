// The readers of item history — `agentstate events --item`, the dashboard, the retrospective and verify —
// see a batch's one event per type as the items' own events: the same work done in batches and done one
// call at a time reads the same, item by item, on every backend.
import { describe, expect, it } from 'vitest';
import type { EventRecord, WorkItem } from '../../src/core/types.js';
import type { Instance } from '../../src/instance/instance.js';
import { renderDashboard } from '../../src/reports/dashboard.js';
import { retrospective } from '../../src/reports/retro.js';
import { backendsForThisFile } from '../helpers/backends.js';
import { runCli } from '../helpers/cli.js';

const backends = await backendsForThisFile();
const T0 = Date.parse('2026-03-01T10:00:00.000Z');

/** Does the same work on `inst` in batches or one call at a time, at the same moments of `clock`. */
async function work(inst: Instance, batched: boolean, clock: { t: number }): Promise<WorkItem[]> {
  const specs = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'].map((title, k) => ({
    title,
    priority: 10 - k,
    max_attempts: title === 'delta' ? 1 : 3,
  }));
  const items = batched
    ? await inst.work.enqueueMany(specs)
    : await specs.reduce<Promise<WorkItem[]>>(
        async (acc, s) => [...(await acc), await inst.work.enqueue(s)],
        Promise.resolve([]),
      );
  clock.t += 1000;
  if (batched) await inst.work.claimMany({ worker: 'w', limit: 5, lease_ms: 10_000 });
  else for (let k = 0; k < 5; k++) await inst.work.claim({ worker: 'w', lease_ms: 10_000 });
  clock.t += 2500;
  const resolves = [
    { id: items[0]!.id, worker: 'w', status: 'done' as const, result: { pages: 3 } },
    { id: items[1]!.id, worker: 'w', status: 'failed' as const, error: 'parser crashed' },
    { id: items[2]!.id, worker: 'w', status: 'done' as const },
  ];
  if (batched) await inst.work.resolveMany(resolves);
  else for (const r of resolves) await inst.work.resolve(r);
  // delta and epsilon expire: delta (one attempt) fails, epsilon goes back and is claimed again.
  clock.t += 10_000;
  await inst.work.reclaimExpired();
  clock.t += 500;
  await inst.work.claim({ worker: 'w2' });
  clock.t += 700;
  await inst.work.resolve({ id: items[4]!.id, worker: 'w2', status: 'done' });
  return items;
}

const said = (e: EventRecord) => [e.type, e.data, e.actor, e.created_at];

describe.each(backends)('$name: item history readers', (b) => {
  it('events --item, the dashboard, the retrospective and verify read a batch as the single calls', async () => {
    const clock = { t: T0 };
    const keys = { one: `one-${b.name}`, many: `many-${b.name}` };
    const one = await b.open(keys.one, { clock: () => clock.t, worker: 'agent', coalesce: false });
    const many = await b.open(keys.many, { clock: () => clock.t, worker: 'agent' });
    try {
      const start = clock.t;
      const singles = await work(one, false, clock);
      clock.t = start;
      const batched = await work(many, true, clock);
      // The batched instance holds fewer events: one per batch and type.
      expect((await many.events.head())!.position).toBeLessThan((await one.events.head())!.position);

      for (const [k, item] of batched.entries()) {
        const title = item.title;
        const alone = (await one.events.read({ work_item_id: singles[k]!.id })).map(said);
        const got = await many.events.read({ work_item_id: item.id });
        expect(got.map(said), title).toEqual(alone);
        // The CLI's `events --item` is the same read.
        const cli = runCli([...b.cliArgs(keys.many), '--json', 'events', '--item', item.id]);
        expect(cli.code, cli.stderr).toBe(0);
        expect(cli.json).toEqual(got);
      }

      // The dashboard's failures and the retrospective's summary and tables, ids replaced by titles.
      const titled = (items: WorkItem[], text: string) =>
        items.reduce((s, i) => s.replaceAll(i.id, i.title), text);
      const section = (md: string, name: string) => md.split('## ').find((x) => x.startsWith(name)) ?? '';
      const dashOne = titled(singles, (await renderDashboard(one)).markdown);
      const dashMany = titled(batched, (await renderDashboard(many)).markdown);
      expect(section(dashMany, 'Recent failures')).toContain('parser crashed');
      expect(section(dashMany, 'Recent failures')).toContain('lease expired on attempt 1 of 1');
      expect(section(dashMany, 'Recent failures')).toEqual(section(dashOne, 'Recent failures'));
      for (const s of ['Work items', 'In flight', 'Ready to claim']) {
        expect(section(dashMany, s)).toEqual(section(dashOne, s));
      }
      const window = {
        since: new Date(T0 - 1000).toISOString(),
        until: new Date(clock.t + 1000).toISOString(),
      };
      const retroOne = await retrospective(one, window);
      const retroMany = await retrospective(many, window);
      const { events: _a, ...sumOne } = retroOne.summary;
      const { events: _b, ...sumMany } = retroMany.summary;
      expect(sumMany).toEqual(sumOne);
      expect(sumMany).toMatchObject({ done: 3, failed: 2, reclaimed: 2, retried_items: 1 });
      for (const s of ['Done', 'Failed', 'Failure reasons']) {
        expect(section(titled(batched, retroMany.markdown), s)).toEqual(
          section(titled(singles, retroOne.markdown), s),
        );
      }

      // verify folds the batch entries as the items' events: both instances check out.
      for (const inst of [one, many]) {
        const v = await inst.events.verify();
        expect(v.problems).toEqual([]);
        expect(v.checked.work_items).toBe(5);
      }
    } finally {
      await one.close();
      await many.close();
    }
  });
});
