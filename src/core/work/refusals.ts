// Why a conditional update of a work item matched no row, as the typed error each caller gets (NOT_FOUND,
// INVALID_TRANSITION, LEASE_LOST, PERMISSION_DENIED, STATE_CONFLICT), and how a call repeated after it
// succeeded (its reply lost) is recognised and answered with the item as it is. Shared by every backend.
import {
  type AgentStateError,
  InvalidTransitionError,
  isAgentStateError,
  LeaseLostError,
  NotFoundError,
  StateConflictError,
} from '../../errors.js';
import type { Outcome, RecordQuery, ResolveQuery, SignalQuery, StatusChange } from '../backend.js';
import { canonicalJson } from '../json.js';
import type { EventRecord, Json, WorkItem, WorkItemStatus } from '../types.js';
import {
  humanDecisionRefusal,
  humanDecisionRetryRefusal,
  isRunQuestion,
  ownerOf,
  runParentOf,
  runQuestionRefusal,
} from './owners.js';
import { endedUnsuccessfully, isTerminal } from './rules.js';

/**
 * Refuses a record whose `unless` condition came true (`signals`: how many signals of its name the item has
 * been sent by now): its wait must not hand the item back, the signal is there to take.
 */
export function checkUnless(q: RecordQuery, signals: number): void {
  if (q.unless && signals >= q.unless.count) {
    throw new StateConflictError(
      `work item ${q.id} was sent signal ${JSON.stringify(q.unless.signal)} meanwhile: the wait takes it instead of handing the item back`,
      { id: q.id, reason: 'signal_arrived', signal: q.unless.signal },
    );
  }
}

/** Refuses a signal to an item that is not there (NOT_FOUND) or has ended (INVALID_TRANSITION). */
export function checkSignal(current: WorkItem | null, q: SignalQuery): asserts current is WorkItem {
  if (!current) throw new NotFoundError(`work item ${q.id} not found`, { id: q.id });
  if (isTerminal(current.status)) {
    throw new InvalidTransitionError(
      `cannot signal work item ${q.id}: it is ${current.status}, and no run of it will wait again (retry it first)`,
      { id: q.id, from: current.status },
    );
  }
}

/** Whether a signal named `name` wakes `current`: it is handed back by a wait for that name (its last record). */
export function wakesFor(
  current: WorkItem,
  last: { type: string; name?: string } | null,
  name: string,
): boolean {
  return current.status === 'pending' && last?.type === 'waiting' && last.name === name;
}

/**
 * Refuses a record of a durable run (RecordQuery) whose condition does not hold on `current`, the item as it
 * is in the record's transaction: the lease is not the worker's on that attempt (LEASE_LOST, or NOT_FOUND /
 * INVALID_TRANSITION as explainLeaseFailure says), or a person's reset finds the item in flight.
 */
export function checkRecord(current: WorkItem | null, q: RecordQuery): void {
  if (q.lease === null) {
    if (!current) throw new NotFoundError(`work item ${q.id} not found`, { id: q.id });
    if (current.status === 'in_flight') {
      throw new InvalidTransitionError(
        `cannot reset a step of work item ${q.id}: it is in flight (held by ${current.lease_owner}); reset it once that attempt has ended`,
        { id: q.id, from: current.status },
      );
    }
    return;
  }
  const l = { id: q.id, worker: q.lease.worker, attempt: q.lease.attempt, now: q.now };
  const held =
    current !== null &&
    current.status === 'in_flight' &&
    current.lease_owner === l.worker &&
    current.attempts === l.attempt &&
    // Stryker disable next-line ConditionalExpression: equivalent: Date.parse(null) is NaN, never after now
    current.lease_expires_at !== null &&
    Date.parse(current.lease_expires_at) > q.now;
  if (!held) explainLeaseFailure(current, l, 'record a step of');
}

/**
 * Explains why a fenced update (resolve, heartbeat, release) matched no row, by throwing the right
 * typed error: NOT_FOUND, INVALID_TRANSITION (not in flight) or LEASE_LOST (someone else's lease, a newer
 * attempt, or an expired lease).
 */
