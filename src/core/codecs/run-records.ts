// Run records: what a handler did inside its item's run — a step's outcome, a durable sleep, a person's reset
// of a step — each an event on the item's own stream, in the instance's hash chain. The log is the journal:
// there is no other copy to drift from it. One codec per event type, defined once here: how its data is built
// (`build`), how it is read back from the log (`read`: replay, `work.steps`, the views), and how verify folds
// it (`holderProblem`: a record of a run was written by the holder of the attempt it names). No backend
// writes these in SQL: they are appended as built.
import type { NewEvent } from '../backend.js';
import type { ActorKind, EventRecord, Json, JsonObject, WorkItemStatus } from '../types.js';
import { workItemStream } from '../work/rules.js';

/** A step's `fn` returned; its result is the step's record, returned by every later attempt. */
export const STEP_COMPLETED = 'work_step_completed';
/** A step's `fn` threw on its last try; the attempt failed with it (a later attempt runs the step again). */
export const STEP_FAILED = 'work_step_failed';
/** A durable sleep began: the item was handed back until `wake_at` (recorded with its release). */
export const STEP_SLEPT = 'work_step_slept';
/** A person reset a step: it, and every record after it, run again on the next attempt. */
export const STEP_RESET = 'work_step_reset';

/** A wait for a signal began: the item was handed back until the signal comes (or the timeout). */
export const STEP_WAITING = 'work_step_waiting';
/** A wait for a signal ended, with the signal it took or its timeout: what every later attempt returns. */
export const STEP_WAITED = 'work_step_waited';
/** A signal was sent to the item: kept until a wait of its name takes it (one wait, one signal, in order). */
export const ITEM_SIGNALED = 'work_item_signaled';

/** Every run-record type, in the order a reader meets them. */
export const RUN_RECORD_TYPES: readonly string[] = [
  STEP_COMPLETED,
  STEP_FAILED,
  STEP_SLEPT,
  STEP_WAITING,
  STEP_WAITED,
  STEP_RESET,
];

/** What a run reads of its item's stream: its records and the signals sent to it. */
export const RUN_STREAM_TYPES: readonly string[] = [...RUN_RECORD_TYPES, ITEM_SIGNALED];

/** Where a record sits in its run: its place in the run's sequence of calls, and the name it was called by. */
export interface RecordPlace {
  /** 1-based place among the run's step, sleep and wait calls, in the order the handler made them. */
  seq: number;
  /** The name the handler gave it. */
  name: string;
  /** 1-based: the how-many-th call of this name in the run (a loop's second `step('call-model')` is 2). */
  occurrence: number;
}

/** Who wrote a record: the worker holding the item's lease, on its attempt (the fencing token). */
export interface RecordHolder {
  attempt: number;
  worker: string;
}

/** Common to every record read back from the log. */
interface Recorded {
  /** The event's position in the instance's log. */
  position: number;
  /** When it was recorded (ISO-8601). */
  at: string;
}

/** A step whose `fn` returned: its result, returned by every later attempt instead of running it. */
export interface CompletedStep extends RecordPlace, RecordHolder, Recorded {
  type: 'step';
  status: 'completed';
  result: Json;
  /** When the try that succeeded began (ISO-8601). */
  started_at: string;
  /** From the first try's start to the commit of the result, in ms. */
  duration_ms: number;
  /** How many times `fn` ran in this attempt (1 unless the step's retries were used). */
  tries: number;
}

/** A step whose `fn` threw on its last try in an attempt: its error (a later attempt runs the step again). */
export interface FailedStep extends RecordPlace, RecordHolder, Recorded {
  type: 'step';
  status: 'failed';
  error: string;
  started_at: string;
  duration_ms: number;
  tries: number;
}

/** A durable sleep: the item was handed back until `wake_at`. */
export interface SleepRecord extends RecordPlace, RecordHolder, Recorded {
  type: 'sleep';
  /** When the run continues (ISO-8601): the item is not claimable before it. */
  wake_at: string;
}

