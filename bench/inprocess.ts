// In-process benchmarks: single-transaction operations vs the raw baseline (1), batched appends (2),
// and dashboard regeneration + replay over a large instance (5).
import { join } from 'node:path';
import { type Durability, freshDir, type Instance, loadLib, nowMs, removeDir, settle } from './lib.js';
import { RawStore } from './sqlite.js';

export type SingleOp = 'enqueue' | 'claim+resolve' | 'append';
export const SINGLE_OPS: SingleOp[] = ['enqueue', 'claim+resolve', 'append'];

/** Operations per measurement: a durable commit costs ~0.3-0.5 ms here, a NORMAL one far less. */
export function opsFor(durability: Durability, op: SingleOp): number {
  if (durability === 'full') return op === 'claim+resolve' ? 500 : 1000;
  return op === 'claim+resolve' ? 2500 : 5000;
}

export const WARMUP = 50;

async function openLibInstance(dir: string, durability: Durability): Promise<Instance> {
  const lib = await loadLib();
  return lib.openInstance({ dir, durability, worker: 'bench' });
}

export interface SingleRunner {
  once(i: number): Promise<void> | void;
  close(): Promise<void> | void;
}

/** One single-transaction operation through agentstate, on a fresh instance. */
async function agentstateRunner(durability: Durability, op: SingleOp, items: number): Promise<SingleRunner> {
  const dir = freshDir(`as-${op.replace('+', '-')}-${durability}`);
  const inst = await openLibInstance(dir, durability);
  if (op === 'claim+resolve') {
    await inst.work.enqueueMany(Array.from({ length: items }, (_, i) => ({ title: `item ${i}` })));
  }
  return {
    async once(i) {
      if (op === 'enqueue') await inst.work.enqueue({ title: `item ${i}` });
      else if (op === 'append') await inst.events.append({ type: 'tool_called', data: { tool: 'grep', i } });
      else {
        const item = await inst.work.claim({ worker: 'w1' });
        if (!item) throw new Error('claim returned null');
        await inst.work.resolve({ id: item.id, status: 'done', worker: 'w1', attempt: item.attempts });
      }
    },
    async close() {
      await inst.close();
      removeDir(dir);
    },
  };
}

/** The same operation issued by hand through better-sqlite3, on a fresh database. */
function rawRunner(durability: Durability, op: SingleOp, items: number): SingleRunner {
  const dir = freshDir(`raw-${op.replace('+', '-')}-${durability}`);
  const raw = new RawStore(join(dir, 'state.sqlite'), durability);
  if (op === 'claim+resolve') raw.enqueueMany(Array.from({ length: items }, (_, i) => `item ${i}`));
  return {
    once(i) {
      if (op === 'enqueue') raw.enqueue(`item ${i}`);
      else if (op === 'append') raw.append('tool_called', { tool: 'grep', i });
      else {
        const row = raw.claim('w1');
        if (!row) throw new Error('claim returned null');
        raw.resolve(row.id, 'w1', row.attempts);
      }
    },
    close() {
      raw.close();
      removeDir(dir);
    },
  };
}

/**
 * ops/s of `n` operations on two runners, run side by side in alternating blocks so both see the
 * same background load on a shared machine.
 */
export async function pairRun(
  a: SingleRunner,
  b: SingleRunner,
  n: number,
  blocks = 10,
): Promise<{ a: number; b: number }> {
  for (let i = 0; i < WARMUP; i++) {
    await a.once(i);
    await b.once(i);
  }
  await settle();
  const per = Math.ceil(n / blocks);
  const ms = [0, 0];
  const ops = [0, 0];
  for (let blk = 0; blk < blocks; blk++) {
    const k = Math.min(per, n - blk * per);
    if (k <= 0) break;
    for (const side of blk % 2 === 0 ? [0, 1] : [1, 0]) {
      const runner = side === 0 ? a : b;
      const t0 = nowMs();
      for (let i = 0; i < k; i++) await runner.once(WARMUP + blk * per + i);
      ms[side]! += nowMs() - t0;
      ops[side]! += k;
    }
  }
  return { a: (ops[0]! / ms[0]!) * 1000, b: (ops[1]! / ms[1]!) * 1000 };
}

/** agentstate vs the raw baseline on one single-transaction operation. */
export async function singlePair(
  durability: Durability,
  op: SingleOp,
  n: number,
): Promise<{ agentstate: number; raw: number }> {
  const items = n + WARMUP;
  const as = await agentstateRunner(durability, op, items);
  const raw = rawRunner(durability, op, items);
  try {
    const r = await pairRun(as, raw, n);
    return { agentstate: r.a, raw: r.b };
  } finally {
    await as.close();
    await raw.close();
  }
}

/**
 * agentstate claim+resolve cycles/s with a deep queue (`deep` items pending) vs a shallow one
 * (100 pending): shows whether claim cost depends on queue depth.
 */
export async function claimDepthPair(
  durability: Durability,
  deep: number,
  n: number,
): Promise<{ deep: number; shallow: number }> {
  const d = await agentstateRunner(durability, 'claim+resolve', deep + n + WARMUP);
  const s = await agentstateRunner(durability, 'claim+resolve', 100 + n + WARMUP);
  try {
    const r = await pairRun(d, s, n);
    return { deep: r.a, shallow: r.b };
  } finally {
    await d.close();
    await s.close();
  }
}

export type BatchOp = 'appendMany' | 'enqueueMany';

function batchEvents(n: number): Array<{ type: string; data: { tool: string; i: number } }> {
  return Array.from({ length: n }, (_, i) => ({ type: 'tool_called', data: { tool: 'grep', i } }));
}

