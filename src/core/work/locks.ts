// Locks: a claim by `key` takes the lock item of that key (kind `lock`, made on first use), so one worker at a
// time holds it; a failed or cancelled lock is opened again first.
import {
  InvalidInputError,
  InvalidTransitionError,
  isAgentStateError,
  PermissionDeniedError,
} from '../../errors.js';
import { type ClaimInput, LOCK_KIND, type WorkItem } from '../types.js';
import { claimDirect } from './claim-direct.js';
import type { QueueParts } from './context.js';

/**
 * The lock `key`: its item (kind `lock`, made on first use) claimed by id. Held by another worker:
 * PERMISSION_DENIED naming the holder; resolved done: INVALID_TRANSITION (a finished lock stays finished);
 * failed or cancelled (its lease ran out too often, someone cancelled it): opened again first.
 */
export async function claimKey(w: QueueParts, i: ClaimInput): Promise<WorkItem> {
  const key = i.key!;
  if (i.id !== undefined || (i.kind !== undefined && i.kind !== LOCK_KIND) || (i.limit ?? 1) !== 1) {
    throw new InvalidInputError('claim: key names one lock: give it without id, another kind or a limit', {
      field: 'key',
    });
  }
  const worker = i.worker ?? w.ctx.defaultWorker;
  let item = await w.queue.enqueue({
    title: key,
    kind: LOCK_KIND,
    idempotency_key: key,
    ...(i.actor_kind === undefined ? {} : { actor_kind: i.actor_kind }),
  });
  if (item.kind !== LOCK_KIND) {
    throw new InvalidInputError(
      `claim: key ${JSON.stringify(key)} is the idempotency key of item ${item.id} (kind ${item.kind ?? 'none'}), not a lock: claim it by id`,
      { field: 'key', id: item.id },
    );
  }
  if (item.status === 'failed' || item.status === 'cancelled') {
    try {
      item = await w.queue.retry({
        id: item.id,
        ...(i.actor_kind === undefined ? {} : { actor_kind: i.actor_kind }),
      });
    } catch (err) {
      // Opened again by a racing claim: the claim below decides who holds it.
      if (!(isAgentStateError(err) && err.code === 'INVALID_TRANSITION')) throw err;
    }
  }
  if (item.status === 'in_flight' && item.lease_owner === worker) return item;
  const [claimed] = await claimDirect(w, { ...i, key: undefined, kind: undefined, id: item.id, limit: 1 });
  if (claimed) return claimed;
  const now = (await w.backend.work.get(item.id)) ?? item;
  if (now.status === 'done') {
    throw new InvalidTransitionError(
      `claim: lock ${JSON.stringify(key)} was resolved done; release a lock instead of resolving it`,
      {
        field: 'key',
        id: now.id,
        from: 'done',
      },
    );
  }
  if (now.status === 'in_flight' && now.lease_owner === worker) return now;
  throw new PermissionDeniedError(
    `claim: ${JSON.stringify(key)} is held by ${now.lease_owner ?? 'another worker'}${now.lease_expires_at ? ` until ${now.lease_expires_at}` : ''}: work on something else, or wait`,
    { field: 'key', id: now.id, holder: now.lease_owner },
  );
}
