// A demo worker process (forked by src/demo/main.ts): it opens the shared instance itself, then
// claims items under a short lease, heartbeats while it "works", and resolves them. It exits on its
// own once nothing is left to do. Usage: node dist/demo/worker.js <instance-dir> <worker-name> <lease-ms>
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { AgentStateError } from '../errors.js';
import { openInstance } from '../instance/instance.js';

/** Messages a worker sends to the demo parent over IPC. */
export type WorkerMessage =
  | { type: 'claimed'; id: string; title: string; nth: number }
  | { type: 'lease_lost'; id: string; title: string };

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
let claimed = 0;
try {
  for (;;) {
    // One atomic statement: reclaims expired leases, then takes the best ready item (or none).
    const item = await inst.work.claim({ worker, lease_ms: leaseMs });
    if (!item) {
      const c = await inst.work.counts();
      if (c.pending + c.in_flight + c.waiting_human === 0) break; // the queue is finished
      await sleep(IDLE_POLL_MS); // blocked, or someone else holds the rest: look again soon
      continue;
    }
    claimed += 1;
    // The parent directs the demo: it answers every claim with 'go' (or, once, with SIGKILL).
    tell({ type: 'claimed', id: item.id, title: item.title, nth: claimed });
    await once(process, 'message');

    // "Work", keeping the lease alive. `attempt` is the fencing token: a stale holder cannot win.
    const lease = { id: item.id, worker, attempt: item.attempts };
    const beat = setInterval(() => {
      // A failed heartbeat needs no handling here: a lost lease makes the resolve below fail.
      inst.work.heartbeat({ ...lease, lease_ms: leaseMs }).catch(() => {});
    }, leaseMs / 4);
    const started = Date.now();
    try {
      await sleep(workMs(item.payload));
    } finally {
      clearInterval(beat);
    }
    try {
      await inst.work.resolve({ ...lease, status: 'done', result: { took_ms: Date.now() - started } });
    } catch (err) {
      // Too slow: the lease expired and the item went back to the queue (LEASE_LOST), or another
      // worker has already finished it (INVALID_TRANSITION). Either way, drop it and move on.
      const lost = err instanceof AgentStateError && ['LEASE_LOST', 'INVALID_TRANSITION'].includes(err.code);
      if (!lost) throw err;
      tell({ type: 'lease_lost', id: item.id, title: item.title });
    }
  }
} finally {
  await inst.close();
}
process.off('disconnect', onParentGone);
process.disconnect?.();
