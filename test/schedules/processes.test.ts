// Schedulers in separate processes on one store (a SQLite file; PostgreSQL, each process its own
// connections): three loops of `agentstate schedule tick` race over a per-second schedule on the real clock.
// However many ticks fall due while they run, no two items share a tick, and every process that reports a
// tick names that tick's one item. Nothing depends on how many ticks that is. (Idea from a second
// implementation of schedules written beside this one.)
import { describe, expect, it } from 'vitest';
import { runOperation } from '../../src/service/invoke.js';
import { backendsForThisFile } from '../helpers/backends.js';
import { runCliAsync } from '../helpers/cli.js';

type Pass = Array<{ schedule: string; enqueued: Array<{ tick: string; id: string }>; missed: number }>;

for (const backend of await backendsForThisFile()) {
  describe(`schedulers in 3 processes on ${backend.name}`, () => {
    it('each tick enqueued once, whichever process finds it first', async () => {
      const key = `p${Math.random().toString(36).slice(2, 10)}`;
      const inst = await backend.open(key);
      try {
        // Added "10 s ago" (a handle whose clock is behind), so ticks are due at the processes' first pass.
        const past = await backend.open(key, { clock: () => Date.now() - 10_000 });
        try {
          await runOperation(past, 'schedule_add', {
            name: 'sec',
            cron: '* * * * * *',
            title: 's',
            kind: 'sec',
            catch_up: 'all',
          });
        } finally {
          await past.close();
        }
        const loop = async () => {
          const out: Pass = [];
          for (let k = 0; k < 4; k++) {
            const r = await runCliAsync([...backend.cliArgs(key), '--json', 'schedule', 'tick']);
            expect(r.code, r.stderr).toBe(0);
            out.push(...(r.json as Pass));
          }
          return out;
        };
        const reported = (await Promise.all([loop(), loop(), loop()])).flat().flatMap((p) => p.enqueued);
        const items = await inst.work.list({ kind: 'sec', limit: 10_000 });
        expect(items.length).toBeGreaterThanOrEqual(10);
        expect(new Set(items.map((i) => i.idempotency_key)).size).toBe(items.length);
        const byTick = new Map(
          items.map((i) => [(i.payload as { scheduled_for: string }).scheduled_for, i.id]),
        );
        expect(byTick.size).toBe(items.length);
        for (const r of reported) expect(byTick.get(r.tick), r.tick).toBe(r.id);
        expect(new Set(reported.map((r) => r.id))).toEqual(new Set(items.map((i) => i.id)));
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
      }
    });
  });
}
