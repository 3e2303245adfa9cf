// The work half of the storage interface (StoreBackend.work and .limits): the queries each atomic operation
// on work items runs, the aggregates of metrics and history, the limits per concurrency key, and the rows a
// dump holds of them.
import type { AgentStateError } from '../../errors.js';
import type { NewEvent } from '../events/backend.js';
import type { EventRecord } from '../events/types.js';
import type { ActorKind, Json, JsonObject } from '../primitives.js';
import type { BlockerFailurePolicy, RateLimit, StatusCounts, WorkItem, WorkItemStatus } from './types.js';

/** A normalized item to insert. */
export interface NewWorkItem {
  id: string;
  title: string;
  kind: string | null;
  status: 'pending' | 'waiting_human';
  priority: number;
  payload: Json;
  idempotency_key: string | null;
  blocked_by: string[];
  not_before: number | null;
  max_attempts: number;
  /** @default 'wait' */
  on_blocker_failure?: BlockerFailurePolicy;
  /** @default null */
  concurrency_key?: string | null;
  /** @default null */
  traceparent?: string | null;
  created_at: number;
  actor: string | null;
  /** Recorded in work_item_enqueued. */
  actor_kind: ActorKind;
}

/** One caller of a claim: who takes the items, for how long, and how many at most. */
export interface Claimer {
  worker: string;
  /** Recorded in work_item_claimed. */
  actor_kind: ActorKind;
  lease_ms: number;
  limit: number;
}

/** A claim as the backend runs it: the claimers, and which items (of `kind`, or the one `id`) are candidates. */
export interface ClaimQuery {
  /**
   * Who claims, in turn: the ready items, in claim order, go to the first claimer up to its limit, then to
   * the next (one claimMany is one claimer; coalesced claim() calls are one claimer each).
   */
  claimers: Claimer[];
  kind: string | null;
  id: string | null;
  now: number;
}

/** The outcome of one call in a batch that answers each call on its own. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: AgentStateError };

/** Names a held lease: the item, its holder and (if the caller knows it) the attempt that took it, at `now`. */
export interface LeaseQuery {
  id: string;
  worker: string;
  attempt: number | null;
  now: number;
}

/** A resolve as the backend runs it: the lease it finishes under, and the outcome. */
export interface ResolveQuery extends LeaseQuery {
  /** Recorded in work_item_resolved. */
  actor_kind: ActorKind;
  status: 'done' | 'failed';
  result: Json;
  error: string | null;
  /**
   * A failure to try again: pending with this `not_before` (epoch ms) while `attempts < max_attempts`,
   * failed on the last attempt. Null: failed now. Only with status `failed`.
   */
  retry_at: number | null;
}

/** A retry: a failed or cancelled item goes back to pending with a fresh attempt budget. */
export interface RetryQuery {
  id: string;
  reason: string | null;
  actor: string | null;
  actor_kind: ActorKind;
  now: number;
}

/** A status change outside a lease (cancel, park, unpark, a human's resolve), with the event type it appends. */
export interface StatusChange {
  id: string;
  from: WorkItemStatus[];
  to: 'cancelled' | 'pending' | 'waiting_human' | 'done' | 'failed';
  event: string;
  result: Json;
  error: string | null;
  actor: string | null;
  actor_kind: ActorKind;
  /** More for the event's data (a re-asked decision's previous status). */
  data?: JsonObject;
  now: number;
}

/** A release: `worker` is whose lease it is; `actor` who hands it back (the worker, or a person for it). */
export interface ReleaseQuery extends LeaseQuery {
  actor: string;
  actor_kind: ActorKind;
  /** Not claimable again before this time (epoch ms; a durable sleep or wait); absent: as the item was. */
  not_before?: number;
}

/**
 * A record of a durable run to append (a step's outcome, a sleep, a person's reset): its events, written only
 * while the condition holds, in the same transaction as the check.
 */
