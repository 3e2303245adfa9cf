// The worker runtime: the claim → run → resolve loop every user of the queue would otherwise write by hand.
// Its contract is graphile-worker's, not the single calls': the process holds the leases of the items in its
// local queue (the lease owner names the process, the attempt number still fences every write), handlers run
// from memory, and completions are committed in batches shortly after the handlers return. A crash before a
// batch commits runs those items again once their leases expire (at-least-once). The single-item API and its
// durability are unchanged; this is a loop over claimMany, heartbeat, resolveMany and release.
import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import { context, type Span, type SpanContext, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { toStoredJson } from '../core/input.js';
import { cloneJson } from '../core/json.js';
import { isSuspended, JoinFailed } from '../core/runs/errors.js';
import type { Run } from '../core/runs/run.js';
import type {
  AskOptions,
  AskResult,
  ChildOutcome,
  JoinOptions,
  StepInfo,
  StepOptions,
  WaitOptions,
  WaitResult,
} from '../core/runs/types.js';
import { messagingAttributes, producerLinks, TRACER_NAME } from '../core/tracing.js';
import type { EnqueueInput, Json, ResolveInput, WorkItem } from '../core/types.js';
import type { WorkQueue } from '../core/work/queue.js';
import { InvalidInputError, isAgentStateError } from '../errors.js';

/** What a handler is given besides its item. */
export interface HandlerContext {
  /** The item being run (as claimed). */
  item: WorkItem;
  /** The attempt number of this run (the fencing token its completion is committed with). */
  attempt: number;
  /** Fires when the item's lease is lost, or when a stop's grace period runs out: stop work and return. */
  signal: AbortSignal;
  /** Fires when the worker begins to stop (no new items are claimed); finishing the item is still welcome. */
  stopping: AbortSignal;
  /** Extends the lease now (the worker also does so on its own, every `heartbeatMs`, while the item is held). */
  heartbeat: () => Promise<void>;
  /** Reports progress of this item: emitted as the worker's `log` event (`agentstate work` prints it on stderr). */
  log: (message: string, data?: unknown) => void;
  /**
   * A durable step (docs/runs.md): runs `fn` once and commits its result, fenced by this attempt, before it
   * returns; a later attempt of the item gets the recorded result without running `fn`. `s.key` is the same on
   * every attempt: the idempotency key for the outside call `fn` makes. Steps are told apart by name and
   * occurrence (a loop's second `step('call-model')` is its own step). A lease lost meanwhile aborts the
   * handler (LEASE_LOST) and records nothing.
   */
  step: <T>(name: string, fn: (s: StepInfo) => T | Promise<T>, options?: StepOptions) => Promise<T>;
  /**
   * A durable sleep: hands the item back until `duration` (ms, or `'5m'`) has passed — no slot, no lease, no
   * attempt spent — and the run continues on its next claim, its completed steps returned from their records.
   */
  sleep: (name: string, duration: number | string) => Promise<void>;
  /** A durable sleep until `time` (ISO-8601, a Date, or epoch ms); see `sleep`. */
  sleepUntil: (name: string, time: string | Date | number) => Promise<void>;
  /**
   * A durable wait for the signal `name` (`work.signal`, `agentstate signal`): returns its payload, or
   * `{ timedOut: true }` after `options.timeout`; meanwhile the item is handed back (no slot, no lease, no
   * attempt spent) and the signal wakes it.
   */
  waitFor: (name: string, options?: WaitOptions) => Promise<WaitResult>;
  /** Child runs: enqueues `items` once for the run (their ids, in order, on every attempt); see `join`. */
  spawn: (name: string, items: EnqueueInput[]) => Promise<string[]>;
  /**
   * Waits durably until the children of `spawn(name)` have all ended and returns them in order; a failed one
   * fails the join (final) unless `allowFailures`. The item holds no slot meanwhile.
   */
  join: (name: string, options?: JoinOptions) => Promise<ChildOutcome[]>;
  /** Asks a person (an item waiting for a human) and returns the answer; the item holds no slot meanwhile. */
  ask: (name: string, options: AskOptions) => Promise<AskResult>;
}

/**
 * Runs one item. What it returns (JSON; `undefined` is `null`) is the item's result, committed as done; what
 * it throws fails the attempt, with the error's message: the item is tried again after the retry policy's
 * backoff while attempts remain (`throw new RetryAfter(ms)` names the time, `throw new FailNow()` ends it).
 * A result the store's JSON rule refuses (a Map, a Set, a function, a bigint, NaN; see `toStoredJson`) or
 * larger than its limit fails the item, not to be retried, with the refusal as its error.
 */
export type Handler = (item: WorkItem, ctx: HandlerContext) => Promise<unknown> | unknown;

/**
 * How failed attempts are tried again: after `min(maxMs, baseMs × factor^(attempt−1))`, less a random part
 * of up to `jitter` of it (so workers that failed together do not return together), while the item has
 * attempts left (its `max_attempts`, capped by `maxAttempts`). Its last failure is final (`failed`).
 */
export interface RetryPolicy {
  /** The delay after the first failed attempt, in ms [default: 1000]. */
  baseMs?: number;
  /** How much each further attempt multiplies it [default: 2]. */
  factor?: number;
  /** The longest delay, in ms [default: 300000, five minutes]. */
  maxMs?: number;
  /** The random part taken off each delay, 0 (none) to 1 (anywhere from 0 to the delay) [default: 0.5]. */
  jitter?: number;
  /** Attempts at most, whatever the item allows (its own `max_attempts` still caps it) [default: no cap]. */
  maxAttempts?: number;
  /** The delay for an item, in ms (per-item policies, e.g. from its payload); `undefined`: the backoff above. */
  delayMs?: (item: WorkItem, attempt: number, error: unknown) => number | undefined;
}

/** A handler with options of its own (per kind). */
export interface HandlerSpec {
  handler: Handler;
  /** This kind's retries (merged over the worker's `retry`); `false`: every failure is final. */
  retry?: RetryPolicy | false;
}

/**
 * Thrown by a handler: try again not before `ms` from now (a rate-limited API's Retry-After), whatever the
 * backoff would say; still final on the item's last attempt.
 */
export class RetryAfter extends Error {
  /** How long to wait before the next attempt, in ms. */
  readonly ms: number;
  constructor(ms: number, message = `retry after ${ms} ms`) {
    super(message);
    this.name = 'RetryAfter';
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`RetryAfter: ms must be 0 or more, got ${ms}`);
    this.ms = Math.ceil(ms);
  }
}

