// `npm run bench`: agentstate against a raw better-sqlite3 baseline measured in the same run.
// Options: --rounds N (default 5), --only 1,2,3,4,5,6,7,8,docs,pg,mcp,langgraph,http (sections; docs = d1,d2,d3,d4;
// pg = p1,p2,p3,p4,p5 (p6 only by name), run only when PostgreSQL answers at AGENTSTATE_BENCH_PG_URL; mcp = bench/mcp.ts and
// langgraph = bench/langgraph.ts, http = bench/http.ts, hooks = bench/hooks.ts, tracing = bench/tracing.ts, pooled = bench/pooled.ts and results = bench/results.ts (only by name), each run as its own process with
// its own table; runtime = bench/runtime.ts,
// the worker runtime against graphile-worker, pg-boss and a hand-written SQLite loop (r1, r2, r3 for its parts; only by name,
// about 5 minutes), on plain node in its own process with its own table; runs = bench/runs.ts, durable runs against DBOS
// Transact and a raw better-sqlite3 loop (only by name, about 5 minutes, 3 rounds unless --rounds is given), the same way),
// workflow-world = bench/workflow-world/driver.mjs, agentstate's Workflow SDK World against @workflow/world-local and
// @workflow/world-postgres on compiled workflows (only by name, about 7 minutes; installs its own pinned packages
// into bench/workflow-world the first time; plain node, each contender in its own child process),
// --json PATH (write the results of the sections in
// this process).
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { resumeOutput } from './agent-output.js';
import { blockedOnFailureSection, type OpenInstance, type ReadRow, scaleSection } from './blockers.js';
import {
  buildReadFixture,
  commitPair,
  DOC_KIND,
  docRace,
  latencyPair,
  type ReadFixture,
  saverPair,
  walkHistory,
} from './documents.js';
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
import {
  cleanTmp,
  type Durability,
  fmt,
  freshDir,
  loadLib,
  log,
  max,
  median,
  min,
  removeDir,
  textTable,
} from './lib.js';
import type { PgMeta, PgRule } from './pg-child.js';
import { pgReachable, redactedPgUrl, runBundled, runPgChild } from './pg-launch.js';
import { claimRace, workflowProcess } from './processes.js';
import { RESUME_FIXTURE } from './resume-fixture.js';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    only: { type: 'string', default: '1,2,3,4,5,6,7,8,docs,pg,mcp,langgraph,http' },
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
      // Issue 11: the service table must not cost the workflow process more than 1.5x the floor.
      target: '≤ 1.5× floor',
      rounds: wall,
      baselineRounds: floorWall,
      note: `bare \`node -e ''\` ${fmt(median(bare))} ms; ${runs} runs each, interleaved; ${res.itemsEnqueued} items enqueued`,
    },
    (ratio) => ratio <= 1.5,
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

/** 6: what agent-facing output costs in tokens (chars / 4); the output is deterministic, so one run. */
async function section6(): Promise<void> {
  const r = resumeOutput();
  const f = RESUME_FIXTURE;
  ratioRow(
    {
      section: '6',
      name: `resume text, ${f.sessions} sessions / ${f.todos} todos / ${f.decisions} decisions / ${f.lessons} lessons`,
      unit: 'tokens',
      baselineName: null,
      target: '< 1,500 tokens',
      rounds: [r.textTokens],
      baselineRounds: [],
      note: `\`agentstate resume\` from the file, ${r.textChars} chars; \`--json\` (the full lists, for rebuilding manage_todo_list) ${r.jsonChars} chars ≈ ${r.jsonTokens} tokens`,
    },
    (_r, value) => value < 1500,
  );
  log(`[6] resume: text ${r.textTokens} tokens (${r.textChars} chars), --json ${r.jsonTokens} tokens`);
}

/** 7 and 8: reads as failures and history pile up (bench/blockers.ts), on SQLite at NORMAL (reads only). */
async function readSection(
  id: string,
  run: (section: string, open: OpenInstance, rounds: number) => Promise<ReadRow[]>,
): Promise<void> {
  const lib = await loadLib();
  const open: OpenInstance = (label, clock) =>
    lib.openInstance({
      dir: freshDir(label),
      durability: 'normal',
      worker: 'bench',
      ...(clock ? { clock } : {}),
    });
  for (const { rule, ...row } of await run(id, open, ROUNDS)) ratioRow(row, ruleCheck(rule));
}

