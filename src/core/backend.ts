// The storage interface every backend implements; the core and the edges know only this.
import type { AgentStateError } from '../errors.js';
import type { HashedEventFields } from './hash.js';
import type {
  ActorKind,
  BlockerFailurePolicy,
  DocumentRecord,
  EventRecord,
  HistoryEntry,
  Json,
  JsonObject,
  Override,
  Provenance,
  RateLimit,
  StatusCounts,
  WorkItem,
  WorkItemStatus,
} from './types.js';

/** What a backend can do natively; the core picks strategies by flag, never by dialect name. */
export interface BackendCapabilities {
  /**
   * The backend pushes a wake-up hint soon after events are appended (`listen`); a tail then polls at once
   * instead of waiting out its interval. A hint only: polling stays the truth.
   */
  notify: boolean;
  /**
   * How often an idle worker or scheduler polls for work by default, in ms (without hints a worker learns
   * of new work only by polling). @default 1000
   */
  idlePollMs?: number;
}

/** A normalized event to append (ids, defaults and time already decided by the core). */
export interface NewEvent {
  type: string;
  stream: string;
  data: Json;
  actor: string | null;
  correlation_id: string | null;
  causation_id: string | null;
  work_item_id: string | null;
  created_at: number;
}

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

/**
 * A read of the log as the backend runs it (`EventLog.read`'s input checked, defaults filled, times in epoch
 * ms; null means no filter).
 */
export interface EventQuery {
  after: number;
  until: number | null;
  stream: string | null;
  types: string[] | null;
  /** The item's own events and the batch events (`work_items_<x>`) whose `data.items` name it. */
  work_item_id: string | null;
  since: number | null;
  before: number | null;
  limit: number;
  reverse: boolean;
}

