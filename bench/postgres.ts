// PostgreSQL benchmarks (`--only pg`): agentstate on PostgreSQL against raw `pg` baselines that run the
// same kind of SQL by hand, and against graphile-worker and pg-boss, all on the same server in the same run.
//   P1: CAS commit of a document, 1 committer and 8 concurrent committers (8 documents).
//   P2: claim + resolve of 10,000 items by 8 workers: in-process over a pool (one at a time, coalesced; or
//       in batches), and in 8 separate processes one at a time.
//   P3: reading the latest state of a 5,000-version document against a 1-version one.
// Every run works in fresh schemas (agentstate's, graphile-worker's, pg-boss's) dropped at the end.
// pg-child.ts drives these in a plain-node child process that pg-launch.ts starts (see there for why).
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import {
  Logger as GraphileLogger,
  runMigrations as graphileMigrations,
  makeWorkerUtils,
  run as runGraphileWorker,
} from 'graphile-worker';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { redactUrl } from '../src/core/redact.js';
import { agentstateCommitter, DOC_KIND, docBody, docPatch, mergePatch } from './doc-fixture.js';
import { freshDir, type Instance, loadLib, median, nowMs, REPO_ROOT, removeDir, settle } from './lib.js';

export { DOC_KIND, docBody, docPatch } from './doc-fixture.js';

/** The benchmark server. @default postgres://postgres@127.0.0.1:5432/test (trust auth) */
export const PG_URL = process.env.AGENTSTATE_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const GENESIS = '0'.repeat(64);

/** Null when the server answers, otherwise why not. */
export async function pgReachable(): Promise<string | null> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (err) {
    return err instanceof Error ? err.message || err.constructor.name : String(err);
  } finally {
    await client.end().catch(() => {});
  }
}

/** The URL with the password hidden, for output. */
export function redactedPgUrl(): string {
  return redactUrl(PG_URL);
}

function withSchema(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('schema', schema);
  return u.toString();
}