/** Thrown by a handler: this failure is final (a permanent error, bad input), attempts left or not. */
export class FailNow extends Error {
  constructor(message = 'failed: not to be retried') {
    super(message);
    this.name = 'FailNow';
  }
}

/** What `createWorker` runs and how: handlers, concurrency, the local queue, leases, batching, stop. */
export interface WorkerOptions {
  /** The instance whose work queue to run (an open `Instance`, or anything with its `work`). */
  instance: { work: WorkQueue };
  /** A handler per item kind (a function, or one with options of its own); `*` runs items of any kind no other names. */
  handlers: Record<string, Handler | HandlerSpec>;
  /** How failed attempts are retried (see RetryPolicy); `false`: every failure is final [default: {}]. */
  retry?: RetryPolicy | false;
  /** Handlers running at once [default: 1]. */
  concurrency?: number;
  /**
   * Items the worker holds at most, running or waiting in its local queue. More than `concurrency` claims
   * ahead (fewer claim statements per item, the next claim under way while handlers run), at the cost of
   * holding leases on items no handler has started (another worker cannot take them). `'auto'` [default]
   * holds what the handlers finish in about half a second at their pace (concurrency ÷ their mean run time,
   * known from the first run that finishes), between `concurrency` and 500: fast handlers get a deep local
   * queue, slow ones (an LLM call of minutes) hold no more than they run.
   */
  prefetch?: number | 'auto';
  /** The lease length of every claim and heartbeat, in ms [default: 60000]. */
  leaseMs?: number;
  /** How often the leases of every held item are extended, in ms [default: leaseMs / 3]. */
  heartbeatMs?: number;
  /**
   * How long to wait before claiming again when nothing was ready, in ms [default: 1000; 250 on PostgreSQL
   * behind a transaction pooler, where no LISTEN hint wakes the worker sooner].
   */
  pollIntervalMs?: number;
  /** Completions committed in one resolveMany at most [default: 500; 1 commits each on its own]. */
  batchSize?: number;
  /**
   * How long a completion may wait for others to share its commit, in ms. `0` [default]: no timer — a
   * completion is committed at once when no commit is under way, and the completions that finish while one
   * is are committed together as soon as it returns. More than 0: each waits up to that long (or until
   * `batchSize` are waiting), for fewer, larger transactions when completions are sparse.
   */
  batchDelayMs?: number;
  /** How long `stop()` lets running handlers finish before aborting them and releasing their items, in ms [default: 30000]. */
  graceMs?: number;
  /** The lease owner this process claims as [default: `<host>:<pid>:<random>`]. */
  worker?: string;
  /** Stops the worker (gracefully) when aborted. */
  signal?: AbortSignal;
}

/** What a worker reports, as events of its handle. */
export interface WorkerEvents {
  /** Items claimed into the local queue. */
  claimed: [items: WorkItem[]];
  /** A handler started on an item. */
  started: [item: WorkItem];
  /** An item's completion was committed: done, failed, or `pending` again to be retried at its `not_before`. */
  resolved: [item: WorkItem];
  /** An item the worker held is no longer its own (lease lost or taken over); its outcome was dropped. */
  lost: [id: string, reason: string];
  /** An item handed back to the queue at stop, unrun or unfinished. */
  released: [item: WorkItem];
  /** The store had nothing ready and the worker holds nothing: it waits for the next poll. */
  idle: [];
  /**
   * A call to the store failed; the worker keeps going (a claim is tried again after the poll interval).
   * Not `error`, so a worker without a listener does not throw.
   */
  storeError: [error: unknown];
  /** The worker has stopped: nothing held, every completion committed. */
  stopped: [];
  /** A handler's `ctx.log(message, data)` about `item`. */
  log: [item: WorkItem, message: string, data: unknown];
  /** A handler's durable sleep or wait handed its item back until `until` (ISO-8601); its run continues then. */
  suspended: [item: WorkItem, until: string];
}

/** A handler's run in progress. */
interface Running {
  item: WorkItem;
  abort: AbortController;
  done: Promise<void>;
}

const ERROR_MAX = 2_000;
/** The 'auto' prefetch: at most this many held, ... */
const AUTO_MAX = 500;
/** ... what the handlers finish in this many seconds at their pace (concurrency ÷ their mean run time), ... */
const AUTO_HORIZON_S = 0.5;
/** ... the mean smoothed over the runs that finish, each weighing this much. */
const AUTO_WEIGHT = 0.2;
/** Claims under way at once at most. */
const CLAIMS_IN_FLIGHT = 1;
/** The default batchSize: completions committed in one resolveMany at most. */
const BATCH_SIZE = 500;

