// Coalescing of overlapping single calls on one handle (claim, resolve, heartbeat): calls that arrive while
// a batch of their kind is running wait for it and then go together, as one batched statement, each caller
// still getting its own result or its own error. A call that finds nothing running goes at once.
import { InternalError } from '../errors.js';
import type { Outcome } from './backend.js';

/** How a handle coalesces overlapping claim(), resolve() and heartbeat() calls. */
export interface CoalesceOptions {
  /**
   * After a batch finishes, how long the next one waits for more calls before it goes (ms). 0 (the
   * default) waits for nothing: the next batch holds the calls that arrived while the last one ran. More
   * makes larger batches (fewer transactions, less server work per item) at the price of that much latency
   * on every call that had to wait anyway; a call that finds nothing running is never delayed. @default 0
   */
  windowMs?: number;
  /** The most calls served by one batch. @default 1000 (LIMITS.claimLimit) */
  maxBatch?: number;
}

export const DEFAULT_COALESCE: Required<CoalesceOptions> = { windowMs: 0, maxBatch: 1000 };

interface Waiting<Q, R> {
  q: Q;
  resolve: (r: R) => void;
  reject: (err: unknown) => void;
}

/**
 * Runs calls of one kind in batches, one batch at a time. `run` answers a batch with one outcome per call,
 * in order; if it throws, every call of that batch gets the error. `fits(batch, q)` says whether `q` may
 * join a batch being formed (a resolve of an item already in it waits for the next one).
 */
export class Coalescer<Q, R> {
  readonly #run: (qs: Q[]) => Promise<Array<Outcome<R>>>;
  readonly #fits: (batch: Q[], q: Q) => boolean;
  readonly #windowMs: number;
  readonly #maxBatch: number;
  #queue: Array<Waiting<Q, R>> = [];
  #running = false;

  constructor(
    run: (qs: Q[]) => Promise<Array<Outcome<R>>>,
    options: Required<CoalesceOptions>,
    fits: (batch: Q[], q: Q) => boolean = () => true,
  ) {
    this.#run = run;
    this.#fits = fits;
    this.#windowMs = options.windowMs;
    this.#maxBatch = options.maxBatch;
  }

  submit(q: Q): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ q, resolve, reject });
      if (!this.#running) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#running = true;
    try {
      while (this.#queue.length > 0) {
        const batch: Array<Waiting<Q, R>> = [];
        const rest: Array<Waiting<Q, R>> = [];
        const qs: Q[] = [];
        for (const w of this.#queue) {
          if (batch.length < this.#maxBatch && this.#fits(qs, w.q)) {
            batch.push(w);
            qs.push(w.q);
          } else rest.push(w);
        }
        this.#queue = rest;
        let outcomes: Array<Outcome<R>>;
        try {
          outcomes = await this.#run(qs);
        } catch (err) {
          for (const w of batch) w.reject(err);
          continue;
        }
        for (const [k, w] of batch.entries()) {
          const o = outcomes[k];
          if (o === undefined) w.reject(new InternalError('a coalesced call got no outcome from its batch'));
          else if (o.ok) w.resolve(o.value);
          else w.reject(o.error);
        }
        // The callers just answered usually call again at once (a worker's next claim or resolve): let
        // them run before the next batch is formed, so they join it instead of each starting a batch alone.
        // Only after a batch, never before a call that found nothing running.
        if (this.#windowMs > 0) await new Promise((r) => setTimeout(r, this.#windowMs));
        else await new Promise((r) => setImmediate(r));
      }
    } finally {
      this.#running = false;
    }
  }
}
