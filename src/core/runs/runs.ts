// Durable runs: what a handler did inside a claimed item's run is recorded, so a later attempt never does it
// again. A step's result is committed (fenced by the attempt) before `step` returns, and every later attempt
// returns the record without running `fn`; a durable sleep records its wake time and hands the item back.
// The records are events on the item's stream (codecs/run-records.ts): one read of them replays a run.
// This module holds `Runs`, the durable runs of one instance: reading records, starting an attempt's run
// (`Run`, run.ts) and appending records. Beside it: types.ts, errors.ts, inputs.ts and journal.ts (replay).
import { NotFoundError } from '../../errors.js';
import type { StoreBackend } from '../backend.js';
import { type CoalesceOptions, Coalescer } from '../coalesce.js';
import {
  ITEM_SIGNALED,
  type NewRunRecord,
  RUN_STREAM_TYPES,
  type RunRecord,
  readRecord,
  readSignal,
  recordEvent,
  type SignalRecord,
} from '../codecs/run-records.js';
import type { EventRecord } from '../events/types.js';
import { checkInput } from '../input.js';
import type { ActorKind } from '../primitives.js';
import type { Clock } from '../time.js';
import type { Outcome, RecordQuery } from '../work/backend.js';
import { workItemStream } from '../work/rules.js';
import type { WorkItem } from '../work/types.js';
import { checkRecordName, HOLDER_SPEC, STEP_SPEC } from './inputs.js';
import { RunJournal } from './journal.js';
import { Run } from './run.js';
import type { RunHolder, RunItems, StepInfo, StepInput, StepOptions } from './types.js';

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
