// Claims: a call takes ready items under a lease, in one atomic statement. Overlapping single claims on one
// handle are coalesced into one claimMany per kind (claimerOf); a claim by `key` is a lock's (locks.ts).
import { Coalescer } from '../coalesce.js';
import { checkInput } from '../input.js';
import type { ClaimInput, WorkItem } from '../types.js';
import { claimDirect } from './claim-direct.js';
import type { ClaimCall, QueueParts } from './context.js';
import { DEFAULT_LEASE_MS, WORK_INPUTS } from './inputs.js';
import { claimKey } from './locks.js';
import { STORE_ACTOR_KIND } from './rules.js';

/** The body of `WorkQueue.claim` (its comment says what it does). */
export async function claim(w: QueueParts, input: ClaimInput): Promise<WorkItem | null> {
  const i = checkInput<ClaimInput>('claim', input, WORK_INPUTS.claim);
  if (i.key !== undefined) return claimKey(w, i);
  if (w.coalesce && i.id === undefined) {
    if ((i.limit ?? 1) === 1) {
      // Overlapping claims on this handle are served by one claimMany, one item to each.
      return claimerOf(w, i.kind ?? null).submit({
        worker: i.worker ?? w.ctx.defaultWorker,
        actor_kind: i.actor_kind ?? STORE_ACTOR_KIND,
        lease_ms: i.lease_ms ?? DEFAULT_LEASE_MS,
      });
    }
  }
  const [item] = await claimDirect(w, { ...i, limit: 1 });
  return item ?? null;
}

/** The body of `WorkQueue.claimMany` (its comment says what it does). */
export async function claimMany(w: QueueParts, input: ClaimInput): Promise<WorkItem[]> {
  const i = checkInput<ClaimInput>('claim', input, WORK_INPUTS.claim);
  if (i.key !== undefined) {
    const item = await claimKey(w, i);
    return item ? [item] : [];
  }
  return claimDirect(w, i);
}

/** The coalescer of the claim() calls that ask for `kind`: one claimMany serves overlapping calls, one item to each. */
export function claimerOf(w: QueueParts, kind: string | null): Coalescer<ClaimCall, WorkItem | null> {
  let c = w.claims.get(kind);
  if (!c) {
    c = new Coalescer(async (calls) => {
      const items = await w.backend.work.claim({
        claimers: calls.map((x) => ({ ...x, limit: 1 })),
        kind,
        id: null,
        now: w.ctx.clock(),
      });
      // One item per claimer, in turn: the first calls get items, the rest null.
      return calls.map((_, k) => ({ ok: true as const, value: items[k] ?? null }));
    }, w.coalesce!);
    w.claims.set(kind, c);
  }
  return c;
}
