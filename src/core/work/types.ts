// The public shapes of the work area: work items, their statuses, the inputs of every `work.*` operation
// (claims, resolves, retries, signals and step resets of durable runs, limits) and what its reads return.
import type { ActorKind, Json, JsonObject, Provenance } from '../primitives.js';

/** Every status a work item can be in (see TRANSITIONS for the moves between them). */
export const WORK_ITEM_STATUSES = [
  'pending',
  'in_flight',
  'waiting_human',
  'done',
  'failed',
  'cancelled',
] as const;
/** One of WORK_ITEM_STATUSES. */
export type WorkItemStatus = (typeof WORK_ITEM_STATUSES)[number];

/** A work item as returned by every operation (timestamps are ISO-8601 strings in UTC). */
export interface WorkItem {
  id: string;
  title: string;
  kind: string | null;
  status: WorkItemStatus;
  priority: number;
  payload: Json;
  notes: JsonObject;
  result: Json;
  error: string | null;
  attempts: number;
  max_attempts: number;
  lease_owner: string | null;
  lease_expires_at: string | null;
  claimed_at: string | null;
  blocked_by: string[];
  not_before: string | null;
  idempotency_key: string | null;
  created_at: string;
  updated_at: string;
  resolved_at: string | null;
  /** What the item does when a blocker ends failed or cancelled: wait (visibly) or be cancelled with it. */
  on_blocker_failure: BlockerFailurePolicy;
  /** The blocker whose failure cancelled this item (on_blocker_failure cascade); a retry of it re-opens the item. */
  cascaded_from: string | null;
  /** The key whose limit (`work.setLimit`) a claim of this item counts against; null: never limited. */
  concurrency_key: string | null;
  /**
   * The W3C traceparent of the span that enqueued the item (null: none was recording, as without an
   * OpenTelemetry SDK): the spans that claim and process it link to it.
   */
  traceparent: string | null;
  /**
   * Derived (get and list only, on a pending item): the blockers that ended failed or cancelled, so the item
   * cannot become ready until they are retried (or it is cancelled). Absent when there are none.
   */
  blocked_on_failure?: string[];
}

/** Policies for an item whose blocker ends failed or cancelled. */
export const BLOCKER_FAILURE_POLICIES = ['wait', 'cascade'] as const;
/** What happens to an item when a blocker ends failed or cancelled: `wait` (default) or `cascade`. */
export type BlockerFailurePolicy = (typeof BLOCKER_FAILURE_POLICIES)[number];

/**
 * `work.enqueue`: a new item. Defaults: priority 0, payload null, max_attempts 3, status `pending` (or
 * `waiting_human`), on_blocker_failure `wait`; `not_before` an ISO-8601 time or a duration from now.
 */
export interface EnqueueInput {
  /** What the work is, for people and workers (not blank). */
  title: string;
  /** A label workers can claim by (`claim({ kind })`). @default null */
  kind?: string | null;
  /** What the worker needs to do it (JSON). @default null */
  payload?: Json;
  /** Higher is claimed first; equal priorities go oldest first. @default 0 */
  priority?: number;
  /** An enqueue with a key already used returns the existing item instead of adding one. */
  idempotency_key?: string | null;
  /** Ids of the items that must be `done` before this one is ready. */
  blocked_by?: string[];
  /** ISO-8601 time before which the item is not claimable. */
  not_before?: string | null;
  /** Claims allowed before an item whose lease keeps expiring is failed. @default 3 */
  max_attempts?: number;
  /** Start parked for a human instead of pending. @default false */
  waiting_human?: boolean;
  /**
   * When a blocker ends failed or cancelled: `wait` (stay pending, reported as blocked on a failure) or
   * `cascade` (cancelled in the same transaction, re-opened if the blocker is retried). @default 'wait'
   */
  on_blocker_failure?: BlockerFailurePolicy;
  /**
   * The key whose limit a claim of this item counts against (`work.setLimit`, e.g. `openai:org-1`); a key
   * with no limit, like no key, is unlimited. @default null
   */
  concurrency_key?: string | null;
  /**
   * The W3C traceparent (`00-<trace id>-<span id>-<flags>`) of the producer's span, for a producer whose span
   * is not active here (another process, over HTTP or MCP). @default the span active at enqueue, if any
   */
  traceparent?: string | null;
  /** Who enqueues it, recorded in its event. @default the instance's agent name */
  actor?: string;
  /** Recorded in the item's event: a person (`human`), a model, a tool or the system. @default 'system' */
  actor_kind?: ActorKind;
}

/** Retrying several items with one reason (`retryMany`'s object form, the operation `retry_many`). */
export interface RetryManyInput extends Omit<RetryInput, 'id'> {
  /** The failed or cancelled items to retry, each named once. */
  ids: string[];
}

