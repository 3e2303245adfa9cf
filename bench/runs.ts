// `npm run bench -- --only runs` (issue 39): durable runs, what a step costs and how a run replays. Run on plain
// node (bundled, as runtime.ts), its table on stdout:
//   S1 steps per second: 1,000 runs (items) of 10 no-op steps each. PostgreSQL: createWorker (ctx.step) next
//      to DBOS Transact (a workflow of 10 DBOS.runStep, started in-process) at concurrencies 1, 8 and 32, on
//      the same server, the order turning by round. SQLite (durability full): createWorker at 1 and 8, and the
//      library without the worker, next to a raw better-sqlite3 loop writing the same rows (per step one
//      transaction that checks the item's lease and inserts an event row of the same size), taking turns in
//      blocks of 100 runs.
//   S2 one step: the p50 of `run.step(name, () => null)` made one at a time on one held item, next to an
//      `events.append` of the same data; what a first step adds to a handler through the worker (items of 0
//      steps vs 1 step, concurrency 1); and the bytes each step adds to the log (data text, row, store growth).
//   S3 replay at size: the next attempt of a run of N recorded steps replaying them all (`work.run()` and N
//      `run.step` answered from their records), N = 100, 1,000, 10,000: linear, not the square.
// Every agentstate run of S1 is audited: each item done once, 10 step records each in order on attempt 1,
// every fn run once, `events.verify()` clean; DBOS's by its tables (every workflow SUCCESS, 10 outputs each).
// Options: --rounds N (default 3), --parts s1,s2,s3, --backends postgres,sqlite. PostgreSQL at
// AGENTSTATE_BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/test; its rows are skipped when no server
// answers), in schemas of this run (agentstate's, and DBOS's system schema `<that>_dbos`), dropped at the end.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DBOS } from '@dbos-inc/dbos-sdk';
import Database from 'better-sqlite3';
import type { RunRecord } from '../src/core/codecs/run-records.js';
import type { JsonObject } from '../src/core/types.js';
import {
  fmt,
  freshDir,
  type Instance,
  loadLib,
  log,
  max,
  median,
  min,
  nowMs,
  REPO_ROOT,
  removeDir,
  textTable,
} from './lib.js';
import { PG_URL, PgEnv, pgReachable, redactedPgUrl } from './postgres.js';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    parts: { type: 'string', default: 's1,s2,s3' },
    backends: { type: 'string', default: 'postgres,sqlite' },
  },
});
const ROUNDS = Math.max(1, Number.parseInt(args.rounds ?? '3', 10));
const PARTS = new Set((args.parts ?? '').split(',').map((s) => s.trim()));
const BACKENDS = new Set((args.backends ?? '').split(',').map((s) => s.trim()));

/** S1's workload: RUNS items of STEPS no-op steps each. */
const RUNS = 1_000;
const STEPS = 10;
const KIND = 'run';
/** S2: steps made one at a time per round for their size, then pairs of a step and an append for latency. */
const SINGLE = 1_000;
const PAIRS = 500;
/** S2: items through the worker per variant (0 steps, 1 step) per round. */
const HANDLER_ITEMS = 300;
/** S3: the run sizes replayed (10,000 also crosses the 5,000 records of a read's page). */
const REPLAY_SIZES = [100, 1_000, 10_000];
const REPLAY_REPS = 5;

type Opened = Instance & { dir: string };
type Backend = 'PostgreSQL' | 'SQLite';

/** A row of the table: agentstate's rounds and the baseline's, measured side by side. */
interface Row {
  part: string;
  name: string;
  unit: string;
  rounds: number[];
  baselineName: string | null;
  baselineRounds: number[];
  note?: string;
}
const rows: Row[] = [];

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
}

const paired = (r: Row) =>
  r.baselineRounds.length === r.rounds.length && r.rounds.length > 0
    ? median(r.rounds.map((x, i) => x / r.baselineRounds[i]!))
    : null;

// ---------------------------------------------------------------------------------------------
// Instances.

let env: PgEnv | null = null;
/** Schemas of this run besides env's (S2's), dropped at the end. */
const extraSchemas: string[] = [];

async function openSqlite(label: string): Promise<Opened> {
  const lib = await loadLib();
  const dir = freshDir(label);
  const inst = await lib.openInstance({ dir, durability: 'full', worker: 'bench' });
  return Object.assign(inst, { dir });
}

function opener(backend: Backend): (label: string) => Promise<Opened> {
  return backend === 'SQLite' ? openSqlite : (label) => env!.open(label);
}

async function closeInst(inst: Opened): Promise<void> {
  await inst.close();
  removeDir(inst.dir);
}

/** Opens the pool's connections before a clock starts (PostgreSQL; harmless on SQLite). */
async function warm(inst: Instance): Promise<void> {
  await Promise.all(Array.from({ length: 10 }, () => inst.work.counts()));
}

/** Every step record of an instance, by item (paged). */
async function stepRecords(inst: Instance): Promise<Map<string, Array<{ attempt: number; name: string }>>> {
  const out = new Map<string, Array<{ attempt: number; name: string }>>();
  let after = 0;
  for (;;) {
    const page = await inst.events.read({ type: 'work_step_completed', after, limit: 1000 });
    if (page.length === 0) return out;
    for (const e of page) {
      const d = e.data as { attempt: number; name: string };
      const list = out.get(e.work_item_id ?? '') ?? [];
      list.push({ attempt: d.attempt, name: d.name });
      out.set(e.work_item_id ?? '', list);
    }
    after = page.at(-1)!.position;
  }
}

