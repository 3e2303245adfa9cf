// The worker runtime's crash contract (docs/worker.md), on every backend: a worker SIGKILLed after handlers
// returned but before their batch committed. After a restart (on a clock past the dead worker's leases)
// every item is done; no item whose completion was committed runs again; the items of the lost batch run
// again, on a new attempt; no attempt is claimed twice; the log verifies.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { auditOf } from '../helpers/audit.js';
import { backendsForThisFile } from '../helpers/backends.js';

const WORKER = new URL('../fixtures/runtime-worker.mjs', import.meta.url).pathname;
const backends = await backendsForThisFile();

interface Run {
  claimed: string[];
  ran: string[];
  committed: string[];
}

/** Runs the worker process; kills it with SIGKILL once `killWhen(run)` holds (never, to let it drain). */
function runWorker(
  args: string[],
  env: Record<string, string>,
  killWhen?: (r: Run) => boolean,
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKER, ...args], { env: { ...process.env, ...env } });
    const run: Run = { claimed: [], ran: [], committed: [] };
    let buf = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const parts = buf.split('\n');
      buf = parts.pop()!;
      for (const l of parts) {
        const [what, id] = l.split(' ');
        if (what === 'claimed') run.claimed.push(id!);
        if (what === 'ran') run.ran.push(id!);
        if (what === 'committed') run.committed.push(id!);
      }
      if (killWhen?.(run)) child.kill('SIGKILL');
    });
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code, signal) => {
      if (killWhen ? signal === 'SIGKILL' : code === 0) resolve(run);
      else reject(new Error(`worker ended with ${signal ?? code}: ${err}`));
    });
  });
}

describe.each(backends)('$name: worker runtime SIGKILLed mid-batch', (b) => {
  it('runs again only the uncommitted batch; every item done once in the store; audit clean', async () => {
    const key = `runtime-${b.name}`;
    const seed = await b.open(key);
    await seed.work.enqueueMany(Array.from({ length: 300 }, (_, k) => ({ title: `job ${k}` })));
    await seed.close();
    const [, dir, , url] = b.cliArgs(key);
    const args = url ? [dir!, url] : [dir!];
    // Batches of 20 that wait (almost) forever for company, and handlers that stop returning after 75:
    // three batches commit, the last 15 completions wait in memory, and the kill loses them.
    const first = await runWorker(
      args,
      { RUNTIME_BATCH_SIZE: '20', RUNTIME_BATCH_DELAY_MS: '3600000', RUNTIME_HANG_AFTER: '75' },
      (r) => r.committed.length === 60 && r.ran.length === 75,
    );
    const committed = new Set(first.committed);
    const uncommitted = first.ran.filter((id) => !committed.has(id));
    expect(uncommitted).toHaveLength(15);
    // Claimed and never committed (the lost batch, the hung handlers, the local queue): a new attempt. (A
    // claim the store committed just as the kill landed may not have been printed: those too.)
    const retried = new Set(first.claimed.filter((id) => !committed.has(id)));

    // Two hours later on the store's clock: the dead worker's leases (60 s) have run out.
    const second = await runWorker(args, {
      RUNTIME_CLOCK_OFFSET_MS: String(2 * 3_600_000),
      RUNTIME_DRAIN: '1',
    });
    const reran = new Set(second.ran);
    for (const id of committed) expect(reran.has(id), `${id} was committed, then run again`).toBe(false);
    for (const id of uncommitted)
      expect(reran.has(id), `${id} was lost with its batch, not run again`).toBe(true);
    expect(new Set(second.ran).size).toBe(second.ran.length);

    const inst = await b.open(key);
    try {
      const items = await inst.work.list({ limit: 1000 });
      expect(items).toHaveLength(300);
      for (const i of items) {
        expect(i.status, i.id).toBe('done');
        if (committed.has(i.id)) expect(i.attempts, i.id).toBe(1);
        else if (retried.has(i.id)) expect(i.attempts, i.id).toBe(2);
        else expect([1, 2], i.id).toContain(i.attempts);
      }
      // Each attempt claimed once, each item resolved once, in the log.
      const audit = await auditOf(inst);
      for (const i of items) expect(audit.get(i.id), i.id).toEqual({ claimed: i.attempts, resolved: 1 });
      expect((await inst.events.verify()).problems).toEqual([]);
    } finally {
      await inst.close();
    }
  });
});

describe('an idle worker process', () => {
  it('keeps running while nothing is ready, and runs what is enqueued later', async () => {
    const b = backends[0]!;
    const key = 'runtime-idle';
    const seed = await b.open(key);
    const [, dir] = b.cliArgs(key);
    const child = spawn(process.execPath, [WORKER, dir!], { env: { ...process.env } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    try {
      await expect.poll(() => out.includes('idle\n'), { timeout: 30_000 }).toBe(true);
      const item = await seed.work.enqueue({ title: 'late' });
      await expect.poll(() => out.includes(`committed ${item.id} done`), { timeout: 30_000 }).toBe(true);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
      await seed.close();
    }
  });
});
