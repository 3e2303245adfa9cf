// Work-item events: one codec per event type, defined once here. For each type, how its data is built (the
// `…Event` builders every backend appends), how verify folds it into the item it replays (`fold`: the
// work-item state machine as the log tells it, written once), and — for a type a backend writes in SQL — its
// data's fields in the order the builder writes them with the JSON type of each (`fields`), from which that
// backend makes the SQL text that writes the same bytes (PostgreSQL's one-statement claim writes
// work_item_claimed). A new event type is added here, and only here.
// test/core/work-item-codecs.test.ts holds the three together on generated inputs, on both backends.
import type { NewEvent, ReleaseQuery, RetryQuery, StatusChange } from '../backend.js';
import { applyMergePatch, contentHash } from '../json.js';
import { toIso } from '../time.js';
import type { ActorKind, Json, JsonObject, WorkItem, WorkItemStatus } from '../types.js';
import { WORK_ITEM_STATUSES } from '../types.js';
import { isTerminal, STORE_ACTOR_KIND, workItemEvent } from '../work/rules.js';

/** A work item as verify replays it from its events: what its row must say. */
export interface ItemFold {
  title: Json | undefined;
  kind: Json;
  priority: Json | undefined;
  blocked_by: Json;
  idempotency_key: Json;
  status: WorkItemStatus;
  attempts: number;
  /** null: recorded by an event written before max_attempts was (unchecked). */
  max_attempts: number | null;
  lease_owner: Json;
  /** The result as an event written before result_hash recorded it (checked by value). */
  result: Json;
  /** The content hash of the result, as events record it now; null: checked by value (`result`). */
  result_hash: string | null;
  error: Json;
  notes: Json;
  /** null: unchecked (an event written before payload_hash was). */
  payload_hash: string | null;
  /** undefined: unchecked. */
  not_before: number | null | undefined;
  created_at: number;
  claimed_at: number | null;
  resolved_at: number | null;
  on_blocker_failure: Json;
  cascaded_from: Json;
  concurrency_key: Json;
  traceparent: Json;
}

/** What a fold knows of the event besides its data. */
export interface FoldedEvent {
  type: string;
  position: number;
  /** The work item it is about (a batch event's entry: that entry's item). */
  item: string;
  /** Epoch ms. */
  created_at: number;
}

/** How a fold says an event cannot be folded as it is (verify reports it as event_malformed). */
export type FoldReport = (message: string) => void;

/** One work-item event type: how verify folds it into the item. */
export interface ItemEventCodec {
  type: string;
  /** What the event does to the item as folded so far (`s`, changed in place). */
  fold(s: ItemFold, e: FoldedEvent, d: JsonObject, report: FoldReport): void;
}

/** The JSON type of a data field a backend writes in SQL: a string, an integer, an ISO time (or null). */
export type FieldType = 'string' | 'integer' | 'time';

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStatus = (v: unknown): v is WorkItemStatus =>
  // Stryker disable next-line ConditionalExpression: equivalent (→ true): includes() on a list of strings is false for any non-string anyway
  typeof v === 'string' && (WORK_ITEM_STATUSES as readonly string[]).includes(v);

/** The status an event names, or null (reported) when it names none. */
function statusOf(e: FoldedEvent, v: Json | undefined, report: FoldReport): WorkItemStatus | null {
  if (isStatus(v)) return v;
  report(`event #${e.position} (${e.type}) names no status`);
  return null;
}

/** The item as work_item_enqueued says it was created. */
export function enqueuedFold(e: FoldedEvent, d: JsonObject): ItemFold {
  const recorded = typeof d.payload_hash === 'string';
  return {
    title: d.title,
    kind: d.kind ?? null,
    priority: d.priority,
    blocked_by: d.blocked_by ?? [],
    idempotency_key: d.idempotency_key ?? null,
    status: isStatus(d.status) ? d.status : 'pending',
    attempts: 0,
    max_attempts: recorded && typeof d.max_attempts === 'number' ? d.max_attempts : null,
    lease_owner: null,
    result: null,
    result_hash: null,
    error: null,
    notes: {},
    payload_hash: recorded ? (d.payload_hash as string) : null,
    not_before: recorded ? (typeof d.not_before === 'string' ? Date.parse(d.not_before) : null) : undefined,
    created_at: e.created_at,
    claimed_at: null,
    resolved_at: null,
    on_blocker_failure: d.on_blocker_failure ?? 'wait',
    cascaded_from: null,
    // An event written before concurrency keys existed: the item had none.
    concurrency_key: d.concurrency_key ?? null,
    // An event written before items carried a traceparent: the item had none.
    traceparent: d.traceparent ?? null,
  };
}