// ---------------------------------------------------------------------------------------------
// S1: steps per second.

/**
 * One contender of S1: `block(from, n)` runs n more runs (payload indexes from..from+n-1) and answers the ms
 * they took; `finish()` audits every run it made and closes. A round runs each contender's blocks in turn.
 */
interface Contender {
  block(from: number, n: number): Promise<number>;
  finish(): Promise<string[]>;
}

/** What a round of S1 measured per contender: steps per second over all its blocks. */
async function rotate(
  make: Record<string, () => Promise<Contender>>,
  runs: number,
  blocks: number,
  round: number,
  problems: string[],
): Promise<Record<string, number>> {
  const names = Object.keys(make);
  const opened: Record<string, Contender> = {};
  for (const name of names) opened[name] = await make[name]!();
  const ms: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
  const per = runs / blocks;
  for (let b = 0; b < blocks; b++) {
    // The order turns with the block and the round, so no contender always goes first.
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + b + round) % names.length]!;
      ms[name]! += await opened[name]!.block(b * per, per);
    }
  }
  const rates: Record<string, number> = {};
  for (const name of names) {
    const p = await opened[name]!.finish();
    if (p.length > 0) problems.push(`${name}: ${p.join('; ')}`);
    rates[name] = ((runs * STEPS) / ms[name]!) * 1000;
  }
  return rates;
}

/** Checks the step records of every item: `runs` items, STEPS records each, in order, on attempt 1. */
async function auditRuns(inst: Instance, runs: number): Promise<string[]> {
  const problems: string[] = [];
  const counts = await inst.work.counts();
  if (counts.done !== runs) problems.push(`${counts.done} of ${runs} done`);
  const recs = await stepRecords(inst);
  const full = [...recs.values()].filter(
    (l) => l.length === STEPS && l.every((r, k) => r.attempt === 1 && r.name === `s${k}`),
  ).length;
  if (recs.size !== runs || full !== runs) {
    problems.push(
      `${full} of ${runs} items with ${STEPS} step records in order on attempt 1 (${recs.size} with any)`,
    );
  }
  const v = await inst.events.verify();
  if (!v.ok) problems.push(`verify: ${v.problem_count} problems, first ${v.problems[0]?.message}`);
  return problems;
}

const enqueueRuns = (inst: Instance, from: number, n: number) =>
  inst.work.enqueueMany(
    Array.from({ length: n }, (_, j) => ({ title: `run ${from + j}`, kind: KIND, payload: { i: from + j } })),
  );

/**
 * createWorker (ctx.step) at `concurrency` on a fresh instance: a block is the enqueue of its items (one
 * enqueueMany) and a worker's `drain()` (every resolve committed), as DBOS's block runs from the first
 * workflow's start to the last one's end.
 */
async function workerContender(inst: Opened, runs: number, concurrency: number): Promise<Contender> {
  const lib = await loadLib();
  const ran = new Uint16Array(runs);
  let fnCalls = 0;
  const errors: string[] = [];
  await warm(inst);
  return {
    async block(from, n) {
      const w = lib.createWorker({
        instance: inst,
        concurrency,
        handlers: {
          [KIND]: async (item, ctx) => {
            ran[(item.payload as { i: number }).i]! += 1;
            for (let k = 0; k < STEPS; k++) {
              await ctx.step(`s${k}`, () => {
                fnCalls += 1;
                return k;
              });
            }
            return null;
          },
        },
      });
      w.on('storeError', (e) => errors.push(`storeError ${String(e)}`));
      w.on('lost', (id, why) => errors.push(`lost ${id}: ${why}`));
      w.on('resolved', (item) => {
        if (item.status !== 'done') errors.push(`${item.id} ${item.status}: ${item.error}`);
      });
      // The runtime's poll timer is unref'd: keep the process alive on SQLite while measured (see runtime.ts).
      const keepAlive = setInterval(() => {}, 1000);
      const t0 = nowMs();
      await enqueueRuns(inst, from, n);
      await w.drain();
      const ms = nowMs() - t0;
      clearInterval(keepAlive);
      return ms;
    },
    async finish() {
      try {
        const problems = errors.slice(0, 3);
        const notOnce = ran.filter((x) => x !== 1).length;
        if (notOnce > 0) problems.push(`${notOnce} items not run exactly once`);
        if (fnCalls !== runs * STEPS) problems.push(`${fnCalls} step fns ran, not ${runs * STEPS}`);
        return [...problems, ...(await auditRuns(inst, runs))];
      } finally {
        await closeInst(inst);
      }
    },
  };
}

/**
 * The raw loop's shape on agentstate's library, without the worker: a block's items enqueued in one call,
 * claimed 100 at a time (claimMany), each item's run started (`work.run`, its one read) and its STEPS
 * `run.step` made one after another, the batch resolved in one call (resolveMany). A diagnostic: this next
 * to createWorker at concurrency 1 is the runtime's cost; this next to the raw loop is the store's.
 */
