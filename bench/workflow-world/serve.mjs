// One contender of one round of the Workflow SDK World benchmark (driver.mjs starts it as a child process, so
// one World's leftovers never slow another): it opens the World named by BENCH_WORLD on the storage the driver
// prepared, serves the SDK's routes (built by `workflow build`: in SDK v5 the steps run inline in the flow
// bundle) on a free port of 127.0.0.1, points the World's queue at them and starts its delivery. Then:
//   1. warm-up: BENCH_WARM runs of the workload one after another (loads the bundle, fills caches, and gives
//      the step latency of a World with nothing else to do);
//   2. the batch: BENCH_RUNS runs started at once; the time from the first start() to the last run seen
//      completed gives runs per second;
//   3. the storage the batch added (measured before and after it, outside the timing), the step rows of the
//      batch's runs (startedAt → completedAt, as the World recorded them) and every run's output checked.
// It prints one line `result <json>` and exits 0; on any failure it prints the error and exits 1.
// Environment: BENCH_WORLD (agentstate-sqlite | agentstate-postgres | world-local | world-postgres, or
// agentstate-sqlite-normal),
// BENCH_WORKLOAD (addition | sequential), BENCH_RUNS, BENCH_WARM, BENCH_DIR (a fresh folder for the SQLite file
// or world-local's data), BENCH_PG_URL (the PostgreSQL database), BENCH_PG_SCHEMAS (comma-separated: the schemas
// whose tables count as the World's storage), BENCH_SCHEMA (agentstate's schema).
import { readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { getRun, start } from 'workflow/api';
import { setWorld } from 'workflow/runtime';
import { POST as flowPOST } from './.well-known/workflow/v1/flow.mjs';
import manifest from './.well-known/workflow/v1/manifest.json' with { type: 'json' };

const env = process.env;
const WORLD = env.BENCH_WORLD;
const WORKLOAD = env.BENCH_WORKLOAD;
const RUNS = Number(env.BENCH_RUNS ?? 30);
const WARM = Number(env.BENCH_WARM ?? 3);
const DIR = env.BENCH_DIR;
const PG_URL = env.BENCH_PG_URL;
const PG_SCHEMAS = (env.BENCH_PG_SCHEMAS ?? '').split(',').filter(Boolean);

/** The two workloads: the workflow, its arguments for run j, the output it must return, and its step count. */
const WORKLOADS = {
  addition: {
    fn: manifest.workflows['workflows/addition.ts'].addition,
    args: (j) => [j, 1000],
    expect: (j) => j + 1000,
    steps: 1,
  },
  sequential: {
    fn: manifest.workflows['workflows/sequential.ts'].tenSteps,
    args: (j) => [j],
    expect: (j) => j + 10,
    steps: 10,
  },
};
const workload = WORKLOADS[WORKLOAD];
if (!workload?.fn) throw new Error(`unknown workload ${WORKLOAD}`);

async function openWorld() {
  switch (WORLD) {
    case 'agentstate-sqlite':
    case 'agentstate-sqlite-normal':
    case 'agentstate-postgres': {
      // agentstate's World as built by `npm run build` (dist/ of this checkout), with its defaults
      // (SQLite at durability full; 50 deliveries at once).
      const { createWorld } = await import(
        new URL('../../dist/workflow-world/world.js', import.meta.url).href
      );
      if (WORLD === 'agentstate-postgres') return createWorld({ url: PG_URL, schema: env.BENCH_SCHEMA });
      // agentstate-sqlite-normal (asked for by name, to see what fsync costs): synchronous=NORMAL, which
      // may lose the last commits on power loss, as world-local's unsynced files may.
      return createWorld({
        dir: DIR,
        ...(WORLD.endsWith('-normal') ? { open: { durability: 'normal' } } : {}),
      });
    }
    case 'world-local': {
      const { createWorld } = await import('@workflow/world-local');
      return createWorld({ dataDir: DIR });
    }
    case 'world-postgres': {
      // Its defaults: a pool of 10, graphile-worker at concurrency 50 (LISTEN/NOTIFY, 500 ms poll behind it).
      const { createWorld } = await import('@workflow/world-postgres');
      return createWorld({ connectionString: PG_URL });
    }
    default:
      throw new Error(`unknown world ${WORLD}`);
  }
}

/**
 * Bytes of storage the World holds now (see driver.mjs for what counts, per World), in all (`bytes`) and by
 * part (`parts`: by table with its indexes, or world-local's folder).
 */
async function storageBytes() {
  if (WORLD.startsWith('agentstate-sqlite')) {
    // The database as a fresh connection sees it (the WAL's commits included): page_count × page_size is the
    // file's size once the WAL is checkpointed; plus any other file of the instance folder.
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(join(DIR, 'state.sqlite'), { readonly: true, fileMustExist: true });
    try {
      const pages = db.pragma('page_count', { simple: true });
      const size = db.pragma('page_size', { simple: true });
      const others = folderBytes(DIR, (name) => !/^state\.sqlite(-wal|-shm)?$/.test(name)).apparent;
      const parts = {};
      const rows = db
        .prepare(
          `SELECT coalesce(m.tbl_name, d.name) AS part, sum(d.pgsize) AS bytes
             FROM dbstat d LEFT JOIN sqlite_schema m ON m.name = d.name GROUP BY part`,
        )
        .all();
      for (const r of rows) parts[r.part] = r.bytes;
      return { bytes: pages * size + others, parts };
    } finally {
      db.close();
    }
  }
  if (WORLD === 'world-local') {
    // Its JSON files: blocks on disk (what `du` counts) and their apparent length (`du -b`).
    const { apparent, allocated } = folderBytes(DIR, () => true);
    const parts = {};
    for (const entry of readdirSync(DIR, { withFileTypes: true })) {
      parts[entry.name] = entry.isDirectory()
        ? folderBytes(join(DIR, entry.name), () => true).allocated
        : statSync(join(DIR, entry.name)).blocks * 512;
    }
    return { bytes: allocated, apparent, parts };
  }
  // PostgreSQL: pg_total_relation_size (heap, indexes, TOAST) of every table of the World's schemas.
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const r = await client.query(
      `SELECT c.relname AS part, pg_total_relation_size(c.oid)::bigint AS bytes
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = ANY($1) AND c.relkind IN ('r', 'm')`,
      [PG_SCHEMAS],
    );
    const parts = {};
    let bytes = 0;
    for (const row of r.rows) {
      parts[row.part] = (parts[row.part] ?? 0) + Number(row.bytes);
      bytes += Number(row.bytes);
    }
    return { bytes, parts };
  } finally {
    await client.end();
  }
}

