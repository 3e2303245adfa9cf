// Reads of items: one by id, a page of a filtered list, and aggregates for metrics; a pending item that can
// never become ready as things stand says which failed blockers it waits on (blocked_on_failure).
import { InvalidInputError, NotFoundError } from '../../errors.js';
import type { WorkStats } from '../backend.js';
import { checkInput } from '../input.js';
import type { ListInput, WorkItem, WorkItemStatus } from '../types.js';
import type { QueueParts } from './context.js';
import { WORK_INPUTS } from './inputs.js';

/** The body of `WorkQueue.stats` (its comment says what it does). */
export async function stats(
  w: QueueParts,
  q: {
    expiringWithinMs: number;
    bucketsMs: readonly number[];
    /** Items waiting for a human longer than this count as waiting long. @default 3600000 (1 h) */
    waitingLongerThanMs?: number;
  },
): Promise<WorkStats> {
  const now = w.ctx.clock();
  const { waitingLongerThanMs = 3_600_000, ...rest } = q;
  return w.backend.work.stats({ ...rest, now, waitingSince: now - waitingLongerThanMs });
}

/** The body of `WorkQueue.get` (its comment says what it does). */
export async function get(w: QueueParts, input: string | { id: string }): Promise<WorkItem> {
  const { id } = checkInput<{ id: string }>(
    'get',
    typeof input === 'string' ? { id: input } : input,
    WORK_INPUTS.get,
  );
  const item = await w.backend.work.get(id);
  if (!item) throw new NotFoundError(`work item ${id} not found`, { id });
  return (await withFailedBlockers(w, [item]))[0]!;
}

/** The body of `WorkQueue.find` (its comment says what it does). */
export async function find(w: QueueParts, id: string): Promise<WorkItem | null> {
  checkInput('get', { id }, WORK_INPUTS.get);
  const item = await w.backend.work.get(id);
  return item ? (await withFailedBlockers(w, [item]))[0]! : null;
}

/**
 * Adds `blocked_on_failure` to the pending items among `items` that can never become ready as things
 * stand: the failed or cancelled items upstream of them, through blockers that are pending themselves.
 */
export async function withFailedBlockers(w: QueueParts, items: WorkItem[]): Promise<WorkItem[]> {
  const states = new Map<string, { status: WorkItemStatus; blocked_by: string[] }>();
  let frontier = new Set<string>();
  for (const it of items) if (it.status === 'pending') for (const b of it.blocked_by) frontier.add(b);
  while (frontier.size > 0) {
    const rows = await w.backend.work.blockerStates([...frontier]);
    frontier = new Set();
    for (const r of rows) states.set(r.id, r);
    for (const r of rows) {
      if (r.status !== 'pending') continue;
      for (const b of r.blocked_by) if (!states.has(b)) frontier.add(b);
    }
  }
  const memo = new Map<string, string[]>();
  const roots = (id: string): string[] => {
    const known = memo.get(id);
    if (known) return known;
    memo.set(id, []);
    const s = states.get(id);
    let out: string[] = [];
    if (s && (s.status === 'failed' || s.status === 'cancelled')) out = [id];
    else if (s?.status === 'pending') out = [...new Set(s.blocked_by.flatMap(roots))];
    memo.set(id, out);
    return out;
  };
  return items.map((it) => {
    if (it.status !== 'pending') return it;
    const on = [...new Set(it.blocked_by.flatMap(roots))];
    return on.length > 0 ? { ...it, blocked_on_failure: on } : it;
  });
}

/** The body of `WorkQueue.list` (its comment says what it does). */
export async function list(w: QueueParts, input: ListInput & { ready?: boolean }): Promise<WorkItem[]> {
  const i = checkInput<ListInput & { ready?: boolean }>('list', input, WORK_INPUTS.list);
  const statuses = i.status === undefined ? null : Array.isArray(i.status) ? i.status : [i.status];
  const items = await w.backend.work.list({
    statuses,
    kind: i.kind ?? null,
    limit: i.limit ?? 100,
    now: w.ctx.clock(),
    ...(i.ready === undefined ? {} : { ready: i.ready }),
    ...(i.blocked_on_failure === undefined ? {} : { blocked_on_failure: i.blocked_on_failure }),
    ...(i.concurrency_key === undefined ? {} : { concurrency_key: i.concurrency_key }),
    ...(i.after === undefined ? {} : { after: i.after }),
  });
  // A cursor naming no item reads nothing (its sort key is read by id in the same query): told only then,
  // so a page costs one query.
  if (items.length === 0 && i.after !== undefined && (await w.backend.work.get(i.after)) === null) {
    throw new InvalidInputError(
      `list: after ${JSON.stringify(i.after)} names no work item; page on from the id of the last item a page showed`,
      { field: 'after' },
    );
  }
  return withFailedBlockers(w, items);
}
