// Section 7: reads as failures pile up. Instances of N pending items of which some wait on failed blockers,
// built through the public API on SQLite or PostgreSQL, and the reads the dashboard, retro, resume and HTTP
// list_items make of them (issue 23).
import { fmt, type Instance, loadLib, log, max, median, min, nowMs, settle } from './lib.js';
import type { PgRow, PgRule } from './pg-child.js';

/** The shape of a fixture: `pending` items in all, `failed` failed items each blocking a chain of two. */
export interface BlockerShape {
  pending: number;
  failed: number;
}

/** What the fixture holds once built. */
export interface BlockerFixture {
  pending: number;
  failed: number;
  /** Pending items blocked on a failure: two per failed item (its dependant and that one's dependant). */
  stuck: number;
  buildMs: number;
}

const CHUNK = 1000;

async function inChunks<T, R>(xs: T[], run: (chunk: T[]) => Promise<R[]>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < xs.length; i += CHUNK) out.push(...(await run(xs.slice(i, i + CHUNK))));
  return out;
}

/**
 * Fills an empty instance: `failed` items that ended failed, each blocking one pending item that blocks
 * another (2 × failed pending items blocked on a failure); the other pending items are half open gates
 * (no blockers) and half items waiting on a gate (blocked, but not on a failure).
 */
export async function buildBlockerFixture(inst: Instance, shape: BlockerShape): Promise<BlockerFixture> {
  const t0 = nowMs();
  const roots = await inChunks(
    Array.from({ length: shape.failed }, (_, i) => i),
    (c) => inst.work.enqueueMany(c.map((i) => ({ title: `root ${i}`, kind: 'root', priority: 9 }))),
  );
  for (let i = 0; i < roots.length; i += CHUNK) {
    const held = await inst.work.claimMany({ worker: 'builder', kind: 'root', limit: CHUNK });
    await inst.work.resolveMany(
      held.map((h) => ({
        id: h.id,
        status: 'failed' as const,
        error: 'tool exited with status 1',
        worker: 'builder',
        attempt: h.attempts,
      })),
    );
  }
  const rest = shape.pending - 2 * shape.failed;
  const gates = await inChunks(
    Array.from({ length: Math.ceil(rest / 2) }, (_, i) => i),
    (c) => inst.work.enqueueMany(c.map((i) => ({ title: `gate ${i}`, kind: 'gate', priority: i % 5 }))),
  );
  await inChunks(
    Array.from({ length: Math.floor(rest / 2) }, (_, i) => i),
    (c) =>
      inst.work.enqueueMany(
        c.map((i) => ({ title: `gated ${i}`, priority: i % 7, blocked_by: [gates[i % gates.length]!.id] })),
      ),
  );
  const first = await inChunks(roots, (c) =>
    inst.work.enqueueMany(c.map((r, i) => ({ title: `after ${i}`, priority: i % 7, blocked_by: [r.id] }))),
  );
  await inChunks(first, (c) =>
    inst.work.enqueueMany(c.map((d, i) => ({ title: `then ${i}`, priority: i % 3, blocked_by: [d.id] }))),
  );
  const counts = await inst.work.counts();
  if (counts.pending !== shape.pending || counts.failed !== shape.failed) {
    throw new Error(
      `fixture built ${counts.pending} pending / ${counts.failed} failed, not ${JSON.stringify(shape)}`,
    );
  }
  return { pending: counts.pending, failed: counts.failed, stuck: 2 * shape.failed, buildMs: nowMs() - t0 };
}

/** The mean ms per call of `n` calls of `call`, after a warm-up call unless `warm` is false. */
export async function timeCall(call: () => Promise<unknown>, n: number, warm = true): Promise<number> {
  if (warm) await call();
  await settle();
  const t0 = nowMs();
  for (let i = 0; i < n; i++) await call();
  return (nowMs() - t0) / n;
}

/** The shape of a long-lived instance: `items` work items and `events` events spread over `days`. */
export interface ScaleShape {
  items: number;
  events: number;
  days: number;
}

/** What the scale fixture holds once built. */
export interface ScaleFixture {
  counts: Record<string, number>;
  events: number;
  /** An early item and a recent one, each with events of its own (for reads of an item's history). */
  oldItem: string;
  newItem: string;
  /** The instance clock's end: reads run at this time (the retro's window is its last 24 h). */
  end: number;
  buildMs: number;
}

