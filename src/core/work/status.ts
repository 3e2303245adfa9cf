// Status changes outside a lease: cancel (one or many), park for a human and unpark, retry (one or many). A
// human decision a document asked for, and a durable run's question, are cancelled or asked again only by a
// human (owners.ts).
import { InvalidInputError, isAgentStateError } from '../../errors.js';
import type { StatusChange } from '../backend.js';
import { itemEvent } from '../events/log.js';
import { checkInput, LIMITS } from '../input.js';
import type {
  ActorKind,
  CancelInput,
  CancelManyInput,
  JsonObject,
  RetryInput,
  RetryManyInput,
  WorkItem,
  WorkItemStatus,
} from '../types.js';
import { type CallProvenance, provenanceData, type QueueParts } from './context.js';
import { WORK_INPUTS } from './inputs.js';
import { humanDecisionRefusal, isRunQuestion, ownerOf, runQuestionRefusal } from './owners.js';
import { withFailedBlockers } from './reads.js';
import { ended, endedAll } from './resolves.js';
import { endedUnsuccessfully, STORE_ACTOR_KIND } from './rules.js';

/** The body of `WorkQueue.cancel` (its comment says what it does). */
export async function cancel(w: QueueParts, input: CancelInput, origin: CallProvenance): Promise<WorkItem> {
  return ended(w, await cancelOne(w, input, origin));
}

/** The cancel of `WorkQueue.cancel`, before the item's durable run is told (`ended`). */
export async function cancelOne(
  w: QueueParts,
  input: CancelInput,
  origin: CallProvenance,
): Promise<WorkItem> {
  const i = checkInput<CancelInput>('cancel', input, WORK_INPUTS.cancel);
  const human = i.actor_kind === 'human';
  const data = provenanceData(origin);
  try {
    // Only a human's cancel may match an item waiting for a human: the condition holds at the write.
    return await setStatus(
      w,
      i,
      human ? ['pending', 'in_flight', 'waiting_human'] : ['pending', 'in_flight'],
      'cancelled',
      'work_item_cancelled',
      data,
    );
  } catch (err) {
    if (human || !isAgentStateError(err) || err.code !== 'INVALID_TRANSITION') throw err;
    const current = await w.backend.work.get(i.id);
    if (current?.status !== 'waiting_human') throw err;
    if (ownerOf(current)) throw humanDecisionRefusal(current, 'cancel');
    if (isRunQuestion(current)) throw runQuestionRefusal(current, 'cancel');
    // An ordinary item parked for a human (its key never becomes a document's): anyone may cancel it.
    return setStatus(w, i, ['waiting_human'], 'cancelled', 'work_item_cancelled', data);
  }
}

/** The body of `WorkQueue.cancelMany` (its comment says what it does). */
export async function cancelMany(
  w: QueueParts,
  input: CancelManyInput,
  origin: CallProvenance,
): Promise<WorkItem[]> {
  const { ids, ...i } = checkInput<CancelManyInput>('cancel_many', input, WORK_INPUTS.cancel_many);
  const human = i.actor_kind === 'human';
  const data = provenanceData(origin);
  const seen = new Set<string>();
  const changes: StatusChange[] = [];
  for (const id of ids) {
    if (seen.has(id)) throw new InvalidInputError(`cancel_many names ${id} twice`, { field: 'ids', id });
    seen.add(id);
    // Whether an item is a document's decision never changes (its key does not), so this read decides
    // who may cancel it while parked; the write still holds only if its status is as allowed.
    const current = human ? null : await w.backend.work.get(id);
    const decision = current !== null && (ownerOf(current) !== null || isRunQuestion(current));
    if (decision && current.status === 'waiting_human') {
      throw ownerOf(current)
        ? humanDecisionRefusal(current, 'cancel')
        : runQuestionRefusal(current, 'cancel');
    }
    changes.push(
      statusChange(
        w,
        { id, ...i },
        decision ? ['pending', 'in_flight'] : ['pending', 'in_flight', 'waiting_human'],
        'cancelled',
        'work_item_cancelled',
        data,
      ),
    );
  }
  return endedAll(w, await w.backend.work.setStatus(changes));
}

/** The body of `WorkQueue.park` (its comment says what it does). */
export async function park(w: QueueParts, input: CancelInput): Promise<WorkItem> {
  const i = checkInput<CancelInput>('park', input, WORK_INPUTS.cancel);
  return setStatus(w, i, ['pending'], 'waiting_human', 'work_item_parked');
}

