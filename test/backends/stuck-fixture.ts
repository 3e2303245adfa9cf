// A small instance with a failure to follow, shared by the backend-specific tests of blocked-on-failure reads,
// cascades and the blocker index: a fails, b waits on a and c on b; gone cascades when open ends.
import { expect } from 'vitest';
import type { VerifyResult } from '../../src/core/types.js';
import type { WorkQueue } from '../../src/core/work/queue.js';

export interface StuckIds {
  a: string;
  b: string;
  c: string;
  open: string;
  gone: string;
}

/** Enqueues the items (a claimed first: it has the highest priority) and fails `a`; returns their ids. */
export async function enqueueStuck(work: WorkQueue): Promise<StuckIds> {
  const a = await work.enqueue({ title: 'a', priority: 9 });
  const b = await work.enqueue({ title: 'b', blocked_by: [a.id] });
  const c = await work.enqueue({ title: 'c', blocked_by: [b.id] });
  const open = await work.enqueue({ title: 'open' });
  const gone = await work.enqueue({ title: 'gone', blocked_by: [open.id], on_blocker_failure: 'cascade' });
  const held = await work.claim({ worker: 'w', id: a.id });
  expect(held?.id).toBe(a.id);
  await work.resolve({ id: a.id, status: 'failed', worker: 'w', attempt: held!.attempts });
  return { a: a.id, b: b.id, c: c.id, open: open.id, gone: gone.id };
}

/**
 * What verify says once c's row in work_item_blockers was removed and one saying `open` waits on `a` added
 * behind the store's back.
 */
export function expectBlockerRowsReported(r: VerifyResult, ids: StuckIds): void {
  expect(r.ok).toBe(false);
  expect(r.problems.map((p) => [p.problem, p.table, p.key])).toEqual([
    ['row_missing', 'work_item_blockers', `${ids.c} <- ${ids.b}`],
    ['event_missing', 'work_item_blockers', `${ids.open} <- ${ids.a}`],
  ]);
}
