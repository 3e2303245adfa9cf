// Keyed limits under racing claimers: 8 processes (each its own SQLite handle, or its own PostgreSQL
// connections) claim batches of keyed items with a limit of 2 per key. The in-flight count of every key
// is sampled after every claim by the claimer, and replayed from the log at every claimed event: it never
// exceeds 2, and every item is done exactly once.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventRecord } from '../../src/core/types.js';
import { openInstance } from '../../src/instance/instance.js';
import { PG_URL, postgresForThisFile } from '../helpers/postgres.js';
import { race } from '../helpers/racers.js';
import { tempDir } from '../helpers/tmp.js';

const WORKER = new URL('../fixtures/keyed-claim-worker.mjs', import.meta.url).pathname;
const dir = tempDir('agentstate-keyed-race-');
const schema = await postgresForThisFile();

const LIMIT = 2;
const KEYS = ['openai:org-1', 'openai:org-2', 'anthropic:org-1'];
const PER_KEY = 30;
const UNKEYED = 30;
const WORKERS = 8;

interface WorkerResult {
  worker: string;
  claimed: string[];
  samples: Array<{ key: string; in_flight: number }>;
}

/** The most items of each key in flight at any claim, replayed from the claimed and resolved events. */
function maxInFlightFromLog(events: EventRecord[], keyOf: Map<string, string | null>): Map<string, number> {
  const now = new Map<string, number>();
  const most = new Map<string, number>();
  // Expanded batch events share their position: a batch's items are in flight together.
  for (const e of events) {
    const key = keyOf.get(e.work_item_id!) ?? null;
    if (key === null) continue;
    const n = (now.get(key) ?? 0) + (e.type === 'work_item_claimed' ? 1 : -1);
    now.set(key, n);
    most.set(key, Math.max(most.get(key) ?? 0, n));
  }
  return most;
}

async function keyedRace(name: string, url: string | undefined) {
  const instDir = join(dir, name);
  const inst = await openInstance({ dir: instDir, ...(url ? { url } : {}) });
  const keyOf = new Map<string, string | null>();
  try {
    for (const key of KEYS) await inst.work.setLimit({ key, max_in_flight: LIMIT });
    // Interleaved priorities: the keyed items are ahead of unkeyed ones in claim order, so claims must skip
    // keys at their limit to reach them.
    const specs = [
      ...KEYS.flatMap((key) =>
        Array.from({ length: PER_KEY }, (_, k) => ({
          title: `${key} ${k}`,
          priority: 10 - (k % 5),
          concurrency_key: key,
        })),
      ),
      ...Array.from({ length: UNKEYED }, (_, k) => ({ title: `free ${k}`, priority: k % 3 })),
    ];
    for (const item of await inst.work.enqueueMany(specs)) keyOf.set(item.id, item.concurrency_key);
  } finally {
    await inst.close();
  }

  const results = await race<WorkerResult>(
    Array.from({ length: WORKERS }, (_, i) => ({
      script: WORKER,
      args: [instDir, `w${i}`, String(1 + (i % 4)), ...(url ? [url] : [])],
      label: `w${i}`,
    })),
  );

  const check = await openInstance({ dir: instDir, ...(url ? { url } : {}) });
  try {
    const events = await check.events.read({
      type: ['work_item_claimed', 'work_item_resolved'],
      limit: 100_000,
    });
    return {
      keyOf,
      results,
      events,
      counts: await check.work.counts(),
      verify: await check.events.verify(),
    };
  } finally {
    await check.close();
  }
}

function expectLimitHeld(r: Awaited<ReturnType<typeof keyedRace>>) {
  const total = KEYS.length * PER_KEY + UNKEYED;
  const all = r.results.flatMap((w) => w.claimed);
  // Every item claimed exactly once (no lease expired), and done.
  expect(all.length).toBe(total);
  expect(new Set(all).size).toBe(total);
  expect(r.counts).toMatchObject({ done: total, pending: 0, in_flight: 0 });
  expect(r.events.filter((e) => e.type === 'work_item_claimed').length).toBe(total);
  // Sampled by the claimers after every claim.
  const samples = r.results.flatMap((w) => w.samples);
  expect(samples.length).toBeGreaterThan(0);
  for (const s of samples) expect(s.in_flight, `${s.key} after a claim`).toBeLessThanOrEqual(LIMIT);
  // Replayed from the log at every claimed event: never more than the limit, and the limit was reached.
  const most = maxInFlightFromLog(r.events, r.keyOf);
  for (const key of KEYS) {
    expect(most.get(key), key).toBeLessThanOrEqual(LIMIT);
    expect(most.get(key), key).toBeGreaterThanOrEqual(1);
  }
  // More than one process did real work (otherwise this proves nothing about racing).
  expect(r.results.filter((w) => w.claimed.length > 0).length).toBeGreaterThan(1);
  expect(r.verify.problems).toEqual([]);
}

describe('keyed limits under racing claimers', () => {
  it('sqlite: 8 processes, limit 2 per key, never exceeded, every item done once', async () => {
    expectLimitHeld(await keyedRace('sqlite', undefined));
  }, 120_000);

  (schema === null ? it.skip : it)(
    'postgres: 8 processes, limit 2 per key, never exceeded, every item done once',
    async () => {
      const u = new URL(PG_URL);
      u.searchParams.set('schema', schema!);
      expectLimitHeld(await keyedRace('postgres', u.toString()));
    },
    120_000,
  );
});