/** The body of `WorkQueue.unpark` (its comment says what it does). */
export async function unpark(w: QueueParts, input: CancelInput, origin: CallProvenance): Promise<WorkItem> {
  const i = checkInput<CancelInput>('unpark', input, WORK_INPUTS.cancel);
  const current = await w.backend.work.get(i.id);
  // A document's decision stays with the human: once pending, any worker could claim and answer it.
  if (current && ownerOf(current)) throw humanDecisionRefusal(current, 'unpark');
  if (current && isRunQuestion(current)) throw runQuestionRefusal(current, 'unpark');
  // The reason (a person's comment on why it goes back to the queue) is kept in the event.
  const data = { ...(i.reason === undefined ? {} : { reason: i.reason }), ...provenanceData(origin) };
  return setStatus(
    w,
    i,
    ['waiting_human'],
    'pending',
    'work_item_unparked',
    Object.keys(data).length === 0 ? undefined : data,
  );
}

/** The body of `WorkQueue.retry` (its comment says what it does). */
export async function retry(w: QueueParts, input: RetryInput): Promise<WorkItem> {
  const i = checkInput<RetryInput>('retry', input, WORK_INPUTS.retry);
  if (i.actor_kind === 'human') {
    const current = await w.backend.work.get(i.id);
    if (current && ownerOf(current) && endedUnsuccessfully(current.status)) {
      const asked = (await itemEvent(w.backend, i.id, 'first'))?.data;
      if (
        typeof asked === 'object' &&
        asked !== null &&
        !Array.isArray(asked) &&
        asked.status === 'waiting_human'
      ) {
        // A human decision ended (cancelled): a human asks it again, back to waiting for a human's answer,
        // never to pending where a worker could take it. The write holds only if it is still as read.
        return setStatus(w, i, [current.status], 'waiting_human', 'work_item_retried', {
          previous_status: current.status,
          previous_error: current.error,
          previous_attempts: current.attempts,
          ...(i.reason === undefined ? {} : { reason: i.reason }),
        });
      }
    }
  }
  const [item] = await w.queue.retryMany([i]);
  return item!;
}

/** The body of `WorkQueue.retryMany` (its comment says what it does). */
export async function retryMany(w: QueueParts, inputs: RetryInput[] | RetryManyInput): Promise<WorkItem[]> {
  if (!Array.isArray(inputs) && typeof inputs === 'object' && inputs !== null) {
    // One reason for several ids (the operation table's form): checked once, as a whole.
    const { ids, ...rest } = checkInput<RetryManyInput>('retry_many', inputs, WORK_INPUTS.retry_many);
    return retryChecked(
      w,
      ids.map((id) => ({ id, ...rest })),
    );
  }
  if (!Array.isArray(inputs) || inputs.length > LIMITS.claimLimit) {
    throw new InvalidInputError(`retryMany takes an array of at most ${LIMITS.claimLimit} retries`, {
      field: 'retries',
    });
  }
  return retryChecked(
    w,
    inputs.map((input) => checkInput<RetryInput>('retry', input, WORK_INPUTS.retry)),
  );
}

/** Retries checked inputs in one transaction (each id once), then says which still wait on a failed blocker. */
export async function retryChecked(w: QueueParts, checked: RetryInput[]): Promise<WorkItem[]> {
  const now = w.ctx.clock();
  const seen = new Set<string>();
  const qs = checked.map((i) => {
    if (seen.has(i.id))
      throw new InvalidInputError(`retryMany names ${i.id} twice`, { field: 'id', id: i.id });
    seen.add(i.id);
    return {
      id: i.id,
      reason: i.reason ?? null,
      actor: i.actor ?? w.ctx.defaultWorker,
      actor_kind: i.actor_kind ?? STORE_ACTOR_KIND,
      now,
    };
  });
  if (qs.length === 0) return [];
  // A retried item may still wait on a failed blocker of its own: say so at once.
  return withFailedBlockers(w, await w.backend.work.retry(qs));
}

/** A status change outside a lease, by the call's actor (a cancel's reason is the item's error). */
export async function setStatus(
  w: QueueParts,
  i: { id: string; reason?: string; actor?: string; actor_kind?: ActorKind },
  from: WorkItemStatus[],
  to: 'cancelled' | 'pending' | 'waiting_human',
  event: string,
  data?: JsonObject,
): Promise<WorkItem> {
  const [item] = await w.backend.work.setStatus([statusChange(w, i, from, to, event, data)]);
  return item!;
}

/** The backend's status change for `i` outside a lease, by the call's actor (see setStatus). */
export function statusChange(
  w: QueueParts,
  i: { id: string; reason?: string; actor?: string; actor_kind?: ActorKind },
  from: WorkItemStatus[],
  to: 'cancelled' | 'pending' | 'waiting_human',
  event: string,
  data?: JsonObject,
): StatusChange {
  return {
    id: i.id,
    from,
    to,
    event,
    result: null,
    error: to === 'cancelled' ? (i.reason ?? null) : null,
    actor: i.actor ?? w.ctx.defaultWorker,
    actor_kind: i.actor_kind ?? STORE_ACTOR_KIND,
    ...(data === undefined ? {} : { data }),
    now: w.ctx.clock(),
  };
}
