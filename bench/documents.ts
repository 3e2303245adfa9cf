// Versioned-document benchmarks (issue 3): CAS commits against a raw better-sqlite3 baseline, reads
// (latest, an old version, a projection, history paging over 100,000 versions), and LangGraph's
// SqliteSaver.put as a reference point; and N processes committing (children in doc-worker.ts).
import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import { emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import Database from 'better-sqlite3';
import { agentstateCommitter, DOC_KIND, docBody, docPatch, mergePatch } from './doc-fixture.js';
import type { FromDocWorker, ToDocWorker } from './doc-worker.js';
import { pairRun, type SingleRunner } from './inprocess.js';
import {
  type Durability,
  freshDir,
  type Instance,
  loadLib,
  median,
  nowMs,
  REPO_ROOT,
  removeDir,
  settle,
} from './lib.js';
import { DOC_SCHEMA, EVENT_SCHEMA, RawEventChain, sha256Hex } from './sqlite.js';

export { DOC_KIND, docBody, docPatch } from './doc-fixture.js';

const HISTORY_COLS =
  'seq, version, parent_version, noop, body, content_hash, actor, actor_kind, provenance, write_id, request_hash, reason, override, created_at';

/**
 * The raw baseline for documents: agentstate's schema (migrations 0001 + 0002) and pragmas, and the
 * same writes by hand in one BEGIN IMMEDIATE transaction — read the current body, apply the merge
 * patch, conditional UPDATE … WHERE kind = ? AND id = ? AND version = ?, the history row, and the
 * hash-chained state_committed event.
 */
export class RawDocStore {
  readonly db: Database.Database;
  readonly #events: RawEventChain;
  readonly #begin: Database.Statement;
  readonly #commit: Database.Statement;
  readonly #rollback: Database.Statement;
  readonly #readBody: Database.Statement;
  readonly #insertDoc: Database.Statement;
  readonly #update: Database.Statement;
  readonly #maxSeq: Database.Statement;
  readonly #insertHistory: Database.Statement;
  readonly #getLatest: Database.Statement;
  readonly #getVersion: Database.Statement;
  readonly #project: Database.Statement;
  readonly #historyPage: Database.Statement;

  /** `create`: lay the schema on a new file; otherwise open a file agentstate created. */
  constructor(path: string, durability: Durability, create: boolean) {
    this.db = new Database(path, { timeout: 5000 });
    this.db.exec('PRAGMA busy_timeout = 5000');
    this.db.exec('PRAGMA journal_mode = WAL');
    this.db.exec(`PRAGMA synchronous = ${durability === 'normal' ? 'NORMAL' : 'FULL'}`);
    this.db.exec('PRAGMA foreign_keys = ON');
    if (create) {
      this.db.exec('BEGIN IMMEDIATE');
      this.db.exec(EVENT_SCHEMA);
      this.db.exec(DOC_SCHEMA);
      this.db.exec('COMMIT');
    }
    this.#events = new RawEventChain(this.db);
    this.#begin = this.db.prepare('BEGIN IMMEDIATE');
    this.#commit = this.db.prepare('COMMIT');
    this.#rollback = this.db.prepare('ROLLBACK');
    this.#readBody = this.db.prepare('SELECT version, body FROM documents WHERE kind = ? AND id = ?');
    this.#insertDoc = this.db.prepare(
      `INSERT INTO documents (kind, id, version, body, content_hash, forked_from, created_at, updated_at)
       VALUES (?, ?, 1, ?, ?, NULL, ?, ?) ON CONFLICT (kind, id) DO NOTHING`,
    );
    this.#update = this.db.prepare(
      `UPDATE documents SET version = version + 1, body = ?, content_hash = ?, updated_at = ?
       WHERE kind = ? AND id = ? AND version = ?`,
    );
    this.#maxSeq = this.db.prepare('SELECT MAX(seq) AS s FROM document_history WHERE kind = ? AND id = ?');
    this.#insertHistory = this.db.prepare(
      `INSERT INTO document_history (kind, id, ${HISTORY_COLS}) VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, ?, NULL, NULL, ?, NULL, NULL, ?)`,
    );
    this.#getLatest = this.db.prepare('SELECT * FROM documents WHERE kind = ? AND id = ?');
    this.#getVersion = this.db.prepare(
      `SELECT ${HISTORY_COLS} FROM document_history WHERE kind = ? AND id = ? AND version = ? AND noop = 0`,
    );
    this.#project = this.db.prepare(
      `SELECT version, json_extract(body, '$.status') AS a, json_extract(body, '$.meta.step') AS b
       FROM documents WHERE kind = ? AND id = ?`,
    );
    this.#historyPage = this.db.prepare(
      `SELECT ${HISTORY_COLS} FROM document_history WHERE kind = ? AND id = ? AND seq > ? ORDER BY seq LIMIT ?`,
    );
  }

  close(): void {
    this.db.close();
  }

  /**
   * One CAS commit of a merge patch (expected_version 0 creates the document with `patch` as body).
   * Returns the new version; throws when the document is not at `expected`.
   */
  commit(id: string, expected: number, patch: Record<string, unknown>, actor = 'bench'): number {
    const now = Date.now();
    this.#begin.run();
    try {
      let version: number;
      let bodyText: string;
      let contentHash: string;
      if (expected === 0) {
        bodyText = JSON.stringify(patch);
        contentHash = sha256Hex(bodyText);
        if (this.#insertDoc.run(DOC_KIND, id, bodyText, contentHash, now, now).changes === 0)
          throw new Error(`conflict: ${id} exists`);
        version = 1;
      } else {
        const cur = this.#readBody.get(DOC_KIND, id) as { version: number; body: string } | undefined;
        if (!cur || cur.version !== expected) throw new Error(`conflict: ${id} at ${cur?.version ?? 0}`);
        bodyText = JSON.stringify(mergePatch(JSON.parse(cur.body), patch));
        contentHash = sha256Hex(bodyText);
        const r = this.#update.run(bodyText, contentHash, now, DOC_KIND, id, expected);
        if (r.changes === 0) throw new Error(`conflict: ${id} moved`);
        version = expected + 1;
      }
      const seq = ((this.#maxSeq.get(DOC_KIND, id) as { s: number | null }).s ?? 0) + 1;
      const requestHash = sha256Hex(JSON.stringify([expected, patch]));
      this.#insertHistory.run(
        DOC_KIND,
        id,
        seq,
        version,
        expected,
        bodyText,
        contentHash,
        actor,
        'tool',
        requestHash,
        now,
      );
      this.#events.insert([
        {
          stream: `doc:${DOC_KIND}/${id}`,
          type: 'state_committed',
          data: JSON.stringify({
            kind: DOC_KIND,
            id,
            version,
            parent_version: expected,
            actor_kind: 'tool',
            noop: false,
            content_hash: contentHash,
            write_id: null,
          }),
          actor,
          work_item_id: null,
          created_at: now,
        },
      ]);
      this.#commit.run();
      return version;
    } catch (err) {
      this.#rollback.run();
      throw err;
    }
  }

  getLatest(id: string): { version: number; body: unknown } {
    const r = this.#getLatest.get(DOC_KIND, id) as { version: number; body: string };
    return { version: r.version, body: JSON.parse(r.body) };
  }

  getVersion(id: string, version: number): unknown {
    const r = this.#getVersion.get(DOC_KIND, id, version) as { body: string };
    return JSON.parse(r.body);
  }

  project(id: string): { version: number; a: unknown; b: unknown } {
    return this.#project.get(DOC_KIND, id) as { version: number; a: unknown; b: unknown };
  }

  historyPage(id: string, after: number, limit: number): Array<{ seq: number }> {
    return this.#historyPage.all(DOC_KIND, id, after, limit) as Array<{ seq: number }>;
  }
}