/** What work_item_claimed's data says: who holds the item, on which attempt, until when. */
export interface ClaimedData {
  worker: string;
  attempt: number;
  lease_expires_at: string | null;
}

/** work_item_claimed: the item held under a lease, by its worker, on its next attempt. */
export const CLAIMED = {
  type: 'work_item_claimed',
  /** Its data's fields, in the order `data` writes them, with the JSON type of each. */
  fields: [
    ['worker', 'string'],
    ['attempt', 'integer'],
    ['lease_expires_at', 'time'],
  ] as const satisfies ReadonlyArray<readonly [keyof ClaimedData, FieldType]>,
  data: (c: ClaimedData): JsonObject => dataOf(CLAIMED.fields, c as unknown as Record<string, Json>),
  fold(s: ItemFold, e: FoldedEvent, d: JsonObject): void {
    s.status = 'in_flight';
    s.lease_owner = d.worker ?? null;
    s.attempts = typeof d.attempt === 'number' ? d.attempt : s.attempts + 1;
    s.claimed_at = e.created_at;
  },
} as const;

/** What work_item_resolved's data says: the outcome of an attempt, by its worker. */
export interface ResolvedData {
  status: WorkItemStatus;
  worker: string;
  attempt: number;
  error?: string;
  /** A failed attempt sent back to pending: when it may be claimed again. */
  retry_at?: string;
  /** The result by its content hash (the value is on the row, which verify checks against it). */
  result_hash?: string;
  /** How long the attempt took, from its claim. */
  duration_ms?: number;
}

/** work_item_resolved (the fenced resolve of an attempt): its fields; it folds as a status change. */
export const RESOLVED = {
  type: 'work_item_resolved',
  /** Its data's fields, in the order `data` writes them (the optional ones when set). */
  fields: [
    ['status', 'string'],
    ['worker', 'string'],
    ['attempt', 'integer'],
    ['error', 'string'],
    ['retry_at', 'time'],
    ['result_hash', 'string'],
    ['duration_ms', 'integer'],
  ] as const satisfies ReadonlyArray<readonly [keyof ResolvedData, FieldType]>,
  data: (r: ResolvedData): JsonObject => dataOf(RESOLVED.fields, r as unknown as Record<string, Json>),
} as const;

/** The work_item_claimed event of `item` as its claim left it (held by `worker`). */
export function claimedEvent(item: WorkItem, worker: string, actorKind: ActorKind, now: number): NewEvent {
  const data = CLAIMED.data({ worker, attempt: item.attempts, lease_expires_at: item.lease_expires_at });
  return workItemEvent(CLAIMED.type, item, data, worker, actorKind, now);
}

/** A data field's value for `fieldsText`: its value, HOLE (a backend writes it), undefined (left out). */
export const HOLE: unique symbol = Symbol('hole');
type FieldValue = string | number | null | undefined | typeof HOLE;

/** A place in `fieldsText`'s parts a backend fills: the field, and the `,"key":` text that goes before it. */
export interface Hole<K extends string> {
  hole: K;
  key: string;
}

/** A codec's data from its field values, in its fields' order, the undefined ones left out. */
export function dataOf<K extends string>(
  fields: ReadonlyArray<readonly [K, FieldType]>,
  values: Partial<Record<K, Json | undefined>>,
): JsonObject {
  const data: JsonObject = {};
  for (const [key] of fields) {
    const v = values[key];
    if (v !== undefined) data[key] = v;
  }
  return data;
}

/**
 * A codec's data as JSON text in parts, for a backend that writes some values where only the row knows them:
 * the fields' `"key":value` as JSON.stringify writes them (joined by commas, no braces; an undefined value
 * left out, a time given as epoch ms written as toIso writes it), with each HOLE a `Hole` in its place.
 * Joining the parts with each hole's key and value's JSON is JSON.stringify's text of the data.
 */