/**
 * Fills an empty instance opened on `clock` (which this moves forward) as months of work would: chunks of
 * 1,000 items enqueued (a tenth waiting on another item of the chunk, half of those cascading), claimed and
 * resolved (a fifth one at a time, the rest in batches; 7% failed, among them a fifth of the blockers, so 1% of the items pile up blocked on
 * a failure and 1% are cancelled with their blocker), the last tenth left pending and one chunk in flight,
 * and the log padded with the agents' own events, half of them naming an item. Time moves evenly over
 * `days`.
 */
export async function buildScaleFixture(
  inst: Instance,
  clock: { now: number },
  shape: ScaleShape,
): Promise<ScaleFixture> {
  const t0 = nowMs();
  const chunks = Math.ceil(shape.items / CHUNK);
  const step = Math.floor((shape.days * 86_400_000) / chunks);
  const perChunk = Math.ceil(shape.events / chunks);
  const types = ['tool_called', 'tool_returned', 'message', 'note', 'decision'];
  let appended = 0;
  let oldItem = '';
  let newItem = '';
  // A fifth resolved one at a time (an event each, as single workers write), the rest in one batch.
  const resolve = async (held: Awaited<ReturnType<Instance['work']['claimMany']>>) => {
    const qs = held.map((h) => {
      const n = (h.payload as { n: number }).n;
      const failed = n % 45 === 5 || n % 20 === 7;
      return {
        id: h.id,
        worker: h.lease_owner as string,
        attempt: h.attempts,
        status: failed ? ('failed' as const) : ('done' as const),
        ...(failed ? { error: 'tool exited with status 1' } : { result: { ok: true } }),
      };
    });
    const single = Math.floor(qs.length / 5);
    for (const q of qs.slice(0, single)) await inst.work.resolve(q);
    if (qs.length > single) await inst.work.resolveMany(qs.slice(single));
  };
  for (let k = 0; k < chunks; k++) {
    const size = Math.min(CHUNK, shape.items - k * CHUNK);
    const plain = size - Math.floor(size / 10);
    const base = await inst.work.enqueueMany(
      Array.from({ length: plain }, (_, i) => ({
        title: `task ${k}-${i}`,
        kind: i % 3 === 0 ? 'research' : 'code',
        priority: i % 5,
        payload: { n: i },
      })),
    );
    // Each dependant waits on an item of the chunk; a fifth of those fail (n % 45 === 5).
    await inst.work.enqueueMany(
      Array.from({ length: size - plain }, (_, j) => ({
        title: `then ${k}-${j}`,
        priority: j % 5,
        payload: { n: 1_000_000 + j },
        blocked_by: [base[(9 * j + 5) % plain]!.id],
        on_blocker_failure: j % 2 === 0 ? ('cascade' as const) : ('wait' as const),
      })),
    );
    if (k === 0) oldItem = base[1]!.id;
    newItem = base[1]!.id;
    const ids = base.map((i) => i.id);
    const tail = Math.ceil(chunks / 10);
    if (k < chunks - tail) {
      const held = await inst.work.claimMany({ worker: `worker-${k % 8}`, limit: CHUNK });
      if (k < chunks - tail - 1) {
        await resolve(held);
        // The dependants whose blocker is done are ready now.
        await resolve(await inst.work.claimMany({ worker: `worker-${k % 8}`, limit: CHUNK }));
      }
    }
    const n = Math.min(perChunk, shape.events - appended - k);
    for (let done = 0; done < n; done += 10_000) {
      await inst.events.appendMany(
        Array.from({ length: Math.min(10_000, n - done) }, (_, i) => ({
          type: types[i % types.length]!,
          ...(i % 2 === 0 ? { work_item_id: ids[i % ids.length]! } : { stream: `session-${k}` }),
          data: { i, text: 'lorem ipsum dolor sit amet' },
        })),
      );
    }
    appended = (await inst.events.head())?.position ?? 0;
    clock.now += step;
  }
  return {
    counts: { ...(await inst.work.counts()) },
    events: appended,
    oldItem,
    newItem,
    end: clock.now,
    buildMs: nowMs() - t0,
  };
}

/** A benchmark row as the sections print it (the PostgreSQL child's row type: both sections share it). */
export type ReadRow = PgRow;

/** One read measured on two instances (or two reads), `n` calls per measurement, paired round by round. */
interface ReadCase {
  name: string;
  baselineName: string;
  a: () => Promise<unknown>;
  b: () => Promise<unknown>;
  n: number;
  target: string;
  rule: PgRule;
  note?: string;
  /** Rounds to measure at most, and no warm-up call (a slow read, such as verify). */
  rounds?: number;
}