function sha256Hex(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

/**
 * One benchmark run's PostgreSQL state: a fresh agentstate schema (tables created by the library's
 * migrations on first open), graphile-worker's and pg-boss's own schemas, and an admin pool. `close` drops
 * all three schemas.
 */
export class PgEnv {
  readonly schema: string;
  readonly gwSchema: string;
  readonly bossSchema: string;
  readonly admin: pg.Pool;
  serverVersion = '';
  #seq = 0;

  constructor() {
    const tag = `${process.pid}_${randomBytes(3).toString('hex')}`;
    this.schema = `agentstate_bench_${tag}`;
    this.gwSchema = `agentstate_bench_${tag}_gw`;
    this.bossSchema = `agentstate_bench_${tag}_boss`;
    this.admin = new pg.Pool({ connectionString: PG_URL, max: 2 });
    this.admin.on('error', () => {});
  }

  /** The quoted schema name, for SQL text. */
  get q(): string {
    return `"${this.schema}"`;
  }

  get url(): string {
    return withSchema(PG_URL, this.schema);
  }

  async init(): Promise<void> {
    const res = await this.admin.query<{ v: string }>("SELECT current_setting('server_version') AS v");
    this.serverVersion = res.rows[0]?.v ?? '?';
    // Open once, so the tables exist before any raw baseline writes to them.
    await closeInst(await this.open('setup'));
  }

  /** A fresh agentstate instance (its own instance key) in the benchmark schema, on `clock` if given. */
  async open(label: string, clock?: () => number): Promise<Instance & { dir: string }> {
    const lib = await loadLib();
    const dir = freshDir(`pg-${label}`);
    const inst = await lib.openInstance({ dir, url: this.url, worker: 'bench', ...(clock ? { clock } : {}) });
    return Object.assign(inst, { dir });
  }

  /** A fresh instance key for a raw baseline (never one agentstate uses). */
  rawKey(label: string): string {
    this.#seq += 1;
    return `raw/${label}-${this.#seq}`;
  }

  async query<R extends pg.QueryResultRow = Record<string, unknown>>(sql: string, params?: unknown[]) {
    return (await this.admin.query<R>(sql, params)).rows;
  }

  async close(): Promise<void> {
    try {
      for (const s of [this.schema, this.gwSchema, this.bossSchema]) {
        await this.admin.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
      }
    } finally {
      await this.admin.end();
    }
  }
}

function instanceKey(inst: Instance): string {
  return `${inst.host}/${inst.name}`;
}

async function closeInst(inst: Instance & { dir: string }): Promise<void> {
  await inst.close();
  removeDir(inst.dir);
}

// ---------------------------------------------------------------------------------------------
// P1. CAS commit.

interface Committer {
  once(i: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * The raw single-statement CAS commit: conditional UPDATE of the document, its history row, and the
 * hash-chained state_committed event (head row locked and moved, stream sequence upserted, SHA-256 of the
 * previous hash, position and data computed in SQL), all in one autocommit statement: one round trip.
 */
function rawCommitSql(s: string): string {
  return `WITH _cas AS (
      UPDATE ${s}.documents SET version = version + 1, body = $4::jsonb, content_hash = $5,
        last_seq = last_seq + 1, updated_at = $6
      WHERE instance = $1 AND kind = $2 AND id = $3 AND version = $7
      RETURNING version, last_seq),
    _hist AS (
      INSERT INTO ${s}.document_history (instance, kind, id, seq, version, parent_version, noop, body,
        content_hash, actor, actor_kind, request_hash, created_at)
      SELECT $1, $2, $3, c.last_seq, c.version, $7, false, $4::jsonb, $5, $8, 'tool', '', $6 FROM _cas AS c),
    _prev AS (
      SELECT h.position, h.hash FROM ${s}.event_heads AS h
      WHERE h.instance = $1 AND EXISTS (SELECT 1 FROM _cas) FOR UPDATE),
    _head AS (
      UPDATE ${s}.event_heads AS h SET position = p.position + 1,
        hash = encode(sha256(convert_to(p.hash || (p.position + 1)::text || $9, 'UTF8')), 'hex')
      FROM _prev AS p WHERE h.instance = $1
      RETURNING h.position, h.hash, p.hash AS prev_hash),
    _seq AS (
      INSERT INTO ${s}.event_streams AS q (instance, stream, seq) SELECT $1, $10, 1 FROM _head
      ON CONFLICT (instance, stream) DO UPDATE SET seq = q.seq + 1
      RETURNING q.seq),
    _ev AS (
      INSERT INTO ${s}.events (instance, position, stream, stream_seq, type, data, actor, created_at,
        prev_hash, hash)
      SELECT $1, h.position, $10, q.seq, 'state_committed', $9::json, $8, $6, h.prev_hash, h.hash
      FROM _head AS h, _seq AS q)
    SELECT version FROM _cas`;
}

/** A raw committer on its own connection: holds the body and version, sends one statement per commit. */
async function rawCommitter(env: PgEnv, key: string, id: string): Promise<Committer> {
  const client = new pg.Client({ connectionString: PG_URL });
  client.on('error', () => {});
  await client.connect();
  const s = env.q;
  const now = Date.now();
  let body: Record<string, unknown> = docBody();
  let text = JSON.stringify(body);
  await client.query(
    `INSERT INTO ${s}.event_heads (instance, position, hash) VALUES ($1, 0, $2) ON CONFLICT DO NOTHING`,
    [key, GENESIS],
  );
  await client.query(
    `WITH _d AS (INSERT INTO ${s}.documents (instance, kind, id, version, body, content_hash, last_seq, created_at,
       updated_at) VALUES ($1, $2, $3, 1, $4::jsonb, $5, 1, $6, $6))
     INSERT INTO ${s}.document_history (instance, kind, id, seq, version, parent_version, body, content_hash,
       actor, actor_kind, request_hash, created_at) VALUES ($1, $2, $3, 1, 1, 0, $4::jsonb, $5, 'bench', 'tool', '', $6)`,
    [key, DOC_KIND, id, text, sha256Hex(text), now],
  );
  let version = 1;
  const sql = rawCommitSql(s);
  const stream = `doc:${DOC_KIND}/${id}`;
  return {
    async once(i) {
      const next = mergePatch(body, docPatch(i + 1)) as Record<string, unknown>;
      text = JSON.stringify(next);
      const hash = sha256Hex(text);
      const data = JSON.stringify({
        kind: DOC_KIND,
        id,
        version: version + 1,
        parent_version: version,
        actor_kind: 'tool',
        noop: false,
        content_hash: hash,
        write_id: null,
      });
      const res = await client.query<{ version: number }>({
        name: 'raw_commit',
        text: sql,
        values: [key, DOC_KIND, id, text, hash, Date.now(), version, 'bench', data, stream],
      });
      if (res.rows[0]?.version !== version + 1) throw new Error(`raw commit of ${id} lost the race`);
      version += 1;
      body = next;
    },
    async close() {
      await client.end();
    },
  };
}

/**
 * commits/s of two groups of committers (each group's committers run concurrently), side by side in
 * alternating blocks after a warm-up, so both see the same background load.
 */
async function groupPair(
  a: Committer[],
  b: Committer[],
  perCommitter: number,
  blocks = 10,
  warmup = 30,
): Promise<{ a: number; b: number; cpuA: number; cpuB: number }> {
  const counters = [0, 0];
  const step = async (group: Committer[], side: 0 | 1, k: number) => {
    await Promise.all(
      group.map(async (c) => {
        for (let i = 0; i < k; i++) await c.once(counters[side]! + i);
      }),
    );
    counters[side]! += k;
  };
  await step(a, 0, warmup);
  await step(b, 1, warmup);
  await settle();
  const per = Math.ceil(perCommitter / blocks);
  const ms = [0, 0];
  const ops = [0, 0];
  // This process's CPU time (user + system, all threads) while each side runs: the client's share of a
  // commit, apart from the time spent waiting for the server.
  const cpuUs = [0, 0];
  for (let blk = 0; blk < blocks; blk++) {
    for (const side of blk % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const)) {
      const group = side === 0 ? a : b;
      const t0 = nowMs();
      const c0 = process.cpuUsage();
      await step(group, side, per);
      const c = process.cpuUsage(c0);
      ms[side]! += nowMs() - t0;
      cpuUs[side]! += c.user + c.system;
      ops[side]! += per * group.length;
    }
  }
  return {
    a: (ops[0]! / ms[0]!) * 1000,
    b: (ops[1]! / ms[1]!) * 1000,
    cpuA: cpuUs[0]! / ops[0]!,
    cpuB: cpuUs[1]! / ops[1]!,
  };
}

export type CommitMode = 'one' | 'own-instances' | 'shared-instance';

/**
 * One round of P1. `one`: 1 committer each side. `own-instances`: 8 committers, each its own document in
 * its own agentstate instance (its own event log), against 8 raw connections with 8 instance keys.
 * `shared-instance`: 8 committers on 8 documents of one instance (one event log, one hash chain) through
 * one instance's pool, against 8 raw connections on one instance key.
 */
export async function commitRound(
  env: PgEnv,
  mode: CommitMode,
  perCommitter: number,
): Promise<{ agentstate: number; raw: number; agentstateCpuUs: number; rawCpuUs: number }> {
  const n = mode === 'one' ? 1 : 8;
  const insts: Array<Instance & { dir: string }> = [];
  const as: Committer[] = [];
  const raw: Committer[] = [];
  try {
    if (mode === 'shared-instance') insts.push(await env.open('commit-shared'));
    const sharedKey = env.rawKey('commit-shared');
    for (let k = 0; k < n; k++) {
      if (mode !== 'shared-instance') insts.push(await env.open(`commit-${k}`));
      const inst = insts[insts.length - 1]!;
      as.push(await agentstateCommitter(inst, `plan-${k}`));
      raw.push(
        await rawCommitter(env, mode === 'shared-instance' ? sharedKey : env.rawKey('commit'), `plan-${k}`),
      );
    }
    const r = await groupPair(as, raw, perCommitter);
    return { agentstate: r.a, raw: r.b, agentstateCpuUs: r.cpuA, rawCpuUs: r.cpuB };
  } finally {
    for (const c of raw) await c.close();
    for (const inst of insts) await closeInst(inst);
  }
}

/**
 * agentstate's own JavaScript per `docs.commit`, apart from the driver, the sockets and the server: the same
 * commits as P1's 1-connection row, with pg's pool answering at once (`connect` hands out a client whose
 * `query` resolves with the row the commit statement returns, and `Pool.query`, the NOTIFY hint's, with no
 * row). That is everything before the statement is given to pg and after its result comes back: input
 * checks, merge patch, canonical JSON and SHA-256, the statement and its parameters, the transaction
 * wrapper and the result. This process's CPU time per commit, the median of `blocks` blocks.
 */
export async function clientJsPerCommit(env: PgEnv, commits: number, blocks = 5): Promise<number> {
  const inst = await env.open('commit-js');
  const proto = pg.Pool.prototype as unknown as Record<'connect' | 'query', unknown>;
  const real = { connect: proto.connect, query: proto.query };
  try {
    const c = await agentstateCommitter(inst, 'plan-js');
    let seq = 1;
    let position = 1;
    const client = {
      query: () =>
        Promise.resolve({ command: 'SELECT', rowCount: 1, rows: [{ seq: ++seq, n: '1', last: ++position }] }),
      release: () => {},
    };
    proto.connect = () => Promise.resolve(client);
    proto.query = () => Promise.resolve({ command: 'SELECT', rowCount: 0, rows: [] });
    let i = 0;
    for (; i < 1000; i++) await c.once(i);
    const per = Math.ceil(commits / blocks);
    const us: number[] = [];
    for (let b = 0; b < blocks; b++) {
      const c0 = process.cpuUsage();
      for (let k = 0; k < per; k++, i++) await c.once(i);
      const d = process.cpuUsage(c0);
      us.push((d.user + d.system) / per);
    }
    return median(us);
  } finally {
    proto.connect = real.connect;
    proto.query = real.query;
    await closeInst(inst);
  }
}

// ---------------------------------------------------------------------------------------------
// P2. Claim + resolve, 8 in-process workers over a pool.

/**
 * Samples what a set of server backends are doing (pg_stat_activity, every `everyMs`) while a contender
 * runs: waiting for a lock, idle inside a transaction (the server waits for the client's next statement),
 * idle between transactions, waiting on WAL I/O at commit, or running. Shares of all samples.
 */
export class WaitSampler {
  readonly #env: PgEnv;
  readonly #pids: number[];
  readonly #counts = new Map<string, number>();
  #total = 0;
  #stop = false;
  #loop: Promise<void> | null = null;

  constructor(env: PgEnv, pids: number[]) {
    this.#env = env;
    this.#pids = pids;
  }

  start(everyMs = 25): void {
    this.#loop = (async () => {
      while (!this.#stop) {
        const rows = await this.#env.query<{ state: string | null; t: string | null; e: string | null }>(
          'SELECT state, wait_event_type AS t, wait_event AS e FROM pg_stat_activity WHERE pid = ANY($1::int[])',
          [this.#pids],
        );
        for (const r of rows) {
          let k: string;
          if (r.state === 'idle in transaction') k = 'idle in transaction (waiting for the client)';
          else if (r.state === 'idle') k = 'idle (between transactions)';
          else if (r.t === 'Lock') k = `lock wait (${r.e})`;
          else if (r.t) k = `${r.t}:${r.e}`;
          else k = 'running';
          this.#counts.set(k, (this.#counts.get(k) ?? 0) + 1);
          this.#total += 1;
        }
        await new Promise((resolve) => setTimeout(resolve, everyMs));
      }
    })();
  }

  async stop(): Promise<Record<string, number>> {
    this.#stop = true;
    await this.#loop;
    return Object.fromEntries([...this.#counts].map(([k, n]) => [k, n / Math.max(1, this.#total)]));
  }
}

/** The server pids of the connections whose last statement mentions `marker`. */
async function backendPids(env: PgEnv, marker: string): Promise<number[]> {
  const rows = await env.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND strpos(query, $1) > 0',
    [marker],
  );
  return rows.map((r) => r.pid);
}

export const WORKERS = 8;

export interface QueueRun {
  /** items/s from "go" (enqueue done, workers' connections open) to the last item completed. */
  itemsPerSec: number;
  ms: number;
  /** Audit: problems found (double claims, items not done exactly once), empty when all is well. */
  problems: string[];
  /** Per-worker item counts, where the contender exposes them. */
  perWorker: number[];
  /** Contender-specific detail for the notes. */
  detail?: string;
  /** Shares of server-side states of the contender's connections (see WaitSampler), when sampled. */
  waits?: Record<string, number>;
}

async function agentstateQueue(env: PgEnv, items: number, batch: number): Promise<QueueRun> {
  const inst = await env.open(batch > 1 ? 'claim-many' : 'claim');
  try {
    for (let off = 0; off < items; off += 2000) {
      const k = Math.min(2000, items - off);
      await inst.work.enqueueMany(Array.from({ length: k }, (_, i) => ({ title: `item ${off + i}` })));
    }
    // Open the pool's connections before the clock starts, as the others do, and find their server pids.
    await Promise.all(Array.from({ length: WORKERS }, () => inst.work.counts()));
    const pids = await backendPids(env, `count(*) AS n FROM ${env.q}.work_items`);
    await settle();
    const perWorker = new Array<number>(WORKERS).fill(0);
    const sampler = new WaitSampler(env, pids);
    sampler.start();
    const t0 = nowMs();
    await Promise.all(
      perWorker.map(async (_, w) => {
        const worker = `w${w}`;
        for (;;) {
          const claimed =
            batch > 1
              ? await inst.work.claimMany({ worker, limit: batch })
              : [await inst.work.claim({ worker })];
          if (claimed.length === 0 || !claimed[0]) return;
          if (batch > 1) {
            // The whole claimed batch in one transaction.
            await inst.work.resolveMany(
              claimed.map((item) => ({
                id: item!.id,
                status: 'done' as const,
                worker,
                attempt: item!.attempts,
              })),
            );
            perWorker[w]! += claimed.length;
            continue;
          }
          for (const item of claimed) {
            if (!item) continue;
            await inst.work.resolve({ id: item.id, status: 'done', worker, attempt: item.attempts });
            perWorker[w]! += 1;
          }
        }
      }),
    );
    const ms = nowMs() - t0;
    const waits = await sampler.stop();
    const problems = await auditItems(inst, items);
    return {
      itemsPerSec: (items / ms) * 1000,
      ms,
      problems,
      perWorker,
      waits,
      detail: `${pids.length} server connections sampled`,
    };
  } finally {
    await closeInst(inst);
  }
}

/**
 * The per-item audit of an agentstate run, through the library's readers: every item done on attempt 1,
 * named exactly once as claimed and once as resolved (batch events read per item), and the chain and every
 * row verified against the log.
 */
export async function auditItems(inst: Instance, items: number): Promise<string[]> {
  const problems: string[] = [];
  const counts = await inst.work.counts();
  if (counts.done !== items) problems.push(`${counts.done} of ${items} done`);
  const seen = new Map<string, { claimed: number; resolved: number }>();
  let after = 0;
  for (;;) {
    const page = await inst.events.read({
      type: ['work_item_claimed', 'work_item_resolved'],
      after,
      limit: 1000,
    });
    if (page.length === 0) break;
    for (const e of page) {
      const s = seen.get(e.work_item_id ?? '') ?? { claimed: 0, resolved: 0 };
      if (e.type === 'work_item_claimed') s.claimed += 1;
      else s.resolved += 1;
      if ((e.data as { attempt?: number }).attempt !== 1)
        problems.push(`${e.work_item_id} ${e.type} on attempt ≠ 1`);
      seen.set(e.work_item_id ?? '', s);
    }
    after = page.at(-1)!.position;
  }
  const once = [...seen.values()].filter((x) => x.claimed === 1 && x.resolved === 1).length;
  if (seen.size !== items || once !== items) {
    problems.push(
      `${once} of ${items} items named once as claimed and once as resolved (${seen.size} named)`,
    );
  }
  const v = await inst.events.verify();
  if (!v.ok) problems.push(`verify: ${v.problem_count} problems, first ${v.problems[0]?.message}`);
  return problems.slice(0, 5);
}

/**
 * agentstate in 8 separate processes (bench/pg-worker.mjs), each claiming and resolving one item at a time
 * on its own handle: nothing coalesces across processes. The clock runs from the common start to the last
 * process's last resolve.
 */
async function agentstateProcesses(env: PgEnv, items: number): Promise<QueueRun> {
  const inst = await env.open('procs');
  try {
    for (let off = 0; off < items; off += 2000) {
      const k = Math.min(2000, items - off);
      await inst.work.enqueueMany(Array.from({ length: k }, (_, i) => ({ title: `item ${off + i}` })));
    }
    const script = join(REPO_ROOT, 'bench', 'pg-worker.mjs');
    const startAt = Date.now() + 1500;
    const outs = await Promise.all(
      Array.from(
        { length: WORKERS },
        (_, w) =>
          new Promise<{ n: number; end: number }>((resolve, reject) => {
            const child = spawn(process.execPath, [script, inst.dir, env.url, `w${w}`, String(startAt)], {
              stdio: ['ignore', 'pipe', 'inherit'],
            });
            let out = '';
            child.stdout.on('data', (d) => (out += d));
            child.on('close', (code) =>
              code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`pg-worker exited ${code}`)),
            );
          }),
      ),
    );
    const ms = Math.max(...outs.map((o) => o.end)) - startAt;
    const problems = await auditItems(inst, items);
    return { itemsPerSec: (items / ms) * 1000, ms, problems, perWorker: outs.map((o) => o.n) };
  } finally {
    await closeInst(inst);
  }
}

