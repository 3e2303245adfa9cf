// `npm run bench -- --only runtime` (issue 26): the worker runtime, `createWorker`, against what a user would
// run instead, side by side in every round (order rotated by round), in a plain-node child (see run.ts):
//   R1 (PostgreSQL): 10,000 no-op items, concurrency 8: createWorker (a local-queue config and the defaults)
//       against graphile-worker (localQueue 500, batched completion) and pg-boss `work()` (batchSize 500).
//   R2 (SQLite, durability full): the same against a hand-written better-sqlite3 loop of the same semantics
//       (claim a batch under a lease, run it, resolve the batch), WAL and synchronous=FULL as agentstate.
//   R3: a 1-ms handler at concurrency 32 on both backends: items/s from a backlog of 10,000, and start
//       latency (enqueue call → handler start) with items enqueued at a steady 1,000 items/s.
// Every agentstate run is audited: each item run once by its handler, done, named once as claimed and once
// as resolved on attempt 1, and `events.verify()` clean; the other contenders by their own tables.
// Options: --rounds N (default 3), --parts r1,r2,r3, --json PATH. PostgreSQL at AGENTSTATE_BENCH_PG_URL (R1 and
// R3's PostgreSQL rows are skipped when it does not answer), in schemas of this run's own, dropped at the end.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import {
  Logger as GraphileLogger,
  runMigrations as graphileMigrations,
  makeWorkerUtils,
  run as runGraphileWorker,
  type WorkerUtils,
} from 'graphile-worker';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { sha256Hex } from '../src/core/hash.js';
import type { WorkQueue } from '../src/core/work/queue.js';
import type { WorkerOptions } from '../src/worker/worker.js';
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
  removeDir,
  settle,
  textTable,
} from './lib.js';
import { auditItems, GRAPHILE_CONFIG, PG_URL, PgEnv, pgReachable, redactedPgUrl } from './postgres.js';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    parts: { type: 'string', default: 'r1,r2,r3' },
    json: { type: 'string' },
  },
});
const ROUNDS = Math.max(1, Number.parseInt(args.rounds ?? '3', 10));
const PARTS = new Set((args.parts ?? '').split(',').map((s) => s.trim()));

const ITEMS = 10_000;
const KIND = 'bench';
/** The pool every PostgreSQL contender gets (agentstate's default poolSize; P2 gives graphile-worker the same). */
const PG_POOL = 10;
/** R3's paced arrivals: PACE_BATCH items every PACE_MS, PACED_ITEMS in all (1,000 items/s for 3 s). */
const PACE_MS = 10;
const PACE_BATCH = 10;
const PACED_ITEMS = 3_000;

type Config = Pick<WorkerOptions, 'prefetch' | 'batchSize' | 'batchDelayMs' | 'pollIntervalMs'>;
/** createWorker's configurations: a local queue like graphile-worker's, and the defaults (concurrency only). */
const CONFIGS = {
  local: { prefetch: 500, batchSize: 500, batchDelayMs: 5, pollIntervalMs: 10 },
  default: {},
} satisfies Record<string, Config>;
type ConfigName = keyof typeof CONFIGS;
/** The experiment's refill threshold: claim only when at least half the local queue is free. */
const LOW_WATER = 250;
const LOW_WATER_TEXT = `the local config, claims for fewer than ${LOW_WATER} items skipped by a wrapper of work (experiment: a refill threshold)`;
const configText = (c: ConfigName) =>
  c === 'default'
    ? 'defaults (prefetch auto, batchSize 500, batchDelayMs 0, pollIntervalMs 1000)'
    : 'prefetch 500, batchSize 500, batchDelayMs 5, pollIntervalMs 10';

/** What one contender's run measured. */
interface Run {
  itemsPerSec: number;
  ms: number;
  problems: string[];
  /** Start latencies (ms) of paced runs. */
  latency?: { p50: number; p99: number; max: number; enqueueMs: number };
  /** createWorker's calls to the store, for the notes. */
  calls?: Calls;
  detail?: string;
}

interface Calls {
  /** Claims the bench's low-water wrapper answered with nothing, without asking the store. */
  skipped: number;
  claims: number;
  emptyClaims: number;
  claimed: number;
  resolveMany: number;
  resolvedInMany: number;
  resolve: number;
  heartbeat: number;
  release: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function pct(xs: ArrayLike<number>, p: number): number {
  const s = Array.from(xs).sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
}

/** The runs and first-start times of items 0..n-1, by the index in their payload. */
class Tally {
  readonly runs: Uint16Array;
  readonly started: Float64Array;
  readonly enqueued: Float64Array;
  finished = 0;
  #all: () => void = () => {};
  readonly all: Promise<void>;

  constructor(readonly n: number) {
    this.runs = new Uint16Array(n);
    this.started = new Float64Array(n);
    this.enqueued = new Float64Array(n);
    this.all = new Promise((r) => {
      this.#all = r;
    });
  }

  /** The handler every contender runs: count, stamp, wait `ms` (0: return at once). */
  handler(ms: number): (i: number) => Promise<void> {
    return async (i) => {
      if (this.runs[i] === 0) this.started[i] = nowMs();
      this.runs[i]! += 1;
      if (ms > 0) await sleep(ms);
      this.finished += 1;
      if (this.finished === this.n) this.#all();
    };
  }

  problems(): string[] {
    const out: string[] = [];
    let never = 0;
    let twice = 0;
    for (const r of this.runs) {
      if (r === 0) never += 1;
      else if (r > 1) twice += 1;
    }
    if (never > 0) out.push(`${never} items never run`);
    if (twice > 0) out.push(`${twice} items run more than once`);
    return out;
  }