export function fieldsText<K extends string>(
  fields: ReadonlyArray<readonly [K, FieldType]>,
  values: Record<K, FieldValue>,
): Array<string | Hole<K>> {
  const parts: Array<string | Hole<K>> = [];
  let text = '';
  let first = true;
  for (const [key, type] of fields) {
    const v = values[key];
    if (v === undefined) continue;
    const name = `${first ? '' : ','}${JSON.stringify(key)}:`;
    first = false;
    if (v === HOLE) {
      parts.push(text, { hole: key, key: name });
      text = '';
      continue;
    }
    // Stryker disable next-line ConditionalExpression: equivalent: toIso of a time the store wrote as text gives the same text
    text += name + JSON.stringify(type === 'time' && typeof v === 'number' ? toIso(v) : v);
  }
  parts.push(text);
  return parts;
}

const reclaimed: ItemEventCodec = {
  type: 'work_item_reclaimed',
  fold(s, e, d, report) {
    const to = statusOf(e, d.status, report);
    if (to === null) return;
    s.status = to;
    if (typeof d.attempt === 'number') s.attempts = d.attempt;
    s.lease_owner = null;
    s.error = d.error ?? null;
    s.resolved_at = isTerminal(to) ? e.created_at : null;
  },
};

const released: ItemEventCodec = {
  type: 'work_item_released',
  fold(s, _e, d) {
    s.status = 'pending';
    s.lease_owner = null;
    // The attempt stays spent (a fencing token is never reused); the item gets one more instead.
    if (s.max_attempts !== null) s.max_attempts += 1;
    // A durable sleep or wait holds the item back until then.
    if (typeof d.not_before === 'string') s.not_before = Date.parse(d.not_before);
  },
};

const annotated: ItemEventCodec = {
  type: 'work_item_annotated',
  fold(s, e, d, report) {
    if (!isObject(d.notes)) {
      report(`event #${e.position} (${e.type}) has no notes`);
      return;
    }
    s.notes = applyMergePatch(s.notes, d.notes);
  },
};

/** resolve, cancel, park, unpark: a status change, with the result and error it writes (null when none). */
const statusChange = (type: string): ItemEventCodec => ({
  type,
  fold(s, e, d, report) {
    const to = statusOf(e, d.status, report);
    if (to === null) return;
    s.status = to;
    if (typeof d.result_hash === 'string') {
      s.result = null;
      s.result_hash = d.result_hash;
    } else {
      s.result = d.result ?? null;
      s.result_hash = null;
    }
    s.error = d.error ?? null;
    s.resolved_at = isTerminal(to) ? e.created_at : null;
    if (e.type === 'work_item_resolved' && to === 'pending') {
      // A failed attempt sent back to wait for its retry: unleased, not claimable before retry_at.
      s.lease_owner = null;
      if (typeof d.retry_at === 'string') s.not_before = Date.parse(d.retry_at);
    }
    // A dependant cancelled by its blocker's failure names the blocker (a retry of it re-opens the item).
    if (e.type === 'work_item_cancelled') s.cascaded_from = d.blocker ?? null;
  },
});

/** retry, reopen: back to pending from failed or cancelled, with nothing of the ending left on the row. */
const reopening = (type: string): ItemEventCodec => ({
  type,
  fold(s, e, d, report) {
    const to = statusOf(e, d.status, report);
    if (to === null) return;
    if (s.status !== 'failed' && s.status !== 'cancelled') {
      report(
        `event #${e.position} (${e.type}) re-opens work item ${e.item}, which was ${s.status}, not failed or cancelled`,
      );
    }
    s.status = to;
    s.result = null;
    s.result_hash = null;
    s.error = null;
    s.lease_owner = null;
    s.resolved_at = null;
    s.cascaded_from = null;
    if (e.type === 'work_item_retried' && s.max_attempts !== null) {
      s.max_attempts = typeof d.max_attempts === 'number' ? d.max_attempts : s.max_attempts;
    }
  },
});

const signaled: ItemEventCodec = {
  type: 'work_item_signaled',
  fold(s, e, d, report) {
    // A signal goes only to an unfinished item; one that ended a wait for it made the item claimable.
    if (isTerminal(s.status)) {
      report(`event #${e.position} (${e.type}) signals work item ${e.item}, which was ${s.status}`);
    }
    if (d.wakes === true) s.not_before = e.created_at;
  },
};

