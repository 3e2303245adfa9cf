// `npm run bench`: agentstate against a raw better-sqlite3 baseline measured in the same run.
// Options: --rounds N (default 5), --only 1,2,3,4,5 (sections), --json PATH (write the results).
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import {
  agentstateBatch,
  buildBigInstance,
  claimDepthPair,
  opsFor,
  rawBatch,
  SINGLE_OPS,
  singlePair,
  timeOnBigInstance,
} from './inprocess.js';
import { cleanTmp, type Durability, fmt, log, max, median, min, removeDir, textTable } from './lib.js';
import { claimRace, workflowProcess } from './processes.js';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    only: { type: 'string', default: '1,2,3,4,5' },
    json: { type: 'string' },
  },
});
const ROUNDS = Math.max(1, Number.parseInt(args.rounds ?? '5', 10));
const ONLY = new Set((args.only ?? '').split(',').map((s) => s.trim()));

interface ResultRow {
  section: string;
  name: string;
  unit: string;
  agentstate: number;
  baseline: number | null;
  baselineName: string | null;
  /** median(agentstate) / median(baseline), for rates and costs alike. */
  ratio: number | null;
  /** Median of the per-round ratios (pairs measured back to back). */
  pairedRatio: number | null;
  target: string;
  met: boolean | null;
  rounds: number[];
  baselineRounds: number[];
  note?: string;
}

const results: ResultRow[] = [];

function ratioRow(
  row: Omit<ResultRow, 'ratio' | 'pairedRatio' | 'met' | 'agentstate' | 'baseline'>,
  check: (ratio: number, value: number) => boolean | null,
  invert = false,
): ResultRow {
  const a = median(row.rounds);
  const b = row.baselineRounds.length > 0 ? median(row.baselineRounds) : null;
  const ratio = b === null ? null : invert ? b / a : a / b;
  const paired =
    row.baselineRounds.length === row.rounds.length && row.rounds.length > 0
      ? median(
          row.rounds.map((x, i) => {
            const y = row.baselineRounds[i]!;
            return invert ? y / x : x / y;
          }),
        )
      : null;
  const full: ResultRow = {
    ...row,
    agentstate: a,
    baseline: b,
    ratio,
    pairedRatio: paired,
    met: check(paired ?? ratio ?? Number.NaN, a),
  };
  results.push(full);
  return full;
}

function spread(xs: number[]): string {
  return `${fmt(min(xs))}..${fmt(max(xs))}`;
}

async function section1(): Promise<void> {
  for (const durability of ['full', 'normal'] as Durability[]) {
    for (const op of SINGLE_OPS) {
      const n = opsFor(durability, op);
      const as: number[] = [];
      const raw: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const res = await singlePair(durability, op, n);
        as.push(res.agentstate);
        raw.push(res.raw);
      }
      const row = ratioRow(
        {
          section: '1',
          name: `${op} (1 per tx), ${durability}`,
          unit: op === 'claim+resolve' ? 'cycles/s' : 'ops/s',
          baselineName: 'raw better-sqlite3',
          target: 'ratio ≥ 0.7',
          rounds: as,
          baselineRounds: raw,
          note: `${n} ops per round, in 10 alternating blocks with the baseline`,
        },
        (ratio) => ratio >= 0.7,
      );
      log(
        `[1] ${row.name}: agentstate ${fmt(row.agentstate)} ${row.unit} (${spread(as)}), raw ${fmt(row.baseline ?? 0)} (${spread(raw)}), ratio ${fmt(row.ratio ?? 0, 2)} (paired ${fmt(row.pairedRatio ?? 0, 2)})`,
      );
    }
  }
}

/** Claim cost against queue depth (agentstate only: the baseline runs the same SQL). */
async function section1Depth(): Promise<void> {
  const deep = 10_000;
  const n = 300;
  const d: number[] = [];
  const s: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const res = await claimDepthPair('normal', deep, n);
    d.push(res.deep);
    s.push(res.shallow);
  }
  const row = ratioRow(
    {
      section: '1',
      name: `claim+resolve with ${fmt(deep)} pending, normal`,
      unit: 'cycles/s',
      baselineName: 'same, with 100 pending',
      target: '(info: flat is 1.0)',
      rounds: d,
      baselineRounds: s,
      note: `${n} cycles per round at NORMAL (so fsync does not hide CPU cost); the ratio shows how claim cost grows with the number of pending items`,
    },
    () => null,
  );
  log(
    `[1] ${row.name}: ${fmt(row.agentstate)} cycles/s (${spread(d)}) vs ${fmt(row.baseline ?? 0)} with 100 pending (${spread(s)}), ratio ${fmt(row.pairedRatio ?? 0, 2)}`,
  );
}