async function measure(section: string, cases: ReadCase[], rounds: number): Promise<ReadRow[]> {
  const rows: ReadRow[] = [];
  for (const c of cases) {
    const as: number[] = [];
    const bs: number[] = [];
    for (let r = 0; r < Math.min(rounds, c.rounds ?? rounds); r++) {
      // Alternate which side goes first, so drift on a shared machine falls on both.
      if (r % 2 === 0) {
        as.push(await timeCall(c.a, c.n, c.rounds === undefined));
        bs.push(await timeCall(c.b, c.n, c.rounds === undefined));
      } else {
        bs.push(await timeCall(c.b, c.n, c.rounds === undefined));
        as.push(await timeCall(c.a, c.n, c.rounds === undefined));
      }
    }
    const paired = median(as.map((x, i) => x / bs[i]!));
    log(
      `[${section}] ${c.name}: ${fmt(median(as))} ms (${fmt(min(as))}..${fmt(max(as))}) vs ${c.baselineName} ${fmt(median(bs))} ms (${fmt(min(bs))}..${fmt(max(bs))}), paired ${fmt(paired, 2)}`,
    );
    rows.push({
      section,
      name: c.name,
      unit: 'ms',
      baselineName: c.baselineName,
      target: c.target,
      rounds: as,
      baselineRounds: bs,
      rule: c.rule,
      ...(c.note ? { note: c.note } : {}),
    });
  }
  return rows;
}

/** Opens a fresh, empty instance for a fixture (its own folder; on PostgreSQL its own instance key). */
export type OpenInstance = (label: string, clock?: () => number) => Promise<Instance>;

/**
 * Section 7 (SQLite) and P5 (PostgreSQL): the blocked-on-failure read and the reports made of it, at 40,000
 * pending items of which 4,000 wait on 2,000 failed ones, against 10,000 pending and none failed.
 */
export async function blockedOnFailureSection(
  section: string,
  open: OpenInstance,
  rounds: number,
): Promise<ReadRow[]> {
  const lib = await loadLib();
  const big = await open('stuck-40k');
  const base = await open('stuck-10k');
  try {
    const fx = await buildBlockerFixture(big, { pending: 40_000, failed: 2000 });
    const fx0 = await buildBlockerFixture(base, { pending: 10_000, failed: 0 });
    log(`[${section}] built 40k / 2k in ${fmt(fx.buildMs)} ms, 10k / 0 in ${fmt(fx0.buildMs)} ms`);
    const all = (i: Instance) => i.work.list({ blocked_on_failure: true, limit: 100_000 });
    const page = (i: Instance) => i.work.list({ blocked_on_failure: true, limit: 20 });
    const [found, none] = [(await all(big)).length, (await all(base)).length];
    if (found !== fx.stuck || none !== 0)
      throw new Error(`blocked on a failure: ${found} and ${none} listed`);
    /** `call` at 40k / 2k against the same at 10k / 0; `max`: a bound on the paired ratio (else info). */
    const vs0 = (
      name: string,
      call: (i: Instance) => Promise<unknown>,
      n: number,
      max?: { value: number; why: string },
    ): ReadCase => ({
      name,
      baselineName: 'the same at 10k pending / 0 failed',
      a: () => call(big),
      b: () => call(base),
      n,
      target: max ? `≤ ${max.value}× (${max.why})` : 'info',
      rule: max ? { op: 'max', value: max.value } : { op: 'info' },
    });
    const linear = { value: 4, why: '4× the items' };
    const cases: ReadCase[] = [
      {
        name: `list({ blocked_on_failure: true }): all ${fmt(fx.stuck)} at 40k pending / 2k failed`,
        baselineName: `list({ status: 'pending' }) of as many (${fmt(fx.stuck)}), same instance`,
        a: () => all(big),
        b: () => big.work.list({ status: 'pending', limit: fx.stuck }),
        n: 3,
        target: '≤ 4× (the work it returns)',
        rule: { op: 'max', value: 4 },
        note: `what retro asks for (limit 100,000); it starts from the ${fmt(fx.failed)} failed items and returns ${fmt(fx.stuck)} (each failed item blocks a chain of two)`,
      },
      { ...vs0('the same read', all, 3), note: 'the baseline returns none' },
      vs0('list({ blocked_on_failure: true, limit: 20 }) (dashboard, resume), 40k / 2k', page, 5),
      vs0('regenerateDashboard, 40k pending / 2k failed', (i) => lib.regenerateDashboard(i), 2, linear),
      {
        ...vs0('retrospective (24 h), 40k pending / 2k failed', (i) => lib.retrospective(i), 2),
        note: 'it lists every item blocked on a failure (4,000) and reads every failure in its window',
      },
      vs0('resume, 40k pending / 2k failed', (i) => lib.runOperation(i, 'resume', {}), 3, linear),
    ];
    return await measure(section, cases, rounds);
  } finally {
    await big.close();
    await base.close();
  }
}

