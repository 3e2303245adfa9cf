// `npm run bench -- --only pooled` (issue 38): what reaching PostgreSQL through a transaction pooler costs.
// Three ways to one server, taking turns within each round (order rotated by round):
//   direct:             a direct connection in session mode (named prepared statements, startup timeouts);
//   direct, tx mode:    the same server with `?pool_mode=transaction` (SET LOCAL in every transaction, unnamed
//                       statements, no LISTEN): the store's own cost of the mode, without a pooler;
//   pgbouncer, tx mode: through a PgBouncer of this run (pool_mode = transaction, default_pool_size 10).
// Rows: a document commit, one at a time (p50 latency of 300); enqueue + claim + resolve of one item, one at a
// time (p50 of 300 cycles); a worker (concurrency 8, the defaults) running 2,000 no-op items (items/s), each
// run audited (every item done once) and verified.
// Options: --rounds N (default 3). PostgreSQL at AGENTSTATE_BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/test);
// needs pgbouncer installed (Debian's package). Schemas of this run, dropped at the end.
import { parseArgs } from 'node:util';
import pg from 'pg';
import { pgbouncerBinary, startPgBouncer } from '../test/helpers/pgbouncer-process.js';
import { fmt, freshDir, loadLib, log, median, nowMs, removeDir, textTable } from './lib.js';

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '3' } } });
const ROUNDS = Math.max(1, Number(args.rounds));
const PG_URL = process.env.AGENTSTATE_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ITEMS = 2_000;
const SINGLE = 300;

type Mode = 'direct' | 'direct, tx mode' | 'pgbouncer, tx mode';

async function measure(url: string): Promise<{ commitMs: number; cycleMs: number; workerRate: number }> {
  const lib = await loadLib();
  const dir = freshDir('pooled');
  const inst = await lib.openInstance({ dir, url });
  try {
    // Warm the pool and the plans before timing.
    await inst.docs.commit({ kind: 'json', id: 'warm', expected_version: 0, body: { v: 0 } });
    const commits: number[] = [];
    for (let v = 0; v < SINGLE; v++) {
      const t0 = nowMs();
      await inst.docs.commit({ kind: 'json', id: 'd', expected_version: v, body: { v } });
      commits.push(nowMs() - t0);
    }
    const cycles: number[] = [];
    for (let k = 0; k < SINGLE; k++) {
      const t0 = nowMs();
      await inst.work.enqueue({ title: 't', kind: 'single' });
      const c = (await inst.work.claim({ worker: 'w', kind: 'single' }))!;
      await inst.work.resolve({ id: c.id, worker: 'w', attempt: c.attempts, status: 'done' });
      cycles.push(nowMs() - t0);
    }
    await inst.work.enqueueMany(Array.from({ length: ITEMS }, (_, k) => ({ title: `i${k}`, kind: 'run' })));
    const ran = new Map<string, number>();
    let done = 0;
    const worker = lib.createWorker({
      instance: inst,
      concurrency: 8,
      handlers: {
        run: (item) => {
          ran.set(item.id, (ran.get(item.id) ?? 0) + 1);
          return null;
        },
      },
    });
    const all = new Promise<void>((resolve) =>
      worker.on('resolved', (item) => {
        if (item.kind === 'run' && ++done === ITEMS) resolve();
      }),
    );
    const t0 = nowMs();
    const running = worker.start();
    await all;
    const seconds = (nowMs() - t0) / 1000;
    await worker.stop();
    await running;
    if (ran.size !== ITEMS || [...ran.values()].some((n) => n !== 1))
      throw new Error('audit: an item ran twice or not at all');
    const v = await inst.events.verify();
    if (!v.ok) throw new Error(`audit: verify failed: ${JSON.stringify(v.problems.slice(0, 3))}`);
    return { commitMs: median(commits), cycleMs: median(cycles), workerRate: ITEMS / seconds };
  } finally {
    await inst.close();
    removeDir(dir);
  }
}

async function main(): Promise<void> {
  const bin = pgbouncerBinary();
  if (bin === null) throw new Error('pgbouncer is not installed (Debian: apt-get install pgbouncer)');
  const bouncer = await startPgBouncer(bin, PG_URL, { poolSize: 10 });
  const schemas: string[] = [];
  const urlOf = (mode: Mode, round: number): string => {
    const schema = `bench_pooled_${process.pid}_${round}_${mode.replace(/[^a-z]/g, '')}`;
    schemas.push(schema);
    if (mode === 'direct') return `${PG_URL}?schema=${schema}`;
    if (mode === 'direct, tx mode') return `${PG_URL}?schema=${schema}&pool_mode=transaction`;
    return `${bouncer.url}?schema=${schema}&pool_mode=transaction`;
  };
  const modes: Mode[] = ['direct', 'direct, tx mode', 'pgbouncer, tx mode'];
  const rounds = new Map<Mode, Array<Awaited<ReturnType<typeof measure>>>>(modes.map((m) => [m, []]));
  try {
    for (let r = 0; r < ROUNDS; r++) {
      const order = modes.map((_, k) => modes[(k + r) % modes.length]!);
      for (const mode of order) {
        const m = await measure(urlOf(mode, r));
        rounds.get(mode)!.push(m);
        log(
          `round ${r + 1} ${mode}: commit ${fmt(m.commitMs)} ms, cycle ${fmt(m.cycleMs)} ms, worker ${fmt(m.workerRate)} items/s`,
        );
      }
    }
  } finally {
    await bouncer.stop();
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    for (const s of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
    await admin.end();
  }
  const base = rounds.get('direct')!;
  /** The median of the per-round ratios mode/direct (pairs measured in the same round). */
  const paired = (mode: Mode, pick: (m: (typeof base)[number]) => number) =>
    median(rounds.get(mode)!.map((m, r) => pick(m) / pick(base[r]!)));
  const rows = modes.map((mode) => {
    const ms = rounds.get(mode)!;
    return [
      mode,
      `${fmt(median(ms.map((m) => m.commitMs)))} ms`,
      `${fmt(paired(mode, (m) => m.commitMs))}×`,
      `${fmt(median(ms.map((m) => m.cycleMs)))} ms`,
      `${fmt(paired(mode, (m) => m.cycleMs))}×`,
      fmt(median(ms.map((m) => m.workerRate))),
      `${fmt(paired(mode, (m) => m.workerRate))}×`,
    ];
  });
  console.log(
    textTable(
      ['mode', 'commit p50', 'paired', 'enqueue+claim+resolve p50', 'paired', 'worker items/s', 'paired'],
      rows,
    ),
  );
  console.log(`\n${ROUNDS} rounds; medians of the rounds; paired = median of the per-round ratios to direct`);
}

await main();