function folderBytes(dir, keep) {
  let apparent = 0;
  let allocated = 0;
  const walk = (d) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.isFile() && keep(entry.name)) {
        const st = statSync(p);
        apparent += st.size;
        allocated += st.blocks * 512;
      }
    }
  };
  walk(dir);
  return { apparent, allocated };
}

/** Waits until every run has ended: one `runs.get` at a time, in start order, 25 ms apart while unfinished. */
async function waitAll(ids) {
  for (const id of ids) {
    for (;;) {
      const run = await plain.runsGet(id, { resolveData: 'none' });
      if (run.status === 'completed') break;
      if (run.status === 'failed' || run.status === 'cancelled') {
        throw new Error(`run ${id} ended ${run.status}`);
      }
      await sleep(25);
    }
  }
}

/**
 * The World's rows of these runs: each step's startedAt → completedAt in ms, each run's createdAt →
 * completedAt, and where a run's time went by its rows: `pickup` (run createdAt → startedAt: the queue's first
 * delivery and the flow handler's start), `toFirst` (run startedAt → first step startedAt), `between` (a step's
 * completedAt → the next one's startedAt) and `end` (last step completedAt → run completedAt).
 */
async function rows(world, ids) {
  const steps = [];
  const runs = [];
  const timeline = { pickup: [], toFirst: [], between: [], end: [] };
  for (const id of ids) {
    const run = await world.runs.get(id, { resolveData: 'none' });
    runs.push(+run.completedAt - +run.createdAt);
    const mine = [];
    let cursor;
    do {
      const page = await world.steps.list({
        runId: id,
        resolveData: 'none',
        pagination: { limit: 100, ...(cursor ? { cursor } : {}) },
      });
      for (const s of page.data) {
        if (s.status !== 'completed') throw new Error(`step ${s.stepId} of ${id} is ${s.status}`);
        mine.push({ started: +s.startedAt, completed: +s.completedAt });
      }
      cursor = page.hasMore ? page.cursor : undefined;
    } while (cursor);
    if (mine.length !== workload.steps) {
      throw new Error(`run ${id} has ${mine.length} step rows, not ${workload.steps}`);
    }
    mine.sort((a, b) => a.started - b.started || a.completed - b.completed);
    for (const s of mine) steps.push(s.completed - s.started);
    timeline.pickup.push(+run.startedAt - +run.createdAt);
    timeline.toFirst.push(mine[0].started - +run.startedAt);
    for (let i = 1; i < mine.length; i++) timeline.between.push(mine[i].started - mine[i - 1].completed);
    timeline.end.push(+run.completedAt - mine[mine.length - 1].completed);
  }
  return { steps, runs, timeline };
}

async function checkOutputs(ids, first) {
  for (let k = 0; k < ids.length; k++) {
    const out = await getRun(ids[k]).returnValue;
    if (out !== workload.expect(first + k)) {
      throw new Error(`run ${ids[k]} returned ${JSON.stringify(out)}, not ${workload.expect(first + k)}`);
    }
  }
}

