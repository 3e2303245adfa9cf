// The public shapes of durable runs: whose run a call acts in, what a step is given and how it retries, what
// waits, joins and asks take and return, and what a run needs of the work queue.
import type { Json } from '../primitives.js';
import type { EnqueueInput, WorkItem } from '../work/types.js';

/** Whose run a call acts in: the item, the worker holding its lease, and the attempt (the fencing token). */
export interface RunHolder {
  id: string;
  worker: string;
  attempt: number;
}

/** What a step's `fn` is given: where it is in the run, and a key the outside world can dedupe it by. */
export interface StepInfo {
  /**
   * The same on every attempt of this step (item, name, occurrence): pass it as the idempotency key of the
   * outside call the step makes (`stripe.charges.create(…, { idempotencyKey: s.key })`), so a call whose
   * result was lost in a crash before its commit is not made twice. A person's reset of the step gives it a
   * new key. 43 characters: `as1_` and base64url.
   */
  key: string;
  name: string;
  /** 1-based: the how-many-th step of this name in the run. */
  occurrence: number;
  /** 1-based place among the run's calls. */
  seq: number;
  /** The item's attempt running it. */
  attempt: number;
  /** 1-based: which try of this step in this attempt (above 1 when its retries are used). */
  try: number;
}

/** How a step retries inside its attempt before it fails (and fails the attempt). */
export interface StepOptions {
  /** Tries in all, the first included [default: 1]. */
  attempts?: number;
  /** The wait before the second try, in ms; doubled for each later one up to `maxBackoffMs` [default: 1000]. */
  backoffMs?: number;
  /** The longest wait between two tries, in ms [default: 30000]. */
  maxBackoffMs?: number;
}

/** One step's call: the holder's run, its name, and how it retries. */
export interface StepInput extends RunHolder, StepOptions {
  /** The step's name (1–200 characters); with the occurrence, what tells it apart in the run. */
  name: string;
}

/** A wait with no timeout holds its item back until this time (the end of year 9999): only its signal wakes it. */
export const WAIT_FOREVER = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** How a wait for a signal ended: the signal it took, or its timeout. */
export type WaitResult =
  | {
      timedOut: false;
      /** The signal's payload. */
      payload: Json;
      /** Who sent it. */
      sentBy: string | null;
      /** The signal event's position in the log. */
      position: number;
    }
  | { timedOut: true };

/** What a join returns for each child, in spawn order; what an ask returns of its question. */
export interface ChildOutcome {
  id: string;
  /** `done`, `failed` or `cancelled`. */
  status: WorkItem['status'];
  result: Json;
  error: string | null;
}

/** How a join waits. */
export interface JoinOptions {
  /** Return failed and cancelled children too, instead of failing the join. @default false */
  allowFailures?: boolean;
  /** How often to look at the children should their ends' signals be missed (ms or `'10m'`). @default '10m' */
  recheck?: number | string;
}

/** What `ask` asks. */
export interface AskOptions {
  /** The question, as the person reads it (the item's title). */
  question: string;
  /** Choices or anything else the person needs (JSON, in the item's payload). */
  options?: Json;
  /** How often to look at the question should its answer's signal be missed (ms or `'1h'`). @default '1h' */
  recheck?: number | string;
}

/** A person's answer to a run's `ask`. */
export interface AskResult {
  /** The id of the question's item. */
  question: string;
  /** `done` (answered), or `failed` / `cancelled` (the person declined it). */
  status: WorkItem['status'];
  /** The answer: the result the person resolved the question with. */
  answer: Json;
  /** Why the person declined it (the item's error), or null. */
  reason: string | null;
}

/** What `waitFor` takes: how long to wait at most. */
export interface WaitOptions {
  /** Give up after this long (ms, or a duration string such as `'3d'`); without it, wait for the signal alone. */
  timeout?: number | string;
}

/** What a run needs of the work queue: enqueueing its children and questions, and reading them. */
export interface RunItems {
  /** Enqueues items with the run's own `run:` keys (which no other caller may write). */
  enqueue(inputs: EnqueueInput[]): Promise<WorkItem[]>;
  /** The item, or null. */
  get(id: string): Promise<WorkItem | null>;
}
