// `npm run bench -- --only langgraph`: AgentStateSaver against the official SqliteSaver and PostgresSaver, side by
// side in one run: put on a growing thread (same durability on both sides), getTuple latest at 10 vs
// 10,000 checkpoints, list of 5,000, and storage after 1,000 steps. Options: --steps N (default 1000),
// --deep N (default 10000), --json PATH.
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { BaseCheckpointSaver, Checkpoint } from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import Database from 'better-sqlite3';
import pg from 'pg';
import type * as Adapter from '../src/adapters/langgraph/index.js';
import { cleanTmp, fmt, freshDir, loadLib, log, textTable } from './lib.js';
import { pgReachable, redactedPgUrl } from './pg-launch.js';

const { values: args } = parseArgs({
  options: {
    steps: { type: 'string', default: '1000' },
    deep: { type: 'string', default: '10000' },
    json: { type: 'string' },
  },
});
const STEPS = Number(args.steps);
const DEEP = Number(args.deep);
const PG_URL = process.env.AGENTSTATE_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const lib = await loadLib();
const { AgentStateSaver } = (await import(
  new URL('../dist/adapters/langgraph/index.js', import.meta.url).href
)) as typeof Adapter;
const { uuid6 } = await import('@langchain/langgraph-checkpoint');

/**
 * One step of an agent whose state grows: a message appended to `messages` (about 300 bytes), a counter,
 * and a 20 KB context document set at the start and never changed — the shape of a chat agent with a
 * system prompt. The official savers store every channel at every step; ours only the changed ones.
 */
function stepOf(step: number, messages: unknown[]): { cp: Checkpoint; newVersions: Record<string, number> } {
  messages.push({
    role: step % 2 ? 'ai' : 'human',
    id: `m${step}`,
    content: `message ${step}: ${'lorem ipsum '.repeat(22)}`,
  });
  const versions = { messages: step + 1, count: step + 1, context: 1 };
  const cp: Checkpoint = {
    v: 4,
    id: uuid6(-1),
    ts: new Date().toISOString(),
    channel_values: { messages: [...messages], count: step, context: CONTEXT },
    channel_versions: versions,
    versions_seen: { agent: { messages: step } },
  };
  const newVersions: Record<string, number> = step === 0 ? versions : { messages: step + 1, count: step + 1 };
  return { cp, newVersions };
}
const CONTEXT = { text: 'You are a careful assistant. '.repeat(700) };

/** A growing thread, one step at a time, so two savers can be timed in alternating chunks. */
function grower(saver: BaseCheckpointSaver, thread: string) {
  let config = { configurable: { thread_id: thread, checkpoint_ns: '' } } as Record<string, unknown>;
  const messages: unknown[] = [];
  let step = 0;
  let ms = 0;
  return {
    async run(n: number): Promise<void> {
      const t0 = performance.now();
      for (let i = 0; i < n; i++, step++) {
        const { cp, newVersions } = stepOf(step, messages);
        config = (await saver.put(config, cp, { source: 'loop', step, parents: {} }, newVersions)) as Record<
          string,
          unknown
        >;
      }
      ms += performance.now() - t0;
    },
    perPut: () => ms / step,
  };
}

/** Both savers grow a thread of `steps`, in alternating chunks of 50 (load on a shared machine hits both alike). */
async function growBoth(
  a: BaseCheckpointSaver,
  b: BaseCheckpointSaver,
  steps: number,
): Promise<[number, number]> {
  const ga = grower(a, 'grow');
  const gb = grower(b, 'grow');
  for (let done = 0; done < steps; done += 50) {
    const n = Math.min(50, steps - done);
    await ga.run(n);
    await gb.run(n);
  }
  return [ga.perPut(), gb.perPut()];
}

/** A thread of `n` small checkpoints (for read costs that must not depend on history length). */
async function smallThread(saver: BaseCheckpointSaver, thread: string, n: number): Promise<void> {
  let config = { configurable: { thread_id: thread, checkpoint_ns: '' } } as Record<string, unknown>;
  for (let i = 0; i < n; i++) {
    const cp: Checkpoint = {
      v: 4,
      id: uuid6(-1),
      ts: new Date().toISOString(),
      channel_values: { count: i, note: `step ${i}` },
      channel_versions: { count: i + 1, note: i + 1 },
      versions_seen: {},
    };
    config = (await saver.put(
      config,
      cp,
      { source: 'loop', step: i, parents: {} },
      { count: i + 1, note: i + 1 },
    )) as Record<string, unknown>;
  }
}