export function explainLeaseFailure(
  current: WorkItem | null,
  q: { id: string; worker: string; attempt: number | null; now: number },
  action: string,
): never {
  if (!current) throw new NotFoundError(`work item ${q.id} not found`, { id: q.id });
  const details = {
    id: q.id,
    status: current.status,
    worker: q.worker,
    lease_owner: current.lease_owner,
    attempt: q.attempt,
    current_attempt: current.attempts,
  };
  if (current.status !== 'in_flight') {
    const neverClaimed = current.attempts === 0;
    const stillMine =
      current.lease_owner === q.worker && (q.attempt === null || q.attempt === current.attempts);
    if (neverClaimed || (stillMine && current.status !== 'pending')) {
      throw new InvalidTransitionError(
        `cannot ${action} work item ${q.id}: it is ${current.status}, not in_flight`,
        {
          ...details,
          from: current.status,
        },
      );
    }
    throw new LeaseLostError(
      `cannot ${action} work item ${q.id}: the lease of ${q.worker} is gone (the item is now ${current.status}${
        current.lease_owner && current.lease_owner !== q.worker ? `, last held by ${current.lease_owner}` : ''
      })`,
      details,
    );
  }
  if (current.lease_owner !== q.worker) {
    throw new LeaseLostError(
      `cannot ${action} work item ${q.id}: it is leased to ${current.lease_owner}, not ${q.worker}`,
      details,
    );
  }
  if (q.attempt !== null && current.attempts !== q.attempt) {
    throw new LeaseLostError(
      `cannot ${action} work item ${q.id}: your attempt ${q.attempt} is not the current attempt ${current.attempts}`,
      details,
    );
  }
  throw new LeaseLostError(`cannot ${action} work item ${q.id}: the lease of ${q.worker} expired`, {
    ...details,
    lease_expires_at: current.lease_expires_at,
  });
}

/**
 * A refusal of one item's transition (what explainLeaseFailure, explainStatusFailure and the human-decision
 * rule throw), as opposed to a failure of the storage: a batch answering each item on its own gives it to
 * that item's caller alone.
 */
export function isRefusal(err: unknown): err is AgentStateError {
  return (
    isAgentStateError(err) &&
    (err.code === 'LEASE_LOST' ||
      err.code === 'STATE_CONFLICT' ||
      err.code === 'INVALID_TRANSITION' ||
      err.code === 'NOT_FOUND' ||
      err.code === 'PERMISSION_DENIED')
  );
}

/**
 * A refusal caught by a batch, as the outcome of its item when the batch answers each item on its own
 * (`each`); a failure of the storage, or any refusal of a batch that stands or falls as one, is thrown on.
 */
export function refusedOutcome(err: unknown, each = true): Outcome<never> {
  if (!each || !isRefusal(err)) throw err;
  return { ok: false, error: err };
}

/** The refusal `explain` throws, as an outcome (a failure of the storage is thrown on). */
export function refusalOf(explain: () => never): Outcome<never> {
  try {
    explain();
  } catch (err) {
    return refusedOutcome(err);
  }
}

/** Explains why a status change outside a lease matched no row. */
export function explainStatusFailure(current: WorkItem | null, id: string, to: WorkItemStatus): never {
  if (!current) throw new NotFoundError(`work item ${id} not found`, { id });
  throw new InvalidTransitionError(`work item ${id} cannot go from ${current.status} to ${to}`, {
    id,
    from: current.status,
    to,
  });
}

/** A resolve retried after its first call succeeded (e.g. the reply was lost) returns the item unchanged. */
export function isRepeatedResolve(
  current: WorkItem | null,
  q: {
    worker: string;
    attempt: number | null;
    status: 'done' | 'failed';
    error: string | null;
    retry_at?: number | null;
  },
): boolean {
  if (current === null) return false;
  if (current.status === 'pending') {
    // A failure sent back to wait for its retry: no lease owner is left to recognise it by, so the attempt
    // (no later claim has taken it), the retry time and the error it set must all match.
    return (
      q.status === 'failed' &&
      // Stryker disable next-line ConditionalExpression: equivalent: a null attempt never equals a number of attempts
      q.attempt !== null &&
      q.attempt === current.attempts &&
      // Stryker disable next-line ConditionalExpression: equivalent: a retried item's not_before is never the epoch that null would make
      q.retry_at != null &&
      current.not_before === new Date(q.retry_at).toISOString() &&
      current.error === q.error
    );
  }
  return (
    current.status === q.status &&
    current.lease_owner === q.worker &&
    (q.attempt === null || q.attempt === current.attempts)
  );
}