/** D1: one CAS commit per transaction, agentstate vs raw better-sqlite3, at both durabilities. */
async function sectionD1(): Promise<void> {
  for (const durability of ['full', 'normal'] as Durability[]) {
    const n = durability === 'full' ? 1000 : 5000;
    const as: number[] = [];
    const raw: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const res = await commitPair(durability, n);
      as.push(res.agentstate);
      raw.push(res.raw);
    }
    const row = ratioRow(
      {
        section: 'D1',
        name: `docs.commit merge_patch (1 per tx), ${durability}`,
        unit: 'commits/s',
        baselineName: 'raw better-sqlite3',
        target: 'ratio ≥ 0.8',
        rounds: as,
        baselineRounds: raw,
        note: `${n} commits per round on one ~270 B document, in 10 alternating blocks with the baseline`,
      },
      (ratio) => ratio >= 0.8,
    );
    log(
      `[D1] ${row.name}: agentstate ${fmt(row.agentstate)} ${row.unit} (${spread(as)}), raw ${fmt(row.baseline ?? 0)} (${spread(raw)}), ratio ${fmt(row.ratio ?? 0, 2)} (paired ${fmt(row.pairedRatio ?? 0, 2)})`,
    );
  }
}

/** D2: 8 processes committing, each to its own document and all to one hot document. */
async function sectionD2(): Promise<void> {
  const procs = 8;
  const total = 2400;
  for (const mode of ['own', 'hot'] as const) {
    const multi: number[] = [];
    const single: number[] = [];
    let commits = 0;
    let conflicts = 0;
    let singleConflicts = 0;
    let lockTimeouts = 0;
    let lockMaxWait = 0;
    const audit: string[] = [];
    const rates: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (const p of r % 2 === 0 ? [procs, 1] : [1, procs]) {
        const res = await docRace(p, mode, total, 'full');
        if (!res.auditOk) audit.push(`${p}p round ${r + 1}: ${res.auditNote || 'chain broken'}`);
        lockTimeouts += res.lockTimeouts;
        lockMaxWait = Math.max(lockMaxWait, res.lockTimeoutMaxWaitMs);
        if (p === procs) {
          multi.push(res.commitsPerSec);
          commits += res.commits;
          conflicts += res.conflicts;
          rates.push(res.conflictRate);
        } else {
          single.push(res.commitsPerSec);
          singleConflicts += res.conflicts;
        }
        log(
          `[D2] ${mode} doc${mode === 'own' ? 's' : ''}, ${p} process(es), ${res.commits} commits: ${fmt(res.commitsPerSec)} commits/s in ${fmt(res.ms)} ms; conflicts ${res.conflicts} (${fmt(res.conflictRate * 100, 1)}% of attempts); lock timeouts ${res.lockTimeouts}; audit ${res.auditOk ? 'ok' : `FAILED: ${res.auditNote}`}; per worker ms ${res.perWorkerMs.join('/')}`,
        );
      }
    }
    const row = ratioRow(
      {
        section: 'D2',
        name:
          mode === 'own'
            ? `${procs} processes, own document each, ${fmt(total)} commits, full`
            : `${procs} processes, 1 hot document (read–modify–commit), ${fmt(total)} commits, full`,
        unit: 'commits/s',
        baselineName: '1 process, same commits',
        target: mode === 'own' ? '0 lost commits' : '0 lost updates',
        rounds: multi,
        baselineRounds: single,
        note: `${procs}-process conflict rate ${fmt((conflicts / (commits + conflicts)) * 100, 1)}% of attempts overall (${conflicts} STATE_CONFLICTs for ${commits} commits; per round ${rates.map((x) => `${fmt(x * 100, 1)}%`).join('/')}); 1-process conflicts ${singleConflicts}; LOCK_TIMEOUTs ${lockTimeouts}${lockTimeouts > 0 ? ` (longest wait ${fmt(lockMaxWait)} ms)` : ''}; audit ${audit.length === 0 ? `ok in every round (versions, history rows, state_committed events, hash chain${mode === 'hot' ? ', counter = commits' : ''})` : audit.join('; ')}`,
      },
      () => audit.length === 0,
    );
    log(`[D2] ${row.name}: ${fmt(row.agentstate)} commits/s vs 1 process ${fmt(row.baseline ?? 0)}`);
  }
}