  latency(): Run['latency'] {
    const lat = Array.from(this.started, (t, i) => t - this.enqueued[i]!);
    return { p50: pct(lat, 50), p99: pct(lat, 99), max: max(lat), enqueueMs: 0 };
  }
}

/**
 * Enqueues n items at PACE_BATCH per PACE_MS on a fixed schedule, not waiting for one call to return before
 * the next is due (so a slow enqueue does not lower the rate offered), stamping each batch's call time.
 * Answers the median time an enqueue call took.
 */
async function paced(tally: Tally, enqueue: (from: number, k: number) => Promise<void>): Promise<number> {
  const t0 = nowMs();
  const calls: Array<Promise<number>> = [];
  for (let off = 0, b = 0; off < tally.n; off += PACE_BATCH, b++) {
    const wait = t0 + b * PACE_MS - nowMs();
    if (wait > 0) await sleep(wait);
    const k = Math.min(PACE_BATCH, tally.n - off);
    const at = nowMs();
    tally.enqueued.fill(at, off, off + k);
    calls.push(enqueue(off, k).then(() => nowMs() - at));
  }
  return median(await Promise.all(calls));
}

/**
 * `work` with its calls counted (createWorker uses these five), and its `listen` passed on (the store's hints
 * of new items, which wake an idle worker before its next poll; without it the worker only polls). With
 * `lowWater`, a claim for fewer than that many items is answered with none without asking the store: what a
 * refill threshold in the runtime would do (an experiment on the runtime from outside, see the `lowwater`
 * contender).
 */
function counted(work: WorkQueue, c: Calls, lowWater = 0): WorkQueue {
  return {
    claimMany: async (i: Parameters<WorkQueue['claimMany']>[0]) => {
      if ((i?.limit ?? 1) < lowWater) {
        c.skipped += 1;
        return [];
      }
      c.claims += 1;
      const got = await work.claimMany(i);
      c.claimed += got.length;
      if (got.length === 0) c.emptyClaims += 1;
      return got;
    },
    resolveMany: (xs: Parameters<WorkQueue['resolveMany']>[0]) => {
      c.resolveMany += 1;
      c.resolvedInMany += xs.length;
      return work.resolveMany(xs);
    },
    resolve: (x: Parameters<WorkQueue['resolve']>[0]) => {
      c.resolve += 1;
      return work.resolve(x);
    },
    heartbeat: (x: Parameters<WorkQueue['heartbeat']>[0]) => {
      c.heartbeat += 1;
      return work.heartbeat(x);
    },
    release: (x: Parameters<WorkQueue['release']>[0]) => {
      c.release += 1;
      return work.release(x);
    },
    listen: (onAppend: () => void) => work.listen(onAppend),
  } as unknown as WorkQueue;
}

const callsText = (c: Calls) =>
  `${c.skipped > 0 ? `${c.skipped} claims below the low-water mark skipped, ` : ''}${c.claims} claimMany (${c.emptyClaims} empty, ${fmt(c.claimed / Math.max(1, c.claims - c.emptyClaims), 1)} items per non-empty), ${c.resolveMany} resolveMany (${fmt(c.resolvedInMany / Math.max(1, c.resolveMany), 1)} items each), ${c.heartbeat} heartbeats, ${c.release} releases`;

type Opened = Instance & { dir: string };

/**
 * createWorker on a fresh instance: a backlog of n items then `drain()` (clock from drain to drained, every
 * completion committed), or, paced, `start()` while items arrive, then `stop()` once all ran.
 */
async function agentstateRun(
  open: () => Promise<Opened>,
  o: {
    n: number;
    concurrency: number;
    handlerMs: number;
    config: ConfigName;
    paced?: boolean;
    /** Claims for fewer items are skipped by the wrapper (`counted`). */
    lowWater?: number;
  },
): Promise<Run> {
  const lib = await loadLib();
  const inst = await open();
  try {
    const tally = new Tally(o.n);
    const enqueue = async (from: number, k: number) => {
      await inst.work.enqueueMany(
        Array.from({ length: k }, (_, j) => ({
          title: `item ${from + j}`,
          kind: KIND,
          payload: { i: from + j },
        })),
      );
    };
    if (!o.paced) for (let off = 0; off < o.n; off += 2000) await enqueue(off, Math.min(2000, o.n - off));
    // Open the pool's connections before the clock starts (PostgreSQL), as the other contenders do.
    await Promise.all(Array.from({ length: PG_POOL }, () => inst.work.counts()));
    await settle();
    const calls: Calls = {
      skipped: 0,
      claims: 0,
      emptyClaims: 0,
      claimed: 0,
      resolveMany: 0,
      resolvedInMany: 0,
      resolve: 0,
      heartbeat: 0,
      release: 0,
    };
    const run = tally.handler(o.handlerMs);
    const w = lib.createWorker({
      instance: { work: counted(inst.work, calls, o.lowWater) },
      handlers: { [KIND]: (item) => run((item.payload as { i: number }).i) },
      concurrency: o.concurrency,
      ...CONFIGS[o.config],
    });
    const errors: string[] = [];
    w.on('storeError', (e) => errors.push(`storeError ${String(e)}`));
    w.on('lost', (id, why) => errors.push(`lost ${id}: ${why}`));
    // The runtime's poll timer is unref'd: on SQLite (no sockets), a worker waiting for items does not keep
    // the process alive, and it exits with start() pending (see BENCHMARKS.md). Keep it alive while measured.
    const keepAlive = setInterval(() => {}, 1000);
    const t0 = nowMs();
    let enqueueMs = 0;
    if (o.paced) {
      const running = w.start();
      enqueueMs = await paced(tally, enqueue);
      await tally.all;
      await w.stop();
      await running;
    } else {
      await w.drain();
    }
    const ms = nowMs() - t0;
    clearInterval(keepAlive);
    const problems = [...errors.slice(0, 3), ...tally.problems(), ...(await auditItems(inst, o.n))];
    const latency = o.paced ? { ...tally.latency()!, enqueueMs } : undefined;
    return { itemsPerSec: (o.n / ms) * 1000, ms, problems, calls, ...(latency ? { latency } : {}) };
  } finally {
    await inst.close();
    removeDir(inst.dir);
  }
}

// ---------------------------------------------------------------------------------------------
// The hand-written SQLite loop.

const HAND_SCHEMA = `
  CREATE TABLE jobs (
    id INTEGER PRIMARY KEY, kind TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'pending', payload TEXT NOT NULL,
    result TEXT, lease_owner TEXT, lease_expires_at INTEGER, attempts INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
  CREATE INDEX jobs_ready ON jobs (kind, id) WHERE status = 'pending';
  CREATE INDEX jobs_leases ON jobs (lease_expires_at) WHERE status = 'in_flight';`;

/**
 * The same jobs on agentstate's own SQLite schema shape (issue 41's breakdown of R2): text ids of agentstate's
 * length as the primary key, claim order by priority and time, and every index agentstate keeps on
 * work_items (status and time for listings, ended and cascaded items, the keyed limits' partial indexes,
 * idempotency keys); the log's events table with agentstate's indexes and its event_items table, filled by
 * the same trigger (migration 0004) so an item's history finds its batch events. What the hand loop pays for
 * what agentstate's reads need, without agentstate's code.
 */
const HAND_FULL_SCHEMA = `
  CREATE TABLE jobs (
    id TEXT PRIMARY KEY, kind TEXT, status TEXT NOT NULL DEFAULT 'pending', priority INTEGER NOT NULL DEFAULT 0,
    payload TEXT NOT NULL, result TEXT, lease_owner TEXT, lease_expires_at INTEGER,
    attempts INTEGER NOT NULL DEFAULT 0, idempotency_key TEXT UNIQUE, concurrency_key TEXT, cascaded_from TEXT,
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
  CREATE INDEX jobs_ready ON jobs (priority DESC, created_at, id) WHERE status = 'pending';
  CREATE INDEX jobs_leases ON jobs (lease_expires_at) WHERE status = 'in_flight';
  CREATE INDEX jobs_status ON jobs (status, updated_at);
  CREATE INDEX jobs_cascaded ON jobs (cascaded_from) WHERE cascaded_from IS NOT NULL;
  CREATE INDEX jobs_ended ON jobs (status, id) WHERE status IN ('failed', 'cancelled');
  CREATE INDEX jobs_keyed_ready ON jobs (concurrency_key, priority DESC, created_at, id)
    WHERE status = 'pending' AND concurrency_key IS NOT NULL;
  CREATE INDEX jobs_keyed_in_flight ON jobs (concurrency_key)
    WHERE status = 'in_flight' AND concurrency_key IS NOT NULL;`;

/** agentstate's indexes of its events table, and its event_items table and trigger (migrations 0001, 0004). */
const HAND_FULL_EVENTS = `
  CREATE INDEX events_time ON events (created_at);
  CREATE INDEX events_work_item ON events (work_item_id, position) WHERE work_item_id IS NOT NULL;
  CREATE TABLE event_items (work_item_id TEXT NOT NULL, position INTEGER NOT NULL,
    PRIMARY KEY (work_item_id, position)) WITHOUT ROWID;
  CREATE TRIGGER events_batch_items AFTER INSERT ON events
  WHEN NEW.type IN ('work_items_claimed', 'work_items_resolved') AND NEW.work_item_id IS NULL
  BEGIN
    INSERT OR IGNORE INTO event_items (work_item_id, position)
    SELECT json_extract(i.value, '$.id'), NEW.position FROM json_each(NEW.data, '$.items') AS i
    WHERE json_type(i.value, '$.id') = 'text';
  END;`;

/**
 * The log of the same-semantics hand loop: agentstate's event columns, one event per batch of claims or
 * resolves (the `work_items_<x>` data agentstate writes: each item named once with its worker, attempt and
 * lease or status), each chained to the one before by computeEventHash's SHA-256 over the same fields. What a
 * hand loop pays for an audit trail, without agentstate's code.
 */
function handLog(db: InstanceType<typeof Database>) {
  db.exec(`CREATE TABLE events (position INTEGER PRIMARY KEY, stream TEXT NOT NULL, stream_seq INTEGER NOT NULL,
      type TEXT NOT NULL, data TEXT NOT NULL, actor TEXT, correlation_id TEXT, causation_id TEXT,
      work_item_id TEXT, created_at INTEGER NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL);
    CREATE INDEX events_stream ON events (stream, stream_seq);
    CREATE INDEX events_type ON events (type, position);`);
  const insert = db.prepare(`INSERT INTO events (position, stream, stream_seq, type, data, actor, created_at,
      prev_hash, hash) VALUES (?, 'work_items', ?, ?, ?, ?, ?, ?, ?)`);
  let position = 0;
  let prev = '0'.repeat(64);
  return {
    append(type: string, actor: string, now: number, data: Record<string, unknown>): void {
      position += 1;
      const text = JSON.stringify(data);
      const tail = JSON.stringify([type, JSON.parse(text), actor, null, null, null, now]).slice(1);
      const hash = sha256Hex(`[${JSON.stringify(prev)},${position},"work_items",${position},${tail}`);
      insert.run(position, position, type, text, actor, now, prev, hash);
      prev = hash;
    },
    /** Every item named once as claimed and once as resolved, and the chain unbroken. */
    audit(n: number): string[] {
      const problems: string[] = [];
      const named = new Map<string, number>();
      let last = '0'.repeat(64);
      for (const e of db.prepare('SELECT * FROM events ORDER BY position').iterate() as Iterable<{
        position: number;
        type: string;
        data: string;
        actor: string;
        created_at: number;
        prev_hash: string;
        hash: string;
      }>) {
        const tail = JSON.stringify([
          e.type,
          JSON.parse(e.data),
          e.actor,
          null,
          null,
          null,
          e.created_at,
        ]).slice(1);
        const hash = sha256Hex(`[${JSON.stringify(last)},${e.position},"work_items",${e.position},${tail}`);
        if (e.prev_hash !== last || e.hash !== hash) problems.push(`event #${e.position}: chain broken`);
        last = e.hash;
        for (const item of (JSON.parse(e.data) as { items: Array<{ id: string }> }).items) {
          const key = `${e.type}:${item.id}`;
          named.set(key, (named.get(key) ?? 0) + 1);
        }
      }
      const twice = [...named.values()].filter((c) => c !== 1).length;
      if (named.size !== 2 * n || twice > 0) problems.push(`log names ${named.size} transitions of ${2 * n}`);
      return problems.slice(0, 3);
    },
  };
}

/**
 * The loop a user would write on better-sqlite3 with agentstate's durability (WAL, synchronous=FULL): in one
 * transaction, expired leases back to pending and up to `prefetch` items claimed under a lease; the batch run
 * by `concurrency` handlers; in one transaction, each resolved, fenced by owner, attempt and unexpired lease.
 * No event log, no input checks.
 */
async function handRun(o: {
  n: number;
  concurrency: number;
  handlerMs: number;
  prefetch: number;
  /** The same semantics as agentstate's: its item columns, and one chained event per batch (see HAND_LOG). */
  log?: boolean;
  /** With the log: on agentstate's schema shape, its ids and every index its reads use (HAND_FULL_SCHEMA). */
  full?: boolean;
}): Promise<Run> {
  const dir = freshDir(o.full ? 'hand-full' : o.log ? 'hand-log' : 'hand');
  const db = new Database(join(dir, 'jobs.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('busy_timeout = 5000');
    db.exec(o.full ? HAND_FULL_SCHEMA : HAND_SCHEMA);
    const log = o.log || o.full ? handLog(db) : null;
    if (o.full) db.exec(HAND_FULL_EVENTS);
    const insert = o.full
      ? db.prepare('INSERT INTO jobs (id, kind, payload, created_at, updated_at) VALUES (?, ?, ?, ?, ?)')
      : db.prepare('INSERT INTO jobs (kind, payload, created_at, updated_at) VALUES (?, ?, ?, ?)');
    const enqueue = db.transaction((from: number, k: number) => {
      const now = Date.now();
      for (let j = 0; j < k; j++) {
        const payload = JSON.stringify({ i: from + j });
        // An id as long as agentstate's (wi_ and a 26-character ULID), in creation order.
        if (o.full) insert.run(`wi_${String(from + j).padStart(26, '0')}`, KIND, payload, now, now);
        else insert.run(KIND, payload, now, now);
      }
    });
    for (let off = 0; off < o.n; off += 2000) enqueue.immediate(off, Math.min(2000, o.n - off));
    const reclaim = db.prepare(`UPDATE jobs INDEXED BY jobs_leases SET status = 'pending', lease_owner = NULL,
        lease_expires_at = NULL, updated_at = ? WHERE status = 'in_flight' AND lease_expires_at <= ?`);
    const claimSql = db.prepare(`UPDATE jobs SET status = 'in_flight', lease_owner = ?, lease_expires_at = ?,
        attempts = attempts + 1, updated_at = ?
      WHERE id IN (SELECT id FROM jobs INDEXED BY jobs_ready WHERE status = 'pending' AND kind = ?
        ORDER BY ${o.full ? 'priority DESC, created_at, id' : 'id'} LIMIT ?)
      RETURNING id, attempts, payload`);
    const resolveSql =
      db.prepare(`UPDATE jobs SET status = 'done', result = ?, lease_expires_at = NULL, updated_at = ?
      WHERE id = ? AND status = 'in_flight' AND lease_owner = ? AND attempts = ? AND lease_expires_at > ?`);
    type Job = { id: number | string; attempts: number; payload: string };
    const itemId = (j: Job) => (typeof j.id === 'string' ? j.id : `wi_${j.id}`);
    const worker = 'hand';
    const claim = db.transaction((): Job[] => {
      const now = Date.now();
      reclaim.run(now, now);
      const jobs = claimSql.all(worker, now + 60_000, now, KIND, o.prefetch) as Job[];
      if (log && jobs.length > 0) {
        const expires = new Date(now + 60_000).toISOString();
        log.append('work_items_claimed', worker, now, {
          actor_kind: 'system',
          items: jobs.map((j) => ({
            id: itemId(j),
            worker,
            attempt: j.attempts,
            lease_expires_at: expires,
          })),
        });
      }
      return jobs;
    });
    let refused = 0;
    const resolve = db.transaction((done: Array<{ job: Job; result: unknown }>) => {
      const now = Date.now();
      for (const { job, result } of done) {
        const r = resolveSql.run(JSON.stringify(result ?? null), now, job.id, worker, job.attempts, now);
        if (r.changes !== 1) refused += 1;
      }
      log?.append('work_items_resolved', worker, now, {
        actor_kind: 'system',
        items: done.map(({ job, result }) => ({
          id: itemId(job),
          status: 'done',
          worker,
          attempt: job.attempts,
          ...(result === undefined || result === null ? {} : { result: result as never }),
          duration_ms: 0,
        })),
      });
    });
    const tally = new Tally(o.n);
    const run = tally.handler(o.handlerMs);
    await settle();
    const t0 = nowMs();
    for (;;) {
      const batch = claim.immediate();
      if (batch.length === 0) break;
      const done: Array<{ job: Job; result: unknown }> = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.min(o.concurrency, batch.length) }, async () => {
          while (next < batch.length) {
            const job = batch[next++]!;
            const result = await run((JSON.parse(job.payload) as { i: number }).i);
            done.push({ job, result });
          }
        }),
      );
      resolve.immediate(done);
    }
    const ms = nowMs() - t0;
    const audit = db
      .prepare(
        `SELECT count(*) FILTER (WHERE status = 'done') AS done, count(*) FILTER (WHERE attempts = 1) AS once FROM jobs`,
      )
      .get() as { done: number; once: number };
    const problems = tally.problems();
    if (refused > 0) problems.push(`${refused} resolves refused`);
    if (audit.done !== o.n) problems.push(`${audit.done} of ${o.n} done`);
    if (audit.once !== o.n) problems.push(`${o.n - audit.once} items with attempts ≠ 1`);
    if (log) problems.push(...log.audit(o.n));
    return { itemsPerSec: (o.n / ms) * 1000, ms, problems };
  } finally {
    db.close();
    removeDir(dir);
  }
}

