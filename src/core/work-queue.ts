// The work-item service: checks inputs, fills defaults, and calls the backend's atomic operations.
import {
  InvalidInputError,
  InvalidTransitionError,
  isAgentStateError,
  NotFoundError,
  PermissionDeniedError,
} from '../errors.js';
import type {
  Claimer,
  LeaseQuery,
  NewWorkItem,
  Outcome,
  ResolveQuery,
  StatusChange,
  StoreBackend,
  WorkStats,
} from './backend.js';
import { type CoalesceOptions, Coalescer, DEFAULT_COALESCE } from './coalesce.js';
import { type RunRecord, readSignal, type SignalRecord, signalEvent } from './codecs/run-records.js';
import { itemEvent } from './event-log.js';
import { newId } from './ids.js';
import { checkInput, type InputSpec, LIMITS } from './input.js';
import { limitFromRow } from './rows.js';
import { checkRecordName } from './runs/inputs.js';
import type { Run } from './runs/run.js';
import { Runs } from './runs/runs.js';
import type { RunHolder, StepInfo, StepInput } from './runs/types.js';
import { type Clock, parseTime } from './time.js';
import { activeTraceparent, spanContextOf, TRACEPARENT_PATTERN } from './tracing.js';
import {
  ACTOR_KINDS,
  type ActorKind,
  type AnnotateInput,
  BLOCKER_FAILURE_POLICIES,
  type CancelInput,
  type CancelManyInput,
  type ClaimInput,
  type DecisionAnswer,
  type EnqueueInput,
  type HeartbeatInput,
  type HistoryInput,
  type Json,
  type JsonObject,
  type ListInput,
  LOCK_KIND,
  type Provenance,
  type QueueHistory,
  type RateLimit,
  type ReleaseInput,
  type RemoveLimitInput,
  type ResetStepInput,
  type ResolveInput,
  type RetryInput,
  type RetryManyInput,
  type SetLimitInput,
  type SignalInput,
  type StatusCounts,
  type StepsInput,
  WORK_ITEM_STATUSES,
  type WorkItem,
  type WorkItemStatus,
  type WorkLimit,
} from './types.js';
import {
  AS_RUN,
  AS_SCHEDULER,
  endedUnsuccessfully,
  humanDecisionRefusal,
  isRepeatedHumanResolution,
  isRunQuestion,
  isTerminal,
  OWNED_KEY_PREFIX,
  ownerOf,
  RUN_KEY_PREFIX,
  runParentOf,
  runQuestionRefusal,
  runSignalName,
  SCHEDULE_KEY_PREFIX,
  STORE_ACTOR_KIND,
} from './work-rules.js';

/** Default lease length: one minute, extended by heartbeats. */
export const DEFAULT_LEASE_MS = 60_000;
/** Default attempts before an item whose lease keeps expiring is failed. */
export const DEFAULT_MAX_ATTEMPTS = 3;

const LEASE = { type: 'int', min: 1, max: LIMITS.leaseMs } as const;
const KIND = { type: 'string', enum: ACTOR_KINDS } as const;
/** Who acts: the actor its events record, and its kind. */
const ACTOR = { actor: { type: 'name' }, actor_kind: KIND } as const;
/** Whose lease a call acts under: the worker holding it, and the attempt it holds (the fencing token). */
const HOLDER = { worker: { type: 'name' }, attempt: { type: 'int', min: 1 } } as const;

/** Input specs, shared by the library, the CLI and the workflows (their payloads are these objects). */
export const WORK_INPUTS = {
  enqueue: {
    title: { type: 'string', required: true },
    kind: { type: 'name', nullable: true },
    payload: { type: 'json' },
    priority: { type: 'int', min: -1_000_000, max: 1_000_000 },
    idempotency_key: { type: 'name', nullable: true },
    blocked_by: { type: 'names' },
    not_before: { type: 'time', nullable: true },
    max_attempts: { type: 'int', min: 1, max: 1000 },
    waiting_human: { type: 'bool' },
    on_blocker_failure: { type: 'string', enum: BLOCKER_FAILURE_POLICIES },
    concurrency_key: { type: 'name', nullable: true },
    traceparent: {
      type: 'string',
      nullable: true,
      max: 55,
      pattern: { source: TRACEPARENT_PATTERN, what: 'a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>)' },
    },
    ...ACTOR,
  },
  retry: {
    id: { type: 'name', required: true },
    reason: { type: 'text' },
    ...ACTOR,
  },
  retry_many: {
    ids: { type: 'names', required: true, max: LIMITS.claimLimit },
    reason: { type: 'text' },
    ...ACTOR,
  },
  history: {
    window_ms: { type: 'int', min: 60_000, max: 30 * 86_400_000 },
    buckets: { type: 'int', min: 2, max: 200 },
  },
  cancel_many: {
    ids: { type: 'names', required: true, max: LIMITS.claimLimit },
    reason: { type: 'text' },
    ...ACTOR,
  },
  claim: {
    worker: { type: 'name' },
    lease_ms: LEASE,
    kind: { type: 'name' },
    id: { type: 'name' },
    key: { type: 'name' },
    limit: { type: 'int', min: 1, max: LIMITS.claimLimit },
    actor_kind: KIND,
  },
  heartbeat: {
    id: { type: 'name', required: true },
    worker: { type: 'name' },
    lease_ms: LEASE,
    attempt: { type: 'int', min: 1 },
  },
  resolve: {
    id: { type: 'name', required: true },
    status: { type: 'string', required: true, enum: ['done', 'failed'] },
    result: { type: 'json' },
    error: { type: 'text', nullable: true },
    retry_at: { type: 'time', nullable: true },
    ...HOLDER,
    ...ACTOR,
  },
  release: {
    id: { type: 'name', required: true },
    ...HOLDER,
    ...ACTOR,
  },
  annotate: {
    id: { type: 'name', required: true },
    notes: { type: 'object', required: true },
    ...ACTOR,
    ...HOLDER,
  },
  cancel: {
    id: { type: 'name', required: true },
    reason: { type: 'text' },
    ...ACTOR,
  },
  set_limit: {
    key: { type: 'name', required: true },
    max_in_flight: { type: 'int', min: 1, max: LIMITS.claimLimit * 1000, nullable: true },
    rate: { type: 'object', nullable: true },
    ...ACTOR,
  },
  remove_limit: {
    key: { type: 'name', required: true },
    ...ACTOR,
  },
  get: { id: { type: 'name', required: true } },
  signal: {
    id: { type: 'name', required: true },
    name: { type: 'name', required: true },
    payload: { type: 'json' },
    ...ACTOR,
  },
  reset_step: {
    id: { type: 'name', required: true },
    name: { type: 'name', required: true },
    occurrence: { type: 'int', min: 1 },
    reason: { type: 'text' },
    ...ACTOR,
  },
  list: {
    status: { type: 'string', enum: WORK_ITEM_STATUSES, many: WORK_ITEM_STATUSES.length },
    kind: { type: 'name' },
    limit: { type: 'int', min: 1, max: 100_000 },
    ready: { type: 'bool' },
    blocked_on_failure: { type: 'bool' },
    concurrency_key: { type: 'name' },
    after: { type: 'name' },
  },
  steps: {
    id: { type: 'name', required: true },
    after: { type: 'int', min: 1 },
    limit: { type: 'int', min: 1, max: 100_000 },
  },
} satisfies Record<string, InputSpec>;