/** D3: read latency (latest, old version, projection) and history paging over 100,000 versions. */
async function sectionD3(): Promise<void> {
  const bigVersions = 100_000;
  const fx: ReadFixture = await buildReadFixture(bigVersions);
  log(
    `[D3] built: ${fx.small} at ${fx.smallVersions} versions, ${fx.big} at ${fmt(fx.bigVersions)} versions in ${fmt(fx.buildMs)} ms`,
  );
  const docs = fx.inst.docs;
  const kind = DOC_KIND;
  const n = 2000;
  type Case = {
    name: string;
    baselineName: string;
    a: () => unknown;
    b: () => unknown;
    target: string;
    check: (ratio: number) => boolean | null;
    note?: string;
  };
  const cases: Case[] = [
    {
      name: 'docs.get latest, 10-version doc',
      baselineName: 'raw SELECT + JSON.parse',
      a: () => docs.get({ kind, id: fx.small }),
      b: () => fx.raw.getLatest(fx.small),
      target: '(info)',
      check: () => null,
    },
    {
      name: 'docs.get at version 5 of 10',
      baselineName: 'raw SELECT history + JSON.parse',
      a: () => docs.get({ kind, id: fx.small, version: 5 }),
      b: () => fx.raw.getVersion(fx.small, 5),
      target: '(info)',
      check: () => null,
    },
    {
      name: 'docs.project 2 paths, 10-version doc',
      baselineName: 'raw SELECT json_extract ×2',
      a: () => docs.project({ kind, id: fx.small, paths: ['status', 'meta.step'] }),
      b: () => fx.raw.project(fx.small),
      target: '(info)',
      check: () => null,
    },
    {
      name: `docs.get latest, ${fmt(bigVersions)}-version doc`,
      baselineName: 'same, 10-version doc',
      a: () => docs.get({ kind, id: fx.big }),
      b: () => docs.get({ kind, id: fx.small }),
      target: 'flat: ≤ 1.2×',
      check: (ratio) => ratio <= 1.2,
    },
    {
      name: `docs.get at version 50,000 of ${fmt(bigVersions)}`,
      baselineName: 'version 5 of 10',
      a: () => docs.get({ kind, id: fx.big, version: 50_000 }),
      b: () => docs.get({ kind, id: fx.small, version: 5 }),
      target: '(info: flat is 1.0)',
      check: () => null,
    },
    {
      name: `docs.history page of 100 at seq 99,900 of ${fmt(bigVersions)}`,
      baselineName: 'page of 100 at seq 0',
      a: () => docs.history({ kind, id: fx.big, after: bigVersions - 100, limit: 100 }),
      b: () => docs.history({ kind, id: fx.big, after: 0, limit: 100 }),
      target: '(info: flat is 1.0)',
      check: () => null,
    },
    {
      name: 'docs.history page of 100 (mid-history)',
      baselineName: 'raw SELECT … seq > ? LIMIT 100',
      a: () => docs.history({ kind, id: fx.big, after: 50_000, limit: 100 }),
      b: () => fx.raw.historyPage(fx.big, 50_000, 100),
      target: '(info)',
      check: () => null,
    },
  ];
  try {
    for (const c of cases) {
      const as: number[] = [];
      const base: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const res = await latencyPair(c.a, c.b, c.name.includes('history') ? n / 4 : n);
        as.push(res.a);
        base.push(res.b);
      }
      const row = ratioRow(
        {
          section: 'D3',
          name: c.name,
          unit: 'µs',
          baselineName: c.baselineName,
          target: c.target,
          rounds: as,
          baselineRounds: base,
        },
        (ratio) => c.check(ratio),
      );
      log(
        `[D3] ${row.name}: ${fmt(row.agentstate)} µs (${spread(as)}) vs ${c.baselineName} ${fmt(row.baseline ?? 0)} µs (${spread(base)}), paired ${fmt(row.pairedRatio ?? 0, 2)}`,
      );
    }
    // The whole history, page after page.
    const as: number[] = [];
    const raw: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (const side of r % 2 === 0 ? (['agentstate', 'raw'] as const) : (['raw', 'agentstate'] as const)) {
        const res = await walkHistory(fx, side, 1000);
        if (res.entries !== bigVersions) throw new Error(`history walk saw ${res.entries} entries`);
        (side === 'agentstate' ? as : raw).push(res.ms);
      }
    }
    const row = ratioRow(
      {
        section: 'D3',
        name: `docs.history: all ${fmt(bigVersions)} entries, pages of 1,000`,
        unit: 'ms',
        baselineName: 'raw SELECT pages',
        target: '(info)',
        rounds: as,
        baselineRounds: raw,
        note: `the ${fmt(bigVersions)}-version document was bulk-inserted into documents/document_history in one raw transaction (bodies of ~270 B; no events)`,
      },
      () => null,
    );
    log(
      `[D3] ${row.name}: ${fmt(row.agentstate)} ms (${spread(as)}) vs raw ${fmt(row.baseline ?? 0)} ms (${spread(raw)})`,
    );
  } finally {
    await fx.close();
  }
}