// ---------------------------------------------------------------------------------------------
// graphile-worker and pg-boss.

const graphileMigrated = new Set<string>();

/**
 * graphile-worker with GRAPHILE_CONFIG's tuning (localQueue 500, completeJobBatchDelay 0: the best of P2's
 * sweep), on a pool of PG_POOL opened beforehand. Backlog: jobs added, then `run()`; the clock stops after
 * `runner.stop()` (which commits the pending completions) once every job ran. Paced: jobs added while it runs.
 */
async function graphileRun(
  env: PgEnv,
  o: { n: number; concurrency: number; handlerMs: number; paced?: boolean },
): Promise<Run> {
  const schema = env.gwSchema;
  const logger = new GraphileLogger(() => () => {});
  const pgPool = new pg.Pool({ connectionString: PG_URL, max: PG_POOL });
  pgPool.on('error', () => {});
  pgPool.on('connect', (client) => client.on('error', () => {}));
  let utils: WorkerUtils | null = null;
  try {
    if (!graphileMigrated.has(schema)) {
      await graphileMigrations({ pgPool, schema, logger });
      graphileMigrated.add(schema);
    }
    utils = await makeWorkerUtils({ pgPool, schema, logger });
    const u = utils;
    const tally = new Tally(o.n);
    const enqueue = async (from: number, k: number) => {
      await u.addJobs(Array.from({ length: k }, (_, j) => ({ identifier: KIND, payload: { i: from + j } })));
    };
    if (!o.paced) for (let off = 0; off < o.n; off += 2000) await enqueue(off, Math.min(2000, o.n - off));
    await Promise.all(Array.from({ length: PG_POOL }, () => pgPool.query('SELECT 1')));
    await settle();
    const run = tally.handler(o.handlerMs);
    const t0 = nowMs();
    const runner = await runGraphileWorker({
      pgPool,
      schema,
      logger,
      concurrency: o.concurrency,
      pollInterval: GRAPHILE_CONFIG.pollInterval,
      noHandleSignals: true,
      taskList: { [KIND]: (payload) => run((payload as { i: number }).i) },
      preset: {
        worker: {
          localQueue: { size: GRAPHILE_CONFIG.localQueueSize },
          completeJobBatchDelay: GRAPHILE_CONFIG.completeJobBatchDelay,
        },
      },
    });
    const startedMs = nowMs() - t0;
    let enqueueMs = 0;
    if (o.paced) enqueueMs = await paced(tally, enqueue);
    await tally.all;
    await runner.stop();
    const ms = nowMs() - t0;
    await runner.promise.catch(() => {});
    const left = (
      await pgPool.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}"._private_jobs`)
    ).rows[0];
    const problems = tally.problems();
    if (left?.n !== 0) problems.push(`${left?.n} jobs left in the table`);
    const latency = o.paced ? { ...tally.latency()!, enqueueMs } : undefined;
    return {
      itemsPerSec: (o.n / ms) * 1000,
      ms,
      problems,
      detail: `run() returned after ${fmt(startedMs)} ms`,
      ...(latency ? { latency } : {}),
    };
  } finally {
    await utils?.release();
    await pgPool.end();
  }
}