// ---------------------------------------------------------------------------------------------
// 1. CAS commit throughput, one process.

export interface DocPair {
  agentstate: number;
  raw: number;
}

async function openLib(dir: string, durability: Durability): Promise<Instance> {
  const lib = await loadLib();
  return lib.openInstance({ dir, durability, worker: 'bench' });
}

/** Commits a merge patch to one document, one commit per transaction, tracking the version it holds. */
async function agentstateCommitRunner(durability: Durability): Promise<SingleRunner> {
  const dir = freshDir(`doc-as-${durability}`);
  const inst = await openLib(dir, durability);
  const committer = await agentstateCommitter(inst, 'plan');
  return {
    once: (i) => committer.once(i),
    async close() {
      await inst.close();
      removeDir(dir);
    },
  };
}

function rawCommitRunner(durability: Durability): SingleRunner {
  const dir = freshDir(`doc-raw-${durability}`);
  const raw = new RawDocStore(join(dir, 'state.sqlite'), durability, true);
  const id = 'plan';
  let version = raw.commit(id, 0, docBody());
  return {
    once(i) {
      version = raw.commit(id, version, docPatch(i + 1));
    },
    close() {
      raw.close();
      removeDir(dir);
    },
  };
}

/** agentstate `docs.commit` vs the raw baseline, side by side in alternating blocks. */
export async function commitPair(durability: Durability, n: number): Promise<DocPair> {
  const as = await agentstateCommitRunner(durability);
  const raw = rawCommitRunner(durability);
  try {
    const r = await pairRun(as, raw, n);
    return { agentstate: r.a, raw: r.b };
  } finally {
    await as.close();
    await raw.close();
  }
}