const positive = (name: string, v: number | undefined, fallback: number, min = 1): number => {
  const n = v ?? fallback;
  if (!Number.isSafeInteger(n) || n < min) {
    throw new InvalidInputError(`createWorker: ${name} must be a whole number of at least ${min}, got ${v}`, {
      field: name,
    });
  }
  return n;
};

/**
 * A handler's outcome as the store keeps it, by the store's one JSON rule (`toStoredJson`, as for every value
 * written: a Date is its ISO string; a Map, a function, a bigint are refused), copied so the handler can no
 * longer change it while it waits for its batch; `undefined` is null. Throws FailNow naming the problem.
 */
function asResult(value: unknown): Json {
  if (value === undefined) return null;
  let stored: unknown;
  try {
    stored = toStoredJson('resolve', 'result', value).value;
  } catch (err) {
    throw new FailNow(`result refused: ${messageOf(err)}`);
  }
  // A function: JSON.stringify writes nothing for it (`resolve` refuses it alike).
  if (stored === undefined)
    throw new FailNow(`result refused: resolve: result is not a JSON value (${typeof value})`);
  return cloneJson(stored) as Json;
}

const DEFAULT_RETRY = { baseMs: 1_000, factor: 2, maxMs: 300_000, jitter: 0.5 } as const;

/** A retry policy checked, its defaults filled (`false`: no retries). */
function retryPolicy(
  where: string,
  p: RetryPolicy | false | undefined,
  base: Required<Omit<RetryPolicy, 'maxAttempts' | 'delayMs'>> & RetryPolicy,
): (Required<Omit<RetryPolicy, 'maxAttempts' | 'delayMs'>> & RetryPolicy) | false {
  if (p === false) return false;
  if (p !== undefined && (typeof p !== 'object' || p === null)) {
    throw new InvalidInputError(`createWorker: ${where} must be a retry policy object or false`, {
      field: where,
    });
  }
  const out = { ...base, ...p };
  const check = (name: string, ok: boolean) => {
    if (!ok)
      throw new InvalidInputError(`createWorker: ${where}.${name} is out of range`, {
        field: `${where}.${name}`,
      });
  };
  check('baseMs', Number.isFinite(out.baseMs) && out.baseMs >= 0);
  check('factor', Number.isFinite(out.factor) && out.factor >= 1);
  check('maxMs', Number.isFinite(out.maxMs) && out.maxMs >= 0);
  check('jitter', Number.isFinite(out.jitter) && out.jitter >= 0 && out.jitter <= 1);
  check(
    'maxAttempts',
    out.maxAttempts === undefined || (Number.isSafeInteger(out.maxAttempts) && out.maxAttempts >= 1),
  );
  check('delayMs', out.delayMs === undefined || typeof out.delayMs === 'function');
  return out;
}

/**
 * When to try a failed attempt again, in ms from now, or null when its failure is final: FailNow, no
 * retries, the policy's attempts spent; RetryAfter's own time; else the policy's backoff, `random` in [0, 1).
 */
export function retryDelay(
  policy: RetryPolicy | false,
  item: WorkItem,
  attempt: number,
  err: unknown,
  random: () => number = Math.random,
): number | null {
  // A join whose children failed fails the same way on every attempt (its look at them is recorded).
  if (err instanceof FailNow || err instanceof JoinFailed || policy === false) return null;
  // Stryker disable next-line ConditionalExpression: equivalent: attempt >= undefined is false
  if (policy.maxAttempts !== undefined && attempt >= policy.maxAttempts) return null;
  // The item's own last attempt: the store makes this failure final whatever delay is asked for.
  if (attempt >= item.max_attempts) return null;
  if (err instanceof RetryAfter) return err.ms;
  const own = policy.delayMs?.(item, attempt, err);
  if (own !== undefined) return Number.isFinite(own) && own >= 0 ? Math.ceil(own) : null;
  const { baseMs = 1_000, factor = 2, maxMs = 300_000, jitter = 0.5 } = policy;
  const full = Math.min(maxMs, baseMs * factor ** Math.max(0, attempt - 1));
  return Math.ceil(full * (1 - jitter * random()));
}

function messageOf(err: unknown): string {
  const m = err instanceof Error ? err.message || err.name : String(err);
  return m.length > ERROR_MAX ? `${m.slice(0, ERROR_MAX - 1)}…` : m;
}

/**
 * A worker over `options.work`: `start()` claims and runs items until `stop()` (or `options.signal`),
 * `drain()` until nothing is ready and nothing held. See docs/worker.md for the contract.
 * @example
 * const w = createWorker({ work: inst.work, handlers: { email: async (item) => send(item.payload) }, concurrency: 8 });
 * await w.drain();
 */
export function createWorker(options: WorkerOptions): Worker {
  return new Worker(options);
}