const BOSS_WORK = { batchSize: 500, pollingIntervalSeconds: 0.5 };

/**
 * pg-boss `work()` as documented: `concurrency` workers on one queue (work() called that many times), each
 * fetching up to batchSize jobs and running its handler on the array (the per-job handler runs for each, in
 * turn); pg-boss completes the batch after the handler returns without waiting for it, and a worker waits
 * out what remains of its polling interval (≥ 0.5 s) after each batch. The clock stops when the table says
 * every job completed.
 */
async function bossWorkRun(
  boss: PgBoss,
  env: PgEnv,
  o: { n: number; concurrency: number; round: number },
): Promise<Run> {
  const name = `rt_work_${o.round}`;
  await boss.createQueue(name);
  for (let off = 0; off < o.n; off += 2000) {
    const k = Math.min(2000, o.n - off);
    await boss.insert(Array.from({ length: k }, (_, j) => ({ name, data: { i: off + j } })));
  }
  await settle();
  const tally = new Tally(o.n);
  const run = tally.handler(0);
  const t0 = nowMs();
  for (let w = 0; w < o.concurrency; w++) {
    await boss.work<{ i: number }>(name, BOSS_WORK, async (jobs) => {
      for (const j of jobs) await run(j.data.i);
    });
  }
  await tally.all;
  const completed = async () =>
    (
      await env.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "${env.bossSchema}".job WHERE name = $1 AND state = 'completed'`,
        [name],
      )
    )[0]?.n ?? 0;
  let done = await completed();
  while (done < o.n && nowMs() - t0 < 120_000) {
    await sleep(2);
    done = await completed();
  }
  const ms = nowMs() - t0;
  await boss.offWork(name);
  const problems = tally.problems();
  if (done !== o.n) problems.push(`${done} of ${o.n} completed`);
  return { itemsPerSec: (o.n / ms) * 1000, ms, problems };
}

// ---------------------------------------------------------------------------------------------
// Rounds and the table.

interface Row {
  part: string;
  name: string;
  unit: string;
  /** Higher is better (rates) or lower (latencies). */
  higher: boolean;
  rounds: number[];
  baselineName: string | null;
  baselineRounds: number[];
  note?: string;
}

const rows: Row[] = [];

/** Runs every contender in every round, order rotated by round; returns the runs by contender. */
async function rotate(
  part: string,
  contenders: Array<[string, (round: number) => Promise<Run>]>,
): Promise<Map<string, Run[]>> {
  const out = new Map<string, Run[]>(contenders.map(([k]) => [k, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < contenders.length; i++) {
      const [who, fn] = contenders[(i + r) % contenders.length]!;
      const res = await fn(r);
      out.get(who)!.push(res);
      log(
        `[${part}] round ${r + 1} ${who}: ${fmt(res.itemsPerSec)} items/s in ${fmt(res.ms)} ms${res.latency ? `; start latency p50 ${fmt(res.latency.p50, 1)} ms, p99 ${fmt(res.latency.p99, 1)} ms, max ${fmt(res.latency.max, 1)} ms (enqueue call median ${fmt(res.latency.enqueueMs, 2)} ms)` : ''}; audit ${res.problems.length === 0 ? 'ok' : res.problems.join('; ')}${res.calls ? `; ${callsText(res.calls)}` : ''}${res.detail ? `; ${res.detail}` : ''}`,
      );
    }
  }
  return out;
}

function auditNote(runs: Map<string, Run[]>): string {
  const bad = [...runs].flatMap(([who, xs]) =>
    xs.flatMap((x, r) => x.problems.map((p) => `${who} round ${r + 1}: ${p}`)),
  );
  return bad.length === 0 ? `audit ok in every round for every contender` : `AUDIT: ${bad.join('; ')}`;
}

const rate = (runs: Map<string, Run[]>, who: string) => runs.get(who)!.map((x) => x.itemsPerSec);

function callsNote(runs: Map<string, Run[]>, who: string): string {
  const c = runs.get(who)!.at(-1)?.calls;
  return c ? `${who} store calls (last round): ${callsText(c)}` : '';
}

async function r1(env: PgEnv): Promise<void> {
  let boss: PgBoss | null = null;
  try {
    boss = new PgBoss({
      connectionString: PG_URL,
      schema: env.bossSchema,
      max: PG_POOL,
      supervise: false,
      schedule: false,
      migrate: true,
    });
    boss.on('error', () => {});
    await boss.start();
    const b = boss;
    const open = (label: string) => () => env.open(label);
    const runs = await rotate('R1', [
      [
        'local',
        () => agentstateRun(open('rt-local'), { n: ITEMS, concurrency: 8, handlerMs: 0, config: 'local' }),
      ],
      [
        'default',
        () =>
          agentstateRun(open('rt-default'), { n: ITEMS, concurrency: 8, handlerMs: 0, config: 'default' }),
      ],
      [
        'lowwater',
        () =>
          agentstateRun(open('rt-lowwater'), {
            n: ITEMS,
            concurrency: 8,
            handlerMs: 0,
            config: 'local',
            lowWater: LOW_WATER,
          }),
      ],
      ['graphile-worker', () => graphileRun(env, { n: ITEMS, concurrency: 8, handlerMs: 0 })],
      ['pg-boss', (round) => bossWorkRun(b, env, { n: ITEMS, concurrency: 8, round })],
    ]);
    const base = 'graphile-worker (localQueue 500, completeJobBatchDelay 0)';
    const audit = auditNote(runs);
    for (const c of ['local', 'default'] as const) {
      rows.push({
        part: 'R1',
        name: `PG: createWorker, ${configText(c)}`,
        unit: 'items/s',
        higher: true,
        rounds: rate(runs, c),
        baselineName: base,
        baselineRounds: rate(runs, 'graphile-worker'),
        note: `${c === 'local' ? `${audit}; ` : ''}${callsNote(runs, c)}`,
      });
    }
    rows.push({
      part: 'R1',
      name: `PG: createWorker, ${LOW_WATER_TEXT}`,
      unit: 'items/s',
      higher: true,
      rounds: rate(runs, 'lowwater'),
      baselineName: base,
      baselineRounds: rate(runs, 'graphile-worker'),
      note: callsNote(runs, 'lowwater'),
    });
    rows.push({
      part: 'R1',
      name: `PG: createWorker, ${configText('local')}`,
      unit: 'items/s',
      higher: true,
      rounds: rate(runs, 'local'),
      baselineName: 'pg-boss work(), batchSize 500',
      baselineRounds: rate(runs, 'pg-boss'),
    });
    rows.push({
      part: 'R1',
      name: 'PG: pg-boss work(), batchSize 500, 8 workers',
      unit: 'items/s',
      higher: true,
      rounds: rate(runs, 'pg-boss'),
      baselineName: base,
      baselineRounds: rate(runs, 'graphile-worker'),
      note: `pg-boss work(): ${BOSS_WORK.batchSize} per fetch, pollingIntervalSeconds ${BOSS_WORK.pollingIntervalSeconds} (its minimum); graphile-worker: ${runs.get('graphile-worker')!.at(-1)?.detail ?? ''}`,
    });
  } finally {
    await boss?.stop({ graceful: false, wait: true });
  }
}

async function r2(): Promise<void> {
  const lib = await loadLib();
  const open = (label: string) => async () => {
    const dir = freshDir(label);
    return Object.assign(await lib.openInstance({ dir, durability: 'full', worker: 'bench' }), { dir });
  };
  const runs = await rotate('R2', [
    [
      'local',
      () => agentstateRun(open('rt-local'), { n: ITEMS, concurrency: 8, handlerMs: 0, config: 'local' }),
    ],
    [
      'default',
      () => agentstateRun(open('rt-default'), { n: ITEMS, concurrency: 8, handlerMs: 0, config: 'default' }),
    ],
    [
      'lowwater',
      () =>
        agentstateRun(open('rt-lowwater'), {
          n: ITEMS,
          concurrency: 8,
          handlerMs: 0,
          config: 'local',
          lowWater: LOW_WATER,
        }),
    ],
    ['hand', () => handRun({ n: ITEMS, concurrency: 8, handlerMs: 0, prefetch: 500 })],
    ['hand-log', () => handRun({ n: ITEMS, concurrency: 8, handlerMs: 0, prefetch: 500, log: true })],
    ['hand-full', () => handRun({ n: ITEMS, concurrency: 8, handlerMs: 0, prefetch: 500, full: true })],
  ]);
  const audit = auditNote(runs);
  for (const c of ['local', 'default'] as const) {
    rows.push({
      part: 'R2',
      name: `SQLite: createWorker, ${configText(c)}`,
      unit: 'items/s',
      higher: true,
      rounds: rate(runs, c),
      baselineName: 'hand-written better-sqlite3 loop, 500 per claim and per resolve',
      baselineRounds: rate(runs, 'hand'),
      note: `${c === 'local' ? `${audit}; ` : ''}${callsNote(runs, c)}`,
    });
    // The issue's target: the same semantics by hand (one chained event per batch naming every item).
    rows.push({
      part: 'R2',
      name: `SQLite: createWorker, ${configText(c)}, against the same semantics`,
      unit: 'items/s',
      higher: true,
      rounds: rate(runs, c),
      baselineName: 'hand-written loop of the same semantics: one chained event per batch naming each item',
      baselineRounds: rate(runs, 'hand-log'),
      note: 'target ≥ 0.8×',
    });
    // Where the gap is: the same hand loop on agentstate's schema shape, against agentstate and against the
    // hand loop on the small schema (the cost of the indexes agentstate's reads need).
    rows.push({
      part: 'R2',
      name: `SQLite: createWorker, ${configText(c)}, against the same semantics on agentstate's schema`,
      unit: 'items/s',
      higher: true,
      rounds: rate(runs, c),
      baselineName:
        "the same-semantics hand loop on agentstate's schema shape: its ids, its work_items and events indexes, event_items",
      baselineRounds: rate(runs, 'hand-full'),
      note: "info: what is left is agentstate's code",
    });
  }
  rows.push({
    part: 'R2',
    name: "hand loop of the same semantics on agentstate's schema shape",
    unit: 'items/s',
    higher: true,
    rounds: rate(runs, 'hand-full'),
    baselineName: 'the same-semantics hand loop on its own small schema (2 indexes, integer ids)',
    baselineRounds: rate(runs, 'hand-log'),
    note: "info: what agentstate's schema costs a hand loop",
  });
  rows.push({
    part: 'R2',
    name: `SQLite: createWorker, ${LOW_WATER_TEXT}`,
    unit: 'items/s',
    higher: true,
    rounds: rate(runs, 'lowwater'),
    baselineName: 'hand-written better-sqlite3 loop, 500 per claim and per resolve',
    baselineRounds: rate(runs, 'hand'),
    note: callsNote(runs, 'lowwater'),
  });
}

