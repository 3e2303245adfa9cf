// The worker runtime: the claim → run → resolve loop every user of the queue would otherwise write by hand.
// Its contract is graphile-worker's, not the single calls': the process holds the leases of the items in its
// local queue (the lease owner names the process, the attempt number still fences every write), handlers run
// from memory, and completions are committed in batches shortly after the handlers return. A crash before a
// batch commits runs those items again once their leases expire (at-least-once). The single-item API and its
// durability are unchanged; this is a loop over claimMany, heartbeat, resolveMany and release.
import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import type { Json, ResolveInput, WorkItem } from '../core/types.js';
import type { WorkQueue } from '../core/work-queue.js';
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
}

/**
 * Runs one item. What it returns (JSON; `undefined` is `null`) is the item's result, committed as done; what
 * it throws fails the attempt, with the error's message.
 */
export type Handler = (item: WorkItem, ctx: HandlerContext) => Promise<unknown> | unknown;

/** What `createWorker` runs and how: handlers, concurrency, the local queue, leases, batching, stop. */
export interface WorkerOptions {
  /** The instance whose work queue to run (an open `Instance`, or anything with its `work`). */
  instance: { work: WorkQueue };
  /** A handler per item kind; `*` runs items of any kind no other handler names. */
  handlers: Record<string, Handler>;
  /** Handlers running at once [default: 1]. */
  concurrency?: number;
  /**
   * Items the worker holds at most, running or waiting in its local queue [default: `concurrency`]. More
   * than `concurrency` claims ahead (fewer claim statements per item), at the cost of holding leases on
   * items no handler has started.
   */
  prefetch?: number;
  /** The lease length of every claim and heartbeat, in ms [default: 60000]. */
  leaseMs?: number;
  /** How often the leases of every held item are extended, in ms [default: leaseMs / 3]. */
  heartbeatMs?: number;
  /** How long to wait before claiming again when nothing was ready, in ms [default: 1000]. */
  pollIntervalMs?: number;
  /** Completions committed in one resolveMany at most [default: 100; 1 commits each on its own]. */
  batchSize?: number;
  /** How long a completion may wait for others to share its commit, in ms [default: 10; 0: at once]. */
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
  /** An item's completion was committed (done or failed). */
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
}

/** A handler's run in progress. */
interface Running {
  item: WorkItem;
  abort: AbortController;
  done: Promise<void>;
}

const ERROR_MAX = 2_000;

const positive = (name: string, v: number | undefined, fallback: number, min = 1): number => {
  const n = v ?? fallback;
  if (!Number.isSafeInteger(n) || n < min) {
    throw new InvalidInputError(`createWorker: ${name} must be a whole number of at least ${min}, got ${v}`, {
      field: name,
    });
  }
  return n;
};

