// Work-item SQL for SQLite: every transition is one conditional statement plus its event, in one
// BEGIN IMMEDIATE transaction. This file builds the WorkItemBackend from the operations of the files beside
// it, each in its own BEGIN IMMEDIATE transaction (a write) or read; PostgreSQL's work/ has the same
// files and names: enqueue.ts, claim.ts (with the sweep of expired leases), lease.ts (what a lease's holder
// does), record.ts (records, signals, notes), status.ts (changes outside a lease), read.ts, limits.ts (the
// limits claims respect, LimitBackend), and shared.ts (what they share).
import type { WorkItemBackend } from '../../../core/backend.js';
import type { SqliteConnection } from '../connection.js';
import { claim, reclaimExpired, replayUnfinished } from './claim.js';
import { enqueue } from './enqueue.js';
import { heartbeat, release, resolve, resolveEach } from './lease.js';
import { blockerStates, counts, get, history, list, stats } from './read.js';
import { annotate, record, signal } from './record.js';
import { retry, setStatus } from './status.js';

/** The WorkItemBackend of one SQLite store: the operations of the files beside it, on its connection. */
export function createWorkItemBackend(conn: SqliteConnection): WorkItemBackend {
  return {
    enqueue: (items) => enqueue(conn, items),
    claim: (q) => claim(conn, q),
    heartbeat: (qs) => heartbeat(conn, qs),
    resolve: (qs) => resolve(conn, qs),
    resolveEach: (qs) => resolveEach(conn, qs),
    release: (q) => release(conn, q),
    record: (qs) => record(conn, qs),
    signal: (q) => signal(conn, q),
    annotate: (q) => annotate(conn, q),
    setStatus: (qs) => setStatus(conn, qs),
    retry: (qs) => retry(conn, qs),
    blockerStates: (ids) => blockerStates(conn, ids),
    get: (id) => get(conn, id),
    list: (q) => list(conn, q),
    counts: () => counts(conn),
    stats: (q) => stats(conn, q),
    history: (q) => history(conn, q),
    reclaimExpired: (now, actor) => reclaimExpired(conn, now, actor),
    replayUnfinished: (now, actor) => replayUnfinished(conn, now, actor),
  };
}
