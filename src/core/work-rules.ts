// Work-item rules shared by every backend: the legal transitions, the streams and batches events are written
// in, and why a conditional update matched no row. The event each transition appends is its codec's
// (codecs/work-items.ts).
import {
  type AgentStateError,
  InvalidTransitionError,
  isAgentStateError,
  LeaseLostError,
  NotFoundError,
  PermissionDeniedError,
  StateConflictError,
} from '../errors.js';
import type {
  Claimer,
  LimitChange,
  NewEvent,
  Outcome,
  RecordQuery,
  ResolveQuery,
  SignalQuery,
  StatusChange,
  WorkHistory,
} from './backend.js';
import { canonicalJson } from './json.js';
import type { ActorKind, EventRecord, Json, JsonObject, WorkItem, WorkItemStatus } from './types.js';

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

/** The stream of a concurrency key's limit events. */
export function limitStream(key: string): string {
  return `work_limit:${key}`;
}

/**
 * work_limit_set (the limit as it is now) or work_limit_removed: the audit of a key's limit, appended in the
 * transaction that changes it. Claims count against limits but write no limit event.
 */
export function limitEvent(q: LimitChange): NewEvent {
  const data: JsonObject = q.limit
    ? {
        key: q.key,
        max_in_flight: q.limit.max_in_flight,
        rate: q.limit.rate ? { count: q.limit.rate.count, period_ms: q.limit.rate.period_ms } : null,
      }
    : { key: q.key };
  return {
    type: q.limit ? 'work_limit_set' : 'work_limit_removed',
    stream: limitStream(q.key),
    data: { ...data, actor_kind: q.actor_kind },
    actor: q.actor,
    correlation_id: null,
    causation_id: null,
    work_item_id: null,
    created_at: q.now,
  };
}

