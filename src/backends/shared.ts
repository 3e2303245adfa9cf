// What both backends build alike and the core has no use for: kept here once, beside the two backends,
// instead of once in each.
import type { StoredEvent } from '../core/backend.js';
import { toIso } from '../core/time.js';
import type { EventRecord, Json } from '../core/types.js';
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
