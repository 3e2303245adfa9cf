// The event-log service: append (single or batched), read by range/stream/type/time, tail, and verify
// (the log, and the instance's rows against it).

import { InvalidInputError, NotFoundError } from '../../errors.js';
import type { EventQuery, NewEvent, StoreBackend, StoredEvent } from '../backend.js';
import { RUN_STREAM_TYPES } from '../codecs/run-records.js';
import { WORKFLOW_EVENT, WORKFLOW_RUN_STREAM_PREFIX } from '../codecs/workflow-events/codec.js';
import { checkInput } from '../input.js';
import { type HeadAnchor, parseHeadAnchor } from '../integrity/head.js';
import { type Clock, parseTime, sleep } from '../time.js';
import type { AppendEventInput, EventRecord, ReadEventsInput, VerifyInput, VerifyResult } from '../types.js';
import { BATCH_TYPE_OF, BATCH_TYPES, expandBatchEvent, ITEM_TYPE_OF_BATCH } from '../work/batches.js';

/** Event types agentstate itself emits; AppendEvent refuses them so the log cannot be forged. */
export const SYSTEM_EVENT_TYPES = new Set([
  'work_item_enqueued',
  'work_item_claimed',
  'work_item_resolved',
  'work_item_annotated',
  'work_item_reclaimed',
  'work_item_released',
  'work_item_cancelled',
  'work_item_parked',
  'work_item_unparked',
  'work_item_replayed',
  'work_item_retried',
  'work_item_reopened',
  'work_limit_set',
  'work_limit_removed',
  ...BATCH_TYPES,
  // A forged step record would be replayed as a step's result: only a run's holder writes them (work.run),
  // and signals only work.signal (which refuses an item that ended).
  ...RUN_STREAM_TYPES,
  'state_committed',
  'ambiguity_escalated',
  'ambiguity_resolved',
  // A Workflow SDK World's events: a forged one would be replayed by the run as what happened.
  WORKFLOW_EVENT,
]);

const EVENT_TYPE = /^[A-Za-z][A-Za-z0-9_.:-]*$/;
const STREAM = /^[A-Za-z0-9][A-Za-z0-9_.:/@-]*$/;

export const APPEND_INPUT = {
  type: { type: 'name', required: true },
  data: { type: 'json' },
  stream: { type: 'name' },
  work_item_id: { type: 'name', nullable: true },
  actor: { type: 'name', nullable: true },
  correlation_id: { type: 'name', nullable: true },
  causation_id: { type: 'name', nullable: true },
} as const;

export const READ_INPUT = {
  after: { type: 'int', min: 0 },
  until: { type: 'int', min: 0 },
  stream: { type: 'name' },
  type: { type: 'name', many: 100 },
  work_item_id: { type: 'name' },
  since: { type: 'time' },
  before: { type: 'time' },
  limit: { type: 'int', min: 1, max: 100_000 },
  reverse: { type: 'bool' },
} as const;

/** What `EventLog.tail` follows (the filters of `read`, from `after`) and how. */
export interface TailOptions extends Omit<ReadEventsInput, 'until' | 'reverse' | 'limit'> {
  /** Poll interval when caught up, ms. @default 200 */
  pollMs?: number;
  /** Stops the tail. */
  signal?: AbortSignal;
}

/** How a tail runs, apart from what it reads (`EventLog.tail`'s second argument). */
export interface TailControl {
  /** Start after this position (e.g. the head the caller read), instead of the filters' `after`. */
  after?: number;
  /** Poll interval when caught up, ms. @default 200 */
  pollMs?: number;
  /** Stops the tail. */
  signal?: AbortSignal;
}

/** Who writes an event type other than appenders: the kind whose commits emit it (null: nobody). */
export type EventTypeOwner = (type: string) => string | null;

/** The outcome of a verify, as metrics report it. */
export interface LastVerify {
  /** When it finished (epoch ms, the instance's clock). */
  at: number;
  ok: boolean;
  /** Events whose chain verified. */
  events: number;
  problem_count: number;
}