/** The handle of a running worker (see `createWorker`). */
export class Worker extends EventEmitter<WorkerEvents> {
  /** The lease owner this worker claims as. */
  readonly id: string;
  readonly #work: WorkQueue;
  readonly #handlers: Map<string, { handler: Handler; retry: RetryPolicy | false }>;
  readonly #concurrency: number;
  /** The fixed prefetch, or null for 'auto' (see #prefetchNow). */
  readonly #prefetch: number | null;
  readonly #leaseMs: number;
  readonly #heartbeatMs: number;
  readonly #pollMs: number;
  readonly #batchSize: number;
  readonly #batchDelayMs: number;
  readonly #graceMs: number;
  /** The mean run time of the handlers that finished, in ms (smoothed), for the 'auto' prefetch. */
  #meanRunMs: number | undefined;
  /** Claimed, not started. */
  readonly #queue: WorkItem[] = [];
  readonly #running = new Map<string, Running>();
  /** Finished, completion not yet committed (their leases are still held and heartbeaten). */
  #pending: Array<{ input: ResolveInput; item: WorkItem }> = [];
  /** The commit under way (one at a time: what finishes meanwhile waits for the next), and its size. */
  #committer: Promise<void> | undefined;
  #inCommit = 0;
  /** Commit every pending completion, not only full batches (a batch delay ran out; a stop or drain). */
  #flushAll = false;
  #flushTimer: NodeJS.Timeout | undefined;
  /** Claims under way, and the items they asked for (counted against the prefetch). */
  #claims = 0;
  #requested = 0;
  readonly #claiming = new Set<Promise<void>>();
  #heartbeatTimer: NodeJS.Timeout | undefined;
  readonly #stopping = new AbortController();
  #loop: Promise<void> | undefined;
  /** Ends the run's wait (stop, a drain done, a failure); set while it runs, before its shutdown. */
  #endRun: (() => void) | undefined;
  #draining = false;
  /** What went wrong outside the store's calls (a listener that threw): the worker stops, start() rejects. */
  #failure: { error: unknown } | undefined;

