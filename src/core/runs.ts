// Durable runs: what a handler did inside a claimed item's run is recorded, so a later attempt never does it
// again. A step's result is committed (fenced by the attempt) before `step` returns, and every later attempt
// returns the record without running `fn`; a durable sleep records its wake time and hands the item back.
// The records are events on the item's stream (codecs/run-records.ts): one read of them replays a run.
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { InvalidInputError, isAgentStateError, NotFoundError, StepMismatchError } from '../errors.js';
import type { Outcome, RecordQuery, StoreBackend } from './backend.js';
import { type CoalesceOptions, Coalescer } from './coalesce.js';
import {
  type CompletedStep,
  ITEM_SIGNALED,
  type NewRunRecord,
  type RecordPlace,
  RUN_STREAM_TYPES,
  type RunRecord,
  readRecord,
  readSignal,
  recordEvent,
  type SignalRecord,
  type SleepRecord,
  type WaitedRecord,
  type WaitingRecord,
} from './codecs/run-records.js';
import { checkInput, jsonField, LIMITS, RESERVED_KEYS } from './input.js';
import { cloneJson } from './json.js';
import { type Clock, parseDuration, parseTime } from './time.js';
import type { ActorKind, EnqueueInput, EventRecord, Json, WorkItem } from './types.js';
import { runKey, runSignalName } from './work/owners.js';
import { isTerminal, STORE_ACTOR_KIND, workItemStream } from './work/rules.js';

export type { RunRecord } from './codecs/run-records.js';

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

/**
 * Thrown by a durable sleep (or wait) once the item is handed back: the attempt ends here, without a result,
 * and the run continues on the item's next claim. The worker runtime catches it; code of its own that holds a
 * claim must let it end the attempt (`isSuspended(err)`) and not resolve the item.
 */
export class RunSuspended extends Error {
  /** The item handed back. */
  readonly item: WorkItem;
  /** When the item is claimable again. */
  readonly until: string;
  constructor(item: WorkItem, until: number) {
    super(`run of ${item.id} suspended until ${new Date(until).toISOString()}`);
    this.name = 'RunSuspended';
    this.item = item;
    this.until = new Date(until).toISOString();
  }
}

/** Whether `err` is a durable sleep or wait ending the attempt (RunSuspended). */
export function isSuspended(err: unknown): err is RunSuspended {
  return err instanceof RunSuspended;
}

const HOLDER_SPEC = {
  id: { type: 'name', required: true },
  worker: { type: 'name', required: true },
  attempt: { type: 'int', required: true, min: 1 },
} as const;

const STEP_SPEC = {
  ...HOLDER_SPEC,
  name: { type: 'name', required: true },
  attempts: { type: 'int', min: 1, max: 100 },
  backoffMs: { type: 'int', min: 0, max: LIMITS.leaseMs },
  maxBackoffMs: { type: 'int', min: 0, max: LIMITS.leaseMs },
} as const;

/** A record name: a `name` field (1–`max` characters, no control characters), and never a reserved key. */
export function checkRecordName(op: string, name: unknown, max: number = LIMITS.name): string {
  const { name: n } = checkInput<{ name: string }>(
    op,
    { name },
    { name: { type: 'name', required: true, max } },
  );
  if (RESERVED_KEYS.has(n)) {
    throw new InvalidInputError(
      `${op}: name ${JSON.stringify(n)} is refused (${[...RESERVED_KEYS].join(', ')} are never names)`,
      {
        field: 'name',
      },
    );
  }
  return n;
}

/** What a place of a run holds on replay: a completed step, a sleep, or a wait (begun, or ended). */
export type PlaceRecord = CompletedStep | SleepRecord | WaitingRecord | WaitedRecord;

/** The kind of call a place is: what the handler called there. */
type CallType = 'step' | 'sleep' | 'wait';

const callOf = (r: PlaceRecord): CallType => (r.type === 'waiting' || r.type === 'waited' ? 'wait' : r.type);