export interface RecordQuery {
  id: string;
  /**
   * The lease the record is written under: only while `worker` holds the item's unexpired lease on `attempt`
   * (the fencing token), else LEASE_LOST and nothing written. Null (a person's reset): only while the item
   * exists and is not in flight.
   */
  lease: { worker: string; attempt: number } | null;
  /** The record's events, appended in order. */
  events: NewEvent[];
  /**
   * Hands the item back with the record (a durable sleep or wait), as `release` does — pending, unleased, the
   * attempt not spent (max_attempts + 1), with work_item_released — and not claimable before `not_before`.
   */
  release: { not_before: number; actor: string; actor_kind: ActorKind } | null;
  /**
   * Writes nothing when item `id` has been sent at least `count` signals named `signal` by now (a wait that
   * must not hand the item back: its signal came meanwhile): then STATE_CONFLICT with `reason:
   * 'signal_arrived'`. Null: no such condition.
   */
  unless?: { signal: string; count: number } | null;
  now: number;
}

/** A signal as a backend sends it: its event built by the codec, waking the item or not. */
export interface SignalQuery {
  id: string;
  /** The signal's name (a wait for this name takes it). */
  name: string;
  /** The signal's event; `wakes` when it ends the item's wait for it. */
  build(wakes: boolean): NewEvent;
  now: number;
}