/** work_item_replayed restates the item; it changes nothing. */
const replayed: ItemEventCodec = { type: 'work_item_replayed', fold() {} };

// How the data of each type is built: the event a write appends, by type.

/**
 * What work_item_enqueued records besides the title, priority and the optional fields, so that verify can
 * check the row's payload (by its content hash), max_attempts and not_before against the log. Events
 * written before these fields existed lack `payload_hash`; for those items the three stay unchecked.
 */
export function enqueuedIntegrity(item: WorkItem): JsonObject {
  const data: JsonObject = { payload_hash: contentHash(item.payload), max_attempts: item.max_attempts };
  if (item.not_before !== null) data.not_before = item.not_before;
  return data;
}

/** work_item_enqueued: what the item was created with (and what verify checks its row against). */
export function enqueuedEvent(
  item: WorkItem,
  actor: string | null,
  actorKind: ActorKind,
  now: number,
): NewEvent {
  const data: JsonObject = { title: item.title, priority: item.priority };
  if (item.kind !== null) data.kind = item.kind;
  if (item.blocked_by.length > 0) data.blocked_by = item.blocked_by;
  if (item.idempotency_key !== null) data.idempotency_key = item.idempotency_key;
  if (item.status !== 'pending') data.status = item.status;
  if (item.on_blocker_failure !== 'wait') data.on_blocker_failure = item.on_blocker_failure;
  if (item.concurrency_key !== null) data.concurrency_key = item.concurrency_key;
  if (item.traceparent !== null) data.traceparent = item.traceparent;
  Object.assign(data, enqueuedIntegrity(item));
  return workItemEvent('work_item_enqueued', item, data, actor, actorKind, now);
}

/** The event of what the store does on its own (actor_kind system), recorded with the actor whose call it was. */
function storeEvent(
  type: string,
  item: WorkItem,
  data: JsonObject,
  actor: string | null,
  now: number,
): NewEvent {
  return workItemEvent(type, item, data, actor, STORE_ACTOR_KIND, now);
}

/**
 * work_item_reclaimed: an expired lease taken back (pending again, or failed once attempts are spent), by
 * the store (actor_kind system; the actor is the call that swept it).
 */
export function reclaimedEvent(
  item: WorkItem,
  previousOwner: string | null,
  actor: string | null,
  now: number,
  /** The item as the reclaim left it, when a later step of the same statement moved it on (claimed again). */
  left: { attempt: number; status: WorkItem['status'] } = { attempt: item.attempts, status: item.status },
): NewEvent {
  const data = {
    previous_owner: previousOwner,
    attempt: left.attempt,
    status: left.status,
    error: item.error,
  };
  return storeEvent('work_item_reclaimed', item, data, actor, now);
}

/**
 * work_item_released: a held item handed back without spending its attempt, by its worker or by a person
 * releasing the lease for it (`q.actor`, who is recorded; `worker` names whose lease it was).
 */
export function releasedEvent(item: WorkItem, q: ReleaseQuery): NewEvent {
  // A release that holds the item back (a durable sleep or wait) names the time it is claimable again.
  const data: JsonObject = { worker: q.worker };
  if (q.not_before !== undefined) data.not_before = new Date(q.not_before).toISOString();
  return workItemEvent('work_item_released', item, data, q.actor, q.actor_kind, q.now);
}

/** work_item_annotated: the notes merged in (RFC 7396). */
export function annotatedEvent(
  item: WorkItem,
  notes: JsonObject,
  actor: string | null,
  actorKind: ActorKind,
  now: number,
): NewEvent {
  return workItemEvent('work_item_annotated', item, { notes }, actor, actorKind, now);
}

/** work_item_replayed: an unfinished item re-emitted after a restart (by the store). */
export function replayedEvent(item: WorkItem, actor: string | null, now: number): NewEvent {
  const data = { status: item.status, attempts: item.attempts, lease_owner: item.lease_owner };
  return storeEvent('work_item_replayed', item, data, actor, now);
}

/**
 * The event of a status change outside a lease (cancel, park, unpark, a human's resolve, a decision re-asked).
 * A result is recorded by its content hash (`result_hash`), as an enqueue records its payload: the value is on
 * the row, and verify checks the row against the hash.
 */