/** A wait for a signal began: the item was handed back until a signal of this name comes, or `timeout_at`. */
export interface WaitingRecord extends RecordPlace, RecordHolder, Recorded {
  type: 'waiting';
  /** When the wait gives up (ISO-8601), or null: it waits for the signal alone. */
  timeout_at: string | null;
}

/** A wait for a signal ended: with the signal it took (its payload, who sent it, where it is in the log), or its timeout. */
export interface WaitedRecord extends RecordPlace, RecordHolder, Recorded {
  type: 'waited';
  outcome: 'signal' | 'timeout';
  /** The signal's payload (null on a timeout). */
  payload: Json;
  /** The signal event's position in the log (null on a timeout). */
  signal_position: number | null;
  /** Who sent the signal (null on a timeout). */
  sent_by: string | null;
}

/** A signal sent to the item (`work.signal`), as the log holds it. */
export interface SignalRecord extends Recorded {
  type: 'signal';
  /** The name a wait takes it by. */
  name: string;
  payload: Json;
  actor: string | null;
  actor_kind: ActorKind;
}

/** A person's reset of a step: it and every record after it in the run are gone from replay. */
export interface ResetRecord extends Recorded {
  type: 'reset';
  /** The record reset (and everything after it in the run) is gone from replay. */
  from_seq: number;
  name: string;
  occurrence: number;
  actor: string | null;
  actor_kind: ActorKind;
  reason: string | null;
}

/** One record of a run as the log holds it. */
export type RunRecord = CompletedStep | FailedStep | SleepRecord | WaitingRecord | WaitedRecord | ResetRecord;

/** A record of a run about to be appended: the same, without what the log assigns. */
export type NewRunRecord =
  | Omit<CompletedStep, keyof Recorded>
  | Omit<FailedStep, keyof Recorded>
  | Omit<SleepRecord, keyof Recorded>
  | Omit<WaitingRecord, keyof Recorded>
  | Omit<WaitedRecord, keyof Recorded>
  | Omit<ResetRecord, keyof Recorded>;

function event(type: string, itemId: string, data: JsonObject, actor: string | null, now: number): NewEvent {
  return {
    type,
    stream: workItemStream(itemId),
    data,
    actor,
    correlation_id: null,
    causation_id: null,
    work_item_id: itemId,
    created_at: now,
  };
}

const place = (r: RecordPlace): JsonObject => ({ seq: r.seq, name: r.name, occurrence: r.occurrence });
const holder = (r: RecordHolder): JsonObject => ({ attempt: r.attempt, worker: r.worker });

/**
 * The event of a record (its data built here and nowhere else), recorded by the worker holding the lease
 * (actor: the worker, actor kind `system`) or, for a reset, by whoever reset it.
 */
export function recordEvent(itemId: string, r: NewRunRecord, now: number): NewEvent {
  switch (r.type) {
    case 'step': {
      const timing = { started_at: r.started_at, duration_ms: r.duration_ms, tries: r.tries };
      const data =
        r.status === 'completed'
          ? { ...place(r), ...holder(r), result: r.result, ...timing }
          : { ...place(r), ...holder(r), error: r.error, ...timing };
      const type = r.status === 'completed' ? STEP_COMPLETED : STEP_FAILED;
      return event(type, itemId, { ...data, actor_kind: 'system' }, r.worker, now);
    }
    case 'sleep':
      return event(
        STEP_SLEPT,
        itemId,
        { ...place(r), ...holder(r), wake_at: r.wake_at, actor_kind: 'system' },
        r.worker,
        now,
      );
    case 'waiting':
      return event(
        STEP_WAITING,
        itemId,
        { ...place(r), ...holder(r), timeout_at: r.timeout_at, actor_kind: 'system' },
        r.worker,
        now,
      );
    case 'waited':
      return event(
        STEP_WAITED,
        itemId,
        {
          ...place(r),
          ...holder(r),
          outcome: r.outcome,
          payload: r.payload,
          signal_position: r.signal_position,
          sent_by: r.sent_by,
          actor_kind: 'system',
        },
        r.worker,
        now,
      );
    case 'reset':
      return event(
        STEP_RESET,
        itemId,
        {
          from_seq: r.from_seq,
          name: r.name,
          occurrence: r.occurrence,
          reason: r.reason,
          actor_kind: r.actor_kind,
        },
        r.actor,
        now,
      );
  }
}