/** The raw stored form of an event: the fields its hash covers, the previous event's hash, and its own. */
export interface StoredEvent extends HashedEventFields {
  prev_hash: string;
  hash: string;
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

/** The event half of a backend: the append-only, hash-chained log. */
export interface EventBackend {
  /** Appends events in one transaction, each given the next position and chained to the one before. */
  append(events: NewEvent[]): Promise<EventRecord[]>;
  /** The stored events matching `q`, in position order (newest first with `reverse`). */
  read(q: EventQuery): Promise<EventRecord[]>;
  /** Raw stored events in position order, for verification and export. */
  scan(afterPosition: number, limit: number): Promise<StoredEvent[]>;
  /** The newest event's position and hash, or null for an empty log. */
  head(): Promise<{ position: number; hash: string } | null>;
  /** Event counts per type with created_at in [since, until). */
  typeCounts(since: number, until: number): Promise<Array<{ type: string; count: number }>>;
  /** How many events of each of `types` the log holds, ever (a type with none is left out). */
  countTypes(types: string[]): Promise<Array<{ type: string; count: number }>>;
}

/** Who wrote a version and why, as its history entry keeps it. */
export interface CommitAttribution {
  actor: string;
  actor_kind: ActorKind;
  provenance: Provenance | null;
  write_id: string | null;
  /** Hash of the request payload, to tell a retry from a reuse of the write id. */
  request_hash: string;
  reason: string | null;
  override: Override | null;
}

/** A validated write, ready for the conditional statement. */
export interface DocumentWrite extends CommitAttribution {
  kind: string;
  id: string;
  expected_version: number;
  /**
   * Content hash of the version being replaced (null when creating): the conditional write checks it with
   * the version, so a commit built on a remembered copy never lands on a document that changed behind it.
   */
  expected_hash: string | null;
  /** The new body (for a no-op: the current body, not written). */
  body: JsonObject;
  /**
   * The body's canonical JSON text (canonicalJson, what content_hash covers), when the store has it; a
   * backend that keeps the body as parsed JSON (PostgreSQL's jsonb) may send it instead of serializing
   * `body` again. Absent for a no-op.
   */
  body_text?: string;
  content_hash: string;
  noop: boolean;
  forked_from: { kind: string; id: string; version: number } | null;
  now: number;
  /** Keep only the newest N versions of history (null: keep all). Never removes the latest. */
  keep_versions: number | null;
  /** Written in the same transaction: the state_committed event, and any effects of the kind. */
  events: NewEvent[];
  enqueue: NewWorkItem[];
  /**
   * Status changes of work items in the same transaction (a human's answer to a decision the document
   * asked for); one that matches no row fails the whole commit with the reason.
   */
  resolve: StatusChange[];
}

export interface DocumentBackend {
  get(kind: string, id: string): Promise<DocumentRecord | null>;
  /** A version from history: the body, null when it never existed, 'pruned' when retention removed it. */
  getVersion(
    kind: string,
    id: string,
    version: number,
  ): Promise<{ body: JsonObject; entry: HistoryEntry } | null | 'pruned'>;
  /** The history entry (and body) written with this write id, if any. */
  findWrite(
    kind: string,
    id: string,
    writeId: string,
  ): Promise<{ entry: HistoryEntry; body: JsonObject | null; request_hash: string } | null>;
  /**
   * Writes `w` only if the document is still at `w.expected_version` (one conditional statement),
   * with its history entry, events and enqueued items, in one transaction. STATE_CONFLICT otherwise.
   */
  commit(w: DocumentWrite): Promise<HistoryEntry>;
  history(
    kind: string,
    id: string,
    q: { afterSeq: number; limit: number; reverse: boolean },
  ): Promise<HistoryEntry[]>;
  /**
   * Documents by kind then id (of one kind, or all), at most `limit`; with `after`, those after that
   * document in this order, and none when it is no document.
   */
  list(
    kind: string | null,
    limit: number,
    after?: { kind: string; id: string },
  ): Promise<Array<Omit<DocumentRecord, 'body'>>>;
  /** Removes history older than the newest `keep` versions; returns the number of entries removed. */
  prune(kind: string, id: string, keep: number): Promise<number>;
}

/** One row of a workflow stream as stored: a chunk, or (`eof`) the close after the last one, with no data. */
export interface StreamChunkRow {
  /** The row's dense, 0-based position in its stream (a close takes the position after the last chunk). */
  index: number;
  /** The chunk's bytes, exactly as written (empty for a close). */
  data: Uint8Array;
  /** Whether this row is the stream's close. */
  eof: boolean;
}

/** A stream's state: the index of its last chunk (-1 when it has none) and whether it is closed. */
export interface StreamState {
  /** The index of the last chunk (not counting the close); -1 when the stream has no chunk. */
  tail: number;
  /** Whether the stream was closed. */
  done: boolean;
}

/**
 * The byte streams of a Workflow SDK World (src/workflow-world/streams.ts): named streams of chunks at dense
 * 0-based indexes, each closed at most once. Names are global to the instance; a run id only files a stream
 * under its run (`names`), and need not be a run the store knows. Inputs arrive checked (names, sizes).
 */
export interface WorkflowStreamBackend {
  /**
   * Appends `chunks`, in order, to stream `name` in one transaction, at the indexes after its last row,
   * allocated under the stream's lock at commit: concurrent appends never share an index or leave a gap.
   * A closed stream takes nothing (INVALID_TRANSITION, nothing written). Returns the stream's state after.
   */
  append(q: { run_id: string; name: string; chunks: Uint8Array[]; now: number }): Promise<StreamState>;
  /**
   * Closes stream `name` (creating it empty, filed under `run_id`, when it has no row yet); closing a closed
   * stream changes nothing. Returns the stream's state after.
   */
  close(q: { run_id: string; name: string; now: number }): Promise<StreamState>;
  /** At most `limit` rows of stream `name` from index `from` on, in index order (the close among them). */
  read(q: { name: string; from: number; limit: number }): Promise<StreamChunkRow[]>;
  /** The stream's state (tail -1 and not done for a stream that has no row). */
  info(name: string): Promise<StreamState>;
  /** The names of the streams filed under `run_id` (by the write that created each), in name order. */
  names(run_id: string): Promise<string[]>;
  /**
   * The streams filed under `run_id` with their state (as `info` gives it), in name order, at most `limit`:
   * what a person looking at the run is shown (how many chunks each holds, whether it was closed).
   */
  states(q: { run_id: string; limit: number }): Promise<Array<StreamState & { name: string }>>;
}

/**
 * A Workflow SDK run as its row keeps it: the columns reads filter and order by, and `body`, the whole run as
 * the World's codec wrote it (src/core/codecs/workflow-events.ts), which is what a read returns.
 */
export interface WorkflowRunRow {
  /** The run's id. */
  run_id: string;
  /** Its workflow's name (runs are listed by it). */
  workflow_name: string;
  /** Its status (runs are listed by it). */
  status: string;
  /** When it was created (epoch ms): runs are listed in (created_at, run_id) order. */
  created_at: number;
  /** When it last changed (epoch ms). */
  updated_at: number;
  /** The run, as the codec's JSON text. */
  body: string;
}

/** A step of a Workflow SDK run as its row keeps it (see {@link WorkflowRunRow}). */
export interface WorkflowStepRow {
  /** The step's run. */
  run_id: string;
  /** The step's id (its events' correlationId), unique in its run. */
  step_id: string;
  /** Its status. */
  status: string;
  /** When it was created (epoch ms): a run's steps are listed in (created_at, step_id) order. */
  created_at: number;
  /** When it last changed (epoch ms). */
  updated_at: number;
  /** The step, as the codec's JSON text. */
  body: string;
}

/** A live hook of a Workflow SDK run as its row keeps it (see {@link WorkflowRunRow}); a disposed hook has none. */
export interface WorkflowHookRow {
  /** The hook's id (its events' correlationId), unique in the instance. */
  hook_id: string;
  /** The hook's run. */
  run_id: string;
  /** Its token, unique among the instance's live hooks. */
  token: string;
  /** When it was created (epoch ms): hooks are listed in (created_at, hook_id) order. */
  created_at: number;
  /** The hook, as the codec's JSON text. */
  body: string;
}

/** A wait of a Workflow SDK run as its row keeps it (see {@link WorkflowRunRow}), until its run ends. */
export interface WorkflowWaitRow {
  /** The wait's run. */
  run_id: string;
  /** Its events' correlationId, unique in its run. */
  correlation_id: string;
  /** Its status. */
  status: string;
  /** When it was created (epoch ms). */
  created_at: number;
  /** When it last changed (epoch ms). */
  updated_at: number;
  /** The wait, as the codec's JSON text. */
  body: string;
}

/** What `WorkflowRunBackend.createEvent` read for the decision, in the transaction that applies it. */
export interface WorkflowCreateRead {
  /** The run, or null. */
  run: WorkflowRunRow | null;
  /** The step asked for (`WorkflowCreateQuery.step_id`), or null. */
  step: WorkflowStepRow | null;
  /** The hook asked for (`hook_id`), or null. */
  hook: WorkflowHookRow | null;
  /** The wait asked for (`wait_id`), or null. */
  wait: WorkflowWaitRow | null;
  /** The live hook holding the token asked for (`token`), or null. */
  token_holder: { run_id: string; hook_id: string } | null;
  /** Whether the run's log holds an event of `recorded.event_type` with `recorded.correlation_id`. */
  recorded: boolean;
}

/** A write of one World entity: `insert` a new row (an existing one is a conflict) or `update` the one read. */
export interface WorkflowEntityWrite<R> {
  /** Insert or update. */
  op: 'insert' | 'update';
  /** The row's new value. */
  row: R;
}

/** What one `createEvent` writes, as the decision made it: entity writes, removals, then the events. */
export interface WorkflowCreatePlan {
  /** The run to write. */
  run?: WorkflowEntityWrite<WorkflowRunRow>;
  /** The step to write. */
  step?: WorkflowEntityWrite<WorkflowStepRow>;
  /** The hook to insert. */
  hook?: WorkflowEntityWrite<WorkflowHookRow>;
  /** The wait to write. */
  wait?: WorkflowEntityWrite<WorkflowWaitRow>;
  /** Rows to delete: one hook, or every hook or wait of a run. */
  removals: Array<
    { kind: 'hook'; hook_id: string } | { kind: 'hooks-of-run' | 'waits-of-run'; run_id: string }
  >;
  /** The events to append, in order, on the run's stream (built by the codec); may be empty. */
  events: NewEvent[];
}

/** One `events.create` of a World as the backend runs it: what to read, and the decision over it. */
export interface WorkflowCreateQuery {
  /** The run. */
  run_id: string;
  /** Read this step of the run. */
  step_id?: string;
  /** Read this hook. */
  hook_id?: string;
  /** Read this wait of the run. */
  wait_id?: string;
  /** Read the live hook holding this token. */
  token?: string;
  /** Look for an event of this type with this correlation id in the run's log. */
  recorded?: { correlation_id: string; event_type: string };
  /**
   * The decision (pure, no I/O; it may run again if the transaction is retried): the plan to apply, or a
   * thrown error, which writes nothing and is thrown to the caller as it is.
   */
  decide(read: WorkflowCreateRead): WorkflowCreatePlan;
}

/** How many rows of a World table are in one status. */
export interface WorkflowStatusCount {
  /** The status. */
  status: string;
  /** Rows in it. */
  count: number;
}

/** A keyset page: rows after `after` (the last row a page showed) in the list's order, at most `limit`. */
export interface WorkflowPage<K> {
  /** The last row of the previous page (its keys), or null for the first page. */
  after: K | null;
  /** At most this many rows. */
  limit: number;
  /** Newest first. */
  reverse: boolean;
}

/**
 * The storage of a Workflow SDK World (src/workflow-world/storage.ts): its runs, steps, hooks and waits as
 * rows, and its events as events of the instance's hash chain on each run's stream. Every change comes from
 * `createEvent`, one transaction serialized per run.
 */
export interface WorkflowRunBackend {
  /**
   * In one transaction, under the run's lock (concurrent creates on one run take turns, and each reads what
   * the one before committed): reads what `q` asks for, calls `q.decide`, applies its writes (an `insert`
   * that meets an existing row — or a token a live hook holds — is STATE_CONFLICT with `details.entity`,
   * and nothing is written) and removals, and appends its events. Returns the events as stored.
   */
  createEvent(q: WorkflowCreateQuery): Promise<EventRecord[]>;
  /** The run, or null. */
  getRun(run_id: string): Promise<WorkflowRunRow | null>;
  /** Runs in (created_at, run_id) order, of one workflow and / or one status. */
  listRuns(
    q: { workflow_name: string | null; status: string | null } & WorkflowPage<{
      created_at: number;
      id: string;
    }>,
  ): Promise<WorkflowRunRow[]>;
  /** The step of the run, or null. */
  getStep(run_id: string, step_id: string): Promise<WorkflowStepRow | null>;
  /** A run's steps in (created_at, step_id) order. */
  listSteps(
    q: { run_id: string } & WorkflowPage<{ created_at: number; id: string }>,
  ): Promise<WorkflowStepRow[]>;
  /** The live hook, or null. */
  getHook(hook_id: string): Promise<WorkflowHookRow | null>;
  /** The live hook holding `token`, or null. */
  getHookByToken(token: string): Promise<WorkflowHookRow | null>;
  /** Live hooks (of one run, or all) in (created_at, hook_id) order. */
  listHooks(
    q: { run_id: string | null } & WorkflowPage<{ created_at: number; id: string }>,
  ): Promise<WorkflowHookRow[]>;
  /** A run's waits (until the run ends, which deletes them) in (created_at, correlation_id) order. */
  listWaits(
    q: { run_id: string } & WorkflowPage<{ created_at: number; id: string }>,
  ): Promise<WorkflowWaitRow[]>;
  /** How many runs, and how many steps of every run, are in each status (statuses with none left out). */
  countStatuses(): Promise<{ runs: WorkflowStatusCount[]; steps: WorkflowStatusCount[] }>;
  /** A run's events in stream_seq order, after `after` (a stream_seq). */
  listEvents(q: { run_id: string } & WorkflowPage<number>): Promise<EventRecord[]>;
  /** The run's `seq`-th event, or null. */
  getEvent(run_id: string, seq: number): Promise<EventRecord | null>;
  /** World events with this correlation id, of any run, in position order, after `after` (a position). */
  listEventsByCorrelation(q: { correlation_id: string } & WorkflowPage<number>): Promise<EventRecord[]>;
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

export interface DocumentRowDump {
  kind: string;
  id: string;
  version: number;
  body: JsonObject;
  content_hash: string;
  forked_from: { kind: string; id: string; version: number } | null;
  created_at: number;
  updated_at: number;
}

export interface HistoryRowDump extends CommitAttribution {
  kind: string;
  id: string;
  seq: number;
  version: number;
  parent_version: number;
  noop: boolean;
  body: JsonObject | null;
  content_hash: string;
  created_at: number;
}

/** A limit row as a dump holds it: the limit, and its rate window as claims left it. */
export interface LimitRowDump extends LimitRow {
  /** When the key's open rate window opened (epoch ms; 0: none yet). */
  window_start: number;
  /** Claims started in that window. */
  window_count: number;
}

/** A chunk of a Workflow SDK World's byte stream as a dump holds it: its row, the bytes in base64. */
export interface WorkflowChunkRowDump {
  /** The stream's name. */
  name: string;
  /** The row's dense, 0-based position in its stream. */
  chunk_index: number;
  /** The run the stream is filed under. */
  run_id: string;
  /** The chunk's bytes, base64 (empty for a close). */
  data: string;
  /** Whether this row is the stream's close. */
  eof: boolean;
  /** When it was written (epoch ms). */
  created_at: number;
}

/** One record of a portable instance dump; events keep their exact stored data text and hashes. */
export type DumpRecord =
  | { t: 'work_item'; row: WorkItemRowDump }
  | { t: 'event'; row: StoredEvent }
  | { t: 'document'; row: DocumentRowDump }
  | { t: 'history'; row: HistoryRowDump }
  | { t: 'limit'; row: LimitRowDump }
  | WorkflowRowRecord
  | { t: 'workflow_chunk'; row: WorkflowChunkRowDump };

/** A row of a Workflow SDK World's runs, steps, hooks or waits, as a dump holds it (verbatim). */
export type WorkflowRowRecord =
  | { t: 'workflow_run'; row: WorkflowRunRow }
  | { t: 'workflow_step'; row: WorkflowStepRow }
  | { t: 'workflow_hook'; row: WorkflowHookRow }
  | { t: 'workflow_wait'; row: WorkflowWaitRow };

/**
 * A row kept beside the rows and the log, derived from them, for verify to check: a backend whose head is not
 * the log itself names event positions (PostgreSQL: the instance's `event_heads` row and its `event_streams`
 * counters), and every backend keeps blocked_by read backwards (`work_item_blockers`, all its rows in one
 * record). Never part of a dump file: an import derives them again.
 */
export type CounterRecord =
  | { t: 'event_head'; row: { position: number; hash: string } }
  | { t: 'event_stream'; row: { stream: string; seq: number } }
  | { t: 'blocker_edges'; row: { edges: Array<{ blocker: string; item: string }> } };

/** What `StoreBackend.dump` yields besides the instance's rows. */
export interface DumpOptions {
  /** Also yield the counter rows (after everything else), for verify. @default false */
  counters?: boolean;
  /** Yield the chunks of the Workflow World's streams (verify has nothing to check them against). @default true */
  chunks?: boolean;
}

/**
 * A storage backend: one instance's work items, event log and documents (`openSqliteBackend`, or
 * `openPostgresBackend` from `@agentstate/store/postgres`). The core reaches storage only through this.
 */
export interface StoreBackend {
  /** The backend's name (`sqlite`, `postgres`). */
  readonly name: string;
  /** What it can do natively. */
  readonly capabilities: BackendCapabilities;
  /** Work items. */
  readonly work: WorkItemBackend;
  /** The event log. */
  readonly events: EventBackend;
  /** Versioned documents and their history. */
  readonly docs: DocumentBackend;
  /** Limits per concurrency key, which claims respect. */
  readonly limits: LimitBackend;
  /** The byte streams of a Workflow SDK World; absent on a backend that does not store them. */
  readonly workflowStreams?: WorkflowStreamBackend;
  /** The runs, steps, hooks, waits and events of a Workflow SDK World; absent on a backend that does not store them. */
  readonly workflowRuns?: WorkflowRunBackend;
  /** Migrations applied when this backend was opened (empty when the schema was current). */
  readonly migrationsApplied: string[];
  /**
   * Every row of the instance, read in one consistent snapshot (events in position order), for a portable
   * dump and for verify; counter rows only when asked.
   */
  dump?(options?: DumpOptions): AsyncIterable<DumpRecord | CounterRecord>;
  /** Loads dump records verbatim into an empty instance, in one transaction. */
  load?(records: DumpRecord[]): Promise<void>;
  /**
   * With `capabilities.notify`: calls `onAppend` soon after events of this instance commit. Hints can be
   * lost; resolves to a function that stops listening.
   */
  listen?(onAppend: (position: number) => void): Promise<() => Promise<void>>;
  /** Applies pending migrations (safe when several processes start at once); returns the names applied. */
  migrate(): Promise<string[]>;
  /** Closes the connection (or the pool); closing again does nothing. */
  close(): Promise<void>;
}
