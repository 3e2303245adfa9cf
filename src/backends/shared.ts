// What both backends build alike and the core has no use for: kept here once, beside the two backends,
// instead of once in each.
import type { StoredEvent } from '../core/backend.js';
import { toIso } from '../core/time.js';
import type { EventRecord, InstanceSummary, Json } from '../core/types.js';
import { InvalidInputError } from '../errors.js';

/** An enqueued item's `blocked_by` names `dep`, which is no item of this instance. */
export function missingBlocker(dep: string): InvalidInputError {
  return new InvalidInputError(`blocked_by names ${dep}, which is not a work item of this instance`, {
    field: 'blocked_by',
    id: dep,
  });
}

/** An event as read back: its stored data text parsed, its time as ISO-8601. */
export function toEventRecord(row: StoredEvent): EventRecord {
  return { ...row, data: JSON.parse(row.data) as Json, created_at: toIso(row.created_at) };
}

/**
 * What both instances.ts read of an instance: its head, the contract they share. Listing is not shared: a
 * SQLite instance is a file of its own (src/instance/list.ts finds the folders, then reads each head with
 * `instanceHead`), while a PostgreSQL schema holds many instances, listed by one query (`listInstances`).
 */
export type InstanceHead = Pick<InstanceSummary, 'events' | 'last_event_at'>;

/** The head of an instance from its newest event (none: an empty log). */
export function instanceHeadOf(
  newest: { position: number; created_at: number | null } | undefined,
): InstanceHead {
  return { events: newest?.position ?? 0, last_event_at: toIso(newest?.created_at) };
}
