// What the holder of a lease does short of ending the item: heartbeats that extend it, a release that hands the
// item back without spending the attempt, and notes (fenced by the lease when a worker is named).
import { InvalidInputError } from '../../errors.js';
import type { Outcome } from '../backend.js';
import { checkInput, LIMITS } from '../input.js';
import type { AnnotateInput, HeartbeatInput, ReleaseInput, WorkItem } from '../types.js';
import type { HeartbeatQuery, QueueParts } from './context.js';
import { DEFAULT_LEASE_MS, WORK_INPUTS } from './inputs.js';
import { STORE_ACTOR_KIND } from './rules.js';

/** The body of `WorkQueue.heartbeat` (its comment says what it does). */
export async function heartbeat(w: QueueParts, input: HeartbeatInput): Promise<WorkItem> {
  const i = checkInput<HeartbeatInput>('heartbeat', input, WORK_INPUTS.heartbeat);
  const q: HeartbeatQuery = {
    id: i.id,
    worker: i.worker ?? w.ctx.defaultWorker,
    attempt: i.attempt ?? null,
    lease_ms: i.lease_ms ?? DEFAULT_LEASE_MS,
    now: w.ctx.clock(),
  };
  if (w.heartbeats) return w.heartbeats.submit(q);
  const [o] = await w.backend.work.heartbeat([q]);
  if (!o?.ok) throw o?.error;
  return o.value;
}

/** The body of `WorkQueue.heartbeatMany` (its comment says what it does). */
export async function heartbeatMany(
  w: QueueParts,
  inputs: HeartbeatInput[],
): Promise<Array<Outcome<WorkItem>>> {
  if (!Array.isArray(inputs) || inputs.length > LIMITS.claimLimit) {
    throw new InvalidInputError(`heartbeatMany takes an array of at most ${LIMITS.claimLimit} heartbeats`, {
      field: 'heartbeats',
    });
  }
  const now = w.ctx.clock();
  const qs = inputs.map((input): HeartbeatQuery => {
    const i = checkInput<HeartbeatInput>('heartbeat', input, WORK_INPUTS.heartbeat);
    return {
      id: i.id,
      worker: i.worker ?? w.ctx.defaultWorker,
      attempt: i.attempt ?? null,
      lease_ms: i.lease_ms ?? DEFAULT_LEASE_MS,
      now,
    };
  });
  return qs.length === 0 ? [] : w.backend.work.heartbeat(qs);
}

/** The body of `WorkQueue.release` (its comment says what it does). */
export async function release(w: QueueParts, input: ReleaseInput): Promise<WorkItem> {
  const i = checkInput<ReleaseInput>('release', input, WORK_INPUTS.release);
  const worker = i.worker ?? w.ctx.defaultWorker;
  return w.backend.work.release({
    id: i.id,
    worker,
    attempt: i.attempt ?? null,
    actor: i.actor ?? worker,
    actor_kind: i.actor_kind ?? STORE_ACTOR_KIND,
    now: w.ctx.clock(),
  });
}

/** The body of `WorkQueue.annotate` (its comment says what it does). */
export async function annotate(
  w: QueueParts,
  input: AnnotateInput & { worker?: string; attempt?: number },
): Promise<WorkItem> {
  const i = checkInput<AnnotateInput & { worker?: string; attempt?: number }>(
    'annotate',
    input,
    WORK_INPUTS.annotate,
  );
  const now = w.ctx.clock();
  return w.backend.work.annotate({
    id: i.id,
    notes: i.notes,
    actor: i.actor ?? i.worker ?? w.ctx.defaultWorker,
    actor_kind: i.actor_kind ?? STORE_ACTOR_KIND,
    now,
    lease: i.worker ? { id: i.id, worker: i.worker, attempt: i.attempt ?? null, now } : null,
  });
}
