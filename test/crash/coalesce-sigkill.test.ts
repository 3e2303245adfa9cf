// A process SIGKILLed while its coalesced claims and resolves are in flight: every claim and resolve it
// acknowledged is in the store and in the item's history, nothing half-written remains, the log verifies.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { backendsForThisFile } from '../helpers/backends.js';

const WORKER = new URL('../fixtures/coalesce-worker.mjs', import.meta.url).pathname;
const backends = await backendsForThisFile();

/** Runs the worker on the instance `args` name and SIGKILLs it after `acks` acknowledged resolves. */
function runUntilKilled(args: string[], acks: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKER, ...args]);
    const lines: string[] = [];
    let buf = '';
    let err = '';
    let resolved = 0;
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const parts = buf.split('\n');
      buf = parts.pop()!;
      for (const l of parts) if (l.startsWith('resolved ')) resolved += 1;
      lines.push(...parts);
      if (resolved >= acks) child.kill('SIGKILL');
    });
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (_code, signal) => {
      if (signal === 'SIGKILL') resolve(lines);
      else reject(new Error(`worker ended without being killed (${lines.at(-1)}): ${err}`));
    });
  });
}

describe.each(backends)('$name: SIGKILL mid-batch', (b) => {
  it('loses no acknowledged claim or resolve of coalesced calls', async () => {
    const key = `coalesce-${b.name}`;
    const seed = await b.open(key);
    await seed.work.enqueueMany(Array.from({ length: 1000 }, (_, k) => ({ title: `job ${k}` })));
    await seed.close();
    // The worker opens the same instance: the same folder, on PostgreSQL the same schema and name.
    const [, dir, , url] = b.cliArgs(key);
    const lines = await runUntilKilled(url ? [dir!, url] : [dir!], 150);
    const claimed = lines.filter((l) => l.startsWith('claimed ')).map((l) => l.split(' '));
    const resolved = lines.filter((l) => l.startsWith('resolved ')).map((l) => l.split(' '));
    expect(resolved.length).toBeGreaterThanOrEqual(150);

    const inst = await b.open(key);
    try {
      for (const [, id, worker] of resolved) {
        expect(await inst.work.get(id!)).toMatchObject({
          status: 'done',
          result: { by: worker },
          attempts: 1,
        });
        const h = (await inst.events.read({ work_item_id: id! })).map((e) => [e.type, e.actor]);
        expect(h).toEqual([
          ['work_item_enqueued', expect.any(String)],
          ['work_item_claimed', worker],
          ['work_item_resolved', worker],
        ]);
      }
      for (const [, id, worker] of claimed) {
        const item = await inst.work.get(id!);
        expect(item.lease_owner).toBe(worker);
        expect(['in_flight', 'done']).toContain(item.status);
      }
      // The calls did coalesce: some batches hold more than one item.
      expect(
        await inst.events.read({ type: ['work_items_claimed', 'work_items_resolved'], limit: 10 }),
      ).not.toEqual([]);
      // Every item the log says is claimed or done has its row in that state, and nothing else moved.
      const v = await inst.events.verify();
      expect(v.problems).toEqual([]);
      const counts = await inst.work.counts();
      expect(counts.done).toBeGreaterThanOrEqual(resolved.length);
      expect(counts.pending + counts.in_flight + counts.done).toBe(1000);
    } finally {
      await inst.close();
    }
  });
});