/** What replay finds at each place of a run (its step results, sleeps and waits, after any resets), and its signals. */
export class RunJournal {
  /** Every record, in log order (failed steps and resets included): what `work.steps` lists. */
  readonly records: RunRecord[];
  /** The signals sent to the item, in log order. */
  readonly signals: SignalRecord[];
  readonly #at = new Map<number, PlaceRecord>();
  /** How many resets took away the record of a name and occurrence (it is part of the step's key). */
  readonly #generation = new Map<string, number>();

  constructor(records: RunRecord[], signals: SignalRecord[] = []) {
    this.records = records;
    this.signals = signals;
    for (const r of records) {
      if (r.type === 'reset') {
        for (const [seq, kept] of this.#at) {
          if (seq < r.from_seq) continue;
          this.#at.delete(seq);
          const k = placeKey(kept.name, kept.occurrence);
          this.#generation.set(k, (this.#generation.get(k) ?? 0) + 1);
        }
      } else if (r.type === 'step') {
        if (r.status === 'completed') this.#at.set(r.seq, r);
      } else if (r.type !== 'waiting' || this.#at.get(r.seq)?.type !== 'waited') {
        // A wait's end replaces its beginning (a beginning recorded again later never replaces its end).
        this.#at.set(r.seq, r);
      }
    }
  }

  /** The record replay returns at `seq`, if any. */
  at(seq: number): PlaceRecord | undefined {
    return this.#at.get(seq);
  }