/** `work.history`: the window and how many spans it is cut into. */
export interface HistoryInput {
  /** How far back, in ms (1 minute to 30 days). @default 86400000 (24 h) */
  window_ms?: number;
  /** How many equal spans (2 to 200). @default 48 */
  buckets?: number;
}

/** The queue over time (`work.history`, the operation `queue_history`): counts per span, oldest first. */
export interface QueueHistory {
  /** Where the first span starts. */
  since: string;
  bucket_ms: number;
  /** Items pending, in flight or waiting for a human now. */
  open: number;
  buckets: Array<{
    start: string;
    created: number;
    done: number;
    failed: number;
    cancelled: number;
    /** Unfinished at the span's end. */
    open: number;
  }>;
}

/** Cancelling several unfinished items with one reason (`cancelMany`, the operation `cancel_many`). */
export interface CancelManyInput extends Omit<CancelInput, 'id'> {
  /** The unfinished items to cancel, each named once (at most 1,000). */
  ids: string[];
}

/** `work.retry`: a failed or cancelled item back to pending (a human decision: back to waiting for a human). */
export interface RetryInput {
  /** The failed or cancelled item. */
  id: string;
  /** Why it is retried, recorded in its work_item_retried event. */
  reason?: string;
  /** Who retries it, recorded in the event. @default the instance's agent name */
  actor?: string;
  /** A human decision a document asked for is retried (asked again) only by a human. */
  actor_kind?: ActorKind;
}

/** `work.claim` / `claimMany`: who claims (default: the instance's worker), for how long (default 60 s), which. */
export interface ClaimInput {
  /** Lease owner. @default the instance's agent name */
  worker?: string;
  /** Lease length in milliseconds. @default 60000 */
  lease_ms?: number;
  /** Only claim items of this kind. */
  kind?: string;
  /** Claim this item, if it is ready. */
  id?: string;
  /**
   * Claim the name `key` (e.g. `path:src/a.ts`): the item of kind `lock` with this idempotency key, made on
   * first use. A lock is held until released (or its lease runs out); claims without an id never take one.
   * PERMISSION_DENIED while another worker holds it.
   */
  key?: string;
  /** Claim up to this many ready items at once (see `claimMany`). @default 1 */
  limit?: number;
  /** Recorded in the item's event: a person (`human`), a model, a tool or the system. @default 'system' */
  actor_kind?: ActorKind;
}

/** A person's answer to a decision a document asked for, as the work queue hands it to the document store. */
export interface DecisionAnswer {
  status: 'done' | 'failed';
  result: Json;
  error: string | null;
  actor: string;
  provenance?: Provenance | undefined;
}

/** The kind of the items `claim({ key })` holds: locks on names, never handed out by a claim without an id. */
export const LOCK_KIND = 'lock';

/** `work.heartbeat`: extend a held lease by `lease_ms` from now (default 60 s); `attempt` fences a stale holder. */
export interface HeartbeatInput {
  /** The held item. */
  id: string;
  /** Whose lease it is. @default the instance's agent name */
  worker?: string;
  /** New lease length from now. @default 60000 */
  lease_ms?: number;
  /** Fencing token: the `attempts` value returned by the claim. */
  attempt?: number;
}

/** `work.resolve`: finish a held item (or answer one waiting for a human) as done or failed. */
export interface ResolveInput {
  /** The held item (or one waiting for a human). */
  id: string;
  /** How it ended: `done` or `failed`. */
  status: 'done' | 'failed';
  /** What the work produced (JSON), kept on the item. @default null */
  result?: Json;
  /** Why it failed, kept on the item. @default null */
  error?: string | null;
  /**
   * With `status: 'failed'`: try again, not before this time (ISO-8601, or a duration from now such as
   * `30s`). While attempts remain (`attempts < max_attempts`) the item goes back to `pending` with this
   * `not_before` and the error kept; on its last attempt it is `failed` as without it. @default null: failed now
   */
  retry_at?: string | null;
  /** Whose lease it is. @default `actor`, else the instance's agent name */
  worker?: string;
  /** Fencing token: the `attempts` value returned by the claim. */
  attempt?: number;
  /**
   * Who resolves an item waiting for a human (recorded in its event). A human decision a document asked
   * for (a TaskIR ambiguity) is answered only with `actor_kind: 'human'` and the name of who answered.
   */
  actor?: string;
  /** Recorded in the item's event: a person (`human`), a model, a tool or the system. @default 'system' */
  actor_kind?: ActorKind;
}

/** `work.annotate`: an RFC 7396 merge patch into an item's notes. */
export interface AnnotateInput {
  /** The item. */
  id: string;
  /** Merged into the item's notes (RFC 7396: a null value removes a key). */
  notes: JsonObject;
  /** Who annotates it, recorded in its event. @default the worker, else the instance's agent name */
  actor?: string;
  /** Recorded in the item's event: a person (`human`), a model, a tool or the system. @default 'system' */
  actor_kind?: ActorKind;
}

