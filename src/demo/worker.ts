// A demo worker process (forked by src/demo/main.ts): it opens the shared instance itself and runs the
// worker runtime (createWorker) on it: items claimed under a short lease, a durable step recorded,
// heartbeaten while it "works", resolved. It exits on its own once nothing is left to do. Usage: node dist/demo/worker.js <instance-dir> <worker-name> <lease-ms>
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { openInstance } from '../instance/instance.js';
import { createWorker } from '../worker/worker.js';

/** Messages a worker sends to the demo parent over IPC. */
export type WorkerMessage =
  | { type: 'claimed'; id: string; title: string; nth: number }
  | { type: 'lease_lost'; id: string; title: string }
  /** A durable step of an attempt came from the record an earlier attempt committed: it did not run again. */
  | { type: 'replayed'; id: string; title: string; step: string; attempt: number };

const IDLE_POLL_MS = 150;

const [dir, worker, leaseArg] = process.argv.slice(2);
const leaseMs = Number(leaseArg);
if (!dir || !worker || !Number.isInteger(leaseMs) || leaseMs <= 0 || !process.send) {
  process.stderr.write('usage: forked by the demo: worker.js <instance-dir> <worker-name> <lease-ms>\n');
  process.exit(2);
}
// If the demo parent goes away, stop too: a demo must never leave workers behind.
const onParentGone = () => process.exit(1);
process.on('disconnect', onParentGone);

function tell(msg: WorkerMessage): void {
  process.send?.(msg);
}

function workMs(payload: unknown): number {
  const ms = (payload as { work_ms?: unknown } | null)?.work_ms;
  return typeof ms === 'number' ? ms : 500;
}

const inst = await openInstance({ dir, worker });
// The worker runtime runs the loop: claim under a lease, heartbeat while the handler works, resolve, look again
// when nothing is ready. One item at a time, each completion committed at once, so the demo's timeline shows it.
const titles = new Map<string, string>();
let claimed = 0;
const runtime = createWorker({
  instance: inst,
  worker,
  concurrency: 1,
  leaseMs,
  heartbeatMs: leaseMs / 4,
  pollIntervalMs: IDLE_POLL_MS,
  batchDelayMs: 0,
  handlers: {
    '*': async (item, ctx) => {
      claimed += 1;
      titles.set(item.id, item.title);
      // A durable step: its result is committed before it returns, and a later attempt of this item (after
      // a crash) gets the record instead of running it again (docs/runs.md).
      let ran = false;
      await ctx.step('prepare', () => {
        ran = true;
        return { prepared_by: worker, attempt: ctx.attempt };
      });
      if (!ran)
        tell({ type: 'replayed', id: item.id, title: item.title, step: 'prepare', attempt: ctx.attempt });
      // The parent directs the demo: it answers every claim with 'go' (or, once, with SIGKILL).
      tell({ type: 'claimed', id: item.id, title: item.title, nth: claimed });
      await once(process, 'message');
      // "Work". `ctx.signal` fires if the lease is lost meanwhile (too slow): then the result is dropped.
      const started = Date.now();
      await sleep(workMs(item.payload), undefined, { signal: ctx.signal }).catch(() => {});
      return { took_ms: Date.now() - started };
    },
  },
});
// Too slow: the lease expired and the item went back to the queue, or another worker already finished it.
runtime.on('lost', (id) => tell({ type: 'lease_lost', id, title: titles.get(id) ?? id }));
// Nothing ready and nothing held: stop once the whole queue is finished (blocked items may still come free).
runtime.on('idle', () => {
  void inst.work.counts().then((c) => {
    if (c.pending + c.in_flight + c.waiting_human === 0) void runtime.stop();
  });
});
try {
  await runtime.start();
} finally {
  await inst.close();
}
process.off('disconnect', onParentGone);
process.disconnect?.();
