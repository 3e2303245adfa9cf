// The multi-process races of claim-race and commit-race, on PostgreSQL: eight separate processes (the same
// fixtures, given a postgres:// URL) share one instance in a schema of this file's own.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openInstance } from '../../src/instance/instance.js';
import { PG_URL, postgresForThisFile } from '../helpers/postgres.js';
import { race } from '../helpers/racers.js';
import { tempDir } from '../helpers/tmp.js';

const WORKER = new URL('../fixtures/claim-worker.mjs', import.meta.url).pathname;
const RACER = new URL('../fixtures/commit-racer.mjs', import.meta.url).pathname;

const schema = await postgresForThisFile();
const suite = schema === null ? describe.skip : describe;
const dir = tempDir('agentstate-pg-race-');

/** The test server's URL with this file's schema. */
function storeUrl(): string {
  const u = new URL(PG_URL);
  u.searchParams.set('schema', schema!);
  return u.toString();
}

/** Eight racers of `script`, started together behind the gate; each one's JSON output. */
function eight<T>(script: string, args: (i: number) => string[], label: (i: number) => string): Promise<T[]> {
  return race<T>(Array.from({ length: 8 }, (_, i) => ({ script, args: args(i), label: label(i) })));
}

interface WorkerResult {
  worker: string;
  claimed: string[];
}

interface RacerResult {
  worker: string;
  wins: Array<{ version: number; entry: string }>;
  conflicts: number;
  other: string[];
}

suite('multi-process races on PostgreSQL', () => {
  it('8 processes claim 3,000 items: each claimed exactly once, none lost, several did work', async () => {
    const ITEMS = 3_000;
    // Claims of 10 at a time (claimMany, FOR UPDATE SKIP LOCKED), each item then resolved on its own: every
    // write commits through the instance's one event head, so one at a time would take minutes on 2 cores.
    // 3,000 keeps 8 racers contending for the whole run (about 375 items each) at a third of 10,000's cost.
    const BATCH = '10';
    const instDir = join(dir, 'claims');
    const url = storeUrl();
    const inst = await openInstance({ dir: instDir, url });
    const ids: string[] = [];
    try {
      for (let start = 0; start < ITEMS; start += 1000) {
        const batch = await inst.work.enqueueMany(
          Array.from({ length: Math.min(1000, ITEMS - start) }, (_, k) => ({
            title: `item ${start + k}`,
            priority: (start + k) % 7,
          })),
        );
        ids.push(...batch.map((i) => i.id));
      }
    } finally {
      await inst.close();
    }
    expect(new Set(ids).size).toBe(ITEMS);

    const results = await eight<WorkerResult>(
      WORKER,
      (i) => [instDir, `worker-${i}`, BATCH, url],
      (i) => `worker-${i}`,
    );

    const all = results.flatMap((r) => r.claimed);
    expect(all.length).toBe(ITEMS);
    expect(new Set(all).size).toBe(ITEMS);
    expect([...all].sort()).toEqual([...ids].sort());
    // More than one process did real work (otherwise this proves nothing about racing).
    expect(results.filter((w) => w.claimed.length > 0).length).toBeGreaterThan(1);

    const check = await openInstance({ dir: instDir, url });
    try {
      const claimedEvents = await check.events.read({ type: 'work_item_claimed', limit: 100_000 });
      expect(claimedEvents.length).toBe(ITEMS);
      expect(new Set(claimedEvents.map((e) => e.work_item_id)).size).toBe(ITEMS);
      // Each claimed event names the process that reported the claim.
      const byWorker = new Map(results.flatMap((r) => r.claimed.map((id) => [id, r.worker] as const)));
      for (const e of claimedEvents) expect(e.actor).toBe(byWorker.get(e.work_item_id!));
      expect(await check.work.counts()).toMatchObject({ done: ITEMS, pending: 0, in_flight: 0 });
      expect((await check.events.verify()).ok).toBe(true);
    } finally {
      await check.close();
    }
  }, 120_000);

  it('8 processes committing to one document: one success per version, no lost update', async () => {
    const TARGET = 150;
    const instDir = join(dir, 'commits');
    const url = storeUrl();
    const inst = await openInstance({ dir: instDir, url });
    try {
      await inst.docs.commit({
        kind: 'json',
        id: 'counter',
        expected_version: 0,
        body: { count: 0, log: [] },
      });
    } finally {
      await inst.close();
    }

    const results = await eight<RacerResult>(
      RACER,
      (i) => [instDir, `p${i}`, String(TARGET), url],
      (i) => `p${i}`,
    );

    // Every failure was a STATE_CONFLICT.
    expect(results.flatMap((r) => r.other)).toEqual([]);
    const wins = results.flatMap((r) => r.wins).sort((a, b) => a.version - b.version);
    // Versions 2..TARGET+1, each won by exactly one process.
    expect(wins.map((w) => w.version)).toEqual(Array.from({ length: TARGET }, (_, i) => i + 2));
    // Real contention happened: a conflict is a process that lost a version to another (which processes win
    // is the scheduler's business: on a loaded machine one may win them all).
    expect(results.reduce((n, r) => n + r.conflicts, 0)).toBeGreaterThan(0);

    const check = await openInstance({ dir: instDir, url });
    try {
      const doc = await check.docs.get({ kind: 'json', id: 'counter' });
      expect(doc.version).toBe(TARGET + 1);
      // The final body is exactly the successful commits applied in version order.
      expect(doc.body).toEqual({ count: TARGET, log: wins.map((w) => w.entry) });
      const history = await check.docs.history({ kind: 'json', id: 'counter', limit: 1000 });
      expect(history.entries.map((e) => e.version)).toEqual(
        Array.from({ length: TARGET + 1 }, (_, i) => i + 1),
      );
      expect(history.entries.every((e, i) => e.parent_version === i)).toBe(true);
      const events = await check.events.read({ type: 'state_committed', limit: 1000 });
      expect(events.length).toBe(TARGET + 1);
      expect((await check.events.verify()).ok).toBe(true);
    } finally {
      await check.close();
    }
  }, 120_000);
});
