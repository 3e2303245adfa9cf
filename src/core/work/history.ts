// The queue over time: per span of a window, the items created, done, failed and cancelled in it and how many
// were unfinished at its end, from a backend's counts per span (historyBuckets) and the counts of now.
import type { WorkHistory } from '../backend.js';
import { checkInput } from '../input.js';
import type { HistoryInput, QueueHistory } from '../types.js';
import type { QueueParts } from './context.js';
import { WORK_INPUTS } from './inputs.js';

/** The body of `WorkQueue.history` (its comment says what it does). */
export async function queueHistory(w: QueueParts, input: HistoryInput): Promise<QueueHistory> {
  const i = checkInput<HistoryInput>('queue_history', input, WORK_INPUTS.history);
  const now = w.ctx.clock();
  const windowMs = i.window_ms ?? 86_400_000;
  const count = i.buckets ?? 48;
  const bucketMs = Math.ceil(windowMs / count);
  // The last span ends just after now, so what happened at `now` is in it.
  const since = now + 1 - bucketMs * count;
  const [h, counts] = await Promise.all([
    w.backend.work.history({ since, bucketMs, buckets: count }),
    w.backend.work.counts(),
  ]);
  const unfinished = counts.pending + counts.in_flight + counts.waiting_human;
  // Unfinished at the end of span k: unfinished now, minus what was created after it, plus what ended after it.
  let open = unfinished;
  // Stryker disable next-line ArrayDeclaration: equivalent: the loop below sets every index from count - 1 down to 0, so an empty array ends the same length with the same elements
  const buckets: QueueHistory['buckets'] = new Array(count);
  for (let k = count - 1; k >= 0; k--) {
    const b = h.buckets[k]!;
    buckets[k] = { start: new Date(since + k * bucketMs).toISOString(), ...b, open: Math.max(0, open) };
    open -= b.created - b.done - b.failed - b.cancelled;
  }
  return { since: new Date(since).toISOString(), bucket_ms: bucketMs, open: unfinished, buckets };
}

/** A row of a backend's history read: items created (`what` = 'created') or ended in a status, per span. */
export interface HistoryRow {
  what: string;
  b: number;
  n: number;
}

/** The rows of a history read as `count` spans, each with every count (0 where no row says otherwise). */
export function historyBuckets(count: number, rows: readonly HistoryRow[]): WorkHistory['buckets'] {
  const out = Array.from({ length: count }, () => ({ created: 0, done: 0, failed: 0, cancelled: 0 }));
  for (const r of rows) {
    const span = out[Number(r.b)];
    if (span && (r.what === 'created' || r.what === 'done' || r.what === 'failed' || r.what === 'cancelled'))
      span[r.what] += Number(r.n);
  }
  return out;
}