/** The work-item half of a backend: each method is one atomic operation, with the events it records. */
export interface WorkItemBackend {
  /** Inserts items (an existing idempotency key returns the existing item, created=false) + their events. */
  enqueue(items: NewWorkItem[]): Promise<Array<{ item: WorkItem; created: boolean }>>;
  /**
   * Reclaims expired leases, then atomically claims up to the claimers' limits of ready items; returns them
   * in claim order (the first claimer's first), so the i-th claimer's items follow the earlier claimers'.
   * Items whose concurrency key is at its limit (LimitBackend: in flight, or claims started in the rate
   * window, counting the items this claim takes) are skipped, never exceeding it whoever claims at once.
   */
  claim(q: ClaimQuery): Promise<WorkItem[]>;
  /** Extends each lease in one statement; each caller gets its item or its own refusal (LEASE_LOST, …). */
  heartbeat(qs: Array<LeaseQuery & { lease_ms: number }>): Promise<Array<Outcome<WorkItem>>>;
  /**
   * Finishes held items (or items waiting for a human) in one transaction: every one of them, or none (the
   * first refusal is thrown). A repeated resolve by the same worker returns the item unchanged.
   */
  resolve(qs: ResolveQuery[]): Promise<WorkItem[]>;
  /**
   * Like `resolve`, in one transaction, but each item on its own: a refused one (LEASE_LOST,
   * INVALID_TRANSITION, NOT_FOUND, PERMISSION_DENIED) gets its error and the others are still finished.
   * Ids are distinct.
   */
  resolveEach(qs: ResolveQuery[]): Promise<Array<Outcome<WorkItem>>>;
  /** Hands an in-flight item back to the queue (graceful stop) without spending the attempt. */
  release(q: ReleaseQuery): Promise<WorkItem>;
  /**
   * Appends records of durable runs in one transaction, each under its own condition (RecordQuery.lease),
   * each answered on its own: the item (as the record left it), or its refusal (LEASE_LOST, NOT_FOUND,
   * INVALID_TRANSITION) with nothing of it written.
   */
  record(qs: RecordQuery[]): Promise<Array<Outcome<WorkItem>>>;
  /**
   * Sends a signal to an unfinished item (NOT_FOUND, or INVALID_TRANSITION once it ended): appends its event
   * and, when the item is handed back by a wait for a signal of that name, makes it claimable now. One
   * transaction; returns the item as it is after, and the signal's event.
   */
  signal(q: SignalQuery): Promise<{ item: WorkItem; event: EventRecord }>;
  /** Merges `notes` into the item's notes in one statement. */
  annotate(q: {
    id: string;
    notes: JsonObject;
    actor: string | null;
    actor_kind: ActorKind;
    now: number;
    /** When set, the merge happens only while this worker (and attempt) holds the lease. */
    lease: LeaseQuery | null;
  }): Promise<WorkItem>;
  /**
   * Moves a pending / waiting_human / in_flight item to a new status outside of a lease. Every path that
   * ends an item failed or cancelled (this, resolve, resolveEach, the expired-lease sweep, a document's
   * resolve) cancels its pending `on_blocker_failure: cascade` dependants, transitively, in the same
   * transaction (`cascaded_from` names the blocker, the event `work_item_cancelled` too). Several changes
   * are one transaction, in order: all of them or none (the first refusal is thrown); an item a change
   * before it already cancelled by cascade counts as changed and is returned as it is. Ids are distinct.
   */
  setStatus(qs: StatusChange[]): Promise<WorkItem[]>;
  /**
   * Moves failed or cancelled items back to pending with a fresh attempt budget (max_attempts grows by its
   * value, as attempts stay spent fencing tokens), each with its work_item_retried event, and re-opens the
   * items their failure cancelled (work_item_reopened), in one transaction: all of them or none (the first
   * refusal is thrown: NOT_FOUND, INVALID_TRANSITION, PERMISSION_DENIED for a document's human decision).
   * Ids are distinct.
   */
  retry(qs: RetryQuery[]): Promise<WorkItem[]>;
  /** The status and blockers of each of `ids` that is an item (for blocked_on_failure). */
  blockerStates(ids: string[]): Promise<Array<{ id: string; status: WorkItemStatus; blocked_by: string[] }>>;
  /** The item, or null when there is none with this id. */
  get(id: string): Promise<WorkItem | null>;
  /** Items in claim order; `ready` true = claimable now, false = pending but blocked or not yet due. */
  list(q: {
    statuses: WorkItemStatus[] | null;
    kind: string | null;
    ready?: boolean;
    /**
     * true: pending items blocked on a failure (a blocker ended failed or cancelled, or is itself a pending
     * item blocked on a failure); false: every other item.
     */
    blocked_on_failure?: boolean;
    /** Only items with this concurrency key. */
    concurrency_key?: string;
    /**
     * Only items after the item of this id in claim order (the last one a page showed); none when there is
     * no item of this id.
     */
    after?: string;
    now: number;
    limit: number;
  }): Promise<WorkItem[]>;
  /** How many items there are in each status. */
  counts(): Promise<StatusCounts>;
  /** Aggregates of the items for metrics (one consistent read; no item is returned). */
  stats(q: WorkStatsQuery): Promise<WorkStats>;
  /**
   * The items created, and those that ended done, failed or cancelled, in each of `buckets` spans of
   * `bucketMs` from `since` (one consistent read; counts only).
   */
  history(q: WorkHistoryQuery): Promise<WorkHistory>;
  /** Expired leases back to pending (or failed once attempts are spent), each with its event. */
  reclaimExpired(now: number, actor: string | null): Promise<WorkItem[]>;
  /** Reclaims, then appends `work_item_replayed` for every unfinished item; returns them. */
  replayUnfinished(now: number, actor: string | null): Promise<WorkItem[]>;
}

/** What `WorkItemBackend.stats` aggregates at `now`. */
export interface WorkStatsQuery {
  now: number;
  /** Leases that run out within this many ms count as expiring. */
  expiringWithinMs: number;
  /** Upper bounds (ms, ascending) of the claim→resolve duration buckets. */
  bucketsMs: readonly number[];
  /** Items waiting for a human not updated since this time (epoch ms) count as waiting long. */
  waitingSince: number;
}

/** The window `WorkItemBackend.history` counts in: `buckets` spans of `bucketMs` from `since` (epoch ms). */
export interface WorkHistoryQuery {
  since: number;
  bucketMs: number;
  buckets: number;
}