async function r3(env: PgEnv | null): Promise<void> {
  const lib = await loadLib();
  const openSqlite = (label: string) => async () => {
    const dir = freshDir(label);
    return Object.assign(await lib.openInstance({ dir, durability: 'full', worker: 'bench' }), { dir });
  };
  const slow = { concurrency: 32, handlerMs: 1 };
  const contenders: Array<[string, (round: number) => Promise<Run>]> = [
    ['sqlite', () => agentstateRun(openSqlite('rt-slow'), { n: ITEMS, ...slow, config: 'local' })],
    ['sqlite-hand', () => handRun({ n: ITEMS, ...slow, prefetch: 500 })],
    [
      'sqlite-paced',
      () => agentstateRun(openSqlite('rt-paced'), { n: PACED_ITEMS, ...slow, config: 'local', paced: true }),
    ],
    [
      'sqlite-paced-default',
      () =>
        agentstateRun(openSqlite('rt-paced-d'), { n: PACED_ITEMS, ...slow, config: 'default', paced: true }),
    ],
  ];
  if (env) {
    const e = env;
    contenders.push(
      ['pg', () => agentstateRun(() => e.open('rt-slow'), { n: ITEMS, ...slow, config: 'local' })],
      ['pg-graphile', () => graphileRun(e, { n: ITEMS, ...slow })],
      [
        'pg-paced',
        () =>
          agentstateRun(() => e.open('rt-paced'), { n: PACED_ITEMS, ...slow, config: 'local', paced: true }),
      ],
      ['pg-graphile-paced', () => graphileRun(e, { n: PACED_ITEMS, ...slow, paced: true })],
    );
  }
  const runs = await rotate('R3', contenders);
  const audit = auditNote(runs);
  const lat = (who: string, p: 'p50' | 'p99') => runs.get(who)!.map((x) => x.latency![p]);
  const paceText = `${fmt(PACED_ITEMS)} items enqueued ${PACE_BATCH} every ${PACE_MS} ms (1,000 items/s)`;
  rows.push({
    part: 'R3',
    name: `SQLite: createWorker, 1-ms handler, concurrency 32, ${configText('local')}`,
    unit: 'items/s',
    higher: true,
    rounds: rate(runs, 'sqlite'),
    baselineName: 'hand-written better-sqlite3 loop, same handler and concurrency',
    baselineRounds: rate(runs, 'sqlite-hand'),
    note: `${audit}; ${callsNote(runs, 'sqlite')}`,
  });
  for (const [who, c] of [
    ['sqlite-paced', 'local'],
    ['sqlite-paced-default', 'default'],
  ] as const) {
    rows.push({
      part: 'R3',
      name: `SQLite: start latency p99, ${paceText}, ${configText(c)}`,
      unit: 'ms',
      higher: false,
      rounds: lat(who, 'p99'),
      baselineName: null,
      baselineRounds: [],
      note: `p50 ${lat(who, 'p50')
        .map((x) => fmt(x, 1))
        .join('/')} ms by round; enqueue call (10 items, one transaction) median ${runs
        .get(who)!
        .map((x) => fmt(x.latency!.enqueueMs, 2))
        .join('/')} ms, included in the latency`,
    });
  }
  if (!env) return;
  rows.push({
    part: 'R3',
    name: `PG: createWorker, 1-ms handler, concurrency 32, ${configText('local')}`,
    unit: 'items/s',
    higher: true,
    rounds: rate(runs, 'pg'),
    baselineName: 'graphile-worker, same handler and concurrency',
    baselineRounds: rate(runs, 'pg-graphile'),
    note: callsNote(runs, 'pg'),
  });
  rows.push({
    part: 'R3',
    name: `PG: start latency p99, ${paceText}, ${configText('local')}`,
    unit: 'ms',
    higher: false,
    rounds: lat('pg-paced', 'p99'),
    baselineName: 'graphile-worker (LISTEN/NOTIFY), same arrivals',
    baselineRounds: lat('pg-graphile-paced', 'p99'),
    note: `p50 agentstate ${lat('pg-paced', 'p50')
      .map((x) => fmt(x, 1))
      .join('/')} ms, graphile-worker ${lat('pg-graphile-paced', 'p50')
      .map((x) => fmt(x, 1))
      .join('/')} ms by round; enqueue call median agentstate ${runs
      .get('pg-paced')!
      .map((x) => fmt(x.latency!.enqueueMs, 2))
      .join('/')} ms, graphile-worker addJobs ${runs
      .get('pg-graphile-paced')!
      .map((x) => fmt(x.latency!.enqueueMs, 2))
      .join('/')} ms (included)`,
  });
}

