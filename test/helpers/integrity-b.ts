// An instance with every kind of event verify folds (part B of the integrity suite, test/integrity/fold.test.ts),
// and the tools of a forger with write access to the log: rewrite an event's data, append or drop events, and
// recompute every hash after it so the chain stays intact, as anyone who can write the storage can.
import type { DumpRecord, StoredEvent } from '../../src/core/backend.js';
import { computeEventHash } from '../../src/core/hash.js';
import type { Json, JsonObject } from '../../src/core/types.js';
import type { Instance } from '../../src/instance/instance.js';
import type { BackendUnderTest } from './backends.js';
import { rechain } from './forge.js';

export const T0 = Date.parse('2026-03-01T00:00:00.000Z');

/** The ids of what `richInstance` made, by role. */
export interface RichIds {
  /** Enqueued with every field, claimed, annotated, a step completed, resolved done with a result. */
  done: string;
  /** Claimed, its lease run out and reclaimed (pending again), claimed again and left in flight. */
  held: string;
  /** max_attempts 1: claimed, failed, retried (work_item_retried), then left pending. */
  retried: string;
  /** The blocker whose failure cancels `dependant`, retried afterwards (which re-opens it). */
  blocker: string;
  /** blocked_by blocker, on_blocker_failure cascade: cancelled by the cascade, then re-opened. */
  dependant: string;
  /** Its lease ran out with spent's: reclaimed in one batch (work_items_reclaimed), pending again. */
  expired: string;
  /** max_attempts 1, reclaimed with expired: failed. */
  spent: string;
  /** Parked for a human, and left so. */
  asking: string;
  /** Parked for a human, then unparked. */
  parked: string;
  /** Cancelled with a reason. */
  cancelled: string;
  /** A failed attempt sent back with retry_at (pending, not before it). */
  backoff: string;
  /** A durable run that slept (released with not_before), waited for a signal that woke it, and took it. */
  sleeper: string;
  /** A step completed and one that failed (the attempt failed with it), the first reset by a person. */
  reset: string;
  /** Three items enqueued, claimed and resolved in batches (work_items_*). */
  batch: string[];
}

/**
 * Every kind of event the fold reads, through the library, on a clock the test moves: documents (a commit, a
 * merge patch, a no-op), limits (set twice, one removed), and work items through every transition.
 */
