// Eight separate processes claim from one instance until it is empty: every item exactly once.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openInstance } from '../../src/instance/instance.js';
import { tempDir } from '../helpers/tmp.js';

/** When the spawned processes start racing (they open their instance first, then wait for it). */
let startAt = 0;

const WORKER = new URL('../fixtures/claim-worker.mjs', import.meta.url).pathname;
const dir = tempDir();

function runWorker(
  instDir: string,
  name: string,
  batch: number,
): Promise<{ worker: string; claimed: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKER, instDir, name, String(batch)], {
      env: { ...process.env, AGENTSTATE_TEST_START_AT: String(startAt) },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`${name} exited ${code}: ${err}`)),
    );
  });
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

  startAt = Date.now() + 1500;

  const results = await Promise.all(
    Array.from({ length: processes }, (_, i) => runWorker(instDir, `worker-${i}`, batch)),
  );

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
    // More than one process did real work (otherwise this proves nothing about racing).
    expect(r.results.filter((w) => w.claimed.length > 0).length).toBeGreaterThan(1);
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
    startAt = Date.now() + 1500;
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => runWorker(instDir, `w${i}`, 1)));
    expect(results.every((r) => r.claimed.length === 0)).toBe(true);
    const inst = await openInstance({ dir: instDir });
    expect(inst.backend.migrationsApplied).toEqual([]);
    await inst.close();
  });
});