function printTable(meta: string[]): void {
  const table = rows.map((r) => {
    const a = median(r.rounds);
    const b = r.baselineRounds.length > 0 ? median(r.baselineRounds) : null;
    const paired =
      r.baselineRounds.length === r.rounds.length && b !== null
        ? median(r.rounds.map((x, i) => x / r.baselineRounds[i]!))
        : null;
    return [
      r.part,
      r.name,
      `${fmt(a)} ${r.unit}`,
      `${fmt(min(r.rounds))}..${fmt(max(r.rounds))}`,
      r.baselineName ?? '—',
      b === null ? '—' : `${fmt(b)} ${r.unit}`,
      b === null ? '—' : `${fmt(a / b, 2)}×`,
      paired === null ? '—' : `${fmt(paired, 2)}×`,
    ];
  });
  process.stdout.write(
    [
      '',
      `worker runtime (issue 26) — ${new Date().toISOString()}`,
      ...meta,
      `${ROUNDS} rounds, medians; ratio = median ÷ baseline median; paired = median of the per-round ratios (items/s: higher is better; ms: lower is better)`,
      '',
      textTable(
        ['#', 'benchmark', 'agentstate', 'spread', 'baseline', 'baseline value', 'ratio', 'paired'],
        table,
      ),
      '',
      ...rows.filter((r) => r.note).map((r) => `[${r.part}] ${r.name}: ${r.note}`),
      '',
    ].join('\n'),
  );
  if (args.json) writeFileSync(args.json, `${JSON.stringify(rows, null, 2)}\n`);
}