/**
 * The raw baseline: 8 loops over a pg pool of 8, each `claim one (FOR UPDATE SKIP LOCKED)`, then `done`;
 * with `batch` > 1, each claims up to `batch` at once and marks them done in one UPDATE.
 */
async function rawQueue(env: PgEnv, items: number, batch = 1): Promise<QueueRun> {
  const key = env.rawKey('claim');
  const s = env.q;
  const start = Date.now();
  await env.query(
    `INSERT INTO ${s}.work_items (instance, id, title, created_at, updated_at)
     SELECT $1, 'wi_' || lpad(g::text, 6, '0'), 'item ' || g, $2::bigint + g, $2::bigint + g
     FROM generate_series(1, $3::int) AS g`,
    [key, start, items],
  );
  const pool = new pg.Pool({ connectionString: PG_URL, max: WORKERS });
  pool.on('error', () => {});
  try {
    // The key is [a-z/0-9-] only: safe in the text, which lets the sampler find these connections.
    const marker = `${env.schema} ${key} warm-up`;
    await Promise.all(Array.from({ length: WORKERS }, () => pool.query(`SELECT '${marker}'::text`)));
    const pids = await backendPids(env, marker);
    await settle();
    const claimSql = `WITH next AS (
        SELECT id FROM ${s}.work_items
        WHERE instance = $1 AND status = 'pending'
        ORDER BY priority DESC, created_at, id LIMIT $5 FOR UPDATE SKIP LOCKED)
      UPDATE ${s}.work_items AS w SET status = 'in_flight', lease_owner = $2, lease_expires_at = $3,
        claimed_at = $4, attempts = w.attempts + 1, updated_at = $4
      FROM next WHERE w.instance = $1 AND w.id = next.id
      RETURNING w.id, w.attempts`;
    const doneSql =
      batch === 1
        ? `UPDATE ${s}.work_items SET status = 'done', lease_expires_at = NULL, resolved_at = $4, updated_at = $4
           WHERE instance = $1 AND id = ($2::text[])[1] AND status = 'in_flight' AND lease_owner = $3
             AND attempts = ($5::int[])[1]`
        : `UPDATE ${s}.work_items AS w SET status = 'done', lease_expires_at = NULL, resolved_at = $4,
             updated_at = $4
           FROM unnest($2::text[], $5::int[]) AS x(id, attempts)
           WHERE w.instance = $1 AND w.id = x.id AND w.status = 'in_flight' AND w.lease_owner = $3
             AND w.attempts = x.attempts`;
    const perWorker = new Array<number>(WORKERS).fill(0);
    const problems: string[] = [];
    const sampler = new WaitSampler(env, pids);
    sampler.start();
    const t0 = nowMs();
    await Promise.all(
      perWorker.map(async (_, w) => {
        const worker = `w${w}`;
        for (;;) {
          const now = Date.now();
          const res = await pool.query<{ id: string; attempts: number }>({
            name: 'raw_claim',
            text: claimSql,
            values: [key, worker, now + 60_000, now, batch],
          });
          if (res.rows.length === 0) return;
          const done = await pool.query({
            name: batch === 1 ? 'raw_done' : 'raw_done_many',
            text: doneSql,
            values: [key, res.rows.map((r) => r.id), worker, Date.now(), res.rows.map((r) => r.attempts)],
          });
          if (done.rowCount !== res.rows.length) {
            problems.push(`resolve of ${res.rows.length} items updated ${done.rowCount} rows`);
          }
          perWorker[w]! += res.rows.length;
        }
      }),
    );
    const ms = nowMs() - t0;
    const waits = await sampler.stop();
    const [audit] = await env.query<{ done: number; once: number }>(
      `SELECT count(*) FILTER (WHERE status = 'done')::int AS done, count(*) FILTER (WHERE attempts = 1)::int AS once
       FROM ${s}.work_items WHERE instance = $1`,
      [key],
    );
    if (audit?.done !== items) problems.push(`${audit?.done} of ${items} done`);
    if (audit?.once !== items) problems.push(`${items - (audit?.once ?? 0)} items with attempts ≠ 1`);
    return { itemsPerSec: (items / ms) * 1000, ms, problems, perWorker, waits };
  } finally {
    await pool.end();
  }
}

