// A rich, honest instance for the row checks of verify (integrity part C): limits set, changed and removed,
// work items in every shape the fold follows (leased, done with a result, failed, cascaded, annotated,
// keyed, traced, blocked), documents with several versions, a no-op and pruned history, and the counter
// rows a backend keeps. Its records are read once; each test edits a deep copy.
import type { CounterRecord, DumpRecord } from '../../src/core/backend.js';
import type { Instance } from '../../src/instance/instance.js';

export type Rec = DumpRecord | CounterRecord;

/** Ids and keys as real systems write them: separators, plus signs, non-ASCII. */
export const NAMES = {
  limitKept: 'openai:org|1+é',
  limitNoRate: 'anthropic:org-2|ß',
  limitRemoved: 'gone:key+ü',
  doc: 'plan|v+é',
  docOne: 'note+ß',
  docPruned: 'kept|ü+',
  worker: 'w|1+é',
} as const;

export interface Rich {
  records: Rec[];
  ids: {
    leased: string;
    done: string;
    failed: string;
    cascaded: string;
    blocked: string;
    plain: string;
    /** Claimed, then cancelled while in flight. */
    dropped: string;
    /** Failed, then retried: pending again. */
    retried: string;
  };
}

/** Does the activity on `inst` and returns its records, counters included. */
export async function richRecords(inst: Instance): Promise<Rich> {
  const w = inst.work;
  await w.setLimit({ key: NAMES.limitKept, max_in_flight: 3, rate: { count: 60, period_ms: 60_000 } });
  await w.setLimit({ key: NAMES.limitKept, max_in_flight: 2, rate: { count: 30, period_ms: 1_000 } });
  await w.setLimit({ key: NAMES.limitNoRate, max_in_flight: 5 });
  await w.setLimit({ key: NAMES.limitRemoved, max_in_flight: 1 });
  await w.removeLimit({ key: NAMES.limitRemoved });

  const done = await w.enqueue({
    title: 'done é',
    kind: 'k|é',
    payload: { n: 1, s: 'ü+|' },
    priority: 3,
    idempotency_key: 'idem|+é',
    max_attempts: 4,
    concurrency_key: NAMES.limitKept,
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  });
  const failed = await w.enqueue({ title: 'failed', max_attempts: 1 });
  const cascaded = await w.enqueue({
    title: 'cascaded',
    blocked_by: [failed.id],
    on_blocker_failure: 'cascade',
  });
  const blocked = await w.enqueue({ title: 'blocked', blocked_by: [done.id, failed.id] });
  const leased = await w.enqueue({ title: 'leased', not_before: '2020-01-01T00:00:00.000Z' });
  const plain = await w.enqueue({ title: 'plain' });
  const dropped = await w.enqueue({ title: 'dropped' });
  const retried = await w.enqueue({ title: 'retried', max_attempts: 1 });

  await w.claim({ worker: NAMES.worker, id: done.id });
  await w.annotate({ id: done.id, notes: { step: 'é|1', n: 2 } });
  await w.resolve({ id: done.id, worker: NAMES.worker, status: 'done', result: { files: ['a|+é'] } });
  await w.claim({ worker: NAMES.worker, id: failed.id });
  await w.resolve({ id: failed.id, worker: NAMES.worker, status: 'failed', error: 'boom ü' });
  await w.claim({ worker: NAMES.worker, id: leased.id });
  await w.claim({ worker: NAMES.worker, id: dropped.id });
  await w.cancel({ id: dropped.id, reason: 'not needed ü' });
  await w.claim({ worker: NAMES.worker, id: retried.id });
  await w.resolve({ id: retried.id, worker: NAMES.worker, status: 'failed', error: 'flaky' });
  await w.retry({ id: retried.id });

  const d = inst.docs;
  await d.commit({
    kind: 'json',
    id: NAMES.doc,
    expected_version: 0,
    body: { x: 1 },
    actor: 'a|é',
    reason: 'first',
  });
  await d.commit({ kind: 'json', id: NAMES.doc, expected_version: 1, body: { x: 2 }, write_id: 'wr|+1' });
  await d.commit({ kind: 'json', id: NAMES.doc, expected_version: 2, noop: true, reason: 'nothing to do ü' });
  await d.commit({ kind: 'json', id: NAMES.doc, expected_version: 2, merge_patch: { y: 'é' } });
  await d.commit({ kind: 'json', id: NAMES.doc, expected_version: 3, body: { x: 4 } });
  await d.commit({ kind: 'json', id: NAMES.docOne, expected_version: 0, body: { only: true } });
  // Retention: v1, v2 and the no-op at v2 removed, v3 and v4 kept.
  for (let v = 0; v < 4; v++) {
    await d.commit({ kind: 'json', id: NAMES.docPruned, expected_version: v, body: { v: v + 1 } });
    if (v === 1)
      await d.commit({ kind: 'json', id: NAMES.docPruned, expected_version: 2, noop: true, reason: 'idle' });
  }
  await d.prune({ kind: 'json', id: NAMES.docPruned, keep: 2 });

  const records: Rec[] = [];
  for await (const r of inst.backend.dump!({ counters: true })) records.push(r);
  return {
    records,
    ids: {
      leased: leased.id,
      done: done.id,
      failed: failed.id,
      cascaded: cascaded.id,
      blocked: blocked.id,
      plain: plain.id,
      dropped: dropped.id,
      retried: retried.id,
    },
  };
}