/**
 * The event of a signal sent to item `itemId`: `wakes` when it woke the item from a wait for it (the item is
 * claimable from the signal's time on, which verify folds).
 */
export function signalEvent(
  itemId: string,
  s: { name: string; payload: Json; actor: string | null; actor_kind: ActorKind },
  wakes: boolean,
  now: number,
): NewEvent {
  const data: JsonObject = { name: s.name, payload: s.payload, actor_kind: s.actor_kind };
  if (wakes) data.wakes = true;
  return event(ITEM_SIGNALED, itemId, data, s.actor, now);
}

/** A signal event read back (`work_item_signaled`), or null when the event is none or malformed. */
export function readSignal(
  e: Pick<EventRecord, 'type' | 'data' | 'position' | 'created_at' | 'actor'>,
): SignalRecord | null {
  if (e.type !== ITEM_SIGNALED || !isObj(e.data) || typeof e.data.name !== 'string') return null;
  return {
    type: 'signal',
    name: e.data.name,
    payload: (e.data.payload ?? null) as Json,
    actor: e.actor,
    actor_kind: (e.data.actor_kind as ActorKind) ?? 'system',
    position: e.position,
    at: e.created_at,
  };
}

const RECORD_TYPE_OF: Readonly<Record<string, RunRecord['type']>> = {
  [STEP_COMPLETED]: 'step',
  [STEP_FAILED]: 'step',
  [STEP_SLEPT]: 'sleep',
  [STEP_WAITING]: 'waiting',
  [STEP_WAITED]: 'waited',
  [STEP_RESET]: 'reset',
};

/**
 * The kind and name of a record from its stored event type and data text (what a backend reads to decide
 * whether a signal wakes the item), or null when it is no run record.
 */
export function recordKindOf(
  type: string,
  dataText: string,
): { type: RunRecord['type']; name: string } | null {
  const kind = RECORD_TYPE_OF[type];
  if (kind === undefined) return null;
  try {
    const d = JSON.parse(dataText) as unknown;
    return isObj(d) && typeof d.name === 'string' ? { type: kind, name: d.name } : null;
  } catch {
    return null;
  }
}

const isObj = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const posInt = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 1;
const str = (v: unknown): v is string => typeof v === 'string';

function readPlace(d: JsonObject): RecordPlace | null {
  return posInt(d.seq) && str(d.name) && posInt(d.occurrence)
    ? { seq: d.seq, name: d.name, occurrence: d.occurrence }
    : null;
}

function readHolder(d: JsonObject): RecordHolder | null {
  return posInt(d.attempt) && str(d.worker) ? { attempt: d.attempt, worker: d.worker } : null;
}

/**
 * The record an event of the log holds, or null when it is no run record; `malformed` when it is one of
 * their types whose data does not have the shape `recordEvent` writes (verify reports it).
 */