/**
 * The bound of any design whose 8 one-at-a-time callers each wait for their own resolve to be durable: the
 * items are put in flight beforehand (claims free, as from a prefetched local queue) and every resolve is
 * ideally coalesced, the 8 workers' items in one autocommit UPDATE per round trip on one connection, with
 * no event and no returned row. A worker that has to wait for its commit can go no faster than this, so
 * neither can 8 of them; graphile-worker does not wait (a completed job's row is deleted later, in a batch,
 * and a crash runs the job again).
 */
async function rawAckBound(env: PgEnv, items: number): Promise<QueueRun> {
  const key = env.rawKey('ack');
  const s = env.q;
  const start = Date.now();
  await env.query(
    `INSERT INTO ${s}.work_items (instance, id, title, status, lease_owner, lease_expires_at, attempts, claimed_at,
       created_at, updated_at)
     SELECT $1, 'wi_' || lpad(g::text, 6, '0'), 'item ' || g, 'in_flight', 'w' || (g % ${WORKERS}),
       $2::bigint + 3600000, 1, $2::bigint, $2::bigint + g, $2::bigint + g
     FROM generate_series(1, $3::int) AS g`,
    [key, start, items],
  );
  const client = new pg.Client({ connectionString: PG_URL });
  client.on('error', () => {});
  await client.connect();
  try {
    await settle();
    const ids = Array.from({ length: items }, (_, g) => `wi_${String(g + 1).padStart(6, '0')}`);
    const problems: string[] = [];
    const t0 = nowMs();
    for (let off = 0; off < items; off += WORKERS) {
      const now = Date.now();
      // By primary key alone: with the status tested too, the planner scanned the instance's leases (a new
      // instance's statistics say it has a few), 5 ms a commit.
      const res = await client.query(
        `UPDATE ${s}.work_items SET status = 'done', lease_expires_at = NULL, resolved_at = $3, updated_at = $3
         WHERE instance = $1 AND id = ANY ($2::text[])`,
        [key, ids.slice(off, off + WORKERS), now],
      );
      if (res.rowCount !== Math.min(WORKERS, items - off))
        problems.push(`a commit updated ${res.rowCount} rows`);
    }
    const ms = nowMs() - t0;
    const [audit] = await env.query<{ done: number }>(
      `SELECT count(*)::int AS done FROM ${s}.work_items WHERE instance = $1 AND status = 'done'`,
      [key],
    );
    if (audit?.done !== items) problems.push(`${audit?.done} of ${items} done`);
    return {
      itemsPerSec: (items / ms) * 1000,
      ms,
      problems: problems.slice(0, 5),
      perWorker: [],
      detail: `${(ms / Math.ceil(items / WORKERS)).toFixed(3)} ms per durable commit of ${WORKERS} rows`,
    };
  } finally {
    await client.end();
  }
}