/** The bounds of a rate limit's fields: at most a million claims per window, a window of at most a year. */
const RATE = {
  count: { type: 'int', required: true, min: 1, max: 1_000_000 },
  period_ms: { type: 'int', required: true, min: 1, max: 366 * 86_400_000 },
} as const satisfies InputSpec;

/** Checks a set_limit input: a limit needs max_in_flight, a rate, or both. */
export function checkSetLimit(raw: SetLimitInput): SetLimitInput & { rate: RateLimit | null } {
  const i = checkInput<SetLimitInput>('set_limit', raw, WORK_INPUTS.set_limit);
  const rate =
    i.rate === undefined || i.rate === null ? null : checkInput<RateLimit>('set_limit.rate', i.rate, RATE);
  if ((i.max_in_flight ?? null) === null && rate === null) {
    throw new InvalidInputError(
      'set_limit: give max_in_flight, rate, or both (remove_limit removes a limit)',
      {
        field: 'max_in_flight',
      },
    );
  }
  return { ...i, rate };
}

/** Checks an enqueue input and fills its defaults (shared with document effects). */
export function normalizeEnqueue(
  raw: EnqueueInput,
  now: number,
  defaultActor: string,
  as?: typeof AS_SCHEDULER | typeof AS_RUN,
): NewWorkItem {
  const i = checkInput<EnqueueInput>('enqueue', raw, WORK_INPUTS.enqueue);
  if (i.title.trim() === '')
    throw new InvalidInputError('enqueue: title must not be blank', { field: 'title' });
  if (typeof i.traceparent === 'string' && !spanContextOf(i.traceparent))
    throw new InvalidInputError('enqueue: traceparent has an all-zero trace or span id (invalid by W3C)', {
      field: 'traceparent',
    });
  if (i.idempotency_key?.startsWith(OWNED_KEY_PREFIX)) {
    throw new InvalidInputError(
      `enqueue: idempotency keys starting with ${OWNED_KEY_PREFIX} belong to the work items documents enqueue themselves; use another key`,
      { field: 'idempotency_key' },
    );
  }
  if (as !== AS_RUN && i.idempotency_key?.startsWith(RUN_KEY_PREFIX)) {
    throw new InvalidInputError(
      `enqueue: idempotency keys starting with ${RUN_KEY_PREFIX} belong to the items durable runs enqueue (their children and questions); use another key`,
      { field: 'idempotency_key' },
    );
  }
  if (as !== AS_SCHEDULER && i.idempotency_key?.startsWith(SCHEDULE_KEY_PREFIX)) {
    throw new InvalidInputError(
      `enqueue: idempotency keys starting with ${SCHEDULE_KEY_PREFIX} belong to the items schedules enqueue; use another key`,
      { field: 'idempotency_key' },
    );
  }
  return {
    id: newId('wi', now),
    title: i.title,
    kind: i.kind ?? null,
    status: i.waiting_human ? 'waiting_human' : 'pending',
    priority: i.priority ?? 0,
    payload: i.payload ?? null,
    idempotency_key: i.idempotency_key ?? null,
    blocked_by: [...new Set(i.blocked_by ?? [])],
    not_before: i.not_before ? parseTime(i.not_before, 'not_before', now, 'ahead') : null,
    max_attempts: i.max_attempts ?? DEFAULT_MAX_ATTEMPTS,
    on_blocker_failure: i.on_blocker_failure ?? 'wait',
    concurrency_key: i.concurrency_key ?? null,
    traceparent: i.traceparent === undefined ? activeTraceparent() : i.traceparent,
    created_at: now,
    actor: i.actor ?? defaultActor,
    actor_kind: i.actor_kind ?? STORE_ACTOR_KIND,
  };
}

/** What a WorkQueue needs of its instance. */
export interface WorkQueueContext {
  clock: Clock;
  /** Lease owner and event actor when a call names none (the instance's agent name). */
  defaultWorker: string;
  /**
   * Answers a human decision a document asked for (the document records the answer in the same
   * transaction as the item's resolution); the instance wires it to `DocumentStore.answerDecision`.
   */
  answer?: (item: WorkItem, a: DecisionAnswer) => Promise<WorkItem>;
  /**
   * Overlapping claim(), resolve() and heartbeat() calls on this handle are served by one batched
   * statement each (see CoalesceOptions); false: every call is its own transaction. @default {}
   */
  coalesce?: CoalesceOptions | false;
}

/**
 * Where a call came from, as the edge that took it knows it: never part of an input schema, so no caller names
 * it (the MCP edge records a person's answer given through the host's form, `via: 'elicitation'`). Kept in the
 * event of a cancel or unpark and, for a human's answer to a decision, in that event and as the provenance of
 * the document version the answer commits.
 */
export interface CallProvenance {
  provenance?: Provenance | undefined;
}

const provenanceData = (o: CallProvenance): JsonObject | undefined =>
  o.provenance === undefined ? undefined : { provenance: o.provenance as JsonObject };

type ClaimCall = Omit<Claimer, 'limit'>;
type HeartbeatQuery = LeaseQuery & { lease_ms: number };

/**
 * Work items of one instance. A claim is atomic (one statement: no two workers get one item) and takes a
 * lease (`lease_ms`, default 60 s) that `heartbeat` extends; `resolve`, `heartbeat` and `release` hold only
 * while the lease and its attempt (the fencing token, `attempts` at the claim) are the caller's, else
 * LEASE_LOST. An expired lease is reclaimed at the next claim (pending again, or failed once
 * `max_attempts` are spent). Every change writes its event in the same transaction, with the actor and
 * actor kind of the call (`system` when none is named). Items a document enqueued and that wait for a
 * human are decisions: only a human answers, cancels or re-asks them.
 * @example
 * const item = await inst.work.claim({ worker: 'w1' });
 * if (item) await inst.work.resolve({ id: item.id, worker: 'w1', attempt: item.attempts, status: 'done' });
 */