export async function richInstance(b: BackendUnderTest): Promise<{ inst: Instance; ids: RichIds }> {
  let now = T0;
  const tick = (ms = 1000) => {
    now += ms;
  };
  const inst = await b.open(undefined, { clock: () => now });
  const w = inst.work;

  const plan = { kind: 'json', id: 'plan|ü+1' };
  await inst.docs.commit({ ...plan, expected_version: 0, body: { steps: ['x'] }, actor: 'ana' });
  tick();
  await inst.docs.commit({ ...plan, expected_version: 1, merge_patch: { done: false }, write_id: 'w|1' });
  tick();
  await inst.docs.commit({ ...plan, expected_version: 2, noop: true, reason: 'checked é' });
  tick();

  await w.setLimit({ key: 'openai|org+1', max_in_flight: 2, rate: { count: 5, period_ms: 60_000 } });
  await w.setLimit({ key: 'gone+é', max_in_flight: 1 });
  await w.removeLimit({ key: 'gone+é' });
  tick();

  const done = await w.enqueue({
    title: 'compile é|+',
    kind: 'build',
    payload: { n: 1, deep: ['é', null] },
    priority: 7,
    idempotency_key: 'key|é+1',
    concurrency_key: 'openai|org+1',
    max_attempts: 4,
    not_before: new Date(T0).toISOString(),
  });
  tick();
  const c1 = (await w.claim({ worker: 'w|1', id: done.id }))!;
  await w.annotate({ id: done.id, worker: 'w|1', attempt: c1.attempts, notes: { step: 1, tmp: 'x' } });
  await w.annotate({ id: done.id, notes: { tmp: null, nested: { a: 1 } } });
  const run1 = await w.run({ id: done.id, worker: 'w|1', attempt: c1.attempts });
  await run1.step('fetch', () => ({ got: 'é' }));
  tick();
  await w.resolve({
    id: done.id,
    worker: 'w|1',
    attempt: c1.attempts,
    status: 'done',
    result: { files: ['a|+'] },
  });
  tick();

  const held = await w.enqueue({ title: 'held', blocked_by: [done.id], max_attempts: 3 });
  await w.claim({ worker: 'w|2', id: held.id, lease_ms: 1000 });
  tick(5000);
  await w.reclaimExpired();
  tick();
  await w.claim({ worker: 'w|3', id: held.id, lease_ms: 3_600_000 });
  tick();

  const retried = await w.enqueue({ title: 'retried', max_attempts: 1 });
  const r1 = (await w.claim({ worker: 'w|1', id: retried.id }))!;
  await w.resolve({ id: retried.id, worker: 'w|1', attempt: r1.attempts, status: 'failed', error: 'boom' });
  tick();
  await w.retry({ id: retried.id, reason: 'try again' });
  tick();

  const blocker = await w.enqueue({ title: 'blocker', max_attempts: 1 });
  const dependant = await w.enqueue({
    title: 'dependant',
    blocked_by: [blocker.id],
    on_blocker_failure: 'cascade',
  });
  const bl = (await w.claim({ worker: 'w|1', id: blocker.id }))!;
  await w.resolve({ id: blocker.id, worker: 'w|1', attempt: bl.attempts, status: 'failed', error: 'no' });
  tick();
  await w.retry({ id: blocker.id });
  tick();

  const expired = await w.enqueue({ title: 'expired', max_attempts: 3 });
  const spent = await w.enqueue({ title: 'spent', max_attempts: 1 });
  await w.claim({ worker: 'w|2', id: expired.id, lease_ms: 1000 });
  await w.claim({ worker: 'w|2', id: spent.id, lease_ms: 1000 });
  tick(5000);
  await w.reclaimExpired();
  tick();

  const asking = await w.enqueue({ title: 'asking' });
  await w.park({ id: asking.id, reason: 'which one?' });
  tick();

  const parked = await w.enqueue({ title: 'parked' });
  await w.park({ id: parked.id, reason: 'needs a look' });
  tick();
  await w.unpark({ id: parked.id, reason: 'looked' });
  tick();

  const cancelled = await w.enqueue({ title: 'cancelled' });
  await w.cancel({ id: cancelled.id, reason: 'not needed' });
  tick();

  const backoff = await w.enqueue({ title: 'backoff', max_attempts: 3 });
  const bo = (await w.claim({ worker: 'w|1', id: backoff.id }))!;
  await w.resolve({
    id: backoff.id,
    worker: 'w|1',
    attempt: bo.attempts,
    status: 'failed',
    error: 'later',
    retry_at: new Date(now + 60_000).toISOString(),
  });
  tick();

  const sleeper = await w.enqueue({ title: 'sleeper', max_attempts: 5 });
  const s1 = (await w.claim({ worker: 'w|1', id: sleeper.id }))!;
  const sr1 = await w.run({ id: sleeper.id, worker: 'w|1', attempt: s1.attempts });
  await sr1.sleep('nap', 60_000).catch(() => undefined);
  tick(120_000);
  const s2 = (await w.claim({ worker: 'w|1', id: sleeper.id }))!;
  const sr2 = await w.run({ id: sleeper.id, worker: 'w|1', attempt: s2.attempts });
  await sr2.sleep('nap', 60_000);
  await sr2.waitFor('approved').catch(() => undefined);
  tick();
  await w.signal({ id: sleeper.id, name: 'approved', payload: { ok: 'é' }, actor: 'ana' });
  tick();
  const s3 = (await w.claim({ worker: 'w|1', id: sleeper.id }))!;
  const sr3 = await w.run({ id: sleeper.id, worker: 'w|1', attempt: s3.attempts });
  await sr3.sleep('nap', 60_000);
  await sr3.waitFor('approved');
  tick();

  const reset = await w.enqueue({ title: 'reset', max_attempts: 3 });
  const rs1 = (await w.claim({ worker: 'w|1', id: reset.id }))!;
  const rr = await w.run({ id: reset.id, worker: 'w|1', attempt: rs1.attempts });
  await rr.step('prep', () => 'ready');
  await rr
    .step('flaky', () => {
      throw new Error('flaky é');
    })
    .catch(() => undefined);
  await w.resolve({ id: reset.id, worker: 'w|1', attempt: rs1.attempts, status: 'failed', error: 'flaky' });
  tick();
  await w.resetStep({ id: reset.id, name: 'prep', reason: 'fixed', actor: 'ana', actor_kind: 'human' });
  tick();

  const batch = await w.enqueueMany([
    { title: 'b1', kind: 'batch' },
    { title: 'b2', kind: 'batch', priority: -1 },
    { title: 'b3', kind: 'batch' },
  ]);
  tick();
  const many = await w.claimMany({ worker: 'w|4', kind: 'batch', limit: 3 });
  tick();
  await w.resolveMany(
    many.map((i, k) =>
      k === 0
        ? { id: i.id, worker: 'w|4', attempt: i.attempts, status: 'failed' as const, error: 'b boom' }
        : { id: i.id, worker: 'w|4', attempt: i.attempts, status: 'done' as const, result: { k } },
    ),
  );
  tick();
  await w.replayPending();
  tick();

  return {
    inst,
    ids: {
      done: done.id,
      held: held.id,
      retried: retried.id,
      blocker: blocker.id,
      dependant: dependant.id,
      expired: expired.id,
      spent: spent.id,
      asking: asking.id,
      parked: parked.id,
      cancelled: cancelled.id,
      backoff: backoff.id,
      sleeper: sleeper.id,
      reset: reset.id,
      batch: batch.map((i) => i.id),
    },
  };
}