/** graphile-worker's tuning used here (see BENCHMARKS.md for how it was chosen). */
export const GRAPHILE_CONFIG = {
  concurrency: WORKERS,
  maxPoolSize: WORKERS + 2,
  pollInterval: 100,
  localQueueSize: 500,
  completeJobBatchDelay: 0,
};

let graphileMigrated = false;

/**
 * graphile-worker: jobs added with `addJobs` (one call), then `run()` with `concurrency` 8, a local queue
 * (batch fetch) and batched completion; a no-op task counts executions. When the count reaches `items`,
 * `runner.stop()` flushes the pending completions, and the clock stops. The job table must then be empty.
 */
async function graphileQueue(env: PgEnv, items: number): Promise<QueueRun> {
  const connectionString = PG_URL;
  const schema = env.gwSchema;
  const logger = new GraphileLogger(() => () => {});
  if (!graphileMigrated) {
    await graphileMigrations({ connectionString, schema, logger });
    graphileMigrated = true;
  }
  const utils = await makeWorkerUtils({ connectionString, schema, logger });
  try {
    for (let off = 0; off < items; off += 2000) {
      const k = Math.min(2000, items - off);
      await utils.addJobs(
        Array.from({ length: k }, (_, i) => ({ identifier: 'bench', payload: { i: off + i } })),
      );
    }
  } finally {
    await utils.release();
  }
  await settle();
  const seen = new Set<string>();
  let dupes = 0;
  let count = 0;
  let allDone: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    allDone = resolve;
  });
  const c = GRAPHILE_CONFIG;
  const t0 = nowMs();
  const runner = await runGraphileWorker({
    connectionString,
    schema,
    logger,
    concurrency: c.concurrency,
    maxPoolSize: c.maxPoolSize,
    pollInterval: c.pollInterval,
    noHandleSignals: true,
    taskList: {
      bench: async (_payload, helpers) => {
        const id = String(helpers.job.id);
        if (seen.has(id)) dupes += 1;
        seen.add(id);
        count += 1;
        if (count === items) allDone();
      },
    },
    preset: {
      worker: {
        localQueue: { size: c.localQueueSize },
        completeJobBatchDelay: c.completeJobBatchDelay,
      },
    },
  });
  const startedMs = nowMs() - t0;
  await finished;
  await runner.stop();
  const ms = nowMs() - t0;
  await runner.promise.catch(() => {});
  const [left] = await env.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}"._private_jobs`);
  const problems: string[] = [];
  if (dupes > 0) problems.push(`${dupes} jobs ran twice`);
  if (count !== items) problems.push(`${count} runs for ${items} jobs`);
  if (left?.n !== 0) problems.push(`${left?.n} jobs left in the table`);
  return {
    itemsPerSec: (items / ms) * 1000,
    ms,
    problems,
    perWorker: [],
    detail: `run() returned after ${startedMs.toFixed(0)} ms`,
  };
}