const deliveries = { flow: 0, step: 0 };
const world = await openWorld();
// Every call of the SDK into the World's storage and queue is timed, to tell where the time goes: per phase
// (`alone`: the warm-up runs after the first; `batch`), per method, the time of each call. The waiter's and the
// checks' own reads use the World's methods as they were, and are not counted.
const calls = { alone: {}, batch: {} };
let phase = null;
const plain = { runsGet: world.runs.get.bind(world.runs) };
function timed(name, fn) {
  return async (...a) => {
    const at = phase;
    const t = performance.now();
    try {
      return await fn(...a);
    } finally {
      if (at) {
        calls[at][name] ??= [];
        calls[at][name].push(performance.now() - t);
      }
    }
  };
}
for (const part of ['runs', 'steps', 'events', 'hooks']) {
  const obj = world[part];
  if (!obj) continue;
  for (const k of Object.keys(obj)) {
    if (typeof obj[k] === 'function') obj[k] = timed(`${part}.${k}`, obj[k].bind(obj));
  }
}
// And how long a message waits for its first delivery: from the moment `queue()` returned its message id to the
// moment a POST carrying that id reaches the route (per phase, the first delivery of each message).
const queuedAt = new Map();
const waits = { alone: [], batch: [] };
const queueTimed = timed('queue', world.queue.bind(world));
world.queue = async (...a) => {
  const at = phase;
  const r = await queueTimed(...a);
  if (at && r?.messageId) queuedAt.set(r.messageId, { at, t: performance.now() });
  return r;
};

setWorld(world);

// The step route is served too, though SDK v5 runs steps inline in the flow route: a World that queued a
// step message would be answered rather than stall (the count of each is reported).
let stepPOST = null;
try {
  stepPOST = (await import('./.well-known/workflow/v1/step.mjs')).POST ?? null;
} catch {}

const server = createServer(async (req, res) => {
  try {
    const path = req.url?.split('?')[0];
    const handler =
      req.method !== 'POST'
        ? null
        : path === '/.well-known/workflow/v1/flow'
          ? flowPOST
          : path === '/.well-known/workflow/v1/step'
            ? stepPOST
            : null;
    if (!handler) {
      res.writeHead(404).end('not found');
      return;
    }
    deliveries[path.endsWith('/flow') ? 'flow' : 'step']++;
    const queued = queuedAt.get(req.headers['x-vqs-message-id']);
    if (queued) {
      queuedAt.delete(req.headers['x-vqs-message-id']);
      waits[queued.at].push(performance.now() - queued.t);
    }
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
    const response = await handler(
      new Request(`http://127.0.0.1${req.url}`, { method: 'POST', headers, body: Buffer.concat(chunks) }),
    );
    const body = Buffer.from(await response.arrayBuffer());
    res.writeHead(response.status, Object.fromEntries(response.headers.entries())).end(body);
  } catch (err) {
    res.writeHead(500).end(String(err));
  }
});
server.keepAliveTimeout = 30_000;
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
env.WORKFLOW_LOCAL_BASE_URL = `http://127.0.0.1:${server.address().port}`;
await world.start?.();

// 1. Warm-up, one run at a time.
const warmIds = [];
for (let j = 0; j < WARM; j++) {
  phase = j === 0 ? null : 'alone';
  const run = await start(workload.fn, workload.args(j));
  await waitAll([run.runId]);
  warmIds.push(run.runId);
}
phase = null;
// The first warm-up run loads and compiles the bundle: only the others count as runs made alone.
const warm = await rows(world, warmIds.slice(1));
await checkOutputs(warmIds, 0);
await sleep(300);
const before = await storageBytes();

// 2. The batch: RUNS runs started at once, timed until the last has completed.
const deliveriesBefore = { ...deliveries };
const first = WARM;
phase = 'batch';
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const started = await Promise.all(
  Array.from({ length: RUNS }, (_, k) => start(workload.fn, workload.args(first + k))),
);
const ids = started.map((r) => r.runId);
await waitAll(ids);
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
phase = null;

// 3. Outside the timing: what the batch left in storage (after the queue's own bookkeeping settles), its rows,
// its outputs.
await sleep(500);
const after = await storageBytes();
const batch = await rows(world, ids);
await checkOutputs(ids, first);

process.stdout.write(
  `result ${JSON.stringify({
    world: WORLD,
    workload: WORKLOAD,
    runs: RUNS,
    ms,
    runsPerSec: (RUNS * 1000) / ms,
    storageBefore: before.bytes,
    storageAfter: after.bytes,
    bytesPerRun: (after.bytes - before.bytes) / RUNS,
    partsPerRun: Object.fromEntries(
      Object.keys(after.parts).map((k) => [k, (after.parts[k] - (before.parts[k] ?? 0)) / RUNS]),
    ),
    cpuMsPerRun: (cpu.user + cpu.system) / 1000 / RUNS,
    ...(after.apparent !== undefined
      ? { apparentBytesPerRun: (after.apparent - before.apparent) / RUNS }
      : {}),
    steps: batch.steps,
    runMs: batch.runs,
    timeline: batch.timeline,
    warmSteps: warm.steps,
    warmRunMs: warm.runs,
    warmTimeline: warm.timeline,
    calls,
    waits,
    deliveries: {
      flow: deliveries.flow - deliveriesBefore.flow,
      step: deliveries.step - deliveriesBefore.step,
    },
  })}\n`,
);
await world.close?.();
server.close();
process.exit(0);