  /** The recorded place of `name`'s `occurrence` (the first such record kept), for a reset. */
  placeOf(name: string, occurrence: number): RecordPlace | undefined {
    for (const r of this.#at.values()) if (r.name === name && r.occurrence === occurrence) return r;
    return undefined;
  }

  generation(name: string, occurrence: number): number {
    return this.#generation.get(placeKey(name, occurrence)) ?? 0;
  }

  /** The positions of the signals the run's ended waits took (a reset gives them back). */
  taken(): Set<number> {
    const out = new Set<number>();
    for (const r of this.#at.values()) {
      if (r.type === 'waited' && r.signal_position !== null) out.add(r.signal_position);
    }
    return out;
  }
}

/** The oldest signal named `name` among `signals` that no wait has taken (`taken`: their positions). */
function freeSignal(
  signals: SignalRecord[],
  name: string,
  taken: ReadonlySet<number>,
): SignalRecord | undefined {
  return signals.find((s) => s.name === name && !taken.has(s.position));
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

/**
 * A join whose children did not all end done: the attempt fails with it, and retrying cannot help (the join's
 * look at them is recorded), so the worker does not retry it. `failed` names them.
 */
export class JoinFailed extends Error {
  /** The children that ended failed or cancelled, in spawn order. */
  readonly failed: ChildOutcome[];
  constructor(id: string, name: string, failed: ChildOutcome[]) {
    super(
      `work item ${id}: join ${JSON.stringify(name)}: ${failed.length} child${failed.length === 1 ? '' : 'ren'} did not end done (${failed
        .slice(0, 5)
        .map((c) => `${c.id} ${c.status}${c.error ? `: ${c.error}` : ''}`)
        .join('; ')})`,
    );
    this.name = 'JoinFailed';
    this.failed = failed;
  }
}

/** What `waitFor` takes: how long to wait at most. */
export interface WaitOptions {
  /** Give up after this long (ms, or a duration string such as `'3d'`); without it, wait for the signal alone. */
  timeout?: number | string;
}

const placeKey = (name: string, occurrence: number) => `${occurrence}\u0000${name}`;

/** The idempotency key of a step: stable across attempts, new after a reset. */
export function stepKey(id: string, name: string, occurrence: number, generation: number): string {
  const h = createHash('sha256')
    .update(`${id}\u0000${name}\u0000${occurrence}\u0000${generation}`)
    .digest('base64url');
  return `as1_${h.slice(0, 39)}`;
}

/** What a run needs of the work queue: enqueueing its children and questions, and reading them. */
export interface RunItems {
  /** Enqueues items with the run's own `run:` keys (which no other caller may write). */
  enqueue(inputs: EnqueueInput[]): Promise<WorkItem[]>;
  /** The item, or null. */
  get(id: string): Promise<WorkItem | null>;
}

/** What a run needs of its store. */
interface RunStore extends RunItems {
  clock: Clock;
  /** Appends one record under its condition (coalesced with others), or throws its refusal. */
  commit(q: RecordQuery): Promise<WorkItem>;
  /** The signals sent to item `id` so far, in log order. */
  signals(id: string): Promise<SignalRecord[]>;
}

/**
 * One attempt of one item's run: replays what earlier attempts recorded and records what this one does.
 * Places are counted in the order the handler calls `step` and `sleep`, so the same code reaches the same
 * records; a call whose name differs from the record at its place is STEP_MISMATCH.
 */
export class Run {
  /** Whose run this is: the item, the worker holding its lease, and the attempt. */
  readonly holder: RunHolder;
  /** What earlier attempts recorded, as read when this attempt's run began. */
  readonly journal: RunJournal;
  readonly #store: RunStore;
  #seq = 0;
  readonly #occurrences = new Map<string, number>();
  /** Positions of the signals waits of this run took, recorded before this attempt or by it. */
  readonly #taken: Set<number>;
  /** What this attempt's spawns gave, per name in order (a join takes them in turn). */
  readonly #spawned = new Map<string, Array<{ key: string; ids: string[] }>>();
  /** Joins made of each name in this attempt. */
  readonly #joins = new Map<string, number>();

  constructor(store: RunStore, holder: RunHolder, journal: RunJournal) {
    this.#store = store;
    this.holder = holder;
    this.journal = journal;
    this.#taken = journal.taken();
  }

  /** The next place, for a call of `type` named `name` (occurrences are counted per type and name). */
  #next(type: CallType, name: string): RecordPlace {
    const k = `${type}\u0000${name}`;
    const occurrence = (this.#occurrences.get(k) ?? 0) + 1;
    this.#occurrences.set(k, occurrence);
    return { seq: ++this.#seq, name, occurrence };
  }

  /** The record at `p` when a call of `type` and `p`'s name made it; STEP_MISMATCH when another call did. */
  #recorded(p: RecordPlace, type: CallType): PlaceRecord | undefined {
    const r = this.journal.at(p.seq);
    if (r === undefined) return undefined;
    if (callOf(r) !== type || r.name !== p.name) {
      const what = (t: string, x: { name: string; occurrence: number }) =>
        `${t} ${JSON.stringify(x.name)} (occurrence ${x.occurrence})`;
      throw new StepMismatchError(
        `work item ${this.holder.id}: the run recorded ${what(callOf(r), r)} at place ${p.seq}, but the code now calls ${what(type, p)} there: the handler changed since the run began; reset the step (agentstate step reset) or finish the run with the code it began with`,
        {
          id: this.holder.id,
          seq: p.seq,
          recorded: { type: callOf(r), name: r.name, occurrence: r.occurrence },
          called: { type, name: p.name, occurrence: p.occurrence },
        },
      );
    }
    return r;
  }

  #commit(
    record: NewRunRecord | null,
    release: RecordQuery['release'],
    unless: RecordQuery['unless'] = null,
  ): Promise<WorkItem> {
    const now = this.#store.clock();
    return this.#store.commit({
      id: this.holder.id,
      lease: { worker: this.holder.worker, attempt: this.holder.attempt },
      events: record === null ? [] : [recordEvent(this.holder.id, record, now)],
      release,
      unless,
      now,
    });
  }

  /**
   * Runs `fn` once for this place of the run and records its result, or returns the result an earlier
   * attempt recorded there without running it. The result is stored by the store's JSON rule and returned
   * as stored (the same value on the first run and on replay: a Date comes back as its ISO string); one the
   * rule refuses, or over the size limit, is INVALID_INPUT with nothing recorded. A `fn` that throws is tried
   * again per `options`; on its last try the failure is recorded and thrown (the attempt fails; a later
   * attempt runs the step again). LEASE_LOST when the lease is no longer this attempt's: nothing is recorded.
   */
  async step<T>(name: string, fn: (s: StepInfo) => T | Promise<T>, options: StepOptions = {}): Promise<T> {
    const n = checkRecordName('step', name);
    if (typeof fn !== 'function') throw new InvalidInputError('step: fn must be a function', { field: 'fn' });
    const opts = checkInput<StepOptions>('step', options, {
      attempts: STEP_SPEC.attempts,
      backoffMs: STEP_SPEC.backoffMs,
      maxBackoffMs: STEP_SPEC.maxBackoffMs,
    });
    const p = this.#next('step', n);
    const done = this.#recorded(p, 'step') as CompletedStep | undefined;
    if (done !== undefined) return cloneJson(done.result) as T;
    const tries = opts.attempts ?? 1;
    const key = stepKey(this.holder.id, n, p.occurrence, this.journal.generation(n, p.occurrence));
    const first = this.#store.clock();
    for (let t = 1; ; t++) {
      const startedAt = this.#store.clock();
      let value: unknown;
      try {
        value = await fn({ key, ...p, attempt: this.holder.attempt, try: t });
      } catch (err) {
        // A refusal of the store inside fn (a lease lost) is not the step's failure to record.
        // A refusal of the store inside fn (a lease lost, input it refused) is not the step's failure to
        // record; nor is a suspension (a join's or an ask's check handing the item back).
        if (
          isAgentStateError(err, 'LEASE_LOST') ||
          isAgentStateError(err, 'INVALID_INPUT') ||
          isSuspended(err)
        )
          throw err;
        if (t < tries) {
          const base = opts.backoffMs ?? 1000;
          await sleep(Math.min(opts.maxBackoffMs ?? 30_000, base * 2 ** (t - 1)));
          continue;
        }
        await this.#commit(
          {
            type: 'step',
            status: 'failed',
            ...p,
            ...this.#who(),
            error: errorText(err),
            ...timing(first, startedAt, this.#store.clock(), t),
          },
          null,
        );
        throw err;
      }
      // A result the store's JSON rule refuses (a Map, a bigint, over the size limit) is the code's mistake:
      // INVALID_INPUT, and nothing recorded.
      const stored = (value === undefined ? null : jsonField('step', 'result', value)) as Json;
      await this.#commit(
        {
          type: 'step',
          status: 'completed',
          ...p,
          ...this.#who(),
          result: stored,
          ...timing(first, startedAt, this.#store.clock(), t),
        },
        null,
      );
      return cloneJson(stored) as T;
    }
  }

  /**
   * A durable sleep: the first time, records the wake time and hands the item back until then (no lease held,
   * no attempt spent) and throws RunSuspended; once the time has come, returns at once. `duration` is ms or a
   * duration string (`'5m'`).
   */
  async sleep(name: string, duration: number | string): Promise<void> {
    const ms = typeof duration === 'string' ? parseDuration(duration, 'sleep') : duration;
    if (!Number.isSafeInteger(ms) || ms < 0) {
      throw new InvalidInputError(
        `sleep: duration must be a whole number of ms (0 or more) or a duration string, got ${JSON.stringify(duration)}`,
        {
          field: 'duration',
        },
      );
    }
    return this.#sleepUntil(name, (now) => now + ms);
  }

  /** A durable sleep until `time` (an ISO-8601 time, a Date, or epoch ms); see `sleep`. */
  async sleepUntil(name: string, time: string | Date | number): Promise<void> {
    const at =
      time instanceof Date
        ? time.getTime()
        : typeof time === 'number'
          ? time
          : parseTime(time, 'sleepUntil', this.#store.clock(), 'ahead');
    if (!Number.isSafeInteger(at)) {
      throw new InvalidInputError('sleepUntil: time must be a valid time', { field: 'time' });
    }
    return this.#sleepUntil(name, () => at);
  }

  async #sleepUntil(name: string, wake: (now: number) => number): Promise<void> {
    const n = checkRecordName('sleep', name);
    const p = this.#next('sleep', n);
    const recorded = this.#recorded(p, 'sleep') as SleepRecord | undefined;
    const now = this.#store.clock();
    if (recorded !== undefined) {
      const until = Date.parse(recorded.wake_at);
      if (until <= now) return;
      // Claimed before its time (a person unparked it, say): back to sleep until the recorded time.
      throw new RunSuspended(await this.#commit(null, this.#release(until)), until);
    }
    const until = wake(now);
    if (until <= now) return;
    const item = await this.#commit(
      { type: 'sleep', ...p, ...this.#who(), wake_at: new Date(until).toISOString() },
      this.#release(until),
    );
    throw new RunSuspended(item, until);
  }

  /**
   * A durable wait for a signal named `name` (`work.signal({ id, name, payload })`): returns the signal's
   * payload once it has come — at once if it came before the wait — or `{ timedOut: true }` once `timeout`
   * has passed without it. Until then the item is handed back (no slot, no lease, no attempt spent) and
   * RunSuspended is thrown; the signal wakes it. Each wait takes the oldest signal of its name that no wait
   * of the run has taken (one wait, one signal; a wait that timed out takes none). The outcome is recorded,
   * so every later attempt gets the same one.
   */
  async waitFor(name: string, options: WaitOptions = {}): Promise<WaitResult> {
    const n = checkRecordName('waitFor', name);
    const timeoutMs =
      options.timeout === undefined
        ? null
        : typeof options.timeout === 'string'
          ? parseDuration(options.timeout, 'waitFor timeout')
          : options.timeout;
    if (timeoutMs !== null && (!Number.isSafeInteger(timeoutMs) || timeoutMs < 0)) {
      throw new InvalidInputError(
        `waitFor: timeout must be a whole number of ms (0 or more) or a duration string, got ${JSON.stringify(options.timeout)}`,
        { field: 'timeout' },
      );
    }
    const p = this.#next('wait', n);
    const recorded = this.#recorded(p, 'wait') as WaitingRecord | WaitedRecord | undefined;
    if (recorded?.type === 'waited') return waitResult(recorded);
    const now = this.#store.clock();
    const begun = recorded as WaitingRecord | undefined;
    const timeoutAt = begun
      ? begun.timeout_at === null
        ? null
        : Date.parse(begun.timeout_at)
      : timeoutMs === null
        ? null
        : now + timeoutMs;
    for (;;) {
      // Signals may have come since the run's records were read: look again.
      const signals = await this.#store.signals(this.holder.id);
      const signal = freeSignal(signals, n, this.#taken);
      if (signal !== undefined) {
        this.#taken.add(signal.position);
        const ended: Omit<WaitedRecord, 'position' | 'at'> = {
          type: 'waited',
          ...p,
          ...this.#who(),
          outcome: 'signal',
          payload: signal.payload,
          signal_position: signal.position,
          sent_by: signal.actor,
        };
        await this.#commit(ended, null);
        return waitResult(ended);
      }
      if (timeoutAt !== null && timeoutAt <= this.#store.clock()) {
        const ended: Omit<WaitedRecord, 'position' | 'at'> = {
          type: 'waited',
          ...p,
          ...this.#who(),
          outcome: 'timeout',
          payload: null,
          signal_position: null,
          sent_by: null,
        };
        await this.#commit(ended, null);
        return waitResult(ended);
      }
      const until = timeoutAt ?? WAIT_FOREVER;
      const waiting: NewRunRecord | null = begun
        ? null
        : {
            type: 'waiting',
            ...p,
            ...this.#who(),
            timeout_at: timeoutAt === null ? null : new Date(timeoutAt).toISOString(),
          };
      try {
        // Handed back only if no signal of its name is free to take, checked in the same transaction: the
        // item has been sent no more of them than the run's waits took.
        const takenOfName = signals.filter((x) => x.name === n && this.#taken.has(x.position)).length;
        const item = await this.#commit(waiting, this.#release(until), { signal: n, count: takenOfName + 1 });
        throw new RunSuspended(item, until);
      } catch (err) {
        if (!isAgentStateError(err, 'STATE_CONFLICT') || err.details.reason !== 'signal_arrived') throw err;
      }
    }
  }

  /**
   * Child runs: enqueues `items` once for this place of the run (a later attempt gets the ids the first one
   * enqueued, never new children), each keyed to this run, and returns their ids in order. `join(name)` waits
   * for them. An item's own idempotency_key is replaced by the run's.
   */
  async spawn(name: string, items: EnqueueInput[]): Promise<string[]> {
    const n = checkRecordName('spawn', name, LIMITS.name - 10);
    if (!Array.isArray(items) || items.length === 0 || items.length > LIMITS.claimLimit) {
      throw new InvalidInputError(
        `spawn: items must be an array of 1 to ${LIMITS.claimLimit} items to enqueue`,
        {
          field: 'items',
        },
      );
    }
    const spawned = await this.step(`spawn ${n}`, async (s) => {
      const children = await this.#store.enqueue(
        items.map((item, k) => ({ ...item, idempotency_key: runKey(this.holder.id, 'spawn', s.key, k + 1) })),
      );
      return { key: s.key, ids: children.map((c) => c.id) };
    });
    const list = this.#spawned.get(n) ?? [];
    list.push(spawned);
    this.#spawned.set(n, list);
    return spawned.ids;
  }

  /**
   * Waits durably until every child of the run's `spawn(name)` before it (the first join of a name joins its
   * first spawn, and so on) has ended, and returns them in spawn order with status, result and error. A
   * failed or cancelled child fails the join (JoinFailed, which the worker does not retry) unless
   * `allowFailures`. Meanwhile the item is handed back; a child's end wakes it (and, should that signal be
   * missed, it looks again every `recheck`, default 10 minutes).
   */
  async join(name: string, options: JoinOptions = {}): Promise<ChildOutcome[]> {
    const n = checkRecordName('join', name, LIMITS.name - 10);
    const k = (this.#joins.get(n) ?? 0) + 1;
    this.#joins.set(n, k);
    const spawned = this.#spawned.get(n)?.[k - 1];
    if (spawned === undefined) {
      throw new InvalidInputError(
        `join: no spawn(${JSON.stringify(n)}) of this run to join (join #${k} of the name)`,
        {
          field: 'name',
        },
      );
    }
    const children = await this.#awaitEnd(
      `join ${n}`,
      spawned.ids,
      runSignalName('spawn', spawned.key),
      options.recheck ?? '10m',
    );
    const failed = children.filter((c) => c.status !== 'done');
    if (failed.length > 0 && options.allowFailures !== true) throw new JoinFailed(this.holder.id, n, failed);
    return children;
  }

  /**
   * A question for a person: enqueued once as an item waiting for a human (its `title` the question, its
   * payload `{ question, options, run }`), which only a human principal answers — `agentstate resolve <id>
   * done --result … --actor-kind human`, the dashboard, an MCP host's form — then returns the answer: the
   * item's status (`done`, or `failed` / `cancelled` when the person said no) with its result and error.
   * Meanwhile the item is handed back; the answer wakes it (looked at again every `recheck`, default 1 h).
   */
  async ask(name: string, options: AskOptions): Promise<AskResult> {
    const n = checkRecordName('ask', name, LIMITS.name - 10);
    const { question, choices } = checkInput<{ question: string; choices?: Json }>(
      'ask',
      {
        question: options?.question,
        ...(options?.options === undefined ? {} : { choices: options.options }),
      },
      { question: { type: 'string', required: true }, choices: { type: 'json' } },
    );
    if (question.trim() === '')
      throw new InvalidInputError('ask: question must not be blank', { field: 'question' });
    const asked = await this.step(`ask ${n}`, async (s) => {
      const [item] = await this.#store.enqueue([
        {
          title: question,
          waiting_human: true,
          payload: { question, options: choices ?? null, run: this.holder.id, ask: n },
          idempotency_key: runKey(this.holder.id, 'ask', s.key, 1),
        },
      ]);
      return { key: s.key, id: (item as WorkItem).id };
    });
    const [answer] = await this.#awaitEnd(
      `answer ${n}`,
      [asked.id],
      runSignalName('ask', asked.key),
      options.recheck ?? '1h',
    );
    const a = answer as ChildOutcome;
    return { question: asked.id, status: a.status, answer: a.result, reason: a.error };
  }

  /**
   * Waits durably until every one of `ids` has ended: each look at them is a step of the run (named `check`),
   * so replay takes the same turns; between looks, a wait for `signal` (sent when one ends) or `recheck`.
   */
  async #awaitEnd(
    check: string,
    ids: string[],
    signal: string,
    recheck: number | string,
  ): Promise<ChildOutcome[]> {
    for (;;) {
      const state = await this.step(check, async () => {
        const items = await Promise.all(ids.map((id) => this.#store.get(id)));
        if (!items.every((i) => i !== null && isTerminal(i.status))) return { ended: false, children: [] };
        return {
          ended: true,
          children: items.map((i) => ({
            id: (i as WorkItem).id,
            status: (i as WorkItem).status,
            result: (i as WorkItem).result,
            error: (i as WorkItem).error,
          })),
        };
      });
      if (state.ended) return state.children as ChildOutcome[];
      await this.waitFor(signal, { timeout: recheck });
    }
  }

  #who(): { attempt: number; worker: string } {
    return { attempt: this.holder.attempt, worker: this.holder.worker };
  }

  #release(until: number): NonNullable<RecordQuery['release']> {
    return { not_before: until, actor: this.holder.worker, actor_kind: STORE_ACTOR_KIND };
  }
}

