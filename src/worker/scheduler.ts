// The scheduler: runs schedule_tick's pass (src/kinds/schedule/operations.ts) every `pollMs`, enqueuing each
// due tick of every schedule exactly once (the items' idempotency keys hold that whatever else runs it).
// `agentstate schedule run`, or `agentstate work --schedules` beside a worker.
import { EventEmitter } from 'node:events';
import type { StoreServices } from '../core/services.js';
import { sleep } from '../core/time.js';
import { InvalidInputError } from '../errors.js';
import { DEFAULT_TOLERANCE_MS, runDueSchedules, type TickResult } from '../kinds/schedule/operations.js';

/** What `createScheduler` runs, and how often. */
export interface SchedulerOptions {
  /** The open instance whose schedules to run. */
  instance: StoreServices & { clock?: () => number };
  /** How often a pass runs, in ms [default: 1000: cron's finest field is the second]. */
  pollMs?: number;
  /** Under `catch_up: 'none'`, how late a tick may be found and still be enqueued, in ms [default: 60000]. */
  toleranceMs?: number;
  /** Stops the scheduler when aborted. */
  signal?: AbortSignal;
}

/** What a scheduler reports, as events of its handle. */
export interface SchedulerEvents {
  /** A pass enqueued (or found enqueued) due ticks, or skipped some. */
  ticked: [results: TickResult[]];
  /** A pass failed; the next one runs after `pollMs`. */
  storeError: [error: unknown];
  /** The scheduler has stopped. */
  stopped: [];
}

/**
 * A scheduler over `options.instance`'s schedules: `start()` runs a pass every `pollMs` until `stop()` (or
 * `options.signal`); `tick(at)` runs one pass at a given time (tests, cron-driven hosts).
 * @example
 * const s = createScheduler({ instance: inst });
 * process.once('SIGTERM', () => void s.stop());
 * await s.start();
 */
export function createScheduler(options: SchedulerOptions): Scheduler {
  return new Scheduler(options);
}

/** The handle of a scheduler (see `createScheduler`). */
export class Scheduler extends EventEmitter<SchedulerEvents> {
  readonly #inst: SchedulerOptions['instance'];
  readonly #pollMs: number;
  readonly #toleranceMs: number;
  readonly #stop = new AbortController();
  /** The newest tick this scheduler handled, per schedule (see runDueSchedules). */
  readonly #cursors = new Map<string, number>();
  #loop: Promise<void> | undefined;

  constructor(o: SchedulerOptions) {
    super();
    for (const [name, v] of [
      ['pollMs', o.pollMs],
      ['toleranceMs', o.toleranceMs],
    ] as const) {
      if (v !== undefined && (!Number.isSafeInteger(v) || v < 1)) {
        throw new InvalidInputError(
          `createScheduler: ${name} must be a whole number of at least 1, got ${v}`,
          {
            field: name,
          },
        );
      }
    }
    this.#inst = o.instance;
    this.#pollMs = o.pollMs ?? 1_000;
    this.#toleranceMs = o.toleranceMs ?? DEFAULT_TOLERANCE_MS;
    o.signal?.addEventListener('abort', () => void this.stop(), { once: true });
  }

  /** One pass at `at` (default: the instance's clock): enqueues every due tick; returns what it did. */
  async tick(at?: number): Promise<TickResult[]> {
    const results = await runDueSchedules(this.#inst, at, this.#toleranceMs, this.#cursors);
    if (results.length > 0) this.emit('ticked', results);
    return results;
  }

  /** Runs a pass every `pollMs` until `stop()`; resolves once stopped. */
  start(): Promise<void> {
    this.#loop ??= this.#run();
    return this.#loop;
  }

  /** Stops after the pass under way; resolves once stopped. */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
  }

  async #run(): Promise<void> {
    try {
      while (!this.#stop.signal.aborted) {
        try {
          await this.tick();
        } catch (err) {
          this.emit('storeError', err);
        }
        await sleep(this.#pollMs, this.#stop.signal);
      }
    } finally {
      this.emit('stopped');
    }
  }
}
