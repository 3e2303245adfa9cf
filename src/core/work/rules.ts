// The work-item state machine shared by every backend: the legal transitions, the stream a work item's events
// go to and the event each transition appends (built by its codec, codecs/work-items.ts), the actor kind of
// what the store does on its own and of each claimer of a batch claim, and the statuses a failure ends in.
import type { Claimer, NewEvent } from '../backend.js';
import type { ActorKind, JsonObject, WorkItem, WorkItemStatus } from '../types.js';

/** Legal status changes. done, failed and cancelled are terminal. */
export const TRANSITIONS: Record<WorkItemStatus, readonly WorkItemStatus[]> = {
  pending: ['in_flight', 'waiting_human', 'cancelled'],
  in_flight: ['done', 'failed', 'pending', 'waiting_human', 'cancelled'],
  waiting_human: ['pending', 'done', 'failed', 'cancelled'],
  done: [],
  failed: [],
  cancelled: [],
};

/** Whether a work item in `status` can move no further (done, failed or cancelled; a retry re-opens a failed or cancelled one). */
export function isTerminal(status: WorkItemStatus): boolean {
  return TRANSITIONS[status].length === 0;
}

/** Whether the state machine lets a work item move from `from` to `to` in one step. */
export function canTransition(from: WorkItemStatus, to: WorkItemStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/**
 * An item's attempts for people: started, and how many are left while it is unfinished (`2 (1 left)`; in
 * flight, left after the running one). Never `attempts/max_attempts`: an attempt handed back (release, a
 * stop) raises max_attempts by one so it is not spent, and that quotient seems to grow (`1/4`, then `2/4`).
 */
export function attemptsText(i: Pick<WorkItem, 'attempts' | 'max_attempts' | 'status'>): string {
  if (isTerminal(i.status)) return String(i.attempts);
  const left = Math.max(0, i.max_attempts - i.attempts);
  return `${i.attempts} (${left} left${i.status === 'in_flight' ? ' after it' : ''})`;
}

/** The stream a work item's events go to. */
export function workItemStream(id: string): string {
  return `work_item:${id}`;
}

/**
 * The actor kind of what the store does on its own (a reclaimed lease, a replay, the dependants a failure
 * cancels) and of calls that name none, as for documents.
 */
export const STORE_ACTOR_KIND: ActorKind = 'system';

/**
 * Builds the event that records a transition of `item`. Every work-item event records `actor_kind` in its
 * data: a person's cancel and a model's call naming the same actor never look alike in the log.
 */
export function workItemEvent(
  type: string,
  item: WorkItem,
  data: JsonObject,
  actor: string | null,
  actorKind: ActorKind,
  now: number,
): NewEvent {
  return {
    type,
    stream: workItemStream(item.id),
    data: { ...data, actor_kind: actorKind },
    actor,
    correlation_id: null,
    causation_id: null,
    work_item_id: item.id,
    created_at: now,
  };
}

/**
 * The actor kind of the claimer that took the `n`-th item (1-based) of a claim that hands ready items to its
 * claimers in turn, each up to its limit.
 */
export function claimerKind(claimers: readonly Claimer[], n: number): ActorKind {
  let hi = 0;
  for (const c of claimers) {
    hi += c.limit;
    if (n <= hi) return c.actor_kind;
  }
  return STORE_ACTOR_KIND;
}

/** The statuses a blocker can end in that keep its dependants from ever becoming ready (until retried). */
export const UNSUCCESSFUL: readonly WorkItemStatus[] = ['failed', 'cancelled'];

/** The statuses a retry takes an item from. */
export const RETRYABLE: readonly WorkItemStatus[] = UNSUCCESSFUL;

/** Whether `status` is one a failure ends in (failed or cancelled): what keeps dependants waiting, and what a retry takes. */
export function endedUnsuccessfully(status: WorkItemStatus): boolean {
  return UNSUCCESSFUL.includes(status);
}

/** What a dependant cancelled by the failure of its blocker records as its error. */
export function cascadeError(blocker: Pick<WorkItem, 'id' | 'status'>): string {
  return `blocker ${blocker.id} ended ${blocker.status}`;
}