/** A handler's outcome as JSON the store takes: `undefined` is null, a Date its ISO string (JSON's own rules). */
function asJson(value: unknown): Json {
  if (value === undefined) return null;
  return JSON.parse(JSON.stringify(value) ?? 'null') as Json;
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
  readonly #handlers: Map<string, Handler>;
  readonly #concurrency: number;
  readonly #prefetch: number;
  readonly #leaseMs: number;
  readonly #heartbeatMs: number;
  readonly #pollMs: number;
  readonly #batchSize: number;
  readonly #batchDelayMs: number;
  readonly #graceMs: number;
  /** Free slots that make a refill of the local queue worth a claim (half of what it holds beyond the running). */
  readonly #refillAt: number;
  /** Claimed, not started. */
  readonly #queue: WorkItem[] = [];
  readonly #running = new Map<string, Running>();
  /** Finished, completion not yet committed (their leases are still held and heartbeaten). */
  #pending: Array<{ input: ResolveInput; item: WorkItem }> = [];
  #flushing: Promise<void> = Promise.resolve();
  #flushTimer: NodeJS.Timeout | undefined;
  #heartbeatTimer: NodeJS.Timeout | undefined;
  readonly #stopping = new AbortController();
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #draining = false;

  constructor(o: WorkerOptions) {
    super();
    const kinds = Object.keys(o.handlers ?? {});
    if (kinds.length === 0 || kinds.some((k) => typeof o.handlers[k] !== 'function')) {
      throw new InvalidInputError('createWorker: handlers must map item kinds to functions', {
        field: 'handlers',
      });
    }
    this.#work = o.instance.work;
    this.#handlers = new Map(Object.entries(o.handlers));
    this.#concurrency = positive('concurrency', o.concurrency, 1);
    this.#prefetch = positive('prefetch', o.prefetch, this.#concurrency, this.#concurrency);
    this.#leaseMs = positive('leaseMs', o.leaseMs, 60_000);
    this.#heartbeatMs = positive('heartbeatMs', o.heartbeatMs, Math.max(1, Math.floor(this.#leaseMs / 3)));
    this.#pollMs = positive('pollIntervalMs', o.pollIntervalMs, 1_000);
    this.#batchSize = positive('batchSize', o.batchSize, 100);
    this.#batchDelayMs = positive('batchDelayMs', o.batchDelayMs, 10, 0);
    this.#graceMs = positive('graceMs', o.graceMs, 30_000, 0);
    this.#refillAt = Math.max(1, Math.ceil((this.#prefetch - this.#concurrency) / 2));
    this.id = o.worker ?? `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
    o.signal?.addEventListener('abort', () => void this.stop(), { once: true });
  }

  /** Items held now: waiting in the local queue, running, or finished with their completion not yet committed. */
  get held(): number {
    return this.#queue.length + this.#running.size + this.#pending.length;
  }

  /** Claims and runs items until `stop()`; resolves once stopped (every completion committed). */
  start(): Promise<void> {
    this.#loop ??= this.#run();
    return this.#loop;
  }

  /** Runs until nothing is ready and nothing is held, then stops (a batch job, a test). */
  drain(): Promise<void> {
    this.#draining = true;
    this.#wake?.();
    return this.start();
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
    this.#wake?.();
    await (this.#loop ?? this.start());
  }

  #grace = 0;
  /** Ends the grace period of a stop under way. */
  #endGrace: (() => void) | undefined;

  async #run(): Promise<void> {
    this.#heartbeatTimer = setInterval(() => void this.#heartbeatAll(), this.#heartbeatMs);
    this.#heartbeatTimer.unref?.();
    try {
      while (!this.#stopping.signal.aborted) {
        const held = this.#queue.length + this.#running.size;
        const free = this.#prefetch - held;
        // After the store ran out, no claim before the poll interval (a freed slot is no sign of new items),
        // except in a drain with nothing held, which must ask once more to end.
        const due = Date.now() >= this.#nextPollAt || (this.#draining && held === 0);
        let claimed: number | undefined;
        if (due && this.#wantsItems()) {
          claimed = await this.#claim(free);
          if (claimed < free) this.#nextPollAt = Date.now() + this.#pollMs;
          if (claimed === 0 && held === 0) this.emit('idle');
        }
        this.#startHandlers();
        if (this.#draining && claimed === 0 && this.#queue.length === 0 && this.#running.size === 0) break;
        if (claimed !== undefined && claimed > 0 && claimed === free) continue;
        // Wait for a handler to finish (a slot frees), for stop or drain, or for the next poll.
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
          if (this.#wantsItems()) {
            this.#pollTimer = setTimeout(resolve, Math.max(0, this.#nextPollAt - Date.now()));
          }
        });
        clearTimeout(this.#pollTimer);
        this.#wake = undefined;
      }
      await this.#shutdown();
    } finally {
      clearInterval(this.#heartbeatTimer);
      clearTimeout(this.#flushTimer);
      clearTimeout(this.#pollTimer);
      this.emit('stopped');
    }
  }

  /**
   * Whether a claim is worth it now: a slot has nothing to run, or the local queue has drained to its refill
   * mark — so the queue is refilled in batches, not one claim per freed slot.
   */
  #wantsItems(): boolean {
    const free = this.#prefetch - this.#queue.length - this.#running.size;
    const starving = this.#queue.length === 0 && this.#running.size < this.#concurrency;
    return free > 0 && (starving || free >= this.#refillAt);
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
      try {
        items = await this.#work.claimMany({
          worker: this.id,
          lease_ms: this.#leaseMs,
          limit: free,
          ...(kind === undefined ? {} : { kind }),
        });
      } catch (err) {
        this.emit('storeError', err);
        return total;
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
      running.done = this.#runOne(item, abort).finally(() => {
        this.#running.delete(item.id);
        // The next queued item starts now, not after the loop's next claim.
        this.#startHandlers();
        this.#wake?.();
      });
    }
  }

  async #runOne(item: WorkItem, abort: AbortController): Promise<void> {
    const handler = this.#handlers.get(item.kind ?? '') ?? this.#handlers.get('*');
    const input = { id: item.id, worker: this.id, attempt: item.attempts };
    let outcome: ResolveInput;
    this.emit('started', item);
    try {
      if (!handler) throw new Error(`no handler for kind ${JSON.stringify(item.kind)}`);
      const result = await handler(item, {
        item,
        attempt: item.attempts,
        signal: abort.signal,
        stopping: this.#stopping.signal,
        heartbeat: async () => {
          await this.#work.heartbeat({ ...input, lease_ms: this.#leaseMs });
        },
        log: (message, data) => void this.emit('log', item, String(message), data),
      });
      outcome = { ...input, status: 'done', result: asJson(result) };
    } catch (err) {
      outcome = { ...input, status: 'failed', error: messageOf(err) };
    }
    // An item whose lease was lost, or that stop released, is no longer ours to resolve.
    if (abort.signal.aborted && !this.#stopping.signal.aborted) return;
    if (this.#released.has(item.id)) return;
    this.#complete(outcome, item);
  }

  /** Ids released at stop: a handler that returns after it is dropped. */
  readonly #released = new Set<string>();

  #complete(input: ResolveInput, item: WorkItem): void {
    this.#pending.push({ input, item });
    if (this.#batchDelayMs === 0) void this.#flush(true);
    else if (this.#pending.length >= this.#batchSize) void this.#flush(false);
    else this.#flushTimer ??= setTimeout(() => void this.#flush(true), this.#batchDelayMs);
  }

  /**
   * Commits pending completions (one resolveMany per batch), one flush at a time: every one (`all`: the
   * batch delay ran out, or the worker stops), else only full batches, the rest waiting for their delay.
   */
  #flush(all: boolean): Promise<void> {
    if (all) {
      clearTimeout(this.#flushTimer);
      this.#flushTimer = undefined;
    }
    this.#flushing = this.#flushing.then(async () => {
      while (this.#pending.length >= (all ? 1 : this.#batchSize)) {
        await this.#commit(this.#pending.splice(0, this.#batchSize));
      }
    });
    return this.#flushing;
  }

  /**
   * Commits `batch` in one transaction. resolveMany is all or none: an item refused on its own (its lease
   * lost, the item changed under us) is dropped and reported `lost`, and the rest committed again; a refusal
   * that names no item (input the store refuses, such as an oversized result) commits the batch one by one,
   * failing an item whose result is refused.
   */
  async #commit(batch: Array<{ input: ResolveInput; item: WorkItem }>): Promise<void> {
    let rest = batch;
    while (rest.length > 0) {
      try {
        for (const item of await this.#work.resolveMany(rest.map((b) => b.input)))
          this.emit('resolved', item);
        return;
      } catch (err) {
        const id = isAgentStateError(err) && err.code !== 'INVALID_INPUT' ? err.details.id : undefined;
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
      this.#running.has(id) ||
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
      ...[...this.#running.values()].map((r) => r.item),
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
        this.#running.get(item.id)?.abort.abort(o.error);
        this.#pending = this.#pending.filter((p) => p.item.id !== item.id);
      });
    }
  }

  /** Stop: release the unstarted, give the running their grace, release what is left, commit the rest. */
  async #shutdown(): Promise<void> {
    await this.#releaseAll(this.#queue.splice(0));
    const running = [...this.#running.values()];
    if (running.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => {
        this.#endGrace = resolve;
        timer = setTimeout(resolve, this.#grace);
      });
      await Promise.race([Promise.all(running.map((r) => r.done)), grace]);
      clearTimeout(timer);
      const left = [...this.#running.values()];
      for (const r of left) {
        this.#released.add(r.item.id);
        r.abort.abort(new Error('worker stopped: grace period over'));
      }
      await this.#releaseAll(left.map((r) => r.item));
    }
    await this.#flush(true);
  }

  async #releaseAll(items: WorkItem[]): Promise<void> {
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