/** rows/s of one batch of `n` rows in one transaction through agentstate. */
export async function agentstateBatch(durability: Durability, op: BatchOp, n: number): Promise<number> {
  const dir = freshDir(`as-${op}`);
  const inst = await openLibInstance(dir, durability);
  try {
    // Warm up statements and the JIT on a small batch first.
    if (op === 'appendMany') await inst.events.appendMany(batchEvents(200));
    else await inst.work.enqueueMany(Array.from({ length: 200 }, (_, i) => ({ title: `warm ${i}` })));
    const input =
      op === 'appendMany'
        ? batchEvents(n)
        : Array.from({ length: n }, (_, i) => ({ title: `item ${i}`, payload: { i } }));
    await settle();
    const t0 = nowMs();
    if (op === 'appendMany') await inst.events.appendMany(input as ReturnType<typeof batchEvents>);
    else await inst.work.enqueueMany(input as Array<{ title: string }>);
    const ms = nowMs() - t0;
    return (n / ms) * 1000;
  } finally {
    await inst.close();
    removeDir(dir);
  }
}

/** rows/s of the same batch by hand. */
export async function rawBatch(durability: Durability, op: BatchOp, n: number): Promise<number> {
  const dir = freshDir(`raw-${op}`);
  const raw = new RawStore(join(dir, 'state.sqlite'), durability);
  try {
    if (op === 'appendMany') raw.appendMany(batchEvents(200));
    else raw.enqueueMany(Array.from({ length: 200 }, (_, i) => `warm ${i}`));
    const events = op === 'appendMany' ? batchEvents(n) : [];
    const titles = op === 'enqueueMany' ? Array.from({ length: n }, (_, i) => `item ${i}`) : [];
    await settle();
    const t0 = nowMs();
    if (op === 'appendMany') raw.appendMany(events);
    else raw.enqueueMany(titles);
    const ms = nowMs() - t0;
    return (n / ms) * 1000;
  } finally {
    raw.close();
    removeDir(dir);
  }
}

export interface BigInstance {
  dir: string;
  items: number;
  events: number;
  unfinished: number;
  statusCounts: Record<string, number>;
}

/**
 * Builds an instance with `items` work items in a realistic mix of states and `events` events:
 * enqueue all, claim most, resolve most claims (some failed), park a few, then pad the log with
 * ordinary events. Built at durability NORMAL to save time; measured at FULL.
 */
export async function buildBigInstance(items: number, events: number): Promise<BigInstance> {
  const lib = await loadLib();
  const dir = freshDir('big');
  const inst = await lib.openInstance({ dir, durability: 'normal', worker: 'builder' });
  try {
    const created = await inst.work.enqueueMany(
      Array.from({ length: items }, (_, i) => ({
        title: `task ${i}`,
        kind: i % 3 === 0 ? 'research' : 'code',
        priority: i % 5,
        payload: { n: i },
      })),
    );
    // Park 2% for a human.
    for (const item of created.slice(0, Math.floor(items * 0.02))) await inst.work.park({ id: item.id });
    // Claim 80% of the rest in batches; resolve 90% of those (10% of them failed); the rest stay in flight.
    const toClaim = Math.floor(items * 0.8);
    const claimed: Array<{ id: string; attempts: number; worker: string }> = [];
    for (let w = 0; claimed.length < toClaim; w++) {
      const worker = `worker-${w % 8}`;
      const batch = await inst.work.claimMany({
        worker,
        limit: Math.min(1000, toClaim - claimed.length),
      });
      if (batch.length === 0) break;
      for (const b of batch) claimed.push({ id: b.id, attempts: b.attempts, worker });
    }
    const toResolve = Math.floor(claimed.length * 0.9);
    for (let i = 0; i < toResolve; i++) {
      const c = claimed[i]!;
      const failed = i % 10 === 9;
      await inst.work.resolve({
        id: c.id,
        worker: c.worker,
        attempt: c.attempts,
        status: failed ? 'failed' : 'done',
        ...(failed ? { error: 'tool exited with status 1' } : { result: { ok: true, n: i } }),
      });
    }
    let head = (await inst.events.head())?.position ?? 0;
    const types = ['tool_called', 'tool_returned', 'message', 'note', 'decision'];
    while (head < events) {
      const n = Math.min(10_000, events - head);
      await inst.events.appendMany(
        Array.from({ length: n }, (_, i) => ({
          type: types[i % types.length]!,
          stream: `session-${Math.floor((head + i) / 1000)}`,
          data: { i: head + i, text: 'lorem ipsum dolor sit amet' },
        })),
      );
      head += n;
    }
    const counts = await inst.work.counts();
    return {
      dir,
      items,
      events: head,
      unfinished: counts.pending + counts.in_flight + counts.waiting_human,
      statusCounts: { ...counts },
    };
  } finally {
    await inst.close();
  }
}

/**
 * Times `op` on a freshly opened instance (open excluded), like a workflow process would run it:
 * cold statement cache, warm OS page cache.
 */
export async function timeOnBigInstance(
  big: BigInstance,
  op: 'dashboard' | 'replay',
): Promise<{ ms: number; detail: number }> {
  const lib = await loadLib();
  const inst = await lib.openInstance({ dir: big.dir, durability: 'full', worker: 'bench' });
  try {
    await settle();
    const t0 = nowMs();
    let detail: number;
    if (op === 'dashboard') detail = (await lib.regenerateDashboard(inst)).position;
    else detail = (await inst.work.replayPending()).length;
    return { ms: nowMs() - t0, detail };
  } finally {
    await inst.close();
  }
}
