// The limit events, one codec per type, defined once here: how work_limit_set and work_limit_removed are
// built (`limitEvent`, which both backends append in the transaction that changes a key's limit) and how
// verify folds them into the limit each key has as the log tells it (`LIMIT_EVENT_CODECS`). No backend
// writes them in SQL. test/core/event-codecs.test.ts holds the builder and the fold together on generated
// limits, and the stored events to the builder's bytes on both backends.
import type { LimitChange, NewEvent } from '../backend.js';
import type { Json, JsonObject } from '../types.js';

/** The stream of a concurrency key's limit events. */
export function limitStream(key: string): string {
  return `work_limit:${key}`;
}

/**
 * work_limit_set (the limit as it is now) or work_limit_removed: the audit of a key's limit, appended in the
 * transaction that changes it. Claims count against limits but write no limit event.
 */
export function limitEvent(q: LimitChange): NewEvent {
  const data: JsonObject = q.limit
    ? {
        key: q.key,
        max_in_flight: q.limit.max_in_flight,
        rate: q.limit.rate ? { count: q.limit.rate.count, period_ms: q.limit.rate.period_ms } : null,
      }
    : { key: q.key };
  return {
    type: q.limit ? 'work_limit_set' : 'work_limit_removed',
    stream: limitStream(q.key),
    data: { ...data, actor_kind: q.actor_kind },
    actor: q.actor,
    correlation_id: null,
    causation_id: null,
    work_item_id: null,
    created_at: q.now,
  };
}

/** A key's limit as its events tell it: what its work_limits row must say. */
export interface LimitFold {
  max_in_flight: Json;
  rate: Json;
}

/** One limit event type: what it does to the limits folded so far (by key, changed in place). */
export interface LimitEventCodec {
  type: string;
  /** `d` is the event's data, whose `key` is a string (verify reports an event without one). */
  fold(limits: Map<string, LimitFold>, d: JsonObject & { key: string }): void;
}

/** The codecs of the limit event types. */
const CODECS: LimitEventCodec[] = [
  {
    type: 'work_limit_set',
    fold: (limits, d) => {
      limits.set(d.key, { max_in_flight: d.max_in_flight ?? null, rate: d.rate ?? null });
    },
  },
  {
    type: 'work_limit_removed',
    fold: (limits, d) => {
      limits.delete(d.key);
    },
  },
];

/** The limit event types, by name. */
export const LIMIT_EVENT_CODECS: ReadonlyMap<string, LimitEventCodec> = new Map(
  CODECS.map((c) => [c.type, c]),
);