async function section2(): Promise<void> {
  const n = 10_000;
  for (const op of ['appendMany', 'enqueueMany'] as const) {
    const as: number[] = [];
    const raw: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      if (r % 2 === 0) {
        raw.push(await rawBatch('full', op, n));
        as.push(await agentstateBatch('full', op, n));
      } else {
        as.push(await agentstateBatch('full', op, n));
        raw.push(await rawBatch('full', op, n));
      }
    }
    const isAppend = op === 'appendMany';
    const row = ratioRow(
      {
        section: '2',
        name: `${op} ${fmt(n)} in 1 tx, full`,
        unit: isAppend ? 'events/s' : 'items/s',
        baselineName: 'raw better-sqlite3',
        target: isAppend ? '≥ 100,000 events/s' : '(info)',
        rounds: as,
        baselineRounds: raw,
      },
      (_ratio, value) => (isAppend ? value >= 100_000 : null),
    );
    log(
      `[2] ${row.name}: agentstate ${fmt(row.agentstate)} ${row.unit} (${spread(as)}), raw ${fmt(row.baseline ?? 0)} (${spread(raw)}), ratio ${fmt(row.ratio ?? 0, 2)}`,
    );
  }
}

async function section3(): Promise<void> {
  const items = 4000;
  const procs = 8;
  const rounds = ROUNDS;
  const multi: number[] = [];
  const single: number[] = [];
  let doubles = 0;
  let problems = 0;
  let lockTimeouts = 0;
  let lockMaxWait = 0;
  let perWorker: number[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const p of r % 2 === 0 ? [procs, 1] : [1, procs]) {
      const res = await claimRace(p, items, 'full');
      doubles += res.doubleClaims + res.reportedTwice;
      problems += res.notDoneOnce + res.missing + (res.chainOk ? 0 : 1);
      lockTimeouts += res.lockTimeouts;
      lockMaxWait = Math.max(lockMaxWait, res.lockTimeoutMaxWaitMs);
      if (p === procs) {
        multi.push(res.itemsPerSec);
        perWorker = res.perWorker;
      } else single.push(res.itemsPerSec);
      log(
        `[3] ${p} process(es), ${items} items: ${fmt(res.itemsPerSec)} items/s in ${fmt(res.ms)} ms; double claims ${res.doubleClaims} (events) / ${res.reportedTwice} (reports); not done once ${res.notDoneOnce}; missing ${res.missing}; chain ${res.chainOk ? 'ok' : 'BROKEN'}; lock timeouts ${res.lockTimeouts}${res.lockTimeouts > 0 ? ` (longest wait ${fmt(res.lockTimeoutMaxWaitMs)} ms, ${res.lockTimeoutCodes.join('/')})` : ''}; per worker ${res.perWorker.join('/')}`,
      );
    }
  }
  ratioRow(
    {
      section: '3',
      name: `${procs} processes claim+resolve ${fmt(items)} items, full`,
      unit: 'items/s',
      baselineName: '1 process, same workload',
      target: '0 double claims',
      rounds: multi,
      baselineRounds: single,
      note: `double claims ${doubles}, other audit failures ${problems}, LOCK_TIMEOUTs (5 s busy timeout, retried) ${lockTimeouts}${lockTimeouts > 0 ? ` (longest wait ${fmt(lockMaxWait)} ms)` : ''}, last split ${perWorker.join('/')}`,
    },
    () => doubles === 0 && problems === 0,
  );
}

async function section4(): Promise<void> {
  const runs = 20;
  const res = await workflowProcess(runs);
  const wall = res.cli.map((r) => r.ms);
  const floorWall = res.floor.map((r) => r.ms);
  const bare = res.bareNode.map((r) => r.ms);
  const rss = res.cli.map((r) => r.rssKb / 1024);
  const floorRss = res.floor.map((r) => r.rssKb / 1024);
  const bareRss = res.bareNode.map((r) => r.rssKb / 1024);
  ratioRow(
    {
      section: '4',
      name: 'EnqueueWorkItem process, wall time',
      unit: 'ms',
      baselineName: 'node -e: better-sqlite3 open + 1 insert',
      target: '≤ 2× floor',
      rounds: wall,
      baselineRounds: floorWall,
      note: `bare \`node -e ''\` ${fmt(median(bare))} ms; ${runs} runs each, interleaved; ${res.itemsEnqueued} items enqueued`,
    },
    (ratio) => ratio <= 2,
  );
  ratioRow(
    {
      section: '4',
      name: 'EnqueueWorkItem process, peak RSS',
      unit: 'MiB',
      baselineName: 'node -e: better-sqlite3 open + 1 insert',
      target: '≤ 2× floor',
      rounds: rss,
      baselineRounds: floorRss,
      note: `bare \`node -e ''\` ${fmt(median(bareRss))} MiB`,
    },
    (ratio) => ratio <= 2,
  );
  log(
    `[4] CLI ${fmt(median(wall))} ms (${spread(wall)}), floor ${fmt(median(floorWall))} ms (${spread(floorWall)}), bare node ${fmt(median(bare))} ms; RSS CLI ${fmt(median(rss))} MiB, floor ${fmt(median(floorRss))} MiB, bare ${fmt(median(bareRss))} MiB`,
  );
}

