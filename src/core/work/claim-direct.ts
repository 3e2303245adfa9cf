// One claim statement for one call, without coalescing: what a plain claim, a claimMany and a lock's claim
// (locks.ts) all come down to.
import type { ClaimInput, WorkItem } from '../types.js';
import type { QueueParts } from './context.js';
import { DEFAULT_LEASE_MS } from './inputs.js';
import { STORE_ACTOR_KIND } from './rules.js';

/** One claim statement for this call alone (no coalescing): up to `i.limit` ready items, or the item `i.id`. */
export function claimDirect(w: QueueParts, i: ClaimInput): Promise<WorkItem[]> {
  return w.backend.work.claim({
    claimers: [
      {
        worker: i.worker ?? w.ctx.defaultWorker,
        actor_kind: i.actor_kind ?? STORE_ACTOR_KIND,
        lease_ms: i.lease_ms ?? DEFAULT_LEASE_MS,
        limit: i.limit ?? 1,
      },
    ],
    kind: i.kind ?? null,
    id: i.id ?? null,
    now: w.ctx.clock(),
  });
}