async function main(): Promise<void> {
  const started = nowMs();
  const why = PARTS.has('r1') || PARTS.has('r3') ? await pgReachable() : 'not asked for';
  const env = why === null ? new PgEnv() : null;
  if (why !== null && PARTS.has('r1')) log(`[runtime] PostgreSQL rows skipped: ${redactedPgUrl()}: ${why}`);
  const meta = [
    `node ${process.version} (plain, bundled), SQLite ${(new Database(':memory:').prepare('SELECT sqlite_version() AS v').get() as { v: string }).v}`,
  ];
  try {
    if (env) {
      await env.init();
      meta.push(
        `PostgreSQL ${env.serverVersion} at ${redactedPgUrl()}, schemas ${env.schema} (+ _gw, _boss), dropped after`,
      );
    }
    const timed = async (id: string, fn: () => Promise<void>) => {
      if (!PARTS.has(id)) return;
      const t0 = nowMs();
      await fn();
      log(`[${id}] took ${fmt((nowMs() - t0) / 1000, 1)} s`);
    };
    if (env) await timed('r1', () => r1(env));
    await timed('r2', r2);
    await timed('r3', () => r3(env));
  } finally {
    await env?.close();
  }
  printTable(meta);
  log(`[runtime] total ${fmt((nowMs() - started) / 1000, 1)} s`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    log(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(1);
  },
);