function waitResult(
  r: Pick<WaitedRecord, 'outcome' | 'payload' | 'sent_by' | 'signal_position'>,
): WaitResult {
  return r.outcome === 'timeout'
    ? { timedOut: true }
    : {
        timedOut: false,
        payload: cloneJson(r.payload),
        sentBy: r.sent_by,
        position: r.signal_position as number,
      };
}

function timing(first: number, startedAt: number, end: number, tries: number) {
  return { started_at: new Date(startedAt).toISOString(), duration_ms: Math.max(0, end - first), tries };
}

function errorText(err: unknown): string {
  const m = err instanceof Error ? err.message || err.name : String(err);
  return m.length > LIMITS.error ? `${m.slice(0, LIMITS.error - 1)}…` : m;
}

/** Runs kept for `work.step` calls made one at a time, at most this many (the oldest forgotten first). */
const KEPT_RUNS = 1000;

/** The durable runs of one instance: reading records, starting an attempt's run, and appending records. */
export class Runs {
  readonly #backend: StoreBackend;
  readonly #clock: Clock;
  readonly #records: Coalescer<RecordQuery, WorkItem> | null;
  /** The runs of `work.step` calls made one at a time, by holder: occurrences count across those calls. */
  readonly #kept = new Map<string, Promise<Run>>();