async function libraryContender(inst: Opened, runs: number): Promise<Contender> {
  let fnCalls = 0;
  await warm(inst);
  return {
    async block(from, n) {
      const t0 = nowMs();
      await enqueueRuns(inst, from, n);
      for (;;) {
        const batch = await inst.work.claimMany({ worker: 'bench', kind: KIND, limit: 100 });
        if (batch.length === 0) break;
        for (const item of batch) {
          const run = await inst.work.run({ id: item.id, worker: 'bench', attempt: item.attempts });
          for (let k = 0; k < STEPS; k++) {
            await run.step(`s${k}`, () => {
              fnCalls += 1;
              return k;
            });
          }
        }
        await inst.work.resolveMany(
          batch.map((i) => ({ id: i.id, worker: 'bench', attempt: i.attempts, status: 'done' as const })),
        );
      }
      return nowMs() - t0;
    },
    async finish() {
      try {
        const problems = fnCalls === runs * STEPS ? [] : [`${fnCalls} step fns ran, not ${runs * STEPS}`];
        return [...problems, ...(await auditRuns(inst, runs))];
      } finally {
        await closeInst(inst);
      }
    },
  };
}

// DBOS Transact: one launch per process (its registry is global), its system tables in a schema of this run.
let dbosSchema: string | null = null;
let dbosFnCalls = 0;
let dbosWorkflow: ((i: number) => Promise<number>) | null = null;

async function dbosLaunch(): Promise<void> {
  dbosSchema = `${env!.schema}_dbos`;
  DBOS.setConfig({
    name: 'agentstate-bench-runs',
    systemDatabaseUrl: PG_URL,
    systemDatabaseSchemaName: dbosSchema,
    systemDatabasePoolSize: 10,
    logLevel: 'error',
  });
  const steps = Array.from({ length: STEPS }, (_, k) => async () => {
    dbosFnCalls += 1;
    return k;
  });
  dbosWorkflow = DBOS.registerWorkflow(
    async (i: number) => {
      for (let k = 0; k < STEPS; k++) await DBOS.runStep(steps[k]!, { name: `s${k}` });
      return i;
    },
    { name: 'tenSteps' },
  );
  await DBOS.launch();
}

/**
 * DBOS: workflows of STEPS `DBOS.runStep` each, started in-process (calling the registered workflow: it
 * records its status, runs, checkpoints each step, records its output), `concurrency` at a time. Its tables
 * are emptied first, so every round starts as agentstate's fresh instance does.
 */
async function dbosContender(runs: number, concurrency: number): Promise<Contender> {
  const q = `"${dbosSchema}"`;
  await env!.admin.query(`TRUNCATE ${q}.operation_outputs, ${q}.workflow_status CASCADE`);
  dbosFnCalls = 0;
  const wf = dbosWorkflow!;
  return {
    async block(from, n) {
      let next = from;
      const t0 = nowMs();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < from + n) await wf(next++);
        }),
      );
      return nowMs() - t0;
    },
    async finish() {
      const problems: string[] = [];
      if (dbosFnCalls !== runs * STEPS) problems.push(`${dbosFnCalls} step fns ran, not ${runs * STEPS}`);
      const [s] = await env!.query<{ ok: string; all: string }>(
        `SELECT count(*) FILTER (WHERE status = 'SUCCESS') AS ok, count(*) AS all FROM ${q}.workflow_status`,
      );
      if (Number(s!.ok) !== runs || Number(s!.all) !== runs)
        problems.push(`${s!.ok} of ${s!.all} workflows SUCCESS`);
      const [o] = await env!.query<{ full: string }>(
        `SELECT count(*) AS full FROM (SELECT workflow_uuid FROM ${q}.operation_outputs GROUP BY 1 HAVING count(*) = ${STEPS}) x`,
      );
      if (Number(o!.full) !== runs)
        problems.push(`${o!.full} of ${runs} workflows with ${STEPS} step outputs`);
      return problems;
    },
  };
}

// The raw better-sqlite3 loop: the same rows as agentstate's (its events table and indexes), by hand.
const RAW_SCHEMA = `
  CREATE TABLE items (
    id TEXT PRIMARY KEY, kind TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'pending', payload TEXT NOT NULL,
    result TEXT, lease_owner TEXT, lease_expires_at INTEGER, attempts INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
  CREATE INDEX items_ready ON items (kind, created_at, id) WHERE status = 'pending';
  CREATE TABLE events (
    position INTEGER PRIMARY KEY, stream TEXT NOT NULL, stream_seq INTEGER NOT NULL, type TEXT NOT NULL,
    data TEXT NOT NULL, actor TEXT, correlation_id TEXT, causation_id TEXT, work_item_id TEXT,
    created_at INTEGER NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL, UNIQUE (stream, stream_seq));
  CREATE INDEX events_type ON events (type, position);
  CREATE INDEX events_time ON events (created_at);
  CREATE INDEX events_work_item ON events (work_item_id, position) WHERE work_item_id IS NOT NULL;`;

/**
 * What a user would write on better-sqlite3 (WAL, synchronous=FULL, as agentstate's `full`): a block's
 * items inserted in one transaction; claimed 100 at a time under a lease in one transaction; per item, one
 * read of its earlier step rows (what replay needs), then per step one transaction that checks the item is
 * still in flight under this owner, attempt and an unexpired lease and inserts an event row of the same
 * columns, indexes and size as agentstate's (the data text built alike, hashes chained in memory); the batch
 * resolved in one transaction. Positions and stream sequences kept in memory, no input checks.
 */