/** Every record of `inst`, as verify reads them. */
export async function recordsOf(inst: Instance): Promise<DumpRecord[]> {
  const out: DumpRecord[] = [];
  for await (const r of inst.backend.dump!()) out.push(r as DumpRecord);
  return out;
}

export { rechain };

/** The events among `rs`, in log order (the objects themselves: editing them edits the records). */
export const eventsOf = (rs: DumpRecord[]): StoredEvent[] =>
  rs.flatMap((r) => (r.t === 'event' ? [r.row] : []));

/** The one event of `type` about item `id` (its own event, or the batch event naming it), or throws. */
export function eventOf(rs: DumpRecord[], type: string, id: string | null, nth = 0): StoredEvent {
  const found = eventsOf(rs).filter(
    (e) =>
      e.type === type &&
      (e.work_item_id === id ||
        (e.work_item_id === null &&
          id !== null &&
          (JSON.parse(e.data) as { items?: Array<{ id: string }> }).items?.some((x) => x.id === id))),
  );
  const e = found[nth];
  if (!e) throw new Error(`no ${type} event #${nth} of ${id}`);
  return e;
}

/** Rewrites the data of `e` with `edit` (given the parsed data) and re-chains the log. */
export function forgeData(rs: DumpRecord[], e: StoredEvent, edit: (d: JsonObject) => void): void {
  const d = JSON.parse(e.data) as JsonObject;
  edit(d);
  e.data = JSON.stringify(d);
  rechain(rs);
}

/** The row of work item `id` among `rs`. */
export function itemRow(rs: DumpRecord[], id: string) {
  const r = rs.find((x) => x.t === 'work_item' && x.row.id === id);
  if (r?.t !== 'work_item') throw new Error(`no row of ${id}`);
  return r.row;
}

/**
 * Appends an event after the last one, on its stream's next number, with a valid hash: what a forger with write
 * access adds to the end of the log.
 */
export function appendEvent(
  rs: DumpRecord[],
  e: Pick<StoredEvent, 'type' | 'work_item_id'> & Omit<Partial<StoredEvent>, 'data'> & { data: Json },
): StoredEvent {
  const events = eventsOf(rs);
  const last = events[events.length - 1]!;
  const stream = e.stream ?? (e.work_item_id === null ? 'instance' : `work_item:${e.work_item_id}`);
  const seq = events.filter((x) => x.stream === stream).length;
  const row: StoredEvent = {
    position: last.position + 1,
    stream,
    stream_seq: seq + 1,
    actor: 'mallory',
    correlation_id: null,
    causation_id: null,
    created_at: last.created_at + 1000,
    ...e,
    data: JSON.stringify(e.data),
    prev_hash: last.hash,
    hash: '',
  };
  row.hash = computeEventHash(row.prev_hash, row);
  const at = rs.lastIndexOf(rs.find((r) => r.t === 'event' && r.row === last)!);
  rs.splice(at + 1, 0, { t: 'event', row });
  return row;
}