/** D4: LangGraph's SqliteSaver.put as a reference point, beside docs.commit at the same durability. */
async function sectionD4(): Promise<void> {
  const n = 5000;
  const as: number[] = [];
  const saver: number[] = [];
  let sync = -1;
  for (let r = 0; r < ROUNDS; r++) {
    const res = await saverPair(n);
    as.push(res.agentstate);
    saver.push(res.saver);
    sync = res.synchronous;
  }
  const syncName = ['OFF', 'NORMAL', 'FULL', 'EXTRA'][sync] ?? String(sync);
  const row = ratioRow(
    {
      section: 'D4',
      name: 'docs.commit merge_patch, normal, vs SqliteSaver.put',
      unit: 'commits/s',
      baselineName: 'LangGraph SqliteSaver.put',
      target: '(info: reference)',
      rounds: as,
      baselineRounds: saver,
      note: `${n} per round, alternating blocks; SqliteSaver runs at synchronous=${syncName} (journal_mode=WAL, better-sqlite3's build default; it sets no synchronous pragma), one autocommit INSERT OR REPLACE of a new checkpoint row per put, no CAS, no hash chain`,
    },
    () => null,
  );
  log(
    `[D4] ${row.name}: agentstate ${fmt(row.agentstate)} commits/s (${spread(as)}), SqliteSaver.put ${fmt(row.baseline ?? 0)} puts/s (${spread(saver)}) at synchronous=${syncName}, ratio ${fmt(row.pairedRatio ?? 0, 2)}`,
  );
}

const PG_PARTS = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'];
/** What `--only pg` runs: P6 builds 100,000 items and 1,000,000 events (about 25 minutes here), so it is asked for by name. */
const PG_DEFAULT = PG_PARTS.filter((p) => p !== 'p6');
let pgMeta: PgMeta | null = null;

function ruleCheck(rule: PgRule): (ratio: number, value: number) => boolean | null {
  switch (rule.op) {
    case 'min':
      return (ratio) => ratio >= rule.value;
    case 'max':
      return (ratio) => ratio <= rule.value;
    case 'value-max':
      return (_ratio, value) => value <= rule.value;
    case 'ok':
      return () => rule.ok;
    case 'info':
      return () => null;
  }
}