function rawContender(runs: number): Contender {
  const dir = freshDir('raw-steps');
  const db = new Database(join(dir, 'raw.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(RAW_SCHEMA);
  const worker = 'bench';
  const insertItem = db.prepare(
    'INSERT INTO items (id, kind, payload, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
  );
  const claimSql = db.prepare(`UPDATE items SET status = 'in_flight', lease_owner = ?, lease_expires_at = ?,
      attempts = attempts + 1, updated_at = ?
    WHERE id IN (SELECT id FROM items WHERE status = 'pending' AND kind = ? ORDER BY created_at, id LIMIT 100)
    RETURNING id, attempts, payload`);
  const held = db.prepare(
    `SELECT 1 FROM items WHERE id = ? AND status = 'in_flight' AND lease_owner = ? AND attempts = ? AND lease_expires_at > ?`,
  );
  const earlier = db.prepare(
    `SELECT data FROM events WHERE work_item_id = ? AND type = 'work_step_completed' ORDER BY position`,
  );
  const insertEvent = db.prepare(`INSERT INTO events
    (position, stream, stream_seq, type, data, actor, correlation_id, causation_id, work_item_id, created_at, prev_hash, hash)
    VALUES (?, ?, ?, 'work_step_completed', ?, ?, NULL, NULL, ?, ?, ?, ?)`);
  const resolveSql = db.prepare(`UPDATE items SET status = 'done', result = 'null', lease_owner = NULL,
      lease_expires_at = NULL, updated_at = ? WHERE id = ? AND status = 'in_flight' AND lease_owner = ? AND attempts = ?`);
  let position = 0;
  let prev = '0'.repeat(64);
  let refused = 0;
  let fnCalls = 0;
  const step = db.transaction(
    (id: string, attempt: number, seq: number, name: string, result: unknown, started: number) => {
      const now = Date.now();
      if (held.get(id, worker, attempt, now) === undefined) throw new Error(`lease lost on ${id}`);
      const data = JSON.stringify({
        seq,
        name,
        occurrence: 1,
        attempt,
        worker,
        result,
        started_at: new Date(started).toISOString(),
        duration_ms: now - started,
        tries: 1,
        actor_kind: 'system',
      });
      position += 1;
      const hash = createHash('sha256').update(prev).update(data).digest('hex');
      insertEvent.run(position, `work_item:${id}`, seq, data, worker, id, now, prev, hash);
      prev = hash;
    },
  );
  const enqueue = db.transaction((from: number, n: number) => {
    const now = Date.now();
    for (let i = from; i < from + n; i++) {
      insertItem.run(`wi_${String(i).padStart(8, '0')}`, KIND, JSON.stringify({ i }), now, now);
    }
  });
  const claim = db.transaction(() => {
    const now = Date.now();
    return claimSql.all(worker, now + 60_000, now, KIND) as Array<{ id: string; attempts: number }>;
  });
  const resolve = db.transaction((batch: Array<{ id: string; attempts: number }>) => {
    const now = Date.now();
    for (const job of batch)
      if (resolveSql.run(now, job.id, worker, job.attempts).changes !== 1) refused += 1;
  });
  return {
    async block(from, n) {
      const t0 = nowMs();
      enqueue.immediate(from, n);
      for (;;) {
        const batch = claim.immediate();
        if (batch.length === 0) break;
        for (const job of batch) {
          earlier.all(job.id);
          for (let k = 0; k < STEPS; k++) {
            const started = Date.now();
            fnCalls += 1;
            step.immediate(job.id, job.attempts, k + 1, `s${k}`, k, started);
          }
        }
        resolve.immediate(batch);
      }
      return nowMs() - t0;
    },
    async finish() {
      try {
        const problems: string[] = [];
        const done = (
          db.prepare(`SELECT count(*) AS n FROM items WHERE status = 'done'`).get() as { n: number }
        ).n;
        const evs = (db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
        if (done !== runs) problems.push(`${done} of ${runs} done`);
        if (evs !== runs * STEPS || fnCalls !== runs * STEPS)
          problems.push(`${evs} step rows, ${fnCalls} fns`);
        if (refused > 0) problems.push(`${refused} resolves refused`);
        return problems;
      } finally {
        db.close();
        removeDir(dir);
      }
    },
  };
}

/**
 * PostgreSQL's concurrencies: 1 (each step's commit latency, nothing to share a transaction with), 8 (the
 * worker's default-sized pool of work, as pooled.ts and runtime.ts run it) and 32 (more runs in flight than
 * the pool's 10 connections: what coalescing is for).
 */
const PG_CONCURRENCY = [1, 8, 32];
/**
 * The PostgreSQL contenders take turns in blocks (runs of 100 at concurrency 1, 200 at 8, 500 at 32: each
 * block long enough to keep every slot busy but for its tail), the order turning by block and round.
 */
const PG_BLOCKS: Record<number, number> = { 1: 10, 8: 5, 32: 2 };
const SQLITE_CONCURRENCY = [1, 8];
/** SQLite's contenders take turns in blocks of RUNS / SQLITE_BLOCKS runs: fsync times drift within seconds here. */
const SQLITE_BLOCKS = 10;

async function s1(): Promise<void> {
  const problems: string[] = [];
  if (env) {
    await dbosLaunch();
    for (const c of PG_CONCURRENCY) {
      const as: number[] = [];
      const dbos: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const rates = await rotate(
          {
            agentstate: async () => workerContender(await env!.open(`s1-${c}`), RUNS, c),
            dbos: () => dbosContender(RUNS, c),
          },
          RUNS,
          PG_BLOCKS[c]!,
          r,
          problems,
        );
        as.push(rates.agentstate!);
        dbos.push(rates.dbos!);
        log(
          `[S1] PostgreSQL c=${c} round ${r + 1}: agentstate ${fmt(rates.agentstate!)} steps/s, DBOS ${fmt(rates.dbos!)} steps/s`,
        );
      }
      rows.push({
        part: 'S1',
        name: `PostgreSQL, ${fmt(RUNS)} runs × ${STEPS} steps, concurrency ${c}`,
        unit: 'steps/s',
        rounds: as,
        baselineName: 'DBOS Transact, same concurrency',
        baselineRounds: dbos,
        note: `${PG_BLOCKS[c]} blocks of ${RUNS / PG_BLOCKS[c]!} runs each per round, taking turns; agentstate: enqueueMany + createWorker drain() per block; DBOS: its workflow called in-process ${c} at a time (no queue, so no polling)`,
      });
    }
  }
  if (BACKENDS.has('sqlite')) {
    const got: Record<string, number[]> = {};
    for (let r = 0; r < ROUNDS; r++) {
      const make: Record<string, () => Promise<Contender>> = { raw: async () => rawContender(RUNS) };
      make.library = async () => libraryContender(await openSqlite('s1-library'), RUNS);
      for (const c of SQLITE_CONCURRENCY) {
        make[`c${c}`] = async () => workerContender(await openSqlite(`s1-c${c}`), RUNS, c);
      }
      const rates = await rotate(make, RUNS, SQLITE_BLOCKS, r, problems);
      for (const [k, v] of Object.entries(rates)) got[k] = [...(got[k] ?? []), v];
      log(
        `[S1] SQLite round ${r + 1}: ${Object.entries(rates)
          .map(([k, v]) => `${k} ${fmt(v)}`)
          .join(', ')} steps/s`,
      );
    }
    for (const c of SQLITE_CONCURRENCY) {
      rows.push({
        part: 'S1',
        name: `SQLite full, ${fmt(RUNS)} runs × ${STEPS} steps, concurrency ${c}`,
        unit: 'steps/s',
        rounds: got[`c${c}`]!,
        baselineName: 'raw better-sqlite3 loop, 1 tx per step',
        baselineRounds: got.raw!,
      });
    }
    rows.push({
      part: 'S1',
      name: `SQLite full, ${fmt(RUNS)} runs × ${STEPS} steps, the library in the raw loop's shape`,
      unit: 'steps/s',
      rounds: got.library!,
      baselineName: 'raw better-sqlite3 loop, 1 tx per step',
      baselineRounds: got.raw!,
      note: `no worker: claimMany 100, work.run and ${STEPS} run.step per item one after another, resolveMany (diagnostic: the store without the runtime); the SQLite contenders took turns in ${SQLITE_BLOCKS} blocks of ${RUNS / SQLITE_BLOCKS} runs per round`,
    });
  }
  const audit =
    problems.length === 0
      ? 'every run audited: clean'
      : `AUDIT FAILURES: ${problems.slice(0, 5).join(' | ')}`;
  rows.push({
    part: 'S1',
    name: 'audit',
    unit: '',
    rounds: [],
    baselineName: null,
    baselineRounds: [],
    note: audit,
  });
  log(`[S1] ${audit}`);
}

// ---------------------------------------------------------------------------------------------
// S2: one step.

/** Holds a fresh item on `inst` and starts its run. */
async function heldRun(inst: Instance, title = 'held') {
  const item = await inst.work.enqueue({ title, kind: 'held' });
  const c = (await inst.work.claim({ worker: 'bench', kind: 'held', lease_ms: 3_600_000 }))!;
  if (c.id !== item.id) throw new Error('claimed another item');
  const holder = { id: c.id, worker: 'bench', attempt: c.attempts };
  return { holder, run: await inst.work.run(holder) };
}

interface SizeOf {
  dataBytes: number;
  /** PostgreSQL: pg_column_size of a step's row; SQLite: null. */
  rowBytes: number | null;
  /** Bytes the store grew by per 1,000 steps (PostgreSQL: events heap + indexes; SQLite: pages × page size). */
  growthPer1000: number;
  detail: string;
}

async function storeBytes(
  backend: Backend,
  inst: Opened,
  schema: string,
): Promise<{ total: number; detail: string }> {
  if (backend === 'SQLite') {
    const db = new Database(join(inst.dir, 'state.sqlite'), { readonly: true, fileMustExist: true });
    try {
      const pages = db.pragma('page_count', { simple: true }) as number;
      const size = db.pragma('page_size', { simple: true }) as number;
      return { total: pages * size, detail: `${pages} pages of ${size} B` };
    } finally {
      db.close();
    }
  }
  const [r] = await env!.query<{ heap: string; idx: string }>(
    `SELECT pg_relation_size('"${schema}".events') AS heap, pg_indexes_size('"${schema}".events') AS idx`,
  );
  return { total: Number(r!.heap) + Number(r!.idx), detail: `heap ${r!.heap} B, indexes ${r!.idx} B` };
}

async function stepSizes(
  backend: Backend,
  inst: Opened,
  schema: string,
  id: string,
  before: number,
): Promise<SizeOf> {
  const after = await storeBytes(backend, inst, schema);
  let dataBytes: number;
  let rowBytes: number | null = null;
  if (backend === 'SQLite') {
    const db = new Database(join(inst.dir, 'state.sqlite'), { readonly: true, fileMustExist: true });
    try {
      dataBytes = (
        db
          .prepare(
            `SELECT avg(length(CAST(data AS BLOB))) AS b FROM events WHERE type = 'work_step_completed' AND work_item_id = ? AND json_extract(data, '$.name') = 's'`,
          )
          .get(id) as { b: number }
      ).b;
    } finally {
      db.close();
    }
  } else {
    const [r] = await env!.query<{ b: string; row: string }>(
      `SELECT avg(octet_length(data::text)) AS b, avg(pg_column_size(e.*)) AS row FROM "${schema}".events e
        WHERE type = 'work_step_completed' AND work_item_id = $1 AND data->>'name' = 's'`,
      [id],
    );
    dataBytes = Number(r!.b);
    rowBytes = Number(r!.row);
  }
  return {
    dataBytes,
    rowBytes,
    growthPer1000: ((after.total - before) / SINGLE) * 1000,
    detail: after.detail,
  };
}

async function s2(backend: Backend): Promise<void> {
  const open = opener(backend);
  /**
   * On PostgreSQL each round's sizes are taken in a schema of its own, holding this one instance, as a user's
   * store would: in the run's shared schema other instances' rows sit in the same indexes, and inserting
   * among them splits pages half full, which is the bench's doing, not the step's.
   */
  const openSized = async (r: number): Promise<{ inst: Opened; schema: string }> => {
    if (backend === 'SQLite') return { inst: await openSqlite('s2'), schema: '' };
    const schema = `${env!.schema}_s2_${r}`;
    extraSchemas.push(schema);
    const lib = await loadLib();
    const dir = freshDir('s2');
    const u = new URL(PG_URL);
    u.searchParams.set('schema', schema);
    const inst = await lib.openInstance({ dir, url: u.toString(), worker: 'bench' });
    return { inst: Object.assign(inst, { dir }), schema };
  };
  const stepP50: number[] = [];
  const appendP50: number[] = [];
  const readP50: number[] = [];
  const stepP99: number[] = [];
  const sizes: SizeOf[] = [];
  const zero: number[] = [];
  const one: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    // run.step one at a time on one held item, each next to an events.append of an event of the same size.
    const { inst, schema } = await openSized(r);
    try {
      await warm(inst);
      const { holder, run } = await heldRun(inst);
      await run.step('warm', () => null);
      await inst.events.append({ type: 'bench_warm', stream: 'bench', data: { x: 1 } });
      // The bytes: SINGLE steps alone, the store measured before and after.
      const before = (await storeBytes(backend, inst, schema)).total;
      for (let k = 0; k < SINGLE; k++) await run.step('s', () => null);
      const sizeOf = await stepSizes(backend, inst, schema, holder.id, before);
      const [e] = await inst.events.read({
        type: 'work_step_completed',
        work_item_id: holder.id,
        limit: 1,
        reverse: true,
      });
      const sample = e!.data as JsonObject;
      // The latency: PAIRS steps, each next to an append of the same data (taking turns at going first).
      const st: number[] = [];
      const ap: number[] = [];
      const step = async () => {
        const t0 = nowMs();
        await run.step('s', () => null);
        st.push(nowMs() - t0);
      };
      const append = async () => {
        const t0 = nowMs();
        await inst.events.append({ type: 'bench_step', stream: `bench:${holder.id}`, data: sample });
        ap.push(nowMs() - t0);
      };
      for (let k = 0; k < PAIRS; k++) {
        if (k % 2 === 0) {
          await step();
          await append();
        } else {
          await append();
          await step();
        }
      }
      stepP50.push(pct(st, 50));
      stepP99.push(pct(st, 99));
      appendP50.push(pct(ap, 50));
      // The read a run starts with (work.run: the item's records, here none), on another held item.
      const empty = (await heldRun(inst, 'empty')).holder;
      const rd: number[] = [];
      for (let k = 0; k < PAIRS; k++) {
        const t0 = nowMs();
        await inst.work.run(empty);
        rd.push(nowMs() - t0);
      }
      readP50.push(pct(rd, 50));
      sizes.push(sizeOf);
    } finally {
      await closeInst(inst);
    }
    // What a first step adds to a handler: items of 0 steps and of 1 step through the worker, concurrency 1.
    for (const steps of r % 2 === 0 ? [0, 1] : [1, 0]) {
      const w = await open(`s2-h${steps}`);
      try {
        const ms = await handlerItems(w, steps);
        (steps === 0 ? zero : one).push(ms);
      } finally {
        await closeInst(w);
      }
    }
    log(
      `[S2] ${backend} round ${r + 1}: step p50 ${fmt(stepP50.at(-1)!, 3)} ms (p99 ${fmt(stepP99.at(-1)!, 3)}), append p50 ${fmt(appendP50.at(-1)!, 3)} ms; handler 0 steps ${fmt(zero.at(-1)!, 3)} ms/item, 1 step ${fmt(one.at(-1)!, 3)} ms/item; data ${fmt(sizes.at(-1)!.dataBytes, 0)} B${sizes.at(-1)!.rowBytes === null ? '' : `, row ${fmt(sizes.at(-1)!.rowBytes!, 0)} B`}, growth ${fmt(sizes.at(-1)!.growthPer1000 / 1024, 0)} KiB per 1,000 steps`,
    );
  }
  const s = sizes.at(-1)!;
  rows.push({
    part: 'S2',
    name: `${backend}: run.step(name, () => null) one at a time, p50`,
    unit: 'ms',
    rounds: stepP50,
    baselineName: 'events.append of an event of the same size, p50',
    baselineRounds: appendP50,
    note: `${fmt(PAIRS)} steps one at a time on one held item per round, each next to an events.append of the same data on a stream of its own (taking turns at going first); step p99 ${fmt(median(stepP99), 2)} ms`,
  });
  rows.push({
    part: 'S2',
    name: `${backend}: a handler with 1 step, through the worker`,
    unit: 'ms/item',
    rounds: one,
    baselineName: 'the same handler with 0 steps',
    baselineRounds: zero,
    note: `${HANDLER_ITEMS} items per variant and round, concurrency 1, from enqueueMany to drained; the difference (${fmt(median(one) - median(zero), 2)} ms) is what a first step costs an item in the worker: the run's read of its records (work.run() on an empty run alone: p50 ${fmt(median(readP50), 2)} ms), and the step's commit, which in the worker runs beside the batched resolves and claims of the items around it`,
  });
  rows.push({
    part: 'S2',
    name: `${backend}: bytes per step`,
    unit: 'B',
    rounds: sizes.map((x) => x.dataBytes),
    baselineName: null,
    baselineRounds: [],
    note: `data text of a step event returning null (${fmt(median(sizes.map((x) => x.dataBytes)), 0)} B on average over places 2 to 1,001); ${s.rowBytes === null ? '' : `pg_column_size of its row ${fmt(median(sizes.map((x) => x.rowBytes!)), 0)} B; `}the store grows ${fmt(median(sizes.map((x) => x.growthPer1000)) / 1024, 0)} KiB per 1,000 steps (${backend === 'SQLite' ? 'page_count × page_size' : 'events heap + its indexes, one instance in a schema of its own'}; ${s.detail} after)`,
  });
}

/** Ms per item of HANDLER_ITEMS items whose handler makes `steps` steps, through the worker at concurrency 1. */
async function handlerItems(inst: Opened, steps: number): Promise<number> {
  const lib = await loadLib();
  let done = 0;
  const w = lib.createWorker({
    instance: inst,
    concurrency: 1,
    handlers: {
      [KIND]: async (_item, ctx) => {
        for (let k = 0; k < steps; k++) await ctx.step(`s${k}`, () => null);
        done += 1;
        return null;
      },
    },
  });
  await warm(inst);
  const keepAlive = setInterval(() => {}, 1000);
  const t0 = nowMs();
  await inst.work.enqueueMany(
    Array.from({ length: HANDLER_ITEMS }, (_, i) => ({ title: `h${i}`, kind: KIND })),
  );
  await w.drain();
  const ms = nowMs() - t0;
  clearInterval(keepAlive);
  if (done !== HANDLER_ITEMS) throw new Error(`S2: ${done} of ${HANDLER_ITEMS} handlers ran`);
  return ms / HANDLER_ITEMS;
}

// ---------------------------------------------------------------------------------------------
// S3: replay at size.

/** An item whose first attempt recorded `n` steps and was handed back, claimed again: attempt 2 holds it. */
async function recordedRun(inst: Instance, n: number) {
  const { holder, run } = await heldRun(inst, `replay ${n}`);
  // Called together, the steps take their places in call order and their commits share transactions.
  await Promise.all(Array.from({ length: n }, (_, k) => run.step(`s${k}`, () => ({ k }))));
  await inst.work.release({ id: holder.id, worker: holder.worker, attempt: holder.attempt });
  const c = (await inst.work.claim({ worker: 'bench', kind: 'held', lease_ms: 3_600_000 }))!;
  if (c.id !== holder.id || c.attempts !== 2) throw new Error('S3: the run was not claimed again');
  return { id: c.id, worker: 'bench', attempt: 2 };
}

/** The next attempt's replay of all `n` steps: `work.run()` (one read) and n `run.step` from their records. */
async function replay(inst: Instance, holder: { id: string; worker: string; attempt: number }, n: number) {
  let ran = 0;
  const t0 = nowMs();
  const run = await inst.work.run(holder);
  let last: unknown = null;
  for (let k = 0; k < n; k++) {
    last = await run.step(`s${k}`, () => {
      ran += 1;
      return null;
    });
  }
  const ms = nowMs() - t0;
  if (ran !== 0 || (last as { k: number }).k !== n - 1) throw new Error(`S3: replay ran ${ran} fns`);
  return ms;
}

async function s3(backend: Backend): Promise<void> {
  const times = new Map<number, number[]>(REPLAY_SIZES.map((n) => [n, []]));
  const readMs = new Map<number, number[]>(REPLAY_SIZES.map((n) => [n, []]));
  const inst = await opener(backend)('s3');
  try {
    await warm(inst);
    const held = new Map<number, { id: string; worker: string; attempt: number }>();
    for (const n of REPLAY_SIZES) held.set(n, await recordedRun(inst, n));
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? REPLAY_SIZES : [...REPLAY_SIZES].reverse();
      for (const n of order) {
        const xs: number[] = [];
        const reads: number[] = [];
        for (let k = 0; k < REPLAY_REPS; k++) {
          xs.push(await replay(inst, held.get(n)!, n));
          const t0 = nowMs();
          const recs: RunRecord[] = await inst.work.steps(held.get(n)!.id);
          reads.push(nowMs() - t0);
          if (recs.length !== n) throw new Error('S3: records changed');
        }
        times.get(n)!.push(median(xs));
        readMs.get(n)!.push(median(reads));
      }
      log(
        `[S3] ${backend} round ${r + 1}: ${REPLAY_SIZES.map((n) => `${fmt(n)} steps ${fmt(times.get(n)!.at(-1)!, 2)} ms (read ${fmt(readMs.get(n)!.at(-1)!, 2)} ms)`).join(', ')}`,
      );
    }
  } finally {
    await closeInst(inst);
  }
  for (let k = 1; k < REPLAY_SIZES.length; k++) {
    const small = REPLAY_SIZES[k - 1]!;
    const big = REPLAY_SIZES[k]!;
    const b = times.get(big)!;
    const s = times.get(small)!;
    rows.push({
      part: 'S3',
      name: `${backend}: replay a run of ${fmt(big)} steps`,
      unit: 'ms',
      rounds: b,
      baselineName: `a run of ${fmt(small)} steps (linear: ${big / small}×, square: ${(big / small) ** 2}×)`,
      baselineRounds: s,
      note: `work.run() + ${fmt(big)} run.step answered from their records (no fn runs): ${fmt((median(b) / big) * 1000, 1)} µs per step, ${fmt((median(s) / small) * 1000, 1)} µs at ${fmt(small)}; the read alone (work.steps) ${fmt(median(readMs.get(big)!), 2)} ms and ${fmt(median(readMs.get(small)!), 2)} ms; median of ${REPLAY_REPS} replays per round`,
    });
  }
}