export function readRecord(
  e: Pick<EventRecord, 'type' | 'data' | 'position' | 'created_at' | 'actor'>,
): RunRecord | null | 'malformed' {
  if (!RUN_RECORD_TYPES.includes(e.type)) return null;
  const d = e.data;
  if (!isObj(d)) return 'malformed';
  const at = { position: e.position, at: e.created_at };
  if (e.type === STEP_RESET) {
    if (!posInt(d.from_seq) || !str(d.name) || !posInt(d.occurrence)) return 'malformed';
    return {
      type: 'reset',
      from_seq: d.from_seq,
      name: d.name,
      occurrence: d.occurrence,
      actor: e.actor,
      actor_kind: (d.actor_kind as ActorKind) ?? 'system',
      reason: str(d.reason) ? d.reason : null,
      ...at,
    };
  }
  const p = readPlace(d);
  const h = readHolder(d);
  if (p === null || h === null) return 'malformed';
  if (e.type === STEP_SLEPT) {
    return str(d.wake_at) ? { type: 'sleep', ...p, ...h, wake_at: d.wake_at, ...at } : 'malformed';
  }
  if (e.type === STEP_WAITING) {
    return d.timeout_at === null || str(d.timeout_at)
      ? { type: 'waiting', ...p, ...h, timeout_at: d.timeout_at, ...at }
      : 'malformed';
  }
  if (e.type === STEP_WAITED) {
    if (d.outcome !== 'signal' && d.outcome !== 'timeout') return 'malformed';
    const position = d.signal_position;
    if (position !== null && !posInt(position)) return 'malformed';
    return {
      type: 'waited',
      ...p,
      ...h,
      outcome: d.outcome,
      payload: (d.payload ?? null) as Json,
      signal_position: position as number | null,
      sent_by: str(d.sent_by) ? d.sent_by : null,
      ...at,
    };
  }
  if (!str(d.started_at) || typeof d.duration_ms !== 'number' || !posInt(d.tries)) return 'malformed';
  const timing = { started_at: d.started_at, duration_ms: d.duration_ms, tries: d.tries };
  if (e.type === STEP_COMPLETED) {
    return 'result' in d
      ? { type: 'step', status: 'completed', ...p, ...h, result: d.result as Json, ...timing, ...at }
      : 'malformed';
  }
  return str(d.error)
    ? { type: 'step', status: 'failed', ...p, ...h, error: d.error, ...timing, ...at }
    : 'malformed';
}

/**
 * Verify's fold of a record: a step or sleep is only ever written by the worker holding the item's lease on
 * the attempt it names, so at its place in the log the item must be in flight on that attempt under that
 * worker (`item` is the item as the log has folded it so far). Returns what is wrong, or null.
 */
export function holderProblem(
  r: RunRecord,
  item: { status: WorkItemStatus; attempts: number; lease_owner: unknown },
): string | null {
  if (r.type === 'reset') {
    return item.status === 'in_flight' ? 'resets a step of an item in flight' : null;
  }
  if (item.status !== 'in_flight')
    return `records a ${r.type} of an item that was ${item.status}, not in flight`;
  if (item.attempts !== r.attempt) {
    return `records a ${r.type} of attempt ${r.attempt}, but the item was on attempt ${item.attempts}`;
  }
  if (item.lease_owner !== r.worker) {
    return `records a ${r.type} by ${r.worker}, but the lease was ${String(item.lease_owner ?? 'nobody')}'s`;
  }
  return null;
}

/** A record in a few words, for people and agents: `step "charge" #2 completed`, `wait "approved" for the signal`. */
export function recordSummary(r: RunRecord): string {
  const name = `${JSON.stringify(r.name)}${r.occurrence > 1 ? ` #${r.occurrence}` : ''}`;
  switch (r.type) {
    case 'step':
      return `step ${name} ${r.status}`;
    case 'sleep':
      return `sleep ${name} until ${r.wake_at}`;
    case 'waiting':
      return `wait ${name} for the signal${r.timeout_at === null ? '' : ` (until ${r.timeout_at})`}`;
    case 'waited':
      return `wait ${name} ${r.outcome === 'timeout' ? 'timed out' : 'signalled'}`;
    case 'reset':
      return `reset of ${name} by ${r.actor ?? 'unknown'}`;
  }
}