async function section5(): Promise<void> {
  const t0 = performance.now();
  const big = await buildBigInstance(10_000, 100_000);
  log(
    `[5] built instance: ${big.items} items (${Object.entries(big.statusCounts)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}), ${big.events} events in ${fmt(performance.now() - t0)} ms`,
  );
  try {
    for (const op of ['dashboard', 'replay'] as const) {
      const times: number[] = [];
      let detail = 0;
      for (let r = 0; r < ROUNDS; r++) {
        const res = await timeOnBigInstance(big, op);
        times.push(res.ms);
        detail = res.detail;
      }
      ratioRow(
        {
          section: '5',
          name:
            op === 'dashboard'
              ? 'regenerateDashboard, 10k items / 100k events'
              : 'replayPending, 10k items / 100k events',
          unit: 'ms',
          baselineName: null,
          target: '< 1,000 ms',
          rounds: times,
          baselineRounds: [],
          note:
            op === 'dashboard'
              ? `fresh instance per run (cold statements); dashboard at position ${detail}`
              : `fresh instance per run; ${detail} unfinished items re-emitted per run (the log grows by that much each run)`,
        },
        (_r, value) => value < 1000,
      );
      log(`[5] ${op}: median ${fmt(median(times))} ms (${spread(times)})`);
    }
  } finally {
    removeDir(big.dir);
  }
}

function printTable(): void {
  const rows = results.map((r) => [
    r.section,
    r.name,
    `${fmt(r.agentstate)} ${r.unit}`,
    r.baseline === null ? '—' : `${fmt(r.baseline)} ${r.unit}`,
    r.ratio === null ? '—' : `${fmt(r.ratio, 2)}×`,
    r.pairedRatio === null ? '—' : `${fmt(r.pairedRatio, 2)}×`,
    r.target,
    r.met === null ? 'info' : r.met ? 'yes' : 'NO',
  ]);
  const sqliteVersion = (() => {
    const db = new Database(':memory:');
    const v = (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
    db.close();
    return v;
  })();
  process.stdout.write(
    [
      '',
      `agentstate benchmarks — ${new Date().toISOString()}`,
      `node ${process.version}, SQLite ${sqliteVersion}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), ${ROUNDS} rounds, medians`,
      'ratio = median(agentstate) ÷ median(baseline); paired = median of per-round ratios (pairs run side by side);',
      'targets are judged on the paired ratio, which cancels most of the drift of a shared machine',
      'rates (ops/s): higher is better, target ratio ≥ 0.7; costs (ms, MiB): lower is better, target ratio ≤ 2',
      '',
      textTable(['#', 'benchmark', 'agentstate', 'baseline', 'ratio', 'paired', 'target', 'met'], rows),
      '',
      ...results.filter((r) => r.note).map((r) => `[${r.section}] ${r.name}: ${r.note}`),
      '',
    ].join('\n'),
  );
}

async function main(): Promise<void> {
  const started = performance.now();
  cleanTmp();
  try {
    const sections: Array<[string, () => Promise<void>]> = [
      ['1', section1],
      ['1', section1Depth],
      ['2', section2],
      ['3', section3],
      ['4', section4],
      ['5', section5],
    ];
    for (const [id, run] of sections) {
      if (!ONLY.has(id)) continue;
      const t0 = performance.now();
      await run();
      log(`[${id}] section took ${fmt((performance.now() - t0) / 1000, 1)} s`);
    }
  } finally {
    cleanTmp();
  }
  printTable();
  log(`total ${fmt((performance.now() - started) / 1000, 1)} s`);
  if (args.json) writeFileSync(args.json, `${JSON.stringify(results, null, 2)}\n`);
}

await main();