// ---------------------------------------------------------------------------------------------

function dbosVersion(): string {
  const file = join(REPO_ROOT, 'node_modules', '@dbos-inc', 'dbos-sdk', 'package.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

function printTable(meta: string[]): void {
  const table = rows
    .filter((r) => r.rounds.length > 0)
    .map((r) => {
      const a = median(r.rounds);
      const b = r.baselineRounds.length > 0 ? median(r.baselineRounds) : null;
      const p = paired(r);
      return [
        r.part,
        r.name,
        `${fmt(a)} ${r.unit}`,
        `${fmt(min(r.rounds))}..${fmt(max(r.rounds))}`,
        r.baselineName ?? '—',
        b === null ? '—' : `${fmt(b)} ${r.unit}`,
        p === null ? '—' : `${fmt(p, 2)}×`,
      ];
    });
  process.stdout.write(
    [
      '',
      `durable runs (issue 39) — ${new Date().toISOString()}`,
      ...meta,
      `${ROUNDS} rounds, medians; paired = median of the per-round ratios agentstate ÷ baseline (steps/s: higher is better; ms, B: lower is better)`,
      '',
      textTable(['#', 'benchmark', 'agentstate', 'spread', 'baseline', 'baseline value', 'paired'], table),
      '',
      ...rows.filter((r) => r.note).map((r) => `[${r.part}] ${r.name}: ${r.note}`),
      '',
    ].join('\n'),
  );
}

async function main(): Promise<void> {
  const started = nowMs();
  const why = BACKENDS.has('postgres') ? await pgReachable() : 'not asked for (--backends)';
  if (why !== null) log(`[runs] PostgreSQL rows skipped: ${redactedPgUrl()}: ${why}`);
  const meta = [
    `node ${process.version} (plain, bundled), SQLite ${(new Database(':memory:').prepare('SELECT sqlite_version() AS v').get() as { v: string }).v}, DBOS Transact ${dbosVersion()}`,
  ];
  try {
    if (why === null) {
      env = new PgEnv();
      await env.init();
      meta.push(
        `PostgreSQL ${env.serverVersion} at ${redactedPgUrl()}, schemas ${env.schema} (+ _dbos, _s2_<round>), dropped after`,
      );
    }
    const timed = async (id: string, fn: () => Promise<void>) => {
      if (!PARTS.has(id)) return;
      const t0 = nowMs();
      await fn();
      log(`[${id}] took ${fmt((nowMs() - t0) / 1000, 1)} s`);
    };
    await timed('s1', s1);
    await timed('s2', async () => {
      if (env) await s2('PostgreSQL');
      if (BACKENDS.has('sqlite')) await s2('SQLite');
    });
    await timed('s3', async () => {
      if (env) await s3('PostgreSQL');
      if (BACKENDS.has('sqlite')) await s3('SQLite');
    });
  } finally {
    if (dbosSchema !== null) await DBOS.shutdown();
    if (env) {
      for (const schema of [...extraSchemas, ...(dbosSchema === null ? [] : [dbosSchema])]) {
        await env.admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      }
      await env.close();
    }
  }
  printTable(meta);
  log(`[runs] total ${fmt((nowMs() - started) / 1000, 1)} s`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    log(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(1);
  },
);
