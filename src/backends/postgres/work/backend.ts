// Work-item SQL for PostgreSQL: every transition is one conditional statement, then its events appended
// (positioned and hash-chained under the instance's head lock) pipelined with COMMIT; claims skip rows
// other claimers hold. This file builds the WorkItemBackend from the operations of the files beside it;
// SQLite's work/ has the same files and names: enqueue.ts, claim.ts (with the sweep of expired
// leases), lease.ts (what a lease's holder does), record.ts (records, signals, notes), status.ts (changes
// outside a lease), read.ts, limits.ts (the limits claims respect, LimitBackend), and shared.ts (what they
// share).
import type { WorkItemBackend } from '../../../core/backend.js';
import type { PostgresConnection } from '../connection.js';
import type { AppendHint } from '../events.js';
import { claim, reclaimExpired, replayUnfinished } from './claim.js';
import { enqueue } from './enqueue.js';
import { heartbeat, release, resolve, resolveEach } from './lease.js';
import { blockerStates, counts, get, history, list, stats } from './read.js';
import { annotate, record, signal } from './record.js';
import { retry, setStatus } from './status.js';

/**
 * The WorkItemBackend of one PostgreSQL store: the operations of the files beside this one, on its connection
 * and NOTIFY hint.
 */
export function createWorkItemBackend(conn: PostgresConnection, hint: AppendHint | null): WorkItemBackend {
  return {
    enqueue: (items) => enqueue(conn, hint, items),
    claim: (q) => claim(conn, hint, q),
    heartbeat: (qs) => heartbeat(conn, qs),
    resolve: (qs) => resolve(conn, hint, qs),
    resolveEach: (qs) => resolveEach(conn, hint, qs),
    release: (q) => release(conn, hint, q),
    record: (qs) => record(conn, hint, qs),
    signal: (q) => signal(conn, hint, q),
    annotate: (q) => annotate(conn, hint, q),
    setStatus: (qs) => setStatus(conn, hint, qs),
    retry: (qs) => retry(conn, hint, qs),
    blockerStates: (ids) => blockerStates(conn, ids),
    get: (id) => get(conn, id),
    list: (q) => list(conn, q),
    counts: () => counts(conn),
    stats: (q) => stats(conn, q),
    history: (q) => history(conn, q),
    reclaimExpired: (now, actor) => reclaimExpired(conn, hint, now, actor),
    replayUnfinished: (now, actor) => replayUnfinished(conn, hint, now, actor),
  };
}