  constructor(o: WorkerOptions) {
    super();
    const kinds = Object.entries(o.handlers ?? {});
    const fn = (h: Handler | HandlerSpec | undefined) => (typeof h === 'function' ? h : h?.handler);
    if (kinds.length === 0 || kinds.some(([, h]) => typeof fn(h) !== 'function')) {
      throw new InvalidInputError(
        'createWorker: handlers must map item kinds to functions (or to { handler, retry })',
        { field: 'handlers' },
      );
    }
    const retry = retryPolicy('retry', o.retry, DEFAULT_RETRY);
    this.#work = o.instance.work;
    this.#handlers = new Map(
      kinds.map(([kind, h]) => [
        kind,
        {
          handler: fn(h)!,
          retry:
            typeof h === 'function' || h.retry === undefined
              ? retry
              : retryPolicy(`handlers.${kind}.retry`, h.retry, retry === false ? DEFAULT_RETRY : retry),
        },
      ]),
    );
    this.#concurrency = positive('concurrency', o.concurrency, 1);
    this.#prefetch =
      o.prefetch === undefined || o.prefetch === 'auto'
        ? null
        : positive('prefetch', o.prefetch, this.#concurrency, this.#concurrency);
    this.#leaseMs = positive('leaseMs', o.leaseMs, 60_000);
    this.#heartbeatMs = positive('heartbeatMs', o.heartbeatMs, Math.max(1, Math.floor(this.#leaseMs / 3)));
    this.#pollMs = positive('pollIntervalMs', o.pollIntervalMs, o.instance.work.idlePollMs ?? 1_000);
    this.#batchSize = positive('batchSize', o.batchSize, BATCH_SIZE);
    this.#batchDelayMs = positive('batchDelayMs', o.batchDelayMs, 0, 0);
    this.#graceMs = positive('graceMs', o.graceMs, 30_000, 0);
    this.id = o.worker ?? `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
    o.signal?.addEventListener('abort', () => void this.stop(), { once: true });
  }

  /**
   * Items held now: waiting in the local queue, running, or finished with their completion not yet committed.
   * An item handed back at stop, or whose lease was lost, is no longer held, even while its handler still runs.
   */
  get held(): number {
    return this.#queue.length + this.#runningHeld() + this.#pending.length;
  }

  /** Running handlers whose items the worker still holds (not abandoned). */
  #runningHeld(): number {
    return this.#running.size - this.#abandoned.size;
  }

  /** Claims and runs items until `stop()`; resolves once stopped (every completion committed). */
  start(): Promise<void> {
    this.#loop ??= this.#run();
    return this.#loop;
  }

  /** Runs until nothing is ready and nothing is held, then stops (a batch job, a test). */
  drain(): Promise<void> {
    this.#draining = true;
    const run = this.start();
    this.#pump();
    return run;
  }

  /**
   * Stops: no more claims; items not started are released at once; running handlers get `graceMs` to finish,
   * then their signals abort and their items are released; every completion is committed. Resolves when
   * stopped (a second call returns the same promise; `graceMs: 0` aborts at once).
   */
  async stop(opts: { graceMs?: number } = {}): Promise<void> {
    if (!this.#stopping.signal.aborted) {
      this.#grace = opts.graceMs ?? this.#graceMs;
      this.#stopping.abort();
    } else if (opts.graceMs === 0) {
      // A second stop without grace ends the one under way: the running are aborted and released now.
      this.#grace = 0;
      this.#endGrace?.();
    }
    this.#pump();
    await (this.#loop ?? this.start());
  }

  #grace = 0;
  /** Ends the grace period of a stop under way. */
  #endGrace: (() => void) | undefined;

  /**
   * The run: everything happens in #pump, called whenever something changed (a handler finished, a claim or
   * a commit returned, a poll is due, a hint came, stop or drain was asked); this waits for its end.
   */
  async #run(): Promise<void> {
    this.#heartbeatTimer = setInterval(() => void this.#heartbeatAll(), this.#heartbeatMs);
    this.#heartbeatTimer.unref?.();
    // A store that pushes hints of new writes (PostgreSQL) ends the wait for the next poll early.
    let unlisten: (() => Promise<void>) | null = null;
    try {
      if (typeof this.#work.listen === 'function') unlisten = await this.#work.listen(() => this.#hinted());
    } catch (err) {
      this.emit('storeError', err);
    }
    try {
      await new Promise<void>((resolve) => {
        this.#endRun = resolve;
        this.#pump();
      });
      this.#endRun = undefined;
      await this.#shutdown();
    } finally {
      await unlisten?.().catch(() => {});
      clearInterval(this.#heartbeatTimer);
      clearTimeout(this.#flushTimer);
      clearTimeout(this.#pollTimer);
      this.emit('stopped');
    }
    if (this.#failure) throw this.#failure.error;
  }

  /**
   * Moves the worker on: starts handlers on free slots; starts the next claim while handlers run and
   * completions commit, once the local queue has room for a refill (see #wantsItems) and the poll allows;
   * in a drain, ends it once a claim made with nothing held or uncommitted found nothing.
   */
  #pump(): void {
    if (this.#endRun === undefined) return;
    if (this.#stopping.signal.aborted || this.#failure) {
      this.#endRun();
      return;
    }
    this.#startHandlers();
    while (this.#claims < CLAIMS_IN_FLIGHT && this.#wantsItems()) {
      // After the store ran out, no claim before the poll interval (a freed slot is no sign of new items).
      const wait = this.#nextPollAt - Date.now();
      if (wait > 0) {
        this.#pollTimer ??= setTimeout(() => {
          this.#pollTimer = undefined;
          this.#pump();
        }, wait);
        break;
      }
      this.#startClaim();
    }
    if (this.#draining) this.#drainStep();
  }

  /**
   * A drain with nothing held: commits what is pending first (a failure committed may put its item back to
   * pending, due at once), then claims once more, whatever the poll interval, to find out whether it is over.
   */
  #drainStep(): void {
    if (this.#claims > 0 || this.#queue.length > 0 || this.#runningHeld() > 0) return;
    if (this.#pending.length > 0 || this.#committer) {
      void this.#flush(true);
      return;
    }
    this.#startClaim();
  }

  /** Whether nothing is held, under way or uncommitted: a claim made then that finds nothing ends a drain. */
  #settled(): boolean {
    return (
      this.#claims === 0 &&
      this.#queue.length === 0 &&
      this.#runningHeld() === 0 &&
      this.#pending.length === 0 &&
      this.#inCommit === 0
    );
  }

  /** Starts a claim of what the local queue has room for, not waiting for it; its return moves things on. */
  #startClaim(): void {
    const limit = this.#prefetchNow() - this.#queue.length - this.#running.size - this.#requested;
    if (limit <= 0) return;
    const settled = this.#settled();
    this.#claims++;
    this.#requested += limit;
    const claiming = (async () => {
      let claimed = 0;
      try {
        claimed = await this.#claim(limit);
      } catch (err) {
        this.#fail(err);
      } finally {
        this.#claims--;
        this.#requested -= limit;
      }
      if (claimed < limit) this.#nextPollAt = Date.now() + this.#pollMs;
      if (claimed === 0 && this.#queue.length === 0 && this.#running.size === 0) this.emit('idle');
      if (this.#draining && claimed === 0 && settled && this.#settled()) {
        this.#endRun?.();
        return;
      }
      this.#pump();
    })().catch((err: unknown) => this.#fail(err));
    this.#claiming.add(claiming);
    void claiming.finally(() => this.#claiming.delete(claiming));
  }

  /** A failure outside the store's calls (a listener of the worker's events threw): stop; start() rejects. */
  #fail(error: unknown): void {
    this.#failure ??= { error };
    if (!this.#stopping.signal.aborted) {
      this.#grace = this.#graceMs;
      this.#stopping.abort();
    }
    this.#pump();
  }

  /**
   * Whether a claim is worth it now: a slot has nothing to run (and no claim is under way), or the local
   * queue has drained to its refill mark — so the queue is refilled in batches, not one claim per freed slot,
   * and the refill is under way while the other half still runs — unless completions are waiting for a
   * commit by the full batch.
   */
  #wantsItems(): boolean {
    // A full batch of completions waiting for its commit: the store is behind, claiming more would only grow
    // what waits (and the leases held); the claim resumes as the next commit takes them.
    if (this.#pending.length >= this.#batchSize) return false;
    const prefetch = this.#prefetchNow();
    const free = prefetch - this.#queue.length - this.#running.size - this.#requested;
    if (free <= 0) return false;
    const starving = this.#claims === 0 && this.#queue.length === 0 && this.#running.size < this.#concurrency;
    // Refilled when it has drained to half of what it holds beyond the running.
    const refillAt = Math.max(1, Math.ceil((prefetch - this.#concurrency) / 2));
    return starving || free >= refillAt;
  }

  /**
   * The prefetch now: the fixed one, or (auto) what the handlers finish in AUTO_HORIZON_S at their pace —
   * concurrency ÷ their mean run time — between concurrency and AUTO_MAX; concurrency until a run finished.
   */
  #prefetchNow(): number {
    if (this.#prefetch !== null) return this.#prefetch;
    if (this.#meanRunMs === undefined) return this.#concurrency;
    const want = Math.ceil((this.#concurrency * AUTO_HORIZON_S * 1000) / Math.max(this.#meanRunMs, 1e-3));
    return Math.max(this.#concurrency, Math.min(AUTO_MAX, want));
  }

  /**
   * A hint that something was written (an enqueue, or any other write: hints do not say which): claim now
   * instead of at the next poll. A hint that finds nothing costs one empty claim.
   */
  #hinted(): void {
    if (this.#stopping.signal.aborted || this.#nextPollAt === 0) return;
    this.#nextPollAt = 0;
    this.#pump();
  }

  /** When the store last ran out of items + the poll interval: no claim before then. */
  #nextPollAt = 0;
  #pollTimer: NodeJS.Timeout | undefined;
  /** Claims up to `wanted` items into the local queue; answers how many were claimed. */
  async #claim(wanted: number): Promise<number> {
    let free = wanted;
    // `*` claims any kind in one statement; otherwise each kind in turn, as many as are free.
    const kinds = this.#handlers.has('*') ? [undefined] : [...this.#handlers.keys()];
    let total = 0;
    for (const kind of kinds) {
      if (free <= 0 || this.#stopping.signal.aborted) break;
      let items: WorkItem[];
      // The claim is a receive span; each item's handler runs in a process span that is its child.
      const span = trace.getTracer(TRACER_NAME).startSpan(kind ? `receive ${kind}` : 'receive', {
        kind: SpanKind.CONSUMER,
        attributes: { ...messagingAttributes('receive', kind), 'agentstate.worker': this.id },
      });
      try {
        items = await context.with(trace.setSpan(context.active(), span), () =>
          this.#work.claimMany({
            worker: this.id,
            lease_ms: this.#leaseMs,
            limit: free,
            ...(kind === undefined ? {} : { kind }),
          }),
        );
        span.setAttribute('messaging.batch.message_count', items.length);
        if (span.isRecording()) {
          // The receive links to the span that enqueued each item it took (the producer's trace).
          span.addLinks(producerLinks(items));
          for (const item of items) this.#receivedIn.set(item.id, span.spanContext());
        }
      } catch (err) {
        failed(span, err);
        this.emit('storeError', err);
        return total;
      } finally {
        span.end();
      }
      if (items.length === 0) continue;
      this.#queue.push(...items);
      free -= items.length;
      total += items.length;
      this.emit('claimed', items);
    }
    return total;
  }

  #startHandlers(): void {
    while (
      this.#running.size < this.#concurrency &&
      this.#queue.length > 0 &&
      !this.#stopping.signal.aborted
    ) {
      const item = this.#queue.shift()!;
      const abort = new AbortController();
      const running: Running = { item, abort, done: Promise.resolve() };
      this.#running.set(item.id, running);
      const startedAt = performance.now();
      running.done = this.#runOne(item, abort).finally(() => {
        this.#running.delete(item.id);
        this.#abandoned.delete(item.id);
        const ms = performance.now() - startedAt;
        const mean = this.#meanRunMs;
        this.#meanRunMs = mean === undefined ? ms : mean + AUTO_WEIGHT * (ms - mean);
        // The next queued item starts now; a refill starts if the queue reached its mark.
        this.#pump();
      });
    }
  }

  /** The receive span each claimed item came in (while tracing records), the parent of its process span. */
  readonly #receivedIn = new Map<string, SpanContext>();

  async #runOne(item: WorkItem, abort: AbortController): Promise<void> {
    const spec = this.#handlers.get(item.kind ?? '') ?? this.#handlers.get('*');
    const input = { id: item.id, worker: this.id, attempt: item.attempts };
    let outcome: ResolveInput;
    this.emit('started', item);
    const received = this.#receivedIn.get(item.id);
    this.#receivedIn.delete(item.id);
    const parent = received ? trace.setSpanContext(context.active(), received) : context.active();
    const span = trace.getTracer(TRACER_NAME).startSpan(
      item.kind ? `process ${item.kind}` : 'process',
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          ...messagingAttributes('process', item.kind, item.id),
          'agentstate.worker': this.id,
          'agentstate.attempt': item.attempts,
        },
        // Its parent is the receive span; it links to the producer's, when the item carries one.
        links: producerLinks([item]),
      },
      parent,
    );
    // The run of this attempt, read on the first step or sleep the handler makes.
    let run: Promise<Run> | undefined;
    const runOf = () => {
      run ??= this.#work.run(input);
      return run;
    };
    /** A durable call of the handler, in a span of its own under the process span. */
    const durable = <T>(what: string, name: string, call: (r: Run) => Promise<T>): Promise<T> =>
      trace
        .getTracer(TRACER_NAME)
        .startActiveSpan(
          `${what} ${name}`,
          { attributes: { 'agentstate.step.name': name, 'agentstate.work_item.id': item.id } },
          async (stepSpan) => {
            try {
              return await call(await runOf());
            } catch (err) {
              if (isSuspended(err)) {
                // Handed back: no longer this worker's to heartbeat or resolve.
                this.#abandoned.add(item.id);
                this.emit('suspended', err.item, err.until);
              } else {
                failed(stepSpan, err);
                if (isAgentStateError(err, 'LEASE_LOST') && !this.#abandoned.has(item.id)) {
                  // Not this attempt's any more: stop the handler, record nothing, resolve nothing.
                  this.#abandoned.add(item.id);
                  this.emit('lost', item.id, messageOf(err));
                  abort.abort(err);
                }
              }
              throw err;
            } finally {
              stepSpan.end();
            }
          },
        );
    try {
      // Stryker disable next-line ConditionalExpression,StringLiteral: unreachable from outside: the worker claims only the kinds it has a handler for (or any, with '*')
      if (!spec) throw new FailNow(`no handler for kind ${JSON.stringify(item.kind)}`);
      // The handler runs with its process span active, so the spans it makes are the span's children.
      const result = await context.with(trace.setSpan(parent, span), () =>
        spec.handler(item, {
          item,
          attempt: item.attempts,
          signal: abort.signal,
          stopping: this.#stopping.signal,
          heartbeat: async () => {
            await this.#work.heartbeat({ ...input, lease_ms: this.#leaseMs });
          },
          log: (message, data) => void this.emit('log', item, String(message), data),
          step: (name, fn, options) => durable('step', String(name), (r) => r.step(name, fn, options)),
          sleep: (name, duration) => durable('sleep', String(name), (r) => r.sleep(name, duration)),
          sleepUntil: (name, time) => durable('sleep', String(name), (r) => r.sleepUntil(name, time)),
          waitFor: (name, options) => durable('wait', String(name), (r) => r.waitFor(name, options)),
          spawn: (name, items) => durable('spawn', String(name), (r) => r.spawn(name, items)),
          join: (name, options) => durable('join', String(name), (r) => r.join(name, options)),
          ask: (name, options) => durable('ask', String(name), (r) => r.ask(name, options)),
        }),
      );
      outcome = { ...input, status: 'done', result: asResult(result) };
    } catch (err) {
      // Stryker disable next-line ConditionalExpression,BlockStatement,StringLiteral: tracing only: a suspended attempt is abandoned (not committed) either way; this keeps its span from reading as a failure
      if (isSuspended(err)) {
        // A durable sleep or wait handed the item back: this attempt ends with no outcome to commit.
        span.setAttribute('agentstate.suspended_until', err.until);
        return;
      }
      // Stryker disable next-line OptionalChaining,BooleanLiteral: equivalent: without a spec the error is FailNow, final under any policy
      const delay = retryDelay(spec?.retry ?? false, item, item.attempts, err);
      outcome = { ...input, status: 'failed', error: messageOf(err) };
      // A duration, so the retry time is the store's clock at the commit plus the delay.
      if (delay !== null) outcome.retry_at = `${delay}ms`;
      failed(span, err);
      if (delay !== null) span.setAttribute('agentstate.retry_in_ms', delay);
    } finally {
      span.end();
    }
    // An item whose lease was lost, or that stop released, is no longer ours to resolve.
    if (this.#abandoned.has(item.id)) return;
    this.#complete(outcome, item);
  }

  /**
   * Ids of running handlers whose items the worker no longer holds: released at stop after the grace, their
   * lease lost (their signal has fired), or handed back by a durable sleep. What they return is dropped; they
   * are not heartbeaten.
   */
  readonly #abandoned = new Set<string>();

  /**
   * A completion to commit: taken by the commit under way when it returns, else by one started now (with no
   * batch delay, the default, or a full batch); with a delay, a partial batch waits up to that long to fill
   * (whether a commit is under way or not: the one under way may end leaving it behind).
   */
  #complete(input: ResolveInput, item: WorkItem): void {
    this.#pending.push({ input, item });
    if (this.#committer === undefined && this.#commitDue()) void this.#flush(false);
    else if (this.#batchDelayMs > 0) {
      this.#flushTimer ??= setTimeout(() => void this.#flush(true), this.#batchDelayMs);
    }
  }

  /** Whether pending completions are to be committed now: any (no delay, or `#flushAll`), else full batches. */
  #commitDue(): boolean {
    const n = this.#pending.length;
    return n > 0 && (this.#batchDelayMs === 0 || this.#flushAll || n >= this.#batchSize);
  }

  /**
   * Commits pending completions, one resolveMany of up to batchSize at a time, while any are due: every one
   * (`all`: the batch delay ran out, or the worker stops or drains), else as #commitDue says. One commit is
   * under way at a time; completions that finish meanwhile share the next, which starts as it returns.
   * Answers the committer's promise (its end, not necessarily of completions that came after it ended).
   */
  #flush(all: boolean): Promise<void> {
    if (all) {
      clearTimeout(this.#flushTimer);
      this.#flushTimer = undefined;
      this.#flushAll = true;
    }
    this.#committer ??= this.#commitDueOnes()
      .catch((err: unknown) => this.#fail(err))
      .finally(() => {
        this.#committer = undefined;
        // Completions that came in as it ended (after its last look) get a committer of their own.
        if (this.#commitDue()) void this.#flush(false);
        this.#pump();
      });
    return this.#committer;
  }

  async #commitDueOnes(): Promise<void> {
    while (this.#commitDue()) {
      if (this.#pending.length < this.#batchSize) {
        // A partial batch waits for the handlers finishing in this turn of the event loop (no timer): on a
        // store whose calls do not yield (SQLite), the next commit would otherwise take one or two — also
        // when every pending completion is due (a delay ran out, a drain or stop), which lasts while busy.
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (!this.#commitDue()) break;
      }
      const batch = this.#pending.splice(0, this.#batchSize);
      this.#inCommit += batch.length;
      // Claims paused for a full batch waiting (see #wantsItems) resume now, during its commit.
      this.#pump();
      try {
        await this.#commit(batch);
      } finally {
        this.#inCommit -= batch.length;
      }
    }
    if (this.#pending.length === 0) this.#flushAll = false;
  }

  /** Commits every pending completion, those that finish meanwhile too, until none is left or under way. */
  async #flushEvery(): Promise<void> {
    do await this.#flush(true);
    while (this.#pending.length > 0 || this.#committer !== undefined);
  }

  /**
   * Commits `batch` in one transaction. resolveMany is all or none: an item refused on its own (its lease
   * lost, the item changed under us) is dropped and reported `lost`, and the rest committed again; a refusal
   * that names no item (input the store refuses, such as an oversized result) commits the batch one by one,
   * failing an item whose result is refused.
   */
  async #commit(batch: Array<{ input: ResolveInput; item: WorkItem }>): Promise<void> {
    let rest = batch;
    // Stryker disable next-line EqualityOperator: equivalent: rest never empties (an item is dropped only from two or more)
    while (rest.length > 0) {
      try {
        for (const item of await this.#work.resolveMany(rest.map((b) => b.input)))
          this.emit('resolved', item);
        return;
      } catch (err) {
        // Stryker disable next-line ConditionalExpression,LogicalOperator,StringLiteral: equivalent from a worker: the INVALID_INPUT a batch of its completions gets names no item (one completion per item)
        const id = isAgentStateError(err) && err.code !== 'INVALID_INPUT' ? err.details.id : undefined;
        // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent: one completion refused by its item is reported lost the same way by #commitOne
        if (rest.length > 1 && rest.some((b) => b.input.id === id)) {
          this.emit('lost', id as string, messageOf(err));
          rest = rest.filter((b) => b.input.id !== id);
        } else if (rest.length === 1) {
          return this.#commitOne(rest[0]!, err);
        } else {
          for (const b of rest) await this.#commit([b]);
          return;
        }
      }
    }
  }

  /** The last word on one completion the store refused: failed with the refusal, or reported lost. */
  async #commitOne(b: { input: ResolveInput; item: WorkItem }, err: unknown): Promise<void> {
    // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent in outcome: a failure resolved again for another refusal is refused again and reported lost
    if (isAgentStateError(err) && err.code === 'INVALID_INPUT' && b.input.status === 'done') {
      const failed: ResolveInput = {
        id: b.input.id,
        worker: this.id,
        attempt: b.input.attempt,
        status: 'failed',
        error: `result refused: ${messageOf(err)}`,
      };
      try {
        this.emit('resolved', await this.#work.resolve(failed));
        return;
        // Mutating this catch block is equivalent in outcome (the item is reported lost with either refusal's message); the reason is kept in reports/mutation/scores.json, as no directive reaches it
      } catch (again) {
        err = again;
      }
    }
    this.#dropped(b.input.id, err);
  }

  /** An item the store no longer lets this worker finish (`lost`), or a store failure (`storeError`). */
  #dropped(id: string, err: unknown): void {
    if (isAgentStateError(err)) this.emit('lost', id, messageOf(err));
    else this.emit('storeError', err);
  }

  /** Whether the worker still holds `id`: queued, running, or its completion waiting for a batch. */
  #holds(id: string): boolean {
    return (
      (this.#running.has(id) && !this.#abandoned.has(id)) ||
      this.#queue.some((i) => i.id === id) ||
      this.#pending.some((p) => p.item.id === id)
    );
  }

  /**
   * Extends the lease of every held item (queued, running, awaiting commit) in one heartbeatMany per 1,000;
   * an item refused on its own is dropped as lost (unless it was committed meanwhile).
   */
  async #heartbeatAll(): Promise<void> {
    const held = [
      ...this.#queue,
      ...[...this.#running.values()].filter((r) => !this.#abandoned.has(r.item.id)).map((r) => r.item),
      ...this.#pending.map((p) => p.item),
    ];
    for (let k = 0; k < held.length; k += 1000) {
      const chunk = held.slice(k, k + 1000);
      let outcomes: Awaited<ReturnType<WorkQueue['heartbeatMany']>>;
      try {
        outcomes = await this.#work.heartbeatMany(
          chunk.map((item) => ({
            id: item.id,
            worker: this.id,
            attempt: item.attempts,
            lease_ms: this.#leaseMs,
          })),
        );
      } catch (err) {
        this.emit('storeError', err);
        return;
      }
      outcomes.forEach((o, n) => {
        const item = chunk[n]!;
        // Committed meanwhile (its batch was in flight): no longer held, nothing to report.
        if (o.ok || !this.#holds(item.id)) return;
        this.emit('lost', item.id, messageOf(o.error));
        const q = this.#queue.findIndex((x) => x.id === item.id);
        if (q >= 0) this.#queue.splice(q, 1);
        const running = this.#running.get(item.id);
        if (running) {
          this.#abandoned.add(item.id);
          running.abort.abort(o.error);
          // A drain waiting for it ends now: the item is no longer held, whenever its handler returns.
          this.#pump();
        }
        this.#pending = this.#pending.filter((p) => p.item.id !== item.id);
      });
    }
  }

  /** Stop: release the unstarted, give the running their grace, release what is left, commit the rest. */
  async #shutdown(): Promise<void> {
    // A claim under way ends first: what it took joins the local queue, released with the rest.
    await Promise.all(this.#claiming);
    await this.#releaseAll(this.#queue.splice(0));
    const running = [...this.#running.values()].filter((r) => !this.#abandoned.has(r.item.id));
    if (running.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => {
        this.#endGrace = resolve;
        timer = setTimeout(resolve, this.#grace);
      });
      await Promise.race([Promise.all(running.map((r) => r.done)), grace]);
      clearTimeout(timer);
      const left = running.filter((r) => this.#running.has(r.item.id));
      for (const r of left) {
        this.#abandoned.add(r.item.id);
        r.abort.abort(new Error('worker stopped: grace period over'));
      }
      await this.#releaseAll(left.map((r) => r.item));
    }
    await this.#flushEvery();
  }

  async #releaseAll(items: WorkItem[]): Promise<void> {
    for (const item of items) this.#receivedIn.delete(item.id);
    await Promise.all(
      items.map(async (item) => {
        try {
          this.emit(
            'released',
            await this.#work.release({ id: item.id, worker: this.id, attempt: item.attempts }),
          );
        } catch (err) {
          this.#dropped(item.id, err);
        }
      }),
    );
  }
}

/** Marks `span` failed with the error (its code as error.type); its owner ends it. */
function failed(span: Span, err: unknown): void {
  if (!span.isRecording()) return;
  span.setAttribute(
    'error.type',
    isAgentStateError(err) ? err.code : err instanceof Error ? err.name : 'Error',
  );
  span.recordException(err instanceof Error ? err : new Error(String(err)));
  span.setStatus({ code: SpanStatusCode.ERROR, message: messageOf(err) });
}