/** LangGraph's SqliteSaver.put of a checkpoint holding the same ~270 B state, as a runner. */
function saverRunner(): SingleRunner & { synchronous: number } {
  const dir = freshDir('langgraph');
  const db = new Database(join(dir, 'checkpoints.sqlite'));
  const saver = new SqliteSaver(db);
  // setup() (tables, WAL) is protected; put() runs it on first use, but run it now to read the pragma.
  (saver as unknown as { setup(): void }).setup();
  // SqliteSaver sets WAL and nothing else; better-sqlite3 is built with SQLITE_DEFAULT_WAL_SYNCHRONOUS=1.
  const synchronous = db.pragma('synchronous', { simple: true }) as number;
  let config: { configurable: Record<string, unknown> } = {
    configurable: { thread_id: 'plan', checkpoint_ns: '' },
  };
  let state: Record<string, unknown> = docBody();
  return {
    synchronous,
    async once(i) {
      state = mergePatch(state, docPatch(i + 1)) as Record<string, unknown>;
      const cp = emptyCheckpoint();
      cp.id = uuid6(-1);
      cp.channel_values = { state };
      cp.channel_versions = { state: i + 1 };
      config = (await saver.put(config, cp, { source: 'loop', step: i + 1, parents: {} })) as typeof config;
    },
    close() {
      db.close();
      removeDir(dir);
    },
  };
}

/** agentstate `docs.commit` vs SqliteSaver.put, side by side; both at synchronous=NORMAL. */
export async function saverPair(
  n: number,
): Promise<{ agentstate: number; saver: number; synchronous: number }> {
  const as = await agentstateCommitRunner('normal');
  const saver = saverRunner();
  try {
    const r = await pairRun(as, saver, n);
    return { agentstate: r.a, saver: r.b, synchronous: saver.synchronous };
  } finally {
    await as.close();
    await saver.close();
  }
}

// ---------------------------------------------------------------------------------------------
// 3. Reads.

export interface ReadFixture {
  dir: string;
  inst: Instance;
  raw: RawDocStore;
  /** The 10-version document and the 100,000-version one. */
  small: string;
  big: string;
  smallVersions: number;
  bigVersions: number;
  buildMs: number;
  close(): Promise<void>;
}

/**
 * One instance holding a 10-version document (committed through agentstate) and a document with
 * `bigVersions` versions, bulk-inserted into documents/document_history in one raw transaction
 * (no events: reads do not touch the log).
 */