export function statusEvent(item: WorkItem, q: StatusChange): NewEvent {
  const data: JsonObject = { status: item.status };
  if (q.error !== null) data.error = q.error;
  // Stryker disable next-line ConditionalExpression: equivalent: a result reaches the rules as JSON, never undefined (WorkQueue makes a missing one null)
  if (q.result !== null && q.result !== undefined) data.result_hash = contentHash(q.result);
  // Stryker disable next-line ConditionalExpression: equivalent: Object.assign of undefined adds nothing
  if (q.data) Object.assign(data, q.data);
  return workItemEvent(q.event, item, data, q.actor, q.actor_kind, q.now);
}

/**
 * The work_item_resolved event of a fenced resolve: outcome, worker, attempt, how long the work took, and the
 * result by its content hash (`result_hash`; the value is on the row, which verify checks against it).
 */
export function resolvedEvent(
  item: WorkItem,
  q: { worker: string; actor_kind: ActorKind; error: string | null; result: Json; now: number },
): NewEvent {
  const data = RESOLVED.data({
    status: item.status,
    worker: q.worker,
    attempt: item.attempts,
    ...(q.error === null ? {} : { error: q.error }),
    // A failed attempt sent back to pending: when it may be claimed again.
    // Stryker disable next-line ConditionalExpression: equivalent: a resolve leaves an item pending only for a retry, which sets not_before
    ...(item.status === 'pending' && item.not_before !== null ? { retry_at: item.not_before } : {}),
    // Stryker disable next-line ConditionalExpression: equivalent: a result reaches the rules as JSON, never undefined (WorkQueue makes a missing one null)
    ...(q.result !== null && q.result !== undefined ? { result_hash: contentHash(q.result) } : {}),
    // Stryker disable next-line ConditionalExpression: equivalent: an item resolved under a lease was claimed (claimed_at is set)
    ...(item.claimed_at ? { duration_ms: q.now - Date.parse(item.claimed_at) } : {}),
  });
  return workItemEvent(RESOLVED.type, item, data, q.worker, q.actor_kind, q.now);
}

/**
 * work_item_cancelled of a dependant (on_blocker_failure cascade) whose blocker ended failed or cancelled:
 * the store's act (actor_kind system), recorded with the actor whose call ended the blocker.
 */
export function cascadedEvent(item: WorkItem, actor: string | null, now: number): NewEvent {
  const data = { status: item.status, error: item.error, blocker: item.cascaded_from };
  return storeEvent('work_item_cancelled', item, data, actor, now);
}

/**
 * work_item_retried: a failed or cancelled item back to pending, with what it was before (status, error,
 * attempts, and the blocker that cancelled it, if one did), so its history keeps them.
 */
export function retriedEvent(item: WorkItem, previous: WorkItem, q: RetryQuery): NewEvent {
  const data: JsonObject = {
    status: item.status,
    max_attempts: item.max_attempts,
    previous_status: previous.status,
    previous_error: previous.error,
    previous_attempts: previous.attempts,
  };
  if (previous.cascaded_from !== null) data.previous_blocker = previous.cascaded_from;
  if (q.reason !== null) data.reason = q.reason;
  return workItemEvent('work_item_retried', item, data, q.actor, q.actor_kind, q.now);
}

/**
 * work_item_reopened: an item its blocker's failure had cancelled, pending again since the blocker was
 * retried (the store's act, recorded with the actor who retried the blocker).
 */
export function reopenedEvent(
  item: WorkItem,
  previous: { error: string | null; blocker: string },
  actor: string | null,
  now: number,
): NewEvent {
  const data = { status: item.status, blocker: previous.blocker, previous_error: previous.error };
  return storeEvent('work_item_reopened', item, data, actor, now);
}

/** The codec of every work-item event type after its enqueue (enqueuedFold makes the item), by type. */
export const ITEM_EVENT_CODECS: ReadonlyMap<string, ItemEventCodec> = new Map(
  [
    CLAIMED,
    reclaimed,
    released,
    annotated,
    statusChange('work_item_resolved'),
    statusChange('work_item_cancelled'),
    statusChange('work_item_parked'),
    statusChange('work_item_unparked'),
    reopening('work_item_retried'),
    reopening('work_item_reopened'),
    signaled,
    replayed,
  ].map((c) => [c.type, c]),
);