/** NOT_FOUND: a limit removed where there is none. */
export function noLimit(key: string): NotFoundError {
  return new NotFoundError(`concurrency key ${key} has no limit`, { key });
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

/**
 * Idempotency keys of the work items a document's commit enqueues as effects: `doc:<kind>/<id>#<key>`.
 * Only the store writes them (a plain enqueue refuses the prefix), so such an item is known to belong to
 * its document; waiting for a human, it is a human decision that only a human's answer resolves.
 */
export const OWNED_KEY_PREFIX = 'doc:';

/**
 * Idempotency keys of the items a schedule's ticks enqueue: `schedule:<name>@<tick>`. Only the scheduler
 * writes them (a plain enqueue refuses the prefix), so no caller can take a tick's key first with an item of
 * its own, which the scheduler would then take for the tick's.
 */
export const SCHEDULE_KEY_PREFIX = 'schedule:';

/** Passed to `WorkQueue.enqueueMany` by the scheduler alone: it may write `schedule:` keys. Not exported by the package. */
export const AS_SCHEDULER: unique symbol = Symbol('agentstate.scheduler');

/**
 * Idempotency keys of the items a durable run enqueues: `run:<parent>#<role>#<step key>#<n>`, a child
 * (`spawn`) or a question for a person (`ask`). Only a run writes them (a plain enqueue refuses the prefix),
 * so such an item is known to belong to its parent's run, which its end wakes; a question waiting for a
 * human is answered, cancelled or put back only by a human.
 */
export const RUN_KEY_PREFIX = 'run:';

/** Passed to `WorkQueue.enqueueMany` by a durable run alone: it may write `run:` keys. Not exported by the package. */
export const AS_RUN: unique symbol = Symbol('agentstate.run');

/** What a durable run enqueued: a child of a spawn, or a question of an ask. */
export type RunRole = 'spawn' | 'ask';

/** The idempotency key of the `n`-th item the run of `parent` enqueues in the step whose key is `stepKey`. */
export function runKey(parent: string, role: RunRole, stepKey: string, n: number): string {
  return `${RUN_KEY_PREFIX}${parent}#${role}#${stepKey}#${n}`;
}

/** The run `item` belongs to (its parent, and what it is to it), or null for an item no run enqueued. */
export function runParentOf(
  item: Pick<WorkItem, 'idempotency_key'>,
): { parent: string; role: RunRole; stepKey: string; n: number } | null {
  const key = item.idempotency_key;
  if (key === null || !key.startsWith(RUN_KEY_PREFIX)) return null;
  const [parent, role, stepKey, n] = key.slice(RUN_KEY_PREFIX.length).split('#');
  // Stryker disable next-line StringLiteral: equivalent: with fewer than four parts the step key is missing first
  if (!parent || (role !== 'spawn' && role !== 'ask') || !stepKey || !/^\d+$/.test(n ?? '')) return null;
  return { parent, role, stepKey, n: Number(n) };
}

/** The signal a run's child or question sends its parent when it ends, which the parent's join or ask waits for. */
export function runSignalName(role: RunRole, stepKey: string): string {
  return `${role === 'ask' ? 'answer' : 'join'}:${stepKey}`;
}

/** Whether `item` is a durable run's question for a person (only a human answers, cancels or unparks it). */
export function isRunQuestion(item: Pick<WorkItem, 'idempotency_key'>): boolean {
  return runParentOf(item)?.role === 'ask';
}

/** Why anyone but a human may not answer, cancel or unpark a run's question. */
export function runQuestionRefusal(item: WorkItem, action: string): PermissionDeniedError {
  // Stryker disable next-line OptionalChaining: equivalent: only a run's question is refused this way
  const parent = runParentOf(item)?.parent;
  return new PermissionDeniedError(
    `cannot ${action} work item ${item.id}: it is a question the run of ${parent} asked a person; a human answers it (resolve it done with the answer as a human: actor_kind human and the name of who answered; CLI: agentstate resolve ${item.id} done --result '{"answer":…}' --actor <name> --actor-kind human)`,
    { id: item.id, run: parent, rule: 'human-decision' },
  );
}

export function ownedKey(kind: string, id: string, key: string): string {
  return `${OWNED_KEY_PREFIX}${kind}/${id}#${key}`;
}

/** The document that enqueued `item` as an effect, or null for an ordinary item. */
export function ownerOf(item: Pick<WorkItem, 'idempotency_key'>): { kind: string; id: string } | null {
  const key = item.idempotency_key;
  if (key === null || !key.startsWith(OWNED_KEY_PREFIX)) return null;
  const slash = key.indexOf('/');
  const hash = key.lastIndexOf('#');
  // Stryker disable next-line EqualityOperator: equivalent: the slash comes after the four-character prefix, and # and / never share a place
  if (slash < 0 || hash < slash) return null;
  return { kind: key.slice(OWNED_KEY_PREFIX.length, slash), id: key.slice(slash + 1, hash) };
}

/** Why an item waiting for a human decision cannot be resolved, unparked or claimed like other work. */
export function humanDecisionRefusal(item: WorkItem, action: string): PermissionDeniedError {
  const owner = ownerOf(item)!;
  const how =
    action === 'cancel'
      ? `only a human cancels it (actor_kind human and the name of who cancels; ` +
        `CLI: agentstate cancel ${item.id} --actor <name> --actor-kind human)`
      : `a human answers it: resolve it done with the answer as a human (actor_kind human and the name of who answered; ` +
        `CLI: agentstate resolve ${item.id} done --result '{"answer":…}' --actor <name> --actor-kind human)`;
  return new PermissionDeniedError(
    `cannot ${action} work item ${item.id}: it is a human decision of ${owner.kind}/${owner.id}; ${how}`,
    { id: item.id, owner: `${owner.kind}/${owner.id}`, rule: 'human-decision' },
  );
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

/**
 * Batched calls (claimMany, resolveMany, enqueueMany, the expired-lease sweep, and the single calls a
 * handle coalesces) write one event per batch and type instead of one per item: `work_items_<x>` on the
 * instance-wide `work_items` stream, naming every item with what its `work_item_<x>` event would carry.
 * Readers of an item's history see it as that item's own event (`expandBatchEvent`).
 */
export const BATCH_STREAM = 'work_items';

/** The per-item event type → the type of the event that records a batch of them. */
export const BATCH_TYPE_OF: Readonly<Record<string, string>> = {
  work_item_enqueued: 'work_items_enqueued',
  work_item_claimed: 'work_items_claimed',
  work_item_resolved: 'work_items_resolved',
  work_item_reclaimed: 'work_items_reclaimed',
};

/** The batch event type → the per-item type each of its entries stands for. */
export const ITEM_TYPE_OF_BATCH: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(BATCH_TYPE_OF).map(([item, batch]) => [batch, item]),
);

/** Every batch event type, in a fixed order (backends index them). */
export const BATCH_TYPES: readonly string[] = Object.values(BATCH_TYPE_OF);

/**
 * Folds the per-item events of one batched call into one event per type: every run of two or more events
 * of a batchable type (same time) becomes one `work_items_<x>` event at the place of the first of them,
 * whose `data.items` lists `{ id, …the per-item data }` in order, with `actor` on an entry only when it is
 * not the batch event's. Anything else, and a lone event of its type, is kept as it is: a batch of one
 * item writes exactly what a single call writes.
 */
export function batchEvents(events: NewEvent[]): NewEvent[] {
  const groups = new Map<string, NewEvent[]>();
  for (const e of events) {
    // Stryker disable next-line ConditionalExpression: equivalent: every event of a batchable type names its item
    if (!BATCH_TYPE_OF[e.type] || e.work_item_id === null || !isPlainObject(e.data)) continue;
    const key = `${e.type}\u0000${e.created_at}`;
    const g = groups.get(key);
    if (g) g.push(e);
    else groups.set(key, [e]);
  }
  const out: NewEvent[] = [];
  const emitted = new Set<string>();
  for (const e of events) {
    const key = `${e.type}\u0000${e.created_at}`;
    const g = groups.get(key);
    if (!g || g.length < 2 || !g.includes(e)) {
      out.push(e);
      continue;
    }
    if (emitted.has(key)) continue;
    emitted.add(key);
    const actor = g[0]!.actor;
    // The actor kind every entry shares is said once, on the batch (as its actor is).
    const kind = (g[0]!.data as JsonObject).actor_kind;
    const shared = g.every((x) => (x.data as JsonObject).actor_kind === kind) ? kind : undefined;
    const items: Json[] = g.map((x) => {
      const entry: JsonObject = { id: x.work_item_id as string };
      if (x.actor !== actor) entry.actor = x.actor;
      Object.assign(entry, x.data as JsonObject);
      if (shared !== undefined) delete entry.actor_kind;
      return entry;
    });
    out.push({
      type: BATCH_TYPE_OF[e.type]!,
      stream: BATCH_STREAM,
      // Stryker disable next-line ConditionalExpression: equivalent in the stored bytes: JSON leaves out an undefined actor_kind
      data: shared === undefined ? { items } : { actor_kind: shared, items },
      actor,
      correlation_id: null,
      causation_id: null,
      work_item_id: null,
      created_at: e.created_at,
    });
  }
  return out;
}

function isPlainObject(v: unknown): v is JsonObject {
  // Stryker disable next-line ConditionalExpression: equivalent for JSON: a string or number has no items or id either
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** One item's view of a batch event: what its own event would have said. */
export interface BatchEntry {
  work_item_id: string;
  type: string;
  data: JsonObject;
  actor: string | null;
}

/**
 * The per-item views of a stored batch event (type `work_items_<x>`, no work_item_id), in the order the
 * batch names them, each with the batch's actor and actor kind unless it names its own; null when the event is no batch event, 'malformed' when its data lists no items as
 * batch events do (an entry without a string id, an id named twice, fewer than one entry).
 */
export function expandBatchEvent(e: {
  type: string;
  data: Json;
  actor: string | null;
  work_item_id: string | null;
}): BatchEntry[] | null | 'malformed' {
  const type = ITEM_TYPE_OF_BATCH[e.type];
  if (type === undefined || e.work_item_id !== null) return null;
  const items = isPlainObject(e.data) ? e.data.items : undefined;
  if (!Array.isArray(items) || items.length === 0) return 'malformed';
  const kind = (e.data as JsonObject).actor_kind;
  const seen = new Set<string>();
  const out: BatchEntry[] = [];
  for (const entry of items) {
    if (!isPlainObject(entry) || typeof entry.id !== 'string' || seen.has(entry.id)) return 'malformed';
    seen.add(entry.id);
    const { id, actor, ...data } = entry;
    if (actor !== undefined && actor !== null && typeof actor !== 'string') return 'malformed';
    if (kind !== undefined && data.actor_kind === undefined) data.actor_kind = kind;
    out.push({ work_item_id: id, type, data, actor: actor === undefined ? e.actor : actor });
  }
  return out;
}

/** How many ids a batch event's digest names. */
export const DIGEST_IDS = 5;

/**
 * A batch event as an agent reads it (MCP, resume, `agentstate events` for people): its data becomes the
 * item count, the first ids and how to read one item's part (`read_events` with `work_item_id`), instead of
 * every item with its payload (1,000 of them are half a million characters). Any other event, and a
 * malformed batch, is returned as it is. What the log stores and `verify` proves do not change.
 */
export function digestBatchEvent<E extends { type: string; data: Json; work_item_id: string | null }>(
  e: E,
): E {
  if (ITEM_TYPE_OF_BATCH[e.type] === undefined || e.work_item_id !== null || !isPlainObject(e.data)) return e;
  const items = e.data.items;
  if (!Array.isArray(items)) return e;
  const ids = items.flatMap((x) => (isPlainObject(x) && typeof x.id === 'string' ? [x.id] : []));
  const data: JsonObject = {
    batch_of: items.length,
    first_ids: ids.slice(0, DIGEST_IDS),
    read: "one item's part: read the events of its work_item_id",
  };
  return { ...e, data };
}

/** The statuses a blocker can end in that keep its dependants from ever becoming ready (until retried). */
export const UNSUCCESSFUL: readonly WorkItemStatus[] = ['failed', 'cancelled'];

/** The statuses a retry takes an item from. */
export const RETRYABLE: readonly WorkItemStatus[] = UNSUCCESSFUL;

export function endedUnsuccessfully(status: WorkItemStatus): boolean {
  return UNSUCCESSFUL.includes(status);
}

/** What a dependant cancelled by the failure of its blocker records as its error. */
export function cascadeError(blocker: Pick<WorkItem, 'id' | 'status'>): string {
  return `blocker ${blocker.id} ended ${blocker.status}`;
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

/**
 * A document's human decision is never re-queued where a worker could take it: a person asks it again, on
 * its own (`retry` with actor_kind human puts it back to waiting_human).
 */
export function humanDecisionRetryRefusal(item: WorkItem): PermissionDeniedError {
  const owner = ownerOf(item)!;
  return new PermissionDeniedError(
    `cannot retry work item ${item.id}: it is a human decision of ${owner.kind}/${owner.id}; ` +
      `a human asks it again, on its own: retry it with actor_kind human and the name of who asks ` +
      `(CLI: agentstate retry ${item.id} --actor <name> --actor-kind human)`,
    { id: item.id, owner: `${owner.kind}/${owner.id}`, rule: 'human-decision' },
  );
}

/** A row of a backend's history read: items created (`what` = 'created') or ended in a status, per span. */
export interface HistoryRow {
  what: string;
  b: number;
  n: number;
}

/** The rows of a history read as `count` spans, each with every count (0 where no row says otherwise). */
export function historyBuckets(count: number, rows: readonly HistoryRow[]): WorkHistory['buckets'] {
  const out = Array.from({ length: count }, () => ({ created: 0, done: 0, failed: 0, cancelled: 0 }));
  for (const r of rows) {
    const span = out[Number(r.b)];
    if (span && (r.what === 'created' || r.what === 'done' || r.what === 'failed' || r.what === 'cancelled'))
      span[r.what] += Number(r.n);
  }
  return out;
}