export async function buildReadFixture(bigVersions: number): Promise<ReadFixture> {
  const t0 = nowMs();
  const dir = freshDir('doc-reads');
  const setup = await openLib(dir, 'normal');
  const small = 'small';
  const big = 'big';
  let v = 0;
  for (let i = 0; i < 10; i++) {
    v = (
      await setup.docs.commit({
        kind: DOC_KIND,
        id: small,
        expected_version: v,
        ...(v === 0 ? { body: docBody() } : { merge_patch: docPatch(i) }),
        actor: 'bench',
        actor_kind: 'tool',
      })
    ).version;
  }
  await setup.close();

  const path = join(dir, 'state.sqlite');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const insert = db.prepare(
    `INSERT INTO document_history (kind, id, ${HISTORY_COLS}) VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, ?, NULL, NULL, ?, NULL, NULL, ?)`,
  );
  const start = Date.now() - bigVersions;
  let body: unknown = docBody();
  let text = '';
  let hash = '';
  db.transaction(() => {
    for (let version = 1; version <= bigVersions; version++) {
      if (version > 1) body = mergePatch(body, docPatch(version));
      text = JSON.stringify(body);
      hash = sha256Hex(text);
      insert.run(
        DOC_KIND,
        big,
        version,
        version,
        version - 1,
        text,
        hash,
        'bench',
        'tool',
        sha256Hex(String(version)),
        start + version,
      );
    }
    db.prepare(
      `INSERT INTO documents (kind, id, version, body, content_hash, forked_from, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, NULL, ?, ?)`,
    ).run(DOC_KIND, big, bigVersions, text, hash, start + 1, start + bigVersions);
  })();
  db.close();

  const inst = await openLib(dir, 'full');
  const raw = new RawDocStore(path, 'full', false);
  const check = await inst.docs.get({ kind: DOC_KIND, id: big });
  if (check.version !== bigVersions) throw new Error(`big document at ${check.version}`);
  return {
    dir,
    inst,
    raw,
    small,
    big,
    smallVersions: v,
    bigVersions,
    buildMs: nowMs() - t0,
    async close() {
      raw.close();
      await inst.close();
      removeDir(dir);
    },
  };
}

/**
 * Median latency (µs) of single calls of `a` and `b`, run in alternating blocks after a warm-up,
 * each call timed on its own.
 */
export async function latencyPair(
  a: () => unknown,
  b: () => unknown,
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
    for (const side of blk % 2 === 0 ? [0, 1] : [1, 0]) {
      const fn = side === 0 ? a : b;
      const out = times[side as 0 | 1];
      for (let i = 0; i < per; i++) {
        const t0 = nowMs();
        await fn();
        out.push((nowMs() - t0) * 1000);
      }
    }
  }
  return { a: median(times[0]), b: median(times[1]) };
}

/** Pages through a whole history with `limit` entries per call; returns ms and the entry count. */
export async function walkHistory(
  fx: ReadFixture,
  side: 'agentstate' | 'raw',
  limit: number,
): Promise<{ ms: number; entries: number }> {
  const t0 = nowMs();
  let entries = 0;
  let after = 0;
  for (;;) {
    if (side === 'agentstate') {
      const page = await fx.inst.docs.history({ kind: DOC_KIND, id: fx.big, after, limit });
      entries += page.entries.length;
      if (page.next_after === null) break;
      after = page.next_after;
    } else {
      const rows = fx.raw.historyPage(fx.big, after, limit);
      entries += rows.length;
      if (rows.length < limit) break;
      after = rows[rows.length - 1]!.seq;
    }
  }
  return { ms: nowMs() - t0, entries };
}

// ---------------------------------------------------------------------------------------------
// 2. Commits from N processes.

const DOC_WORKER = join(REPO_ROOT, 'bench', 'doc-worker.ts');