/** getTuple latest on two threads, alternating in chunks of 20; median µs of the chunks for each. */
async function timeGetTuples(
  saver: BaseCheckpointSaver,
  threads: [string, string],
  reps = 400,
): Promise<[number, number]> {
  const get = (t: string) => saver.getTuple({ configurable: { thread_id: t, checkpoint_ns: '' } });
  for (let i = 0; i < 20; i++) for (const t of threads) await get(t);
  const chunks: [number[], number[]] = [[], []];
  for (let done = 0; done < reps; done += 20) {
    for (const [k, t] of threads.entries()) {
      const t0 = performance.now();
      for (let i = 0; i < 20; i++) await get(t);
      chunks[k]!.push(((performance.now() - t0) / 20) * 1000);
    }
  }
  const med = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return [med(chunks[0]), med(chunks[1])];
}

async function timeList(
  saver: BaseCheckpointSaver,
  thread: string,
  limit: number,
): Promise<{ ms: number; n: number }> {
  const t0 = performance.now();
  let n = 0;
  for await (const _ of saver.list({ configurable: { thread_id: thread, checkpoint_ns: '' } }, { limit }))
    n++;
  return { ms: performance.now() - t0, n };
}

const sizeOf = (path: string) => {
  let total = 0;
  for (const p of [path, `${path}-wal`]) {
    try {
      total += statSync(p).size;
    } catch {}
  }
  return total;
};

interface Row {
  name: string;
  ours: string;
  theirs: string;
  ratio: string;
  target: string;
}
const rows: Row[] = [];
const results: Record<string, number> = {};

