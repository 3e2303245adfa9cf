// Eight worker-runtime processes drain 10,000 items from one PostgreSQL instance: every item done exactly
// once in the store, every handler run once (no crash, so no batch is lost), each item claimed once and
// resolved once in the log, the chain verified.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openInstance } from '../../src/instance/instance.js';
import { auditOf } from '../helpers/audit.js';
import { PG_URL, postgresForThisFile } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

const WORKER = new URL('../fixtures/runtime-worker.mjs', import.meta.url).pathname;
const ITEMS = 10_000;

const schema = await postgresForThisFile();
const suite = schema === null ? describe.skip : describe;

/** One drain of the worker process; its `ran <id>` lines. */
function drain(dir: string, url: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKER, dir, url], {
      env: { ...process.env, RUNTIME_DRAIN: '1', RUNTIME_BATCH_SIZE: '100', RUNTIME_BATCH_DELAY_MS: '5' },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`worker exited ${code}: ${err}`));
      resolve(
        out
          .split('\n')
          .filter((l) => l.startsWith('ran '))
          .map((l) => l.slice(4)),
      );
    });
  });
}

suite('8 worker processes × 10,000 items on PostgreSQL', () => {
  it('every item done exactly once, audit clean', { timeout: 600_000 }, async () => {
    const u = new URL(PG_URL);
    u.searchParams.set('schema', schema!);
    const url = u.toString();
    const dir = join(tempDir('agentstate-runtime-'), 'inst');
    const seed = await openInstance({ dir, url });
    for (let k = 0; k < ITEMS; k += 1000) {
      await seed.work.enqueueMany(Array.from({ length: 1000 }, (_, j) => ({ title: `job ${k + j}` })));
    }
    await seed.close();

    const runs = await Promise.all(Array.from({ length: 8 }, () => drain(dir, url)));
    const ran = runs.flat();
    expect(ran).toHaveLength(ITEMS);
    expect(new Set(ran).size).toBe(ITEMS);
    // The work was shared (no process drained it alone).
    expect(runs.filter((r) => r.length > 0).length).toBeGreaterThan(1);

    const inst = await openInstance({ dir, url });
    try {
      expect(await inst.work.counts()).toMatchObject({ done: ITEMS, pending: 0, in_flight: 0, failed: 0 });
      const audit = await auditOf(inst);
      expect(audit.size).toBe(ITEMS);
      expect([...audit.values()].every((a) => a.claimed === 1 && a.resolved === 1)).toBe(true);
      expect((await inst.events.verify()).problems).toEqual([]);
    } finally {
      await inst.close();
    }
  });
});