function waitForWorker(child: ChildProcess, type: FromDocWorker['type']): Promise<FromDocWorker> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: FromDocWorker) => {
      if (m.type === type) {
        cleanup();
        resolve(m);
      } else if (m.type === 'error') {
        cleanup();
        reject(new Error(`doc worker failed: ${m.message}`));
      }
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`doc worker exited with ${code} before '${type}'`));
    };
    const cleanup = () => {
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

export interface DocRace {
  processes: number;
  mode: 'own' | 'hot';
  commits: number;
  ms: number;
  commitsPerSec: number;
  conflicts: number;
  /** conflicts ÷ (commits + conflicts): the share of commit attempts refused with STATE_CONFLICT. */
  conflictRate: number;
  lockTimeouts: number;
  lockTimeoutMaxWaitMs: number;
  /** Versions, history rows, state_committed events and (hot) the shared counter all add up. */
  auditOk: boolean;
  auditNote: string;
  chainOk: boolean;
  perWorkerMs: number[];
}

/**
 * `processes` children make `totalCommits` commits between them: each on its own document (`own`),
 * or all on one document as read–modify–commit loops on a shared counter (`hot`). Then audits.
 */
export async function docRace(
  processes: number,
  mode: 'own' | 'hot',
  totalCommits: number,
  durability: Durability,
): Promise<DocRace> {
  const lib = await loadLib();
  const dir = freshDir(`docrace-${mode}-${processes}`);
  const per = Math.ceil(totalCommits / processes);
  const workers = Array.from({ length: processes }, (_, k) => `w${k}`);
  const docOf = (w: string) => (mode === 'hot' ? 'hot' : `doc-${w}`);
  try {
    const setup = await lib.openInstance({ dir, durability, worker: 'setup' });
    for (const id of new Set(workers.map(docOf))) {
      await setup.docs.commit({
        kind: DOC_KIND,
        id,
        expected_version: 0,
        body: { ...docBody(), count: 0 },
        actor: 'setup',
        actor_kind: 'tool',
      });
    }
    await setup.close();

    const children = workers.map((w) =>
      fork(DOC_WORKER, [], {
        cwd: REPO_ROOT,
        execArgv: ['--import', 'tsx'],
        env: {
          ...process.env,
          BENCH_DIR: dir,
          BENCH_WORKER: w,
          BENCH_DURABILITY: durability,
          BENCH_MODE: mode,
          BENCH_DOC: docOf(w),
          BENCH_COMMITS: String(per),
        },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      }),
    );
    try {
      await Promise.all(children.map((c) => waitForWorker(c, 'ready')));
      const done = children.map((c) => waitForWorker(c, 'done'));
      const t0 = nowMs();
      for (const c of children) c.send({ type: 'go' } satisfies ToDocWorker);
      const reports = (await Promise.all(done)) as Array<Extract<FromDocWorker, { type: 'done' }>>;
      const ms = nowMs() - t0;
      const commits = reports.reduce((n, r) => n + r.commits, 0);
      const conflicts = reports.reduce((n, r) => n + r.conflicts, 0);

      // Audit from the database: no lost or doubled commit.
      const check = await lib.openInstance({ dir, durability, worker: 'auditor' });
      const problems: string[] = [];
      for (const id of new Set(workers.map(docOf))) {
        const expectedCommits = mode === 'hot' ? per * processes : per;
        const doc = await check.docs.get({ kind: DOC_KIND, id });
        if (doc.version !== 1 + expectedCommits) problems.push(`${id} at version ${doc.version}`);
        if (mode === 'hot' && (doc.body as { count: number }).count !== expectedCommits)
          problems.push(
            `${id} count ${(doc.body as { count: number }).count} ≠ ${expectedCommits} (lost update)`,
          );
        let rows = 0;
        let after = 0;
        for (;;) {
          const page = await check.docs.history({ kind: DOC_KIND, id, after, limit: 10_000 });
          rows += page.entries.length;
          if (page.next_after === null) break;
          after = page.next_after;
        }
        if (rows !== doc.version) problems.push(`${id} has ${rows} history rows for ${doc.version} versions`);
      }
      const db = new Database(join(dir, 'state.sqlite'), { readonly: true });
      const events = (
        db.prepare("SELECT COUNT(*) AS n FROM events WHERE type = 'state_committed'").get() as { n: number }
      ).n;
      db.close();
      const docs = new Set(workers.map(docOf)).size;
      if (events !== commits + docs)
        problems.push(`${events} state_committed events for ${commits + docs} commits`);
      const chainOk = (await check.events.verify()).ok;
      await check.close();
      return {
        processes,
        mode,
        commits,
        ms,
        commitsPerSec: (commits / ms) * 1000,
        conflicts,
        conflictRate: conflicts / (commits + conflicts),
        lockTimeouts: reports.reduce((n, r) => n + r.lockTimeouts, 0),
        lockTimeoutMaxWaitMs: Math.max(0, ...reports.map((r) => r.lockTimeoutMaxWaitMs)),
        auditOk: problems.length === 0 && chainOk,
        auditNote: problems.join('; '),
        chainOk,
        perWorkerMs: reports.map((r) => Math.round(r.ms)),
      };
    } finally {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill();
    }
  } finally {
    removeDir(dir);
  }
}