  readonly #items: RunItems;

  constructor(
    backend: StoreBackend,
    clock: Clock,
    coalesce: Required<CoalesceOptions> | null,
    items: RunItems,
  ) {
    this.#backend = backend;
    this.#clock = clock;
    this.#items = items;
    // Records of many runs (and several of one) go in one transaction when they overlap.
    this.#records = coalesce ? new Coalescer((qs) => this.#backend.work.record(qs), coalesce) : null;
  }

  async #commit(q: RecordQuery): Promise<WorkItem> {
    if (this.#records) return this.#records.submit(q);
    const [o] = (await this.#backend.work.record([q])) as [Outcome<WorkItem>];
    if (!o.ok) throw o.error;
    return o.value;
  }

  /** Item `id`'s events of `types`, in log order (one read, paged by 5,000). */
  async #stream(id: string, types: readonly string[]): Promise<EventRecord[]> {
    const out: EventRecord[] = [];
    let after = 0;
    for (;;) {
      const page = await this.#backend.events.read({
        after,
        until: null,
        stream: workItemStream(id),
        types: [...types],
        work_item_id: null,
        since: null,
        before: null,
        limit: 5000,
        reverse: false,
      });
      out.push(...page);
      if (page.length < 5000) return out;
      after = page[page.length - 1]!.position;
    }
  }

  /** The run records of item `id` and the signals sent to it, in log order (one read). */
  async #journal(id: string): Promise<{ records: RunRecord[]; signals: SignalRecord[] }> {
    const records: RunRecord[] = [];
    const signals: SignalRecord[] = [];
    for (const e of await this.#stream(id, RUN_STREAM_TYPES)) {
      const s = readSignal(e);
      if (s !== null) signals.push(s);
      const r = readRecord(e);
      if (r !== null && r !== 'malformed') records.push(r);
    }
    return { records, signals };
  }

  /** The run records of item `id`, in log order. */
  async records(id: string): Promise<RunRecord[]> {
    return (await this.#journal(id)).records;
  }

  /** The signals sent to item `id`, in log order. */
  async signals(id: string): Promise<SignalRecord[]> {
    return (await this.#stream(id, [ITEM_SIGNALED])).map(readSignal).filter((s) => s !== null);
  }

  /** This attempt's run: what earlier attempts recorded, read once. */
  async start(holder: RunHolder): Promise<Run> {
    const h = checkInput<RunHolder>('run', holder, HOLDER_SPEC);
    const { records, signals } = await this.#journal(h.id);
    return new Run(
      {
        clock: this.#clock,
        commit: (q) => this.#commit(q),
        signals: (id) => this.signals(id),
        enqueue: (inputs) => this.#items.enqueue(inputs),
        get: (id) => this.#items.get(id),
      },
      h,
      new RunJournal(records, signals),
    );
  }

  /** The run of a holder whose steps come one call at a time (`work.step`): started once, then kept. */
  kept(holder: RunHolder): Promise<Run> {
    const h = checkInput<RunHolder>('step', holder, HOLDER_SPEC);
    const k = `${h.id}\u0000${h.worker}\u0000${h.attempt}`;
    let run = this.#kept.get(k);
    if (run === undefined) {
      run = this.start(h);
      run.catch(() => this.#kept.delete(k));
      this.#kept.set(k, run);
      if (this.#kept.size > KEPT_RUNS) this.#kept.delete(this.#kept.keys().next().value as string);
    }
    return run;
  }

  /** A step of a run whose holder calls one at a time (see Run.step). */
  async step<T>(input: StepInput, fn: (s: StepInfo) => T | Promise<T>): Promise<T> {
    const { name, attempts, backoffMs, maxBackoffMs, ...holder } = checkInput<StepInput>(
      'step',
      input,
      STEP_SPEC,
    );
    const run = await this.kept(holder);
    const options: StepOptions = {
      ...(attempts === undefined ? {} : { attempts }),
      ...(backoffMs === undefined ? {} : { backoffMs }),
      ...(maxBackoffMs === undefined ? {} : { maxBackoffMs }),
    };
    return run.step(name, fn, options);
  }

  /**
   * A person's reset of a step: it and every record after it in the run are gone from replay (run again, with
   * a new key, on the next attempt). Only while the item is not in flight (INVALID_TRANSITION otherwise);
   * NOT_FOUND for a step the run has not recorded.
   */
  async reset(q: {
    id: string;
    name: string;
    occurrence: number;
    reason: string | null;
    actor: string;
    actor_kind: ActorKind;
  }): Promise<RunRecord> {
    checkRecordName('reset_step', q.name);
    const journal = new RunJournal(await this.records(q.id));
    const place = journal.placeOf(q.name, q.occurrence);
    if (place === undefined) {
      throw new NotFoundError(
        `work item ${q.id} has no recorded step ${JSON.stringify(q.name)} (occurrence ${q.occurrence}) to reset`,
        { id: q.id, name: q.name, occurrence: q.occurrence },
      );
    }
    const now = this.#clock();
    const record: NewRunRecord = {
      type: 'reset',
      from_seq: place.seq,
      name: q.name,
      occurrence: q.occurrence,
      reason: q.reason,
      actor: q.actor,
      actor_kind: q.actor_kind,
    };
    const [o] = (await this.#backend.work.record([
      { id: q.id, lease: null, events: [recordEvent(q.id, record, now)], release: null, unless: null, now },
    ])) as [Outcome<WorkItem>];
    if (!o.ok) throw o.error;
    const after = await this.records(q.id);
    return after[after.length - 1]!;
  }
}