export class WorkQueue {
  readonly #backend: StoreBackend;
  /**
   * How often an idle worker polls by default, in ms: sooner where no hint can wake it (PostgreSQL behind a
   * transaction pooler: 250), else 1000.
   */
  readonly idlePollMs: number;
  readonly #ctx: WorkQueueContext;
  readonly #coalesce: Required<CoalesceOptions> | null;
  /** Coalesced claim() calls, by the kind they ask for. */
  readonly #claims = new Map<string | null, Coalescer<ClaimCall, WorkItem | null>>();
  readonly #resolves: Coalescer<ResolveQuery, WorkItem> | null;
  readonly #heartbeats: Coalescer<HeartbeatQuery, WorkItem> | null;
  /** Durable runs: the records of what handlers did inside their items' runs (src/core/runs.ts). */
  readonly #runs: Runs;

  constructor(backend: StoreBackend, ctx: WorkQueueContext) {
    this.#backend = backend;
    this.idlePollMs = backend.capabilities.idlePollMs ?? 1_000;
    this.#ctx = ctx;
    this.#coalesce = ctx.coalesce === false ? null : { ...DEFAULT_COALESCE, ...ctx.coalesce };
    const coalesce = this.#coalesce;
    /**
     * Coalesced calls of a batch operation on items, at most one call per item in a batch; a batch runs at
     * its own moment: the time of each call in it is the time it ran.
     */
    const perItem = <Q extends LeaseQuery, R>(run: (qs: Q[]) => Promise<Array<Outcome<R>>>) =>
      coalesce
        ? new Coalescer<Q, R>(
            (qs) => {
              const now = this.#ctx.clock();
              return run(qs.map((q) => ({ ...q, now })));
            },
            coalesce,
            (batch, q) => !batch.some((b) => b.id === q.id),
          )
        : null;
    this.#resolves = perItem((qs: ResolveQuery[]) => this.#backend.work.resolveEach(qs));
    this.#heartbeats = perItem((qs: HeartbeatQuery[]) => this.#backend.work.heartbeat(qs));
    this.#runs = new Runs(backend, () => this.#ctx.clock(), coalesce, {
      enqueue: (inputs) => this.enqueueMany(inputs, AS_RUN),
      get: (id) => this.#backend.work.get(id),
    });
  }

  #claimer(kind: string | null): Coalescer<ClaimCall, WorkItem | null> {
    let c = this.#claims.get(kind);
    if (!c) {
      c = new Coalescer(async (calls) => {
        const items = await this.#backend.work.claim({
          claimers: calls.map((x) => ({ ...x, limit: 1 })),
          kind,
          id: null,
          now: this.#ctx.clock(),
        });
        // One item per claimer, in turn: the first calls get items, the rest null.
        return calls.map((_, k) => ({ ok: true as const, value: items[k] ?? null }));
      }, this.#coalesce!);
      this.#claims.set(kind, c);
    }
    return c;
  }

  /**
   * Adds an item; with an `idempotency_key` already used, returns the existing item instead.
   * @example await inst.work.enqueue({ title: 'compile', blocked_by: [fetch.id], priority: 5 })
   */
  async enqueue(input: EnqueueInput): Promise<WorkItem> {
    const [item] = await this.enqueueMany([input]);
    return item!;
  }

  /**
   * Adds several items in one transaction (one fsync). `as` is the scheduler's (its `schedule:` keys) or a
   * durable run's (its `run:` keys) alone.
   */
  async enqueueMany(inputs: EnqueueInput[], as?: typeof AS_SCHEDULER | typeof AS_RUN): Promise<WorkItem[]> {
    const now = this.#ctx.clock();
    const rows = inputs.map((raw) => normalizeEnqueue(raw, now, this.#ctx.defaultWorker, as));
    return (await this.#backend.work.enqueue(rows)).map((r) => r.item);
  }

  /**
   * Atomically claims the highest-priority ready item (then the oldest), or returns null.
   * Expired leases are reclaimed first.
   */
  async claim(input: ClaimInput = {}): Promise<WorkItem | null> {
    const i = checkInput<ClaimInput>('claim', input, WORK_INPUTS.claim);
    if (i.key !== undefined) return this.#claimKey(i);
    if (this.#coalesce && i.id === undefined) {
      if ((i.limit ?? 1) === 1) {
        // Overlapping claims on this handle are served by one claimMany, one item to each.
        return this.#claimer(i.kind ?? null).submit({
          worker: i.worker ?? this.#ctx.defaultWorker,
          actor_kind: i.actor_kind ?? STORE_ACTOR_KIND,
          lease_ms: i.lease_ms ?? DEFAULT_LEASE_MS,
        });
      }
    }
    const [item] = await this.#claimMany({ ...i, limit: 1 });
    return item ?? null;
  }

  /**
   * Aggregates of the items for metrics (src/metrics/): counts and attempts by status and kind, the oldest
   * ready item, expired and expiring leases, items blocked on a failure, claim→resolve durations by kind.
   */
  async stats(q: {
    expiringWithinMs: number;
    bucketsMs: readonly number[];
    /** Items waiting for a human longer than this count as waiting long. @default 3600000 (1 h) */
    waitingLongerThanMs?: number;
  }): Promise<WorkStats> {
    const now = this.#ctx.clock();
    const { waitingLongerThanMs = 3_600_000, ...rest } = q;
    return this.#backend.work.stats({ ...rest, now, waitingSince: now - waitingLongerThanMs });
  }

  /**
   * The queue over time: per span of the last `window_ms` (`buckets` spans), the items created, done, failed
   * and cancelled in it, and how many were unfinished at its end (counted back from now: an item retried
   * since counts as unfinished throughout). Counts only; bounded by the window for finished items.
   */
  async history(input: HistoryInput = {}): Promise<QueueHistory> {
    const i = checkInput<HistoryInput>('queue_history', input, WORK_INPUTS.history);
    const now = this.#ctx.clock();
    const windowMs = i.window_ms ?? 86_400_000;
    const count = i.buckets ?? 48;
    const bucketMs = Math.ceil(windowMs / count);
    // The last span ends just after now, so what happened at `now` is in it.
    const since = now + 1 - bucketMs * count;
    const [h, counts] = await Promise.all([
      this.#backend.work.history({ since, bucketMs, buckets: count }),
      this.#backend.work.counts(),
    ]);
    const unfinished = counts.pending + counts.in_flight + counts.waiting_human;
    // Unfinished at the end of span k: unfinished now, minus what was created after it, plus what ended after it.
    let open = unfinished;
    const buckets: QueueHistory['buckets'] = new Array(count);
    for (let k = count - 1; k >= 0; k--) {
      const b = h.buckets[k]!;
      buckets[k] = { start: new Date(since + k * bucketMs).toISOString(), ...b, open: Math.max(0, open) };
      open -= b.created - b.done - b.failed - b.cancelled;
    }
    return { since: new Date(since).toISOString(), bucket_ms: bucketMs, open: unfinished, buckets };
  }

  /** Claims up to `limit` ready items in one statement (one work_items_claimed event for two or more). */
  async claimMany(input: ClaimInput = {}): Promise<WorkItem[]> {
    const i = checkInput<ClaimInput>('claim', input, WORK_INPUTS.claim);
    if (i.key !== undefined) {
      const item = await this.#claimKey(i);
      return item ? [item] : [];
    }
    return this.#claimMany(i);
  }

  /**
   * The lock `key`: its item (kind `lock`, made on first use) claimed by id. Held by another worker:
   * PERMISSION_DENIED naming the holder; resolved done: INVALID_TRANSITION (a finished lock stays finished);
   * failed or cancelled (its lease ran out too often, someone cancelled it): opened again first.
   */
  async #claimKey(i: ClaimInput): Promise<WorkItem> {
    const key = i.key!;
    if (i.id !== undefined || (i.kind !== undefined && i.kind !== LOCK_KIND) || (i.limit ?? 1) !== 1) {
      throw new InvalidInputError('claim: key names one lock: give it without id, another kind or a limit', {
        field: 'key',
      });
    }
    const worker = i.worker ?? this.#ctx.defaultWorker;
    let item = await this.enqueue({
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
        item = await this.retry({
          id: item.id,
          ...(i.actor_kind === undefined ? {} : { actor_kind: i.actor_kind }),
        });
      } catch (err) {
        // Opened again by a racing claim: the claim below decides who holds it.
        if (!(isAgentStateError(err) && err.code === 'INVALID_TRANSITION')) throw err;
      }
    }
    if (item.status === 'in_flight' && item.lease_owner === worker) return item;
    const [claimed] = await this.#claimMany({ ...i, key: undefined, kind: undefined, id: item.id, limit: 1 });
    if (claimed) return claimed;
    const now = (await this.#backend.work.get(item.id)) ?? item;
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

  #claimMany(i: ClaimInput): Promise<WorkItem[]> {
    return this.#backend.work.claim({
      claimers: [
        {
          worker: i.worker ?? this.#ctx.defaultWorker,
          actor_kind: i.actor_kind ?? STORE_ACTOR_KIND,
          lease_ms: i.lease_ms ?? DEFAULT_LEASE_MS,
          limit: i.limit ?? 1,
        },
      ],
      kind: i.kind ?? null,
      id: i.id ?? null,
      now: this.#ctx.clock(),
    });
  }

  /** Extends the caller's lease; LEASE_LOST if it is no longer theirs. */
  async heartbeat(input: HeartbeatInput): Promise<WorkItem> {
    const i = checkInput<HeartbeatInput>('heartbeat', input, WORK_INPUTS.heartbeat);
    const q: HeartbeatQuery = {
      id: i.id,
      worker: i.worker ?? this.#ctx.defaultWorker,
      attempt: i.attempt ?? null,
      lease_ms: i.lease_ms ?? DEFAULT_LEASE_MS,
      now: this.#ctx.clock(),
    };
    if (this.#heartbeats) return this.#heartbeats.submit(q);
    const [o] = await this.#backend.work.heartbeat([q]);
    if (!o?.ok) throw o?.error;
    return o.value;
  }

  /**
   * Extends several leases in one statement (a worker heartbeating everything it holds), each answered on
   * its own: the item, or the refusal (LEASE_LOST, INVALID_TRANSITION, NOT_FOUND) for that item alone.
   * At most LIMITS.claimLimit (1000) at once.
   */
  async heartbeatMany(inputs: HeartbeatInput[]): Promise<Array<Outcome<WorkItem>>> {
    if (!Array.isArray(inputs) || inputs.length > LIMITS.claimLimit) {
      throw new InvalidInputError(`heartbeatMany takes an array of at most ${LIMITS.claimLimit} heartbeats`, {
        field: 'heartbeats',
      });
    }
    const now = this.#ctx.clock();
    const qs = inputs.map((input): HeartbeatQuery => {
      const i = checkInput<HeartbeatInput>('heartbeat', input, WORK_INPUTS.heartbeat);
      return {
        id: i.id,
        worker: i.worker ?? this.#ctx.defaultWorker,
        attempt: i.attempt ?? null,
        lease_ms: i.lease_ms ?? DEFAULT_LEASE_MS,
        now,
      };
    });
    return qs.length === 0 ? [] : this.#backend.work.heartbeat(qs);
  }

  /**
   * Finishes an item the caller holds (or one waiting for a human) as done or failed. A human decision a
   * document asked for is answered with `actor_kind: 'human'` and `actor` (who answered).
   */
  async resolve(input: ResolveInput, origin: CallProvenance = {}): Promise<WorkItem> {
    const i = checkInput<ResolveInput>('resolve', input, WORK_INPUTS.resolve);
    if (i.actor_kind === 'human') {
      const current = await this.#backend.work.get(i.id);
      if (current && ownerOf(current) && this.#ctx.answer) {
        if (i.actor === undefined) {
          throw new InvalidInputError(
            `resolve: work item ${i.id} is a human decision: name who answered it (actor)`,
            { field: 'actor', id: i.id },
          );
        }
        return this.#ctx.answer(current, {
          status: i.status,
          result: i.result ?? null,
          error: i.error ?? null,
          actor: i.actor,
          provenance: origin.provenance,
        });
      }
    }
    if (this.#resolves) {
      // Overlapping resolves on this handle go in one transaction, each answered on its own.
      const q = this.#resolveQueries([i])[0]!;
      return this.#ended(
        await this.#resolves.submit(q).catch((err: unknown) => this.#repeatedResolve(err, q)),
      );
    }
    const [item] = await this.#resolveMany(this.#resolveQueries([i]));
    return this.#ended(item as WorkItem);
  }

  /**
   * The item, when the resolve `q` that `err` refused is the retry of one that already finished it outside
   * a lease (an item waiting for a human); otherwise throws `err`. Only a refusal's path pays these reads.
   */
  async #repeatedResolve(err: unknown, q: ResolveQuery): Promise<WorkItem> {
    if (!isAgentStateError(err) || (err.code !== 'INVALID_TRANSITION' && err.code !== 'LEASE_LOST'))
      throw err;
    const current = await this.#backend.work.get(q.id);
    if (current && isRepeatedHumanResolution(current, await itemEvent(this.#backend, q.id, 'newest'), q))
      return current;
    throw err;
  }

  /**
   * Finishes several items in one transaction (a worker that claimed a batch with `claimMany`): all of
   * them or, if any one is refused (LEASE_LOST, INVALID_TRANSITION, NOT_FOUND), none.
   * @example await inst.work.resolveMany(items.map((i) => ({ id: i.id, status: 'done', attempt: i.attempts })))
   */
  async resolveMany(inputs: ResolveInput[]): Promise<WorkItem[]> {
    if (!Array.isArray(inputs) || inputs.length > LIMITS.claimLimit) {
      throw new InvalidInputError(
        `resolveMany takes an array of at most ${LIMITS.claimLimit} resolves (as many as one claim can take)`,
        {
          field: 'resolves',
        },
      );
    }
    return this.#endedAll(
      await this.#resolveMany(
        this.#resolveQueries(
          inputs.map((input) => checkInput<ResolveInput>('resolve', input, WORK_INPUTS.resolve)),
        ),
      ),
    );
  }

  async #resolveMany(qs: ResolveQuery[]): Promise<WorkItem[]> {
    if (qs.length === 0) return [];
    // Resolves retried after they finished items waiting for a human get those items as they are; the
    // rest of the batch runs again without them (all or nothing still holds for the rest).
    const repeated = new Map<string, WorkItem>();
    for (;;) {
      const rest = repeated.size === 0 ? qs : qs.filter((q) => !repeated.has(q.id));
      try {
        const items = rest.length === 0 ? [] : await this.#backend.work.resolve(rest);
        if (repeated.size === 0) return items;
        const resolved = new Map(items.map((item) => [item.id, item]));
        return qs.map((q) => (repeated.get(q.id) ?? resolved.get(q.id))!);
      } catch (err) {
        const id = isAgentStateError(err) ? err.details.id : undefined;
        const q = rest.find((x) => x.id === id);
        if (!q) throw err;
        repeated.set(q.id, await this.#repeatedResolve(err, q));
      }
    }
  }

  /** The backend's queries of resolves already checked. */
  #resolveQueries(checked: ResolveInput[]): ResolveQuery[] {
    const now = this.#ctx.clock();
    const seen = new Set<string>();
    return checked.map((i) => {
      if (seen.has(i.id)) {
        throw new InvalidInputError(`resolveMany names ${i.id} twice`, { field: 'id', id: i.id });
      }
      seen.add(i.id);
      if (i.retry_at != null && i.status !== 'failed') {
        throw new InvalidInputError(
          `resolve: retry_at is for a failed attempt to try again; work item ${i.id} is resolved ${i.status}`,
          { field: 'retry_at', id: i.id },
        );
      }
      return {
        id: i.id,
        status: i.status,
        result: i.result ?? null,
        error: i.error ?? null,
        retry_at: i.retry_at == null ? null : parseTime(i.retry_at, 'retry_at', now, 'ahead'),
        worker: i.worker ?? i.actor ?? this.#ctx.defaultWorker,
        actor_kind: i.actor_kind ?? STORE_ACTOR_KIND,
        attempt: i.attempt ?? null,
        now,
      };
    });
  }

  /**
   * Gives a held item back to the queue without spending the attempt (graceful shutdown). `worker` names
   * whose lease it is; `actor` who hands it back (a person releasing a stuck lease), by default the worker.
   */
  async release(input: ReleaseInput): Promise<WorkItem> {
    const i = checkInput<ReleaseInput>('release', input, WORK_INPUTS.release);
    const worker = i.worker ?? this.#ctx.defaultWorker;
    return this.#backend.work.release({
      id: i.id,
      worker,
      attempt: i.attempt ?? null,
      actor: i.actor ?? worker,
      actor_kind: i.actor_kind ?? STORE_ACTOR_KIND,
      now: this.#ctx.clock(),
    });
  }

  /**
   * The run of a claimed item's attempt, for code that holds the claim (an agent loop of its own, a request
   * handler): `run.step(name, fn)` runs `fn` once and records its result, fenced by the attempt, and returns
   * what an earlier attempt recorded instead of running it again; `run.sleep(name, '5m')` hands the item back
   * until then. One read of the item's records (docs/runs.md).
   * @example
   * const run = await inst.work.run({ id: item.id, worker: 'w1', attempt: item.attempts });
   * const draft = await run.step('draft', () => callModel(prompt));
   */
  async run(holder: RunHolder): Promise<Run> {
    return this.#runs.start(holder);
  }

  /**
   * One step of a claimed item's run, for code that makes its calls one at a time: occurrences are counted
   * per holder (item, worker, attempt) in this handle, so a loop's second `step` of a name is its own step.
   * See `run` and Run.step.
   * @example
   * const charge = await inst.work.step({ id, worker: 'w1', attempt, name: 'charge' },
   *   (s) => stripe.charges.create(params, { idempotencyKey: s.key }));
   */
  async step<T>(input: StepInput, fn: (s: StepInfo) => T | Promise<T>): Promise<T> {
    return this.#runs.step(input, fn);
  }

  /**
   * What item `id`'s run recorded, in order: its steps (completed or failed, with name, occurrence, attempt,
   * duration and result or error), sleeps and resets. NOT_FOUND for an unknown item. With `after` (the
   * `position` of the last record a page showed), the records after it, at most `limit` (default: all); an
   * `after` that is no record of this item is INVALID_INPUT.
   */
  async steps(input: string | StepsInput): Promise<RunRecord[]> {
    const i = checkInput<StepsInput>(
      'steps',
      typeof input === 'string' ? { id: input } : input,
      WORK_INPUTS.steps,
    );
    const item = await this.get(i.id);
    const all = await this.#runs.records(item.id);
    // The records of one item are few: read them all, and page in memory.
    let from = 0;
    if (i.after !== undefined) {
      from = all.findIndex((r) => r.position === i.after) + 1;
      if (from === 0) {
        throw new InvalidInputError(
          `steps: after ${i.after} is not the position of a record of work item ${item.id}; page on from the position of the last record a page showed`,
          { field: 'after' },
        );
      }
    }
    return all.slice(from, i.limit === undefined ? undefined : from + i.limit);
  }

  /**
   * Sends a signal to an item, for a durable run's `waitFor(name)`: kept until a wait of that name takes it
   * (one wait, one signal, in order), and when the item is handed back waiting for it, the item is claimable
   * at once. NOT_FOUND for an unknown item; INVALID_TRANSITION for one that ended (done, failed, cancelled).
   * @example await inst.work.signal({ id, name: 'approved', payload: { by: 'ada' } })
   */
  async signal(input: SignalInput): Promise<SignalRecord> {
    const i = checkInput<SignalInput>('signal', input, WORK_INPUTS.signal);
    const name = checkRecordName('signal', i.name);
    const payload = (i.payload ?? null) as Json;
    const actor = i.actor ?? this.#ctx.defaultWorker;
    const actorKind = i.actor_kind ?? STORE_ACTOR_KIND;
    const now = this.#ctx.clock();
    const { event } = await this.#backend.work.signal({
      id: i.id,
      name,
      now,
      build: (wakes) => signalEvent(i.id, { name, payload, actor, actor_kind: actorKind }, wakes, now),
    });
    return readSignal(event) as SignalRecord;
  }

  /**
   * A person's reset of a recorded step: it and everything the run recorded after it run again on the next
   * attempt, with new keys. Only while the item is not in flight (INVALID_TRANSITION), and never by a model
   * (PERMISSION_DENIED); recorded as work_step_reset with who did it and why.
   */
  async resetStep(input: ResetStepInput): Promise<RunRecord> {
    const i = checkInput<ResetStepInput>('reset_step', input, WORK_INPUTS.reset_step);
    const actor = i.actor ?? this.#ctx.defaultWorker;
    if (i.actor_kind === 'model') {
      // Running a step again may repeat what it did outside (a charge, a message): a person decides that.
      throw new PermissionDeniedError(
        `reset_step: a model may not reset a step of work item ${i.id}: running it again is a person's decision`,
        { id: i.id, actor_kind: i.actor_kind },
      );
    }
    return this.#runs.reset({
      id: i.id,
      name: i.name,
      occurrence: i.occurrence ?? 1,
      reason: i.reason ?? null,
      actor,
      actor_kind: i.actor_kind ?? STORE_ACTOR_KIND,
    });
  }

  /**
   * Merges `notes` into the item's notes (RFC 7396: a null value removes a key) in one statement.
   * With `worker`, only while that worker holds the lease.
   */
  async annotate(input: AnnotateInput & { worker?: string; attempt?: number }): Promise<WorkItem> {
    const i = checkInput<AnnotateInput & { worker?: string; attempt?: number }>(
      'annotate',
      input,
      WORK_INPUTS.annotate,
    );
    const now = this.#ctx.clock();
    return this.#backend.work.annotate({
      id: i.id,
      notes: i.notes,
      actor: i.actor ?? i.worker ?? this.#ctx.defaultWorker,
      actor_kind: i.actor_kind ?? STORE_ACTOR_KIND,
      now,
      lease: i.worker ? { id: i.id, worker: i.worker, attempt: i.attempt ?? null, now } : null,
    });
  }

  /**
   * Cancels an item that is not finished. A human decision a document asked for is cancelled only by a
   * human (`actor_kind: 'human'`; PERMISSION_DENIED otherwise), and a human can ask it again (`retry`).
   */
  async cancel(input: CancelInput, origin: CallProvenance = {}): Promise<WorkItem> {
    return this.#ended(await this.#cancel(input, origin));
  }

  async #cancel(input: CancelInput, origin: CallProvenance): Promise<WorkItem> {
    const i = checkInput<CancelInput>('cancel', input, WORK_INPUTS.cancel);
    const human = i.actor_kind === 'human';
    const data = provenanceData(origin);
    try {
      // Only a human's cancel may match an item waiting for a human: the condition holds at the write.
      return await this.#setStatus(
        i,
        human ? ['pending', 'in_flight', 'waiting_human'] : ['pending', 'in_flight'],
        'cancelled',
        'work_item_cancelled',
        data,
      );
    } catch (err) {
      if (human || !isAgentStateError(err) || err.code !== 'INVALID_TRANSITION') throw err;
      const current = await this.#backend.work.get(i.id);
      if (current?.status !== 'waiting_human') throw err;
      if (ownerOf(current)) throw humanDecisionRefusal(current, 'cancel');
      if (isRunQuestion(current)) throw runQuestionRefusal(current, 'cancel');
      // An ordinary item parked for a human (its key never becomes a document's): anyone may cancel it.
      return this.#setStatus(i, ['waiting_human'], 'cancelled', 'work_item_cancelled', data);
    }
  }

  /**
   * Cancels several unfinished items in one transaction: all of them or, if any one is refused (NOT_FOUND,
   * INVALID_TRANSITION, a human decision cancelled by anyone but a human), none. One reason for all; an item
   * an earlier one's cancel already cancelled by cascade counts as cancelled.
   */
  async cancelMany(input: CancelManyInput, origin: CallProvenance = {}): Promise<WorkItem[]> {
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
      const current = human ? null : await this.#backend.work.get(id);
      const decision = current !== null && (ownerOf(current) !== null || isRunQuestion(current));
      if (decision && current.status === 'waiting_human') {
        throw ownerOf(current)
          ? humanDecisionRefusal(current, 'cancel')
          : runQuestionRefusal(current, 'cancel');
      }
      changes.push(
        this.#statusChange(
          { id, ...i },
          decision ? ['pending', 'in_flight'] : ['pending', 'in_flight', 'waiting_human'],
          'cancelled',
          'work_item_cancelled',
          data,
        ),
      );
    }
    return this.#endedAll(await this.#backend.work.setStatus(changes));
  }

  /**
   * Tells the durable runs whose children or questions among `items` have ended: a signal to each parent
   * (`join:<key>` / `answer:<key>`), which wakes its join or ask. Best effort, after the commit: a parent that
   * misses one (a crash in between, an end no call of this handle made) finds it at its wait's next check.
   */
  async #endedAll(items: WorkItem[]): Promise<WorkItem[]> {
    for (const item of items) {
      const run = runParentOf(item);
      if (run === null || !isTerminal(item.status)) continue;
      await this.signal({
        id: run.parent,
        name: runSignalName(run.role, run.stepKey),
        payload: { item: item.id, status: item.status },
        actor: this.#ctx.defaultWorker,
      }).catch(() => {});
    }
    return items;
  }

  async #ended(item: WorkItem): Promise<WorkItem> {
    await this.#endedAll([item]);
    return item;
  }

  /** Parks a pending item for a human decision. */
  async park(input: CancelInput): Promise<WorkItem> {
    const i = checkInput<CancelInput>('park', input, WORK_INPUTS.cancel);
    return this.#setStatus(i, ['pending'], 'waiting_human', 'work_item_parked');
  }

  /** Hands an item a human was deciding on back to the queue (not a decision a document asked for). */
  async unpark(input: CancelInput, origin: CallProvenance = {}): Promise<WorkItem> {
    const i = checkInput<CancelInput>('unpark', input, WORK_INPUTS.cancel);
    const current = await this.#backend.work.get(i.id);
    // A document's decision stays with the human: once pending, any worker could claim and answer it.
    if (current && ownerOf(current)) throw humanDecisionRefusal(current, 'unpark');
    if (current && isRunQuestion(current)) throw runQuestionRefusal(current, 'unpark');
    // The reason (a person's comment on why it goes back to the queue) is kept in the event.
    const data = { ...(i.reason === undefined ? {} : { reason: i.reason }), ...provenanceData(origin) };
    return this.#setStatus(
      i,
      ['waiting_human'],
      'pending',
      'work_item_unparked',
      Object.keys(data).length === 0 ? undefined : data,
    );
  }

  /**
   * Puts a failed or cancelled item back to pending, keeping its id and history (work_item_retried records
   * the previous status, error and attempts), with a fresh attempt budget; the items its failure cancelled
   * (on_blocker_failure cascade) are re-opened, and its dependants become ready once it is done.
   * INVALID_TRANSITION for an item in any other status (nothing written); PERMISSION_DENIED for a human
   * decision a document asked for (its document asks again).
   * @example await inst.work.retry({ id: failed.id, reason: 'the API is back' })
   */
  async retry(input: RetryInput): Promise<WorkItem> {
    const i = checkInput<RetryInput>('retry', input, WORK_INPUTS.retry);
    if (i.actor_kind === 'human') {
      const current = await this.#backend.work.get(i.id);
      if (current && ownerOf(current) && endedUnsuccessfully(current.status)) {
        const asked = (await itemEvent(this.#backend, i.id, 'first'))?.data;
        if (
          typeof asked === 'object' &&
          asked !== null &&
          !Array.isArray(asked) &&
          asked.status === 'waiting_human'
        ) {
          // A human decision ended (cancelled): a human asks it again, back to waiting for a human's answer,
          // never to pending where a worker could take it. The write holds only if it is still as read.
          return this.#setStatus(i, [current.status], 'waiting_human', 'work_item_retried', {
            previous_status: current.status,
            previous_error: current.error,
            previous_attempts: current.attempts,
            ...(i.reason === undefined ? {} : { reason: i.reason }),
          });
        }
      }
    }
    const [item] = await this.retryMany([i]);
    return item!;
  }

  /** Retries several items in one transaction: all of them or, if any one is refused, none. */
  async retryMany(inputs: RetryInput[] | RetryManyInput): Promise<WorkItem[]> {
    if (!Array.isArray(inputs) && typeof inputs === 'object' && inputs !== null) {
      // One reason for several ids (the operation table's form): checked once, as a whole.
      const { ids, ...rest } = checkInput<RetryManyInput>('retry_many', inputs, WORK_INPUTS.retry_many);
      return this.#retryMany(ids.map((id) => ({ id, ...rest })));
    }
    if (!Array.isArray(inputs) || inputs.length > LIMITS.claimLimit) {
      throw new InvalidInputError(`retryMany takes an array of at most ${LIMITS.claimLimit} retries`, {
        field: 'retries',
      });
    }
    return this.#retryMany(inputs.map((input) => checkInput<RetryInput>('retry', input, WORK_INPUTS.retry)));
  }

  async #retryMany(checked: RetryInput[]): Promise<WorkItem[]> {
    const now = this.#ctx.clock();
    const seen = new Set<string>();
    const qs = checked.map((i) => {
      if (seen.has(i.id))
        throw new InvalidInputError(`retryMany names ${i.id} twice`, { field: 'id', id: i.id });
      seen.add(i.id);
      return {
        id: i.id,
        reason: i.reason ?? null,
        actor: i.actor ?? this.#ctx.defaultWorker,
        actor_kind: i.actor_kind ?? STORE_ACTOR_KIND,
        now,
      };
    });
    if (qs.length === 0) return [];
    // A retried item may still wait on a failed blocker of its own: say so at once.
    return this.#withFailedBlockers(await this.#backend.work.retry(qs));
  }

  /** A status change outside a lease, by the call's actor (a cancel's reason is the item's error). */
  async #setStatus(
    i: { id: string; reason?: string; actor?: string; actor_kind?: ActorKind },
    from: WorkItemStatus[],
    to: 'cancelled' | 'pending' | 'waiting_human',
    event: string,
    data?: JsonObject,
  ): Promise<WorkItem> {
    const [item] = await this.#backend.work.setStatus([this.#statusChange(i, from, to, event, data)]);
    return item!;
  }

  #statusChange(
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
      actor: i.actor ?? this.#ctx.defaultWorker,
      actor_kind: i.actor_kind ?? STORE_ACTOR_KIND,
      ...(data === undefined ? {} : { data }),
      now: this.#ctx.clock(),
    };
  }

  /** The item, or NOT_FOUND. `id` or `{ id }` (the operation table's form). */
  async get(input: string | { id: string }): Promise<WorkItem> {
    const { id } = checkInput<{ id: string }>(
      'get',
      typeof input === 'string' ? { id: input } : input,
      WORK_INPUTS.get,
    );
    const item = await this.#backend.work.get(id);
    if (!item) throw new NotFoundError(`work item ${id} not found`, { id });
    return (await this.#withFailedBlockers([item]))[0]!;
  }

  /** The item, or null. */
  async find(id: string): Promise<WorkItem | null> {
    checkInput('get', { id }, WORK_INPUTS.get);
    const item = await this.#backend.work.get(id);
    return item ? (await this.#withFailedBlockers([item]))[0]! : null;
  }

  /**
   * Adds `blocked_on_failure` to the pending items among `items` that can never become ready as things
   * stand: the failed or cancelled items upstream of them, through blockers that are pending themselves.
   */
  async #withFailedBlockers(items: WorkItem[]): Promise<WorkItem[]> {
    const states = new Map<string, { status: WorkItemStatus; blocked_by: string[] }>();
    let frontier = new Set<string>();
    for (const it of items) if (it.status === 'pending') for (const b of it.blocked_by) frontier.add(b);
    while (frontier.size > 0) {
      const rows = await this.#backend.work.blockerStates([...frontier]);
      frontier = new Set();
      for (const r of rows) states.set(r.id, r);
      for (const r of rows) {
        if (r.status !== 'pending') continue;
        for (const b of r.blocked_by) if (!states.has(b)) frontier.add(b);
      }
    }
    const memo = new Map<string, string[]>();
    const roots = (id: string): string[] => {
      const known = memo.get(id);
      if (known) return known;
      memo.set(id, []);
      const s = states.get(id);
      let out: string[] = [];
      if (s && (s.status === 'failed' || s.status === 'cancelled')) out = [id];
      else if (s?.status === 'pending') out = [...new Set(s.blocked_by.flatMap(roots))];
      memo.set(id, out);
      return out;
    };
    return items.map((it) => {
      if (it.status !== 'pending') return it;
      const on = [...new Set(it.blocked_by.flatMap(roots))];
      return on.length > 0 ? { ...it, blocked_on_failure: on } : it;
    });
  }

  /**
   * Items in claim order, filtered by status and kind; with `after` (the id of the last item a page
   * showed), the items after it in that order, so paging visits each item once. An `after` naming no item
   * is INVALID_INPUT. @default limit 100
   */
  async list(input: ListInput & { ready?: boolean } = {}): Promise<WorkItem[]> {
    const i = checkInput<ListInput & { ready?: boolean }>('list', input, WORK_INPUTS.list);
    const statuses = i.status === undefined ? null : Array.isArray(i.status) ? i.status : [i.status];
    const items = await this.#backend.work.list({
      statuses,
      kind: i.kind ?? null,
      limit: i.limit ?? 100,
      now: this.#ctx.clock(),
      ...(i.ready === undefined ? {} : { ready: i.ready }),
      ...(i.blocked_on_failure === undefined ? {} : { blocked_on_failure: i.blocked_on_failure }),
      ...(i.concurrency_key === undefined ? {} : { concurrency_key: i.concurrency_key }),
      ...(i.after === undefined ? {} : { after: i.after }),
    });
    // A cursor naming no item reads nothing (its sort key is read by id in the same query): told only then,
    // so a page costs one query.
    if (items.length === 0 && i.after !== undefined && (await this.#backend.work.get(i.after)) === null) {
      throw new InvalidInputError(
        `list: after ${JSON.stringify(i.after)} names no work item; page on from the id of the last item a page showed`,
        { field: 'after' },
      );
    }
    return this.#withFailedBlockers(items);
  }

  /**
   * Calls `onAppend` soon after events of this instance commit (an enqueue among them), when the backend
   * pushes such hints (PostgreSQL's LISTEN/NOTIFY, on a connection of its own; SQLite's own commits in this
   * process at once, other processes' by a watch of the WAL file). Hints can be lost and come for any write:
   * use them to claim sooner, never instead of polling. Resolves to a function that stops listening, or null
   * when the backend sends no hints (PostgreSQL behind a transaction pooler).
   */
  async listen(onAppend: () => void): Promise<(() => Promise<void>) | null> {
    if (!this.#backend.capabilities.notify || !this.#backend.listen) return null;
    return this.#backend.listen(() => onAppend());
  }

  /**
   * Creates or replaces the limit of a concurrency key: at most `max_in_flight` of its items in flight at
   * once, and/or at most `rate.count` claims of them started per `rate.period_ms` window. Claims enforce it
   * in their own transaction on every backend (items of a key at its limit are skipped, others still
   * claimed); a key with no limit is unlimited. Writes `work_limit_set` in the same transaction.
   * @example await inst.work.setLimit({ key: 'openai:org-1', max_in_flight: 2, rate: { count: 60, period_ms: 60_000 } })
   */
  async setLimit(input: SetLimitInput): Promise<WorkLimit> {
    const i = checkSetLimit(input);
    const { after } = await this.#backend.limits.change({
      key: i.key,
      limit: { max_in_flight: i.max_in_flight ?? null, rate: i.rate },
      actor: i.actor ?? this.#ctx.defaultWorker,
      actor_kind: i.actor_kind ?? STORE_ACTOR_KIND,
      now: this.#ctx.clock(),
    });
    return limitFromRow(after!);
  }

  /**
   * Removes the limit of a concurrency key (it becomes unlimited); NOT_FOUND when it has none. Writes
   * `work_limit_removed` in the same transaction. Returns the limit removed.
   */
  async removeLimit(input: RemoveLimitInput): Promise<WorkLimit> {
    const i = checkInput<RemoveLimitInput>('remove_limit', input, WORK_INPUTS.remove_limit);
    const { before } = await this.#backend.limits.change({
      key: i.key,
      limit: null,
      actor: i.actor ?? this.#ctx.defaultWorker,
      actor_kind: i.actor_kind ?? STORE_ACTOR_KIND,
      now: this.#ctx.clock(),
    });
    return limitFromRow(before!);
  }

  /** Every concurrency key's limit, by key. */
  async limits(): Promise<WorkLimit[]> {
    return (await this.#backend.limits.list()).map(limitFromRow);
  }

  /** The lease owner and actor of calls that name none (the instance's worker). */
  get defaultWorker(): string {
    return this.#ctx.defaultWorker;
  }

  /** How many items are in each status. */
  async counts(): Promise<StatusCounts> {
    return this.#backend.work.counts();
  }

  /** Returns expired leases to the queue (or fails items out of attempts); returns those items. */
  async reclaimExpired(): Promise<WorkItem[]> {
    return this.#backend.work.reclaimExpired(this.#ctx.clock(), this.#ctx.defaultWorker);
  }

  /** Reclaims expired leases, then re-emits every unfinished item as `work_item_replayed`. */
  async replayPending(): Promise<WorkItem[]> {
    return this.#backend.work.replayUnfinished(this.#ctx.clock(), this.#ctx.defaultWorker);
  }
}