/**
 * The instance's append-only event log: each event gets the next position and a hash chained to the one
 * before it (SHA-256 over the previous hash and the event's fields), so `verify` finds any event
 * changed, removed or reordered. Work items and documents write their own events here in the same
 * transaction as their change; `append` is for everything else an agent wants on record. Nothing updates
 * or deletes an event (both backends refuse it in the database itself).
 * @example
 * await inst.events.append({ type: 'tool_called', stream: 'run:42', data: { tool: 'grep' } });
 * for (const e of await inst.events.read({ stream: 'run:42' })) console.log(e.position, e.type);
 */
export class EventLog {
  readonly #backend: StoreBackend;
  readonly #clock: Clock;
  readonly #actor: string;
  readonly #ownerOf: EventTypeOwner;
  #lastVerify: LastVerify | null = null;

  /** `ownerOf` names the kind that writes an event type (KindDefinition.emits); append refuses those. */
  constructor(backend: StoreBackend, clock: Clock, actor: string, ownerOf: EventTypeOwner = () => null) {
    this.#backend = backend;
    this.#clock = clock;
    this.#actor = actor;
    this.#ownerOf = ownerOf;
  }

  #normalize(raw: AppendEventInput, now: number): NewEvent {
    const i = checkInput<AppendEventInput>('append', raw, APPEND_INPUT);
    if (!EVENT_TYPE.test(i.type)) {
      throw new InvalidInputError(`append: type ${JSON.stringify(i.type)} must match ${EVENT_TYPE}`, {
        field: 'type',
      });
    }
    if (SYSTEM_EVENT_TYPES.has(i.type)) {
      throw new InvalidInputError(
        `append: ${i.type} is emitted by agentstate itself and cannot be appended`,
        {
          field: 'type',
        },
      );
    }
    const owner = this.#ownerOf(i.type);
    if (owner !== null) {
      throw new InvalidInputError(
        `append: ${i.type} is written by the commits of ${owner} documents and cannot be appended`,
        { field: 'type' },
      );
    }
    if (i.stream?.startsWith('doc:')) {
      throw new InvalidInputError(
        'append: doc: streams belong to versioned documents and are written only by their commits; use another stream',
        { field: 'stream' },
      );
    }
    if (i.stream?.startsWith(WORKFLOW_RUN_STREAM_PREFIX)) {
      // A World event's id is its place in the run's stream: any other event there would shift them.
      throw new InvalidInputError(
        `append: ${WORKFLOW_RUN_STREAM_PREFIX} streams belong to Workflow SDK runs and are written only by their World; use another stream`,
        { field: 'stream' },
      );
    }
    if (i.stream !== undefined && !STREAM.test(i.stream)) {
      throw new InvalidInputError(`append: stream ${JSON.stringify(i.stream)} must match ${STREAM}`, {
        field: 'stream',
      });
    }
    const workItem = i.work_item_id ?? null;
    return {
      type: i.type,
      stream: i.stream ?? (workItem ? `work_item:${workItem}` : 'instance'),
      data: i.data ?? null,
      actor: i.actor === undefined ? this.#actor : i.actor,
      correlation_id: i.correlation_id ?? null,
      causation_id: i.causation_id ?? null,
      work_item_id: workItem,
      created_at: now,
    };
  }

  /**
   * Appends one event, chained to the previous one.
   * @example await inst.events.append({ type: 'tool_called', data: { tool: 'grep' } })
   */
  async append(input: AppendEventInput): Promise<EventRecord> {
    const [e] = await this.appendMany([input]);
    return e!;
  }

  /** Appends many events in one transaction (the fast path for bulk writes). */
  async appendMany(inputs: AppendEventInput[]): Promise<EventRecord[]> {
    const now = this.#clock();
    const events = inputs.map((i) => this.#normalize(i, now));
    for (const id of new Set(events.map((e) => e.work_item_id).filter((x): x is string => x !== null))) {
      if (!(await this.#backend.work.get(id))) {
        throw new NotFoundError(`append: work item ${id} not found`, { field: 'work_item_id', id });
      }
    }
    return this.#backend.events.append(events);
  }

  /**
   * Reads events by position range (`after`, `until`), stream, type (one or a list), work item (a batch
   * event is read as each item's own) and time window (`since`, `before`: ISO-8601 or a duration back from
   * now), oldest first or `reverse`. @default limit 1000
   */
  async read(input: ReadEventsInput = {}): Promise<EventRecord[]> {
    const q = this.#query(input);
    return perItemViews(await this.#backend.events.read(storedQuery(q)), q);
  }

  #query(input: ReadEventsInput): EventQuery {
    return this.#queryOf(checkInput<ReadEventsInput>('read', input, READ_INPUT));
  }

  /** The backend's query of a checked read. */
  #queryOf(i: ReadEventsInput): EventQuery {
    const types = i.type === undefined ? null : Array.isArray(i.type) ? i.type : [i.type];
    const now = this.#clock();
    return {
      after: i.after ?? 0,
      until: i.until ?? null,
      stream: i.stream ?? null,
      types,
      work_item_id: i.work_item_id ?? null,
      since: i.since === undefined ? null : parseTime(i.since, 'since', now),
      before: i.before === undefined ? null : parseTime(i.before, 'before', now),
      limit: i.limit ?? 1000,
      reverse: i.reverse ?? false,
    };
  }

  /** Event counts per type with created_at in [since, until), busiest first. */
  async countByType(since: number, until: number): Promise<Array<{ type: string; count: number }>> {
    return this.#backend.events.typeCounts(since, until);
  }

  /** How many events of each of `types` the log holds, ever (a type with none is left out). */
  async countTypes(types: string[]): Promise<Array<{ type: string; count: number }>> {
    return this.#backend.events.countTypes(types);
  }

  /**
   * The newest event's position and hash, or null for an empty log: keep it (`<position>:<hash>`) and pass
   * it to `verify({ head })` later to prove nothing before it was rewritten.
   */
  async head(): Promise<{ position: number; hash: string } | null> {
    return this.#backend.events.head();
  }

  /**
   * Follows the log: yields every matching event after `after`, then waits for new ones until
   * `signal` aborts. Polling is the source of truth; no event is skipped.
   */
  async *tail(options: TailOptions = {}, control: TailControl = {}): AsyncGenerator<EventRecord> {
    // The filters are checked once; each poll only moves the cursor.
    const { pollMs: givenPollMs, signal: givenSignal, ...rest } = options;
    const filters = checkInput<ReadEventsInput>(
      'tail',
      givenPollMs === undefined && givenSignal === undefined ? options : rest,
      READ_INPUT,
    );
    const pollMs = control.pollMs ?? givenPollMs ?? 200;
    const signal = control.signal ?? givenSignal;
    let cursor = control.after ?? filters.after ?? 0;
    // A backend that pushes hints wakes the wait below early; polling stays the truth either way.
    let wake: (() => void) | null = null;
    let stop: (() => Promise<void>) | null = null;
    const hinted = () => wake?.();
    try {
      if (this.#backend.capabilities.notify && this.#backend.listen)
        stop = await this.#backend.listen(hinted);
    } catch {
      stop = null;
    }
    try {
      while (!signal?.aborted) {
        let batch: EventRecord[];
        try {
          const q = { ...this.#queryOf({ ...filters, after: cursor }), limit: 1000 };
          batch = perItemViews(await this.#backend.events.read(storedQuery(q)), q);
        } catch (err) {
          // The store was closed under the tail: that ends it, like an abort.
          if ((err as { details?: { closed?: unknown } }).details?.closed === true) return;
          throw err;
        }
        for (const e of batch) {
          cursor = e.position;
          yield e;
        }
        if (batch.length === 0) {
          await sleep(pollMs, signal, (done) => {
            wake = done;
          });
          wake = null;
        }
      }
    } finally {
      await stop?.().catch(() => {});
    }
  }

  /**
   * Checks the instance against its log, in one snapshot: the hash chain from the first event, every
   * document and kept history entry against its state_committed events, every work item against the fold
   * of its events, and the rows naming event positions against the head. With `head` (printed earlier as
   * `anchor` by verify, `instance export` or the dashboard), any rewrite of the log up to it is reported too.
   * @example const r = await inst.events.verify({ head: '24:03cd…' }); if (!r.ok) console.log(r.problems);
   */
  async verify(input: VerifyInput = {}): Promise<VerifyResult> {
    // The checker loads on first verify: a process that only appends never pays for it.
    const { checkRecords } = await import('../integrity/verify.js');
    const head: HeadAnchor | null = input.head === undefined ? null : parseHeadAnchor(input.head);
    const progress = input.onProgress ? { onProgress: input.onProgress } : {};
    const result = this.#backend.dump
      ? // Stream chunks are in no event: verify has nothing to check them against, and does not read them.
        await checkRecords(this.#backend.dump({ counters: true, chunks: false }), { head, ...progress })
      : // A backend that cannot list its rows: the chain (and the head) only.
        await checkRecords(this.#scan(), { head, rows: false, ...progress });
    this.#lastVerify = {
      at: this.#clock(),
      ok: result.ok,
      events: result.events,
      problem_count: result.problem_count,
    };
    return result;
  }

  /** The outcome of the last `verify` through this log (this process), for metrics; null before one. */
  get lastVerify(): LastVerify | null {
    return this.#lastVerify;
  }

  async *#scan(): AsyncIterable<{ t: 'event'; row: StoredEvent }> {
    let after = 0;
    for (;;) {
      const batch = await this.#backend.events.scan(after, 5000);
      for (const row of batch) yield { t: 'event', row };
      if (batch.length < 5000) return;
      after = batch[batch.length - 1]!.position;
    }
  }
}

/**
 * The newest (or first) event of a work item's history, a batch event seen as the item's own; null when it
 * has none. For the rare reads the queue makes on a refusal's or a decision's path, not for history pages
 * (`EventLog.read`).
 */
export async function itemEvent(
  backend: StoreBackend,
  id: string,
  which: 'newest' | 'first',
): Promise<EventRecord | null> {
  const q: EventQuery = {
    after: 0,
    until: null,
    stream: null,
    types: null,
    work_item_id: id,
    since: null,
    before: null,
    limit: 1,
    reverse: which === 'newest',
  };
  return perItemViews(await backend.events.read(q), q)[0] ?? null;
}

/** The query a backend runs: a per-item work-item type asked for finds the batch events of that type too. */
function storedQuery(q: EventQuery): EventQuery {
  if (q.types === null) return q;
  const extra = q.types.map((t) => BATCH_TYPE_OF[t]).filter((t): t is string => t !== undefined);
  return extra.length === 0 ? q : { ...q, types: [...new Set([...q.types, ...extra])] };
}

/**
 * A read of item history sees batch events as the items' own events: with `work_item_id`, or with the
 * per-item type of a batch event among the types asked for, each stored batch event becomes one record per
 * item it names (that item's type, data, actor and id; the batch event's position, stream, sequence, time
 * and hashes). Any other read returns the stored events as they are. `limit` counts stored events.
 */
function perItemViews(records: EventRecord[], q: EventQuery): EventRecord[] {
  let out: EventRecord[] | null = null;
  for (const [k, r] of records.entries()) {
    const itemType = ITEM_TYPE_OF_BATCH[r.type];
    const expand =
      itemType !== undefined &&
      r.work_item_id === null &&
      (q.work_item_id !== null || (q.types?.includes(itemType) ?? false));
    const views = expand ? expandBatchEvent(r) : null;
    if (!Array.isArray(views)) {
      out?.push(r);
      continue;
    }
    out ??= records.slice(0, k);
    const mine = q.work_item_id === null ? views : views.filter((v) => v.work_item_id === q.work_item_id);
    if (q.reverse) mine.reverse();
    for (const v of mine) {
      out.push({ ...r, type: v.type, data: v.data, actor: v.actor, work_item_id: v.work_item_id });
    }
  }
  return out ?? records;
}
