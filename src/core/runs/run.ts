// One attempt of one item's run (`Run`): its steps, durable sleeps, waits for signals, child runs (spawn,
// join) and questions to a person (ask), each replayed from the records of earlier attempts or recorded now.
import { setTimeout as sleep } from 'node:timers/promises';
import { InvalidInputError, isAgentStateError, StepMismatchError } from '../../errors.js';
import {
  type CompletedStep,
  type NewRunRecord,
  type RecordPlace,
  recordEvent,
  type SignalRecord,
  type SleepRecord,
  type WaitedRecord,
  type WaitingRecord,
} from '../codecs/run-records.js';
import { checkInput, jsonField, LIMITS } from '../input.js';
import { cloneJson } from '../json.js';
import type { Json } from '../primitives.js';
import { type Clock, parseDuration, parseTime } from '../time.js';
import type { RecordQuery } from '../work/backend.js';
import { runKey, runSignalName } from '../work/owners.js';
import { isTerminal, STORE_ACTOR_KIND } from '../work/rules.js';
import type { EnqueueInput, WorkItem } from '../work/types.js';
import { isSuspended, JoinFailed, RunSuspended } from './errors.js';
import { checkRecordName, STEP_SPEC } from './inputs.js';
import { type CallType, callOf, freeSignal, type PlaceRecord, type RunJournal, stepKey } from './journal.js';
import {
  type AskOptions,
  type AskResult,
  type ChildOutcome,
  type JoinOptions,
  type RunHolder,
  type RunItems,
  type StepInfo,
  type StepOptions,
  WAIT_FOREVER,
  type WaitOptions,
  type WaitResult,
} from './types.js';

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