function officialSqlite(path: string, durability: 'FULL' | 'NORMAL'): SqliteSaver {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${durability}`);
  return new SqliteSaver(db);
}

// L1: put on a growing thread, SQLite, same durability on both sides.
for (const durability of ['full', 'normal'] as const) {
  const dir = freshDir(`lg-${durability}`);
  const inst = await lib.openInstance({ dir, durability });
  const theirPath = join(dir, 'official.sqlite');
  const theirs = officialSqlite(theirPath, durability === 'full' ? 'FULL' : 'NORMAL');
  const [oursMs, theirsMs] = await growBoth(new AgentStateSaver(inst), theirs, STEPS);
  await inst.close();
  theirs.db.pragma('wal_checkpoint(TRUNCATE)');
  theirs.db.close();
  const ourSize = sizeOf(join(dir, 'state.sqlite'));
  const theirSize = sizeOf(theirPath);
  log(
    `L1 ${durability}: ours ${fmt(oursMs, 3)} ms/put, official ${fmt(theirsMs, 3)} ms/put; ${ourSize} vs ${theirSize} bytes`,
  );
  results[`put_${durability}_ours_ms`] = oursMs;
  results[`put_${durability}_official_ms`] = theirsMs;
  rows.push({
    name: `put, growing thread of ${STEPS} steps, SQLite ${durability.toUpperCase()} (both)`,
    ours: `${fmt(1000 / oursMs, 0)} puts/s`,
    theirs: `SqliteSaver ${fmt(1000 / theirsMs, 0)} puts/s`,
    ratio: `${fmt(theirsMs / oursMs, 2)}×`,
    target: '≥ 1.0×',
  });
  if (durability === 'full') {
    results.size_ours = ourSize;
    results.size_official = theirSize;
    rows.push({
      name: `storage after ${STEPS} steps (whole file, ours with its events and history)`,
      ours: `${fmt(ourSize / 1048576, 1)} MiB`,
      theirs: `SqliteSaver ${fmt(theirSize / 1048576, 1)} MiB`,
      ratio: `${fmt(ourSize / theirSize, 3)}× the size`,
      target: 'smaller',
    });
  }
}

// L2/L3 on SQLite: getTuple latest at 10 vs DEEP checkpoints, list 5,000.
{
  const dir = freshDir('lg-deep');
  const inst = await lib.openInstance({ dir, durability: 'normal' });
  const saver = new AgentStateSaver(inst);
  await smallThread(saver, 'shallow', 10);
  await smallThread(saver, 'deep', DEEP);
  const [shallow, deep] = await timeGetTuples(saver, ['shallow', 'deep']);
  const l = await timeList(new AgentStateSaver(inst), 'deep', 5000);
  await inst.close();
  rows.push({
    name: `getTuple latest, ${DEEP} vs 10 checkpoints, SQLite`,
    ours: `${fmt(deep, 1)} µs vs ${fmt(shallow, 1)} µs`,
    theirs: '—',
    ratio: `${fmt(deep / shallow, 2)}×`,
    target: '≤ 1.1× (flat)',
  });
  rows.push({
    name: `list ${l.n} checkpoints, SQLite`,
    ours: `${fmt(l.ms, 0)} ms`,
    theirs: '—',
    ratio: '—',
    target: 'linear',
  });
  Object.assign(results, { sqlite_get_shallow_us: shallow, sqlite_get_deep_us: deep, sqlite_list_ms: l.ms });
}

// PostgreSQL: put (growing), getTuple latest flat, list 5,000 — next to PostgresSaver.
if ((await pgReachable()) === null) {
  const schema = `lgbench_${process.pid}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  try {
    const inst = await lib.openInstance({
      dir: freshDir('lg-pg'),
      url: `${PG_URL}?schema=${schema}_as`,
      name: 'bench',
    });
    const theirs = PostgresSaver.fromConnString(PG_URL, { schema });
    await theirs.setup();
    const ours = new AgentStateSaver(inst);
    const [oursMs, theirsMs] = await growBoth(ours, theirs, STEPS);
    rows.push({
      name: `put, growing thread of ${STEPS} steps, PostgreSQL`,
      ours: `${fmt(1000 / oursMs, 0)} puts/s`,
      theirs: `PostgresSaver ${fmt(1000 / theirsMs, 0)} puts/s`,
      ratio: `${fmt(theirsMs / oursMs, 2)}×`,
      target: '≥ 1.0×',
    });
    const size = async (sql: string) => Number((await admin.query(sql)).rows[0].s);
    const theirBytes = await size(
      `SELECT sum(pg_total_relation_size(c.oid)) AS s FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '${schema}' AND c.relkind = 'r'`,
    );
    const ourBytes = await size(
      `SELECT sum(pg_total_relation_size(c.oid)) AS s FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '${schema}_as' AND c.relkind = 'r'`,
    );
    rows.push({
      name: `storage after ${STEPS} steps, PostgreSQL (tables with indexes and TOAST)`,
      ours: `${fmt(ourBytes / 1048576, 1)} MiB`,
      theirs: `PostgresSaver ${fmt(theirBytes / 1048576, 1)} MiB`,
      ratio: `${fmt(ourBytes / theirBytes, 3)}× the size`,
      target: 'smaller',
    });
    for (const saver of [ours, theirs]) {
      await smallThread(saver, 'shallow', 10);
      await smallThread(saver, 'deep', DEEP);
    }
    const g = {
      ours: await timeGetTuples(ours, ['shallow', 'deep'], 200),
      theirs: await timeGetTuples(theirs, ['shallow', 'deep'], 200),
    };
    rows.push({
      name: `getTuple latest, ${DEEP} vs 10 checkpoints, PostgreSQL`,
      ours: `${fmt(g.ours[1]!, 0)} µs vs ${fmt(g.ours[0]!, 0)} µs (${fmt(g.ours[1]! / g.ours[0]!, 2)}×)`,
      theirs: `PostgresSaver ${fmt(g.theirs[1]!, 0)} µs vs ${fmt(g.theirs[0]!, 0)} µs (${fmt(g.theirs[1]! / g.theirs[0]!, 2)}×)`,
      ratio: `${fmt(g.ours[1]! / g.ours[0]!, 2)}×`,
      target: '≤ 1.1× (flat)',
    });
    const lo = await timeList(new AgentStateSaver(inst), 'deep', 5000);
    const lt = await timeList(theirs, 'deep', 5000);
    rows.push({
      name: `list ${lo.n} checkpoints, PostgreSQL`,
      ours: `${fmt(lo.ms, 0)} ms`,
      theirs: `PostgresSaver ${fmt(lt.ms, 0)} ms`,
      ratio: `${fmt(lt.ms / lo.ms, 2)}× faster`,
      target: 'linear',
    });
    Object.assign(results, {
      pg_put_ours_ms: oursMs,
      pg_put_official_ms: theirsMs,
      pg_size_ours: ourBytes,
      pg_size_official: theirBytes,
      pg_get_ours_shallow_us: g.ours[0]!,
      pg_get_ours_deep_us: g.ours[1]!,
      pg_get_official_shallow_us: g.theirs[0]!,
      pg_get_official_deep_us: g.theirs[1]!,
      pg_list_ours_ms: lo.ms,
      pg_list_official_ms: lt.ms,
    });
    await inst.close();
    await theirs.end();
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.query(`DROP SCHEMA IF EXISTS ${schema}_as CASCADE`);
    await admin.end();
  }
} else {
  log(`PostgreSQL at ${redactedPgUrl()} does not answer: PostgreSQL rows skipped`);
}

cleanTmp();
console.log(
  textTable(
    ['benchmark', 'AgentStateSaver', 'official', 'ratio', 'target'],
    rows.map((r) => [r.name, r.ours, r.theirs, r.ratio, r.target]),
  ),
);
if (args.json) writeFileSync(args.json, JSON.stringify({ rows, results }, null, 2));