/**
 * A resolve retried after it finished an item waiting for a human (`humanResolution`: no lease, so no lease
 * owner or attempt to recognise the retry by): the item holds the same status, result and error, and its
 * newest event is that resolution, by the same actor. A resolution inside a lease names its worker and
 * attempt (`resolvedEvent`), so a late worker whose lease is gone is never taken for the retry.
 */
export function isRepeatedHumanResolution(
  current: WorkItem,
  newest: Pick<EventRecord, 'type' | 'actor' | 'data'> | null,
  q: { worker: string; status: 'done' | 'failed'; result: Json; error: string | null },
): boolean {
  const data = newest?.data;
  return (
    newest?.type === 'work_item_resolved' &&
    newest.actor === q.worker &&
    // Stryker disable next-line ConditionalExpression: equivalent: event data is JSON; a string or number has no worker and fails isRepeatedAnswer's status
    typeof data === 'object' &&
    data !== null &&
    !Array.isArray(data) &&
    data.worker === undefined &&
    isRepeatedAnswer(current, q)
  );
}

/** How a resolve finishes an item waiting for a human (no lease to check): a status change with its event. */
export function humanResolution(q: ResolveQuery): StatusChange {
  return {
    id: q.id,
    from: ['waiting_human'],
    to: q.status,
    event: 'work_item_resolved',
    result: q.result,
    error: q.error,
    actor: q.worker,
    actor_kind: q.actor_kind,
    now: q.now,
  };
}

/**
 * What a fenced resolve whose update matched no row comes to, from the item as it is now: null for a resolve
 * repeated after it succeeded (the item stands as it is); for an item waiting for a human that no document
 * owns, the status change that resolves it outside a lease (`humanResolution`); anything else is refused
 * (a document's human decision, PERMISSION_DENIED; or why the lease does not hold, explainLeaseFailure).
 */
export function unmatchedResolve(current: WorkItem | null, q: ResolveQuery): StatusChange | null {
  if (current && isRepeatedResolve(current, q)) return null;
  if (current?.status !== 'waiting_human') explainLeaseFailure(current, q, 'resolve');
  if (ownerOf(current)) throw humanDecisionRefusal(current, 'resolve');
  if (isRunQuestion(current) && q.actor_kind !== 'human') throw runQuestionRefusal(current, 'resolve');
  return humanResolution(q);
}

/** A repeated answer to an item already finished with the same status, result and error (a retry after a lost reply). */
export function isRepeatedAnswer(
  current: WorkItem,
  q: { status: WorkItemStatus; result: Json; error: string | null },
): boolean {
  return (
    current.status === q.status &&
    current.error === q.error &&
    canonicalJson(current.result) === canonicalJson(q.result ?? null)
  );
}

/** Why a retry matched no row: NOT_FOUND, a human decision (PERMISSION_DENIED), or not failed/cancelled. */
export function explainRetryFailure(current: WorkItem | null, id: string): never {
  if (!current) throw new NotFoundError(`work item ${id} not found`, { id });
  if (ownerOf(current) && endedUnsuccessfully(current.status)) throw humanDecisionRetryRefusal(current);
  if (isRunQuestion(current) && endedUnsuccessfully(current.status)) {
    throw new InvalidTransitionError(
      // Stryker disable next-line OptionalChaining: equivalent: isRunQuestion held just above
      `cannot retry work item ${id}: it is a question the run of ${runParentOf(current)?.parent} asked, which took its end as the answer; to ask again, reset the run's ask step (agentstate step reset) and retry the run`,
      { id, from: current.status, to: 'pending', rule: 'run-question' },
    );
  }
  throw new InvalidTransitionError(
    `cannot retry work item ${id}: it is ${current.status}; only a failed or cancelled item can be retried`,
    { id, from: current.status, to: 'pending' },
  );
}
