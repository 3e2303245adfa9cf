// Eight separate processes claim from one instance until it is empty: every item exactly once.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openInstance } from '../../src/instance/instance.js';
import { race as startRacers } from '../helpers/racers.js';
import { tempDir } from '../helpers/tmp.js';

const WORKER = new URL('../fixtures/claim-worker.mjs', import.meta.url).pathname;
const dir = tempDir();

interface WorkerResult {
  worker: string;
  claimed: string[];
}

/**
 * `processes` claim workers on one instance, started together behind the gate; each holds its first item
 * until every one holds one (HOLD_FIRST), so all of them race whatever the scheduler does on a busy machine.
 */
function runWorkers(instDir: string, processes: number, batch: number): Promise<WorkerResult[]> {
  return startRacers<WorkerResult>(
    Array.from({ length: processes }, (_, i) => ({
      script: WORKER,
      args: [instDir, `worker-${i}`, String(batch)],
      label: `worker-${i}`,
      env: { HOLD_FIRST: String(processes * batch) },
    })),
  );
}

async function race(items: number, processes: number, batch: number) {
  const instDir = join(dir, `race-${items}-${batch}`);
  const inst = await openInstance({ dir: instDir });
  const ids = (
    await inst.work.enqueueMany(
      Array.from({ length: items }, (_, i) => ({ title: `item ${i}`, priority: i % 7 })),
    )
  ).map((i) => i.id);
  await inst.close();

  const results = await runWorkers(instDir, processes, batch);

  const all = results.flatMap((r) => r.claimed);
  const check = await openInstance({ dir: instDir });
  try {
    const claimedEvents = await check.events.read({ type: 'work_item_claimed', limit: 100_000 });
    const counts = await check.work.counts();
    const verify = await check.events.verify();
    return { ids, all, results, claimedEvents, counts, verify };
  } finally {
    await check.close();
  }
}

describe('concurrent claims across processes', () => {
  it('8 processes, 400 items, one at a time: each item claimed exactly once, none lost', async () => {
    const r = await race(400, 8, 1);
    expect(r.all.length).toBe(400);
    expect(new Set(r.all).size).toBe(400);
    expect([...r.all].sort()).toEqual([...r.ids].sort());
    expect(r.claimedEvents.length).toBe(400);
    expect(new Set(r.claimedEvents.map((e) => e.work_item_id)).size).toBe(400);
    expect(r.counts).toMatchObject({ done: 400, pending: 0, in_flight: 0 });
    expect(r.verify.ok).toBe(true);
    // Every process did real work (otherwise this proves nothing about racing).
    expect(r.results.filter((w) => w.claimed.length > 0).length).toBe(8);
  });

  it('8 processes claiming batches of 5: each item claimed exactly once', async () => {
    const r = await race(400, 8, 5);
    expect(r.all.length).toBe(400);
    expect(new Set(r.all).size).toBe(400);
    expect(r.counts.done).toBe(400);
    expect(r.verify.ok).toBe(true);
  });

  it('8 processes opening a brand-new database at once all succeed (migrations apply once)', async () => {
    const instDir = join(dir, 'fresh');
    const results = await runWorkers(instDir, 8, 1);
    expect(results.every((r) => r.claimed.length === 0)).toBe(true);
    const inst = await openInstance({ dir: instDir });
    expect(inst.backend.migrationsApplied).toEqual([]);
    await inst.close();
  });
});
