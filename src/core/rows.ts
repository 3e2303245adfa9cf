// Stored rows (times in epoch ms, JSON already parsed) to the API shapes, shared by every backend.
import type { DocumentRowDump, HistoryRowDump, LimitRow, WorkItemRowDump } from './backend.js';
import { toIso } from './time.js';
import type { DocumentRecord, HistoryEntry, WorkItem, WorkLimit } from './types.js';

export function workItemFromRow(r: WorkItemRowDump): WorkItem {
  return {
    id: r.id,
    title: r.title,
    kind: r.kind,
    status: r.status,
    priority: r.priority,
    payload: r.payload,
    notes: r.notes,
    result: r.result,
    error: r.error,
    attempts: r.attempts,
    max_attempts: r.max_attempts,
    lease_owner: r.lease_owner,
    lease_expires_at: toIso(r.lease_expires_at),
    claimed_at: toIso(r.claimed_at),
    blocked_by: r.blocked_by,
    not_before: toIso(r.not_before),
    idempotency_key: r.idempotency_key,
    created_at: toIso(r.created_at),
    updated_at: toIso(r.updated_at),
    resolved_at: toIso(r.resolved_at),
    on_blocker_failure: r.on_blocker_failure ?? 'wait',
    cascaded_from: r.cascaded_from ?? null,
    concurrency_key: r.concurrency_key ?? null,
    traceparent: r.traceparent ?? null,
  };
}

export function limitFromRow(r: LimitRow): WorkLimit {
  return {
    key: r.key,
    max_in_flight: r.max_in_flight,
    rate:
      r.rate_count === null || r.rate_period_ms === null
        ? null
        : { count: r.rate_count, period_ms: r.rate_period_ms },
    created_at: toIso(r.created_at),
    updated_at: toIso(r.updated_at),
  };
}

/** Claim order: highest priority first, then oldest, then id. */
export function claimOrder(a: WorkItem, b: WorkItem): number {
  return b.priority - a.priority || a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id);
}

export function documentFromRow(r: DocumentRowDump): DocumentRecord {
  return {
    kind: r.kind,
    id: r.id,
    version: r.version,
    body: r.body,
    content_hash: r.content_hash,
    created_at: toIso(r.created_at),
    updated_at: toIso(r.updated_at),
    forked_from: r.forked_from,
  };
}

export function historyFromRow(r: Omit<HistoryRowDump, 'kind' | 'id'>): HistoryEntry {
  return {
    seq: r.seq,
    version: r.version,
    parent_version: r.parent_version,
    noop: r.noop,
    content_hash: r.content_hash,
    actor: r.actor,
    actor_kind: r.actor_kind,
    provenance: r.provenance,
    write_id: r.write_id,
    reason: r.reason,
    override: r.override,
    created_at: toIso(r.created_at),
  };
}