/** `work.cancel`, `park`, `unpark`: which item, why, and who. */
export interface CancelInput {
  /** The item. */
  id: string;
  /** Why; a cancel's reason becomes the item's `error`. */
  reason?: string;
  /** Who does it, recorded in the item's event. @default the instance's agent name */
  actor?: string;
  /** A human decision a document asked for is cancelled only by a human. */
  actor_kind?: ActorKind;
}

/** `work.signal`: a signal to an item, for a durable run's `waitFor(name)`. */
export interface SignalInput {
  /** The item. */
  id: string;
  /** The name a wait takes it by. */
  name: string;
  /** What the wait returns (JSON, at most 1 MB). @default null */
  payload?: Json;
  /** Who sends it. @default the instance's agent name */
  actor?: string;
  /** Recorded in the event. @default 'system' */
  actor_kind?: ActorKind;
}

/** `work.resetStep`: re-run a recorded step of a run, and everything after it, on the next attempt. */
export interface ResetStepInput {
  /** The item whose run recorded the step. */
  id: string;
  /** The step's name. */
  name: string;
  /** Which of the steps of that name (1 the first). @default 1 */
  occurrence?: number;
  /** Why, kept in the work_step_reset event. */
  reason?: string;
  /** Who resets it. @default the instance's agent name */
  actor?: string;
  /** Recorded in the event: usually a person (`human`). @default 'system' */
  actor_kind?: ActorKind;
}

/** `work.release`: a held item back to pending without spending the attempt (`actor`: who hands it back). */
export interface ReleaseInput {
  /** The held item. */
  id: string;
  /** Whose lease it is. @default the instance's agent name */
  worker?: string;
  /** Fencing token: the `attempts` value returned by the claim. */
  attempt?: number;
  /** Who hands it back (a person releasing another's lease). @default the worker */
  actor?: string;
  /** Recorded in the item's event: a person (`human`), a model, a tool or the system. @default 'system' */
  actor_kind?: ActorKind;
}

/** `work.list`: by status (one or several) and kind, in claim order. @default limit 100 */
export interface ListInput {
  /** Only items in this status, or in one of these. */
  status?: WorkItemStatus | WorkItemStatus[];
  /** Only items of this kind. */
  kind?: string;
  /** At most this many items. @default 100 */
  limit?: number;
  /** true: only pending items with a blocker that ended failed or cancelled; false: only the others. */
  blocked_on_failure?: boolean;
  /** Only items with this concurrency key. */
  concurrency_key?: string;
  /** Only the items after this one in claim order: the id of the last item a page showed. */
  after?: string;
}

/** `work.steps`: what an item's run recorded, in order, paged by position. */
export interface StepsInput {
  /** The work item. */
  id: string;
  /** Only the records after this one: the `position` of the last record a page showed. */
  after?: number;
  /** At most this many records. @default all of them */
  limit?: number;
}

/** A start-rate limit: at most `count` claims started per window of `period_ms` (see `WorkLimit`). */
export interface RateLimit {
  /** Claims started per window (at least 1). */
  count: number;
  /** The window's length in milliseconds (at least 1). */
  period_ms: number;
}

/**
 * The limit of one concurrency key, as `work.limits()` lists it. A claim never hands out an item of the key
 * while `max_in_flight` of its items are in flight, nor more than `rate.count` claims of them per window: the
 * window opens at the first claim after the previous window closed and lasts `rate.period_ms` (a fixed
 * window per key, so up to twice the count may start within one period that spans two windows).
 */
export interface WorkLimit {
  key: string;
  /** At most this many items of the key in flight at once; null: no cap on in-flight items. */
  max_in_flight: number | null;
  /** At most this many claims started per window; null: no rate limit. */
  rate: RateLimit | null;
  created_at: string;
  updated_at: string;
}

/** `work.setLimit`: creates or replaces the limit of `key` (at least one of max_in_flight and rate). */
export interface SetLimitInput {
  /** The concurrency key (as items carry it). */
  key: string;
  /** At most this many of its items in flight at once. */
  max_in_flight?: number | null;
  /** At most `count` claims started per `period_ms` window. */
  rate?: RateLimit | null;
  /** Who sets it, recorded in its event. @default the instance's agent name */
  actor?: string;
  /** Recorded in the event: a person (`human`), a model, a tool or the system. @default 'system' */
  actor_kind?: ActorKind;
}

/** `work.removeLimit`: the key becomes unlimited (NOT_FOUND when it has no limit). */
export interface RemoveLimitInput {
  /** The concurrency key whose limit goes. */
  key: string;
  /** Who removes it, recorded in its event. @default the instance's agent name */
  actor?: string;
  /** Recorded in the event. @default 'system' */
  actor_kind?: ActorKind;
}

/** Counts of items per status. */
export type StatusCounts = Record<WorkItemStatus, number>;