/**
 * Section 8 (SQLite) and P6 (PostgreSQL): the reads of a long-lived instance at 100,000 items and 1,000,000
 * events over 30 days, against the same shape at a tenth of the size. A read that grows with the product of
 * two sizes shows a ratio near 100; a linear one near 10; a read of a few rows stays near 1.
 */
export async function scaleSection(section: string, open: OpenInstance, rounds: number): Promise<ReadRow[]> {
  const lib = await loadLib();
  const start = Date.parse('2026-01-01T00:00:00.000Z');
  const bigClock = { now: start };
  const baseClock = { now: start };
  const big = await open('scale-100k', () => bigClock.now);
  const base = await open('scale-10k', () => baseClock.now);
  try {
    const fx = await buildScaleFixture(big, bigClock, { items: 100_000, events: 1_000_000, days: 30 });
    const fx0 = await buildScaleFixture(base, baseClock, { items: 10_000, events: 100_000, days: 30 });
    log(
      `[${section}] built ${fmt(fx.events)} events, ${JSON.stringify(fx.counts)} in ${fmt(fx.buildMs)} ms; ${fmt(fx0.events)} events, ${JSON.stringify(fx0.counts)} in ${fmt(fx0.buildMs)} ms`,
    );
    const days30 = (end: number) => ({ since: new Date(end - 30 * 86_400_000).toISOString() });
    const both = (
      name: string,
      call: (i: Instance, f: ScaleFixture) => Promise<unknown>,
      n: number,
      linear: boolean,
      extra: Partial<ReadCase> = {},
    ): ReadCase => ({
      name,
      baselineName: '10k items / 100k events',
      a: () => call(big, fx),
      b: () => call(base, fx0),
      n,
      // Linear in a 10× larger instance is about 10× (more once it outgrows the caches); a product of two
      // sizes would be about 100×.
      target: linear ? '≤ 20× (linear, not a product)' : '≤ 2× (it reads a few rows)',
      rule: { op: 'max', value: linear ? 20 : 2 },
      ...extra,
    });
    const cases: ReadCase[] = [
      both('counts()', (i) => i.work.counts(), 5, true),
      both(
        'list({ blocked_on_failure: true }), all',
        (i) => i.work.list({ blocked_on_failure: true, limit: 100_000 }),
        3,
        true,
      ),
      both('list({ ready: true, limit: 5 })', (i) => i.work.list({ ready: true, limit: 5 }), 5, true),
      both(
        'claim + release of one item',
        async (i) => {
          const got = await i.work.claim({ worker: 'bench' });
          if (got) await i.work.release({ id: got.id, worker: 'bench', attempt: got.attempts });
        },
        20,
        false,
      ),
      both(
        'events.read({ work_item_id }) of an early item',
        (i, f) => i.events.read({ work_item_id: f.oldItem }),
        10,
        false,
      ),
      both(
        "events.read of the last 200 outcomes (the dashboard's)",
        (i) =>
          i.events.read({ type: ['work_item_resolved', 'work_item_reclaimed'], reverse: true, limit: 200 }),
        5,
        false,
      ),
      both('regenerateDashboard', (i) => lib.regenerateDashboard(i), 2, true),
      both('resume', (i) => lib.runOperation(i, 'resume', {}), 3, true),
      both('retrospective, last 24 h', (i) => lib.retrospective(i), 2, true),
      both(
        'retrospective, 30 days (the whole history)',
        (i, f) => lib.retrospective(i, days30(f.end)),
        1,
        true,
      ),
      both('events.verify()', (i) => i.events.verify(), 1, true, { rounds: 2 }),
    ];
    return await measure(section, cases, rounds);
  } finally {
    await big.close();
    await base.close();
  }
}