/** pg-boss's tuning used here (see BENCHMARKS.md for how it was chosen). */
export const BOSS_CONFIG = { batchSize: 500, max: WORKERS + 2 };

/**
 * pg-boss: jobs added with `insert` (one call per 2,000), then 8 loops of `fetch(batchSize)` +
 * `complete(ids)` (no `work()`, whose loop waits out its polling interval, ≥ 0.5 s, after every batch).
 */
async function bossQueue(boss: PgBoss, env: PgEnv, items: number, round: number): Promise<QueueRun> {
  const name = `bench_${round}`;
  await boss.createQueue(name);
  for (let off = 0; off < items; off += 2000) {
    const k = Math.min(2000, items - off);
    await boss.insert(Array.from({ length: k }, (_, i) => ({ name, data: { i: off + i } })));
  }
  await settle();
  const perWorker = new Array<number>(WORKERS).fill(0);
  const seen = new Set<string>();
  let dupes = 0;
  const t0 = nowMs();
  await Promise.all(
    perWorker.map(async (_, w) => {
      for (;;) {
        const jobs = await boss.fetch(name, { batchSize: BOSS_CONFIG.batchSize });
        if (jobs.length === 0) return;
        for (const j of jobs) {
          if (seen.has(j.id)) dupes += 1;
          seen.add(j.id);
        }
        await boss.complete(
          name,
          jobs.map((j) => j.id),
        );
        perWorker[w]! += jobs.length;
      }
    }),
  );
  const ms = nowMs() - t0;
  const [audit] = await env.query<{ done: number }>(
    `SELECT count(*)::int AS done FROM "${env.bossSchema}".job WHERE name = $1 AND state = 'completed'`,
    [name],
  );
  const problems: string[] = [];
  if (dupes > 0) problems.push(`${dupes} jobs fetched twice`);
  if (audit?.done !== items) problems.push(`${audit?.done} of ${items} completed`);
  return { itemsPerSec: (items / ms) * 1000, ms, problems, perWorker };
}