/** P1–P3: PostgreSQL, in a plain-node child process (pg-launch.ts); skipped when no server answers. */
async function sectionPg(): Promise<void> {
  const why = await pgReachable();
  if (why !== null) {
    log(
      `[pg] skipped: no PostgreSQL at ${redactedPgUrl()} (${why}); start one or set AGENTSTATE_BENCH_PG_URL`,
    );
    return;
  }
  const parts = PG_PARTS.filter((p) => (ONLY.has('pg') && PG_DEFAULT.includes(p)) || ONLY.has(p));
  const { rows, meta } = await runPgChild(ROUNDS, parts);
  pgMeta = meta;
  for (const { rule, ...row } of rows) ratioRow(row, ruleCheck(rule));
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
      ...(pgMeta
        ? [
            `PostgreSQL ${pgMeta.server} at ${pgMeta.url}; ${Object.entries(pgMeta.versions)
              .map(([k, v]) => `${k} ${v}`)
              .join(', ')}; P1–P3 run on plain node in a child process`,
          ]
        : []),
      'ratio = median(agentstate) ÷ median(baseline); paired = median of per-round ratios (pairs run side by side);',
      'targets are judged on the paired ratio, which cancels most of the drift of a shared machine',
      'rates (ops/s, commits/s): higher is better; costs (ms, µs, MiB): lower is better; each row names its target',
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
      ['6', section6],
      ['7', () => readSection('7', blockedOnFailureSection)],
      ['8', () => readSection('8', scaleSection)],
      ['d1', sectionD1],
      ['d2', sectionD2],
      ['d3', sectionD3],
      ['d4', sectionD4],
      ['pg', sectionPg],
      ['mcp', () => separateBench('mcp')],
      ['langgraph', () => separateBench('langgraph')],
      ['http', () => separateBench('http')],
      ['hooks', () => separateBench('hooks')],
      ['tracing', () => separateBench('tracing')],
      ['pooled', () => separateBench('pooled')],
      ['results', () => separateBench('results')],
      ['runtime', runtimeBench],
      ['runs', runsBench],
      ['workflow-world', workflowWorldBench],
    ];
    for (const [id, run] of sections) {
      const wanted =
        ONLY.has(id) ||
        (id.startsWith('d') && ONLY.has('docs')) ||
        (id === 'pg' && PG_PARTS.some((p) => ONLY.has(p))) ||
        (id === 'runtime' && RUNTIME_PARTS.some((p) => ONLY.has(p)));
      if (!wanted) continue;
      const t0 = performance.now();
      await run();
      log(`[${id}] section took ${fmt((performance.now() - t0) / 1000, 1)} s`);
    }
  } finally {
    cleanTmp();
  }
  if (results.length > 0) printTable();
  log(`total ${fmt((performance.now() - started) / 1000, 1)} s`);
  if (args.json) writeFileSync(args.json, `${JSON.stringify(results, null, 2)}\n`);
}

const RUNTIME_PARTS = ['r1', 'r2', 'r3'];

/** The worker runtime (issue 26): bench/runtime.ts, bundled and run on plain node like the PostgreSQL sections. */
async function runtimeBench(): Promise<void> {
  const parts = RUNTIME_PARTS.filter((p) => ONLY.has('runtime') || ONLY.has(p));
  const json = args.json ? ['--json', `${args.json.replace(/\.json$/, '')}.runtime.json`] : [];
  await runBundled('runtime', ['--rounds', String(ROUNDS), '--parts', parts.join(','), ...json]);
}

/** Durable runs (issue 39): bench/runs.ts, bundled and run on plain node like the runtime section. */
async function runsBench(): Promise<void> {
  // Its own default is 3 rounds (about 5 minutes here); a --rounds given to run.ts is passed on.
  const given = process.argv.some((a) => a === '--rounds' || a.startsWith('--rounds='));
  await runBundled('runs', given ? ['--rounds', String(ROUNDS)] : []);
}

/**
 * The Workflow SDK World (issue 42): bench/workflow-world/driver.mjs on plain node, with its own packages (its
 * table on stdout). A --rounds given to run.ts is passed on; --json writes its rounds next to the given path.
 */
async function workflowWorldBench(): Promise<void> {
  const given = process.argv.some((a) => a === '--rounds' || a.startsWith('--rounds='));
  const driver = new URL('./workflow-world/driver.mjs', import.meta.url).pathname;
  const json = args.json ? ['--json', `${args.json.replace(/\.json$/, '')}.workflow-world.json`] : [];
  const r = spawnSync(process.execPath, [driver, ...(given ? ['--rounds', String(ROUNDS)] : []), ...json], {
    stdio: 'inherit',
  });
  if (r.status !== 0) throw new Error(`bench/workflow-world/driver.mjs exited with ${r.status ?? r.signal}`);
}

/** The MCP, LangGraph and HTTP benchmarks load their SDKs or a server, so they run as processes of their own (table on stdout). */
async function separateBench(
  name: 'mcp' | 'langgraph' | 'http' | 'hooks' | 'tracing' | 'pooled' | 'results',
): Promise<void> {
  const script = new URL(`./${name}.ts`, import.meta.url).pathname;
  const r = spawnSync(process.execPath, ['--import', 'tsx', script], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`bench/${name}.ts exited with ${r.status ?? r.signal}`);
}

await main();