/** Per span of a history window: items created, and items that ended (by their current status) in it. */
export interface WorkHistory {
  buckets: Array<{ created: number; done: number; failed: number; cancelled: number }>;
}

/** Aggregates of one instance's work items (counts and sums only: nothing names an item). */
export interface WorkStats {
  /** Items, attempts spent, and items tried more than once, per status and kind. */
  groups: Array<{
    status: WorkItemStatus;
    kind: string | null;
    count: number;
    attempts: number;
    retried: number;
  }>;
  /** When the oldest ready item became claimable (its creation or its not_before, epoch ms), or null. */
  oldestReadySince: number | null;
  /** In-flight items whose lease has run out (the next claim or sweep reclaims them). */
  leasesExpired: number;
  /** In-flight items whose lease runs out within `expiringWithinMs`. */
  leasesExpiring: number;
  /** Pending items that cannot become ready because a blocker upstream failed or was cancelled. */
  blockedOnFailure: number;
  /** Pending items that have failed before and have one attempt left (the next failure is final). */
  lastAttempt: number;
  /** Items waiting for a human, not updated since `waitingSince`. */
  waitingLong: number;
  /** Claim→resolve time of the last attempt of done and failed items, per kind: count, sum, cumulative buckets. */
  durations: Array<{ kind: string | null; count: number; sumMs: number; buckets: number[] }>;
}

/** A limit as stored (times in epoch ms): what `LimitBackend.list` returns and `set` writes. */
export interface LimitRow {
  /** The concurrency key. */
  key: string;
  /** At most this many of its items in flight; null: no such cap. */
  max_in_flight: number | null;
  /** At most this many claims started per window; null (with rate_period_ms): no rate. */
  rate_count: number | null;
  /** The rate window's length, ms. */
  rate_period_ms: number | null;
  created_at: number;
  updated_at: number;
}

/** A limit set or removed (checked, defaults filled), with who did it and the event it appends. */
export interface LimitChange {
  /** The concurrency key. */
  key: string;
  /** What the key's limit becomes; null removes it. */
  limit: { max_in_flight: number | null; rate: RateLimit | null } | null;
  /** Recorded in the event. */
  actor: string | null;
  /** Recorded in the event's data. */
  actor_kind: ActorKind;
  /** The change's time, epoch ms. */
  now: number;
}

/**
 * The keyed limits of an instance (one row per limited key). Claims read them in their own transaction
 * (`WorkItemBackend.claim`); these set, remove and list them, each change with its event in one transaction.
 */
export interface LimitBackend {
  /**
   * Creates or replaces the limit of `q.key` (its rate window starts afresh when the rate changes), or with
   * `q.limit` null removes it (NOT_FOUND when there is none); returns the row as it was before (null: none)
   * and as it is after (null: removed).
   */
  change(q: LimitChange): Promise<{ before: LimitRow | null; after: LimitRow | null }>;
  /** Every limit, by key. */
  list(): Promise<LimitRow[]>;
}

/** A work item's times: ISO-8601 strings in a `WorkItem`, epoch milliseconds as stored. */
type WorkItemTimes =
  | 'lease_expires_at'
  | 'claimed_at'
  | 'not_before'
  | 'created_at'
  | 'updated_at'
  | 'resolved_at';

/**
 * A work item row as stored (times in epoch ms), for moving an instance between backends: a `WorkItem`
 * without what reads derive (`blocked_on_failure`).
 */
export type WorkItemRowDump = Omit<WorkItem, WorkItemTimes | 'blocked_on_failure'> & {
  lease_expires_at: number | null;
  claimed_at: number | null;
  not_before: number | null;
  created_at: number;
  updated_at: number;
  resolved_at: number | null;
};

/** A limit row as a dump holds it: the limit, and its rate window as claims left it. */
export interface LimitRowDump extends LimitRow {
  /** When the key's open rate window opened (epoch ms; 0: none yet). */
  window_start: number;
  /** Claims started in that window. */
  window_count: number;
}
