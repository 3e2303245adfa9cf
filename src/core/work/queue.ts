// The work-item service: checks inputs, fills defaults, and calls the backend's atomic operations. WorkQueue is
// the facade every caller holds (inst.work); what each call does is in the modules beside it, by job: claims,
// locks, leases, resolves, status (cancel, park, retry), reads, history, steps (a durable run's records),
// limits; the inputs they check are in inputs.ts, the rules the backends share in rules.ts, refusals.ts,
// owners.ts and batches.ts.
import type { LeaseQuery, Outcome, ResolveQuery, StoreBackend, WorkStats } from '../backend.js';
import { Coalescer, DEFAULT_COALESCE } from '../coalesce.js';
import type { RunRecord, SignalRecord } from '../codecs/run-records.js';
import type { Run } from '../runs/run.js';
import { Runs } from '../runs/runs.js';
import type { RunHolder, StepInfo, StepInput } from '../runs/types.js';
import type {
  AnnotateInput,
  CancelInput,
  CancelManyInput,
  ClaimInput,
  EnqueueInput,
  HeartbeatInput,
  HistoryInput,
  ListInput,
  QueueHistory,
  ReleaseInput,
  RemoveLimitInput,
  ResetStepInput,
  ResolveInput,
  RetryInput,
  RetryManyInput,
  SetLimitInput,
  SignalInput,
  StatusCounts,
  StepsInput,
  WorkItem,
  WorkLimit,
} from '../types.js';
import { claim, claimMany } from './claims.js';
import type { CallProvenance, HeartbeatQuery, QueueParts, WorkQueueContext } from './context.js';
import { queueHistory } from './history.js';
import { normalizeEnqueue } from './inputs.js';
import { annotate, heartbeat, heartbeatMany, release } from './leases.js';
import { listLimits, removeLimit, setLimit } from './limits.js';
import { AS_RUN, type AS_SCHEDULER } from './owners.js';
import { find, get, list, stats } from './reads.js';
import { resolve, resolveMany } from './resolves.js';
import { cancel, cancelMany, park, retry, retryMany, unpark } from './status.js';
import { resetStep, signal, steps } from './steps.js';

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
  /** Durable runs: the records of what handlers did inside their items' runs (src/core/runs/). */
  readonly #runs: Runs;
  /** What the calls' bodies (the modules beside this one) work with: the backend, the context, the coalescers. */
  readonly #w: QueueParts;

  constructor(backend: StoreBackend, ctx: WorkQueueContext) {
    this.#backend = backend;
    this.idlePollMs = backend.capabilities.idlePollMs ?? 1_000;
    this.#ctx = ctx;
    const coalesce = ctx.coalesce === false ? null : { ...DEFAULT_COALESCE, ...ctx.coalesce };
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
    const resolves = perItem((qs: ResolveQuery[]) => this.#backend.work.resolveEach(qs));
    const heartbeats = perItem((qs: HeartbeatQuery[]) => this.#backend.work.heartbeat(qs));
    this.#runs = new Runs(backend, () => this.#ctx.clock(), coalesce, {
      enqueue: (inputs) => this.enqueueMany(inputs, AS_RUN),
      get: (id) => this.#backend.work.get(id),
    });
    this.#w = {
      queue: this,
      backend,
      ctx,
      coalesce,
      claims: new Map(),
      resolves,
      heartbeats,
      runs: this.#runs,
    };
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
  claim(input: ClaimInput = {}): Promise<WorkItem | null> {
    return claim(this.#w, input);
  }

  /**
   * Aggregates of the items for metrics (src/metrics/): counts and attempts by status and kind, the oldest
   * ready item, expired and expiring leases, items blocked on a failure, claim→resolve durations by kind.
   */
  stats(q: {
    expiringWithinMs: number;
    bucketsMs: readonly number[];
    /** Items waiting for a human longer than this count as waiting long. @default 3600000 (1 h) */
    waitingLongerThanMs?: number;
  }): Promise<WorkStats> {
    return stats(this.#w, q);
  }

  /**
   * The queue over time: per span of the last `window_ms` (`buckets` spans), the items created, done, failed
   * and cancelled in it, and how many were unfinished at its end (counted back from now: an item retried
   * since counts as unfinished throughout). Counts only; bounded by the window for finished items.
   */
  history(input: HistoryInput = {}): Promise<QueueHistory> {
    return queueHistory(this.#w, input);
  }

  /** Claims up to `limit` ready items in one statement (one work_items_claimed event for two or more). */
  claimMany(input: ClaimInput = {}): Promise<WorkItem[]> {
    return claimMany(this.#w, input);
  }

  /** Extends the caller's lease; LEASE_LOST if it is no longer theirs. */
  heartbeat(input: HeartbeatInput): Promise<WorkItem> {
    return heartbeat(this.#w, input);
  }

  /**
   * Extends several leases in one statement (a worker heartbeating everything it holds), each answered on
   * its own: the item, or the refusal (LEASE_LOST, INVALID_TRANSITION, NOT_FOUND) for that item alone.
   * At most LIMITS.claimLimit (1000) at once.
   */
  heartbeatMany(inputs: HeartbeatInput[]): Promise<Array<Outcome<WorkItem>>> {
    return heartbeatMany(this.#w, inputs);
  }

  /**
   * Finishes an item the caller holds (or one waiting for a human) as done or failed. A human decision a
   * document asked for is answered with `actor_kind: 'human'` and `actor` (who answered).
   */
  resolve(input: ResolveInput, origin: CallProvenance = {}): Promise<WorkItem> {
    return resolve(this.#w, input, origin);
  }

  /**
   * Finishes several items in one transaction (a worker that claimed a batch with `claimMany`): all of
   * them or, if any one is refused (LEASE_LOST, INVALID_TRANSITION, NOT_FOUND), none.
   * @example await inst.work.resolveMany(items.map((i) => ({ id: i.id, status: 'done', attempt: i.attempts })))
   */
  resolveMany(inputs: ResolveInput[]): Promise<WorkItem[]> {
    return resolveMany(this.#w, inputs);
  }

  /**
   * Gives a held item back to the queue without spending the attempt (graceful shutdown). `worker` names
   * whose lease it is; `actor` who hands it back (a person releasing a stuck lease), by default the worker.
   */
  release(input: ReleaseInput): Promise<WorkItem> {
    return release(this.#w, input);
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
  steps(input: string | StepsInput): Promise<RunRecord[]> {
    return steps(this.#w, input);
  }

  /**
   * Sends a signal to an item, for a durable run's `waitFor(name)`: kept until a wait of that name takes it
   * (one wait, one signal, in order), and when the item is handed back waiting for it, the item is claimable
   * at once. NOT_FOUND for an unknown item; INVALID_TRANSITION for one that ended (done, failed, cancelled).
   * @example await inst.work.signal({ id, name: 'approved', payload: { by: 'ada' } })
   */
  signal(input: SignalInput): Promise<SignalRecord> {
    return signal(this.#w, input);
  }

  /**
   * A person's reset of a recorded step: it and everything the run recorded after it run again on the next
   * attempt, with new keys. Only while the item is not in flight (INVALID_TRANSITION), and never by a model
   * (PERMISSION_DENIED); recorded as work_step_reset with who did it and why.
   */
  resetStep(input: ResetStepInput): Promise<RunRecord> {
    return resetStep(this.#w, input);
  }

  /**
   * Merges `notes` into the item's notes (RFC 7396: a null value removes a key) in one statement.
   * With `worker`, only while that worker holds the lease.
   */
  annotate(input: AnnotateInput & { worker?: string; attempt?: number }): Promise<WorkItem> {
    return annotate(this.#w, input);
  }

  /**
   * Cancels an item that is not finished. A human decision a document asked for is cancelled only by a
   * human (`actor_kind: 'human'`; PERMISSION_DENIED otherwise), and a human can ask it again (`retry`).
   */
  cancel(input: CancelInput, origin: CallProvenance = {}): Promise<WorkItem> {
    return cancel(this.#w, input, origin);
  }

  /**
   * Cancels several unfinished items in one transaction: all of them or, if any one is refused (NOT_FOUND,
   * INVALID_TRANSITION, a human decision cancelled by anyone but a human), none. One reason for all; an item
   * an earlier one's cancel already cancelled by cascade counts as cancelled.
   */
  cancelMany(input: CancelManyInput, origin: CallProvenance = {}): Promise<WorkItem[]> {
    return cancelMany(this.#w, input, origin);
  }

  /** Parks a pending item for a human decision. */
  park(input: CancelInput): Promise<WorkItem> {
    return park(this.#w, input);
  }

  /** Hands an item a human was deciding on back to the queue (not a decision a document asked for). */
  unpark(input: CancelInput, origin: CallProvenance = {}): Promise<WorkItem> {
    return unpark(this.#w, input, origin);
  }

  /**
   * Puts a failed or cancelled item back to pending, keeping its id and history (work_item_retried records
   * the previous status, error and attempts), with a fresh attempt budget; the items its failure cancelled
   * (on_blocker_failure cascade) are re-opened, and its dependants become ready once it is done.
   * INVALID_TRANSITION for an item in any other status (nothing written); PERMISSION_DENIED for a human
   * decision a document asked for (its document asks again).
   * @example await inst.work.retry({ id: failed.id, reason: 'the API is back' })
   */
  retry(input: RetryInput): Promise<WorkItem> {
    return retry(this.#w, input);
  }

  /** Retries several items in one transaction: all of them or, if any one is refused, none. */
  retryMany(inputs: RetryInput[] | RetryManyInput): Promise<WorkItem[]> {
    return retryMany(this.#w, inputs);
  }

  /** The item, or NOT_FOUND. `id` or `{ id }` (the operation table's form). */
  get(input: string | { id: string }): Promise<WorkItem> {
    return get(this.#w, input);
  }

  /** The item, or null. */
  find(id: string): Promise<WorkItem | null> {
    return find(this.#w, id);
  }

  /**
   * Items in claim order, filtered by status and kind; with `after` (the id of the last item a page
   * showed), the items after it in that order, so paging visits each item once. An `after` naming no item
   * is INVALID_INPUT. @default limit 100
   */
  list(input: ListInput & { ready?: boolean } = {}): Promise<WorkItem[]> {
    return list(this.#w, input);
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
  setLimit(input: SetLimitInput): Promise<WorkLimit> {
    return setLimit(this.#w, input);
  }

  /**
   * Removes the limit of a concurrency key (it becomes unlimited); NOT_FOUND when it has none. Writes
   * `work_limit_removed` in the same transaction. Returns the limit removed.
   */
  removeLimit(input: RemoveLimitInput): Promise<WorkLimit> {
    return removeLimit(this.#w, input);
  }

  /** Every concurrency key's limit, by key. */
  limits(): Promise<WorkLimit[]> {
    return listLimits(this.#w);
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