export type Contender =
  | 'agentstate'
  | 'agentstate-many'
  | 'agentstate-procs'
  | 'raw'
  | 'raw-many'
  | 'raw-instance'
  | 'raw-batch'
  | 'raw-ack'
  | 'graphile-worker'
  | 'pg-boss';
export const CONTENDERS: Contender[] = [
  'agentstate',
  'agentstate-many',
  'agentstate-procs',
  'raw',
  'raw-many',
  'raw-instance',
  'raw-batch',
  'raw-ack',
  'graphile-worker',
  'pg-boss',
];
/** The batch of the batched contenders (agentstate claimMany + resolveMany, raw-many): 500, like pg-boss batchSize and graphile-worker localQueue.size here (100 measured slower). */
export const CLAIM_MANY_LIMIT = Number(process.env.AGENTSTATE_BENCH_BATCH ?? 500);

/** Runs the contenders one after another (order rotated by round) on the same server. */
export class QueueBench {
  readonly env: PgEnv;
  #boss: PgBoss | null = null;

  constructor(env: PgEnv) {
    this.env = env;
  }

  async run(who: Contender, items: number, round: number): Promise<QueueRun> {
    switch (who) {
      case 'agentstate':
        return agentstateQueue(this.env, items, 1);
      case 'agentstate-many':
        return agentstateQueue(this.env, items, CLAIM_MANY_LIMIT);
      case 'raw':
        return rawQueue(this.env, items);
      case 'raw-many':
        return rawQueue(this.env, items, CLAIM_MANY_LIMIT);
      case 'agentstate-procs':
        return agentstateProcesses(this.env, items);
      case 'raw-instance': {
        // P4's raw form of the single-item design: an event per transition chained under the head lock.
        const { designQueue } = await import('./pg-designs.js');
        const r = await designQueue(this.env, 'instance', items, 1);
        return {
          itemsPerSec: r.itemsPerSec,
          ms: (items / r.itemsPerSec) * 1000,
          problems: r.problems,
          perWorker: [],
        };
      }
      case 'raw-batch': {
        // P4's raw form of the batch design, with agentstate's indexes: the bound of agentstate-many.
        const { designQueue } = await import('./pg-designs.js');
        const r = await designQueue(this.env, 'batch-full', items, CLAIM_MANY_LIMIT);
        return {
          itemsPerSec: r.itemsPerSec,
          ms: (items / r.itemsPerSec) * 1000,
          problems: r.problems,
          perWorker: [],
        };
      }
      case 'raw-ack':
        return rawAckBound(this.env, items);
      case 'graphile-worker':
        return graphileQueue(this.env, items);
      case 'pg-boss': {
        if (!this.#boss) {
          const boss = new PgBoss({
            connectionString: PG_URL,
            schema: this.env.bossSchema,
            max: BOSS_CONFIG.max,
            supervise: false,
            schedule: false,
            migrate: true,
          });
          boss.on('error', () => {});
          await boss.start();
          this.#boss = boss;
        }
        return bossQueue(this.#boss, this.env, items, round);
      }
    }
  }

  async close(): Promise<void> {
    if (this.#boss) await this.#boss.stop({ graceful: false, wait: true });
    this.#boss = null;
  }
}

// ---------------------------------------------------------------------------------------------
// P3. Reading the latest state, deep history vs none.

export interface ReadFixture {
  inst: Instance & { dir: string };
  big: string;
  small: string;
  versions: number;
  buildMs: number;
  raw: pg.Client;
  key: string;
  /** The quoted schema. */
  q: string;
  close(): Promise<void>;
}

/** One instance holding a 1-version document and one committed `versions` times through `docs.commit`. */
export async function buildReadFixture(env: PgEnv, versions: number): Promise<ReadFixture> {
  const inst = await env.open('reads');
  const t0 = nowMs();
  const big = 'deep';
  const small = 'fresh';
  let v = (
    await inst.docs.commit({
      kind: DOC_KIND,
      id: big,
      expected_version: 0,
      body: docBody(),
      actor: 'bench',
      actor_kind: 'tool',
    })
  ).version;
  while (v < versions) {
    v = (
      await inst.docs.commit({
        kind: DOC_KIND,
        id: big,
        expected_version: v,
        merge_patch: docPatch(v),
        actor: 'bench',
        actor_kind: 'tool',
      })
    ).version;
  }
  const buildMs = nowMs() - t0;
  await inst.docs.commit({
    kind: DOC_KIND,
    id: small,
    expected_version: 0,
    body: docBody(),
    actor: 'bench',
    actor_kind: 'tool',
  });
  const raw = new pg.Client({ connectionString: PG_URL });
  raw.on('error', () => {});
  await raw.connect();
  return {
    inst,
    big,
    small,
    versions: v,
    buildMs,
    raw,
    key: instanceKey(inst),
    q: env.q,
    async close() {
      await raw.end();
      await closeInst(inst);
    },
  };
}

/** The raw read: `SELECT version, body` by primary key on one connection (pg parses the jsonb). */
export async function rawLatest(fx: ReadFixture, id: string): Promise<unknown> {
  const res = await fx.raw.query({
    name: 'raw_latest',
    text: `SELECT version, body FROM ${fx.q}.documents WHERE instance = $1 AND kind = $2 AND id = $3`,
    values: [fx.key, DOC_KIND, id],
  });
  return res.rows[0];
}

/** Per-call latency (µs), medians of two functions measured in alternating blocks. */
export async function latencyPair(
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
  n: number,
  blocks = 10,
  warmup = 100,
): Promise<{ a: number; b: number }> {
  for (let i = 0; i < warmup; i++) {
    await a();
    await b();
  }
  await settle();
  const per = Math.ceil(n / blocks);
  const times: [number[], number[]] = [[], []];
  for (let blk = 0; blk < blocks; blk++) {
    for (const side of blk % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const)) {
      const fn = side === 0 ? a : b;
      for (let i = 0; i < per; i++) {
        const t0 = nowMs();
        await fn();
        times[side].push((nowMs() - t0) * 1000);
      }
    }
  }
  return { a: median(times[0]), b: median(times[1]) };
}

/** What the documents table looks like after the build (dead rows, HOT updates), for the notes. */
export async function documentsTableStats(
  env: PgEnv,
): Promise<{ liveTuples: number; deadTuples: number; hotUpdates: number; updates: number }> {
  const [r] = await env.query<{ live: string; dead: string; hot: string; upd: string }>(
    `SELECT n_live_tup AS live, n_dead_tup AS dead, n_tup_hot_upd AS hot, n_tup_upd AS upd
     FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'documents'`,
    [env.schema],
  );
  return {
    liveTuples: Number(r?.live ?? 0),
    deadTuples: Number(r?.dead ?? 0),
    hotUpdates: Number(r?.hot ?? 0),
    updates: Number(r?.upd ?? 0),
  };
}
