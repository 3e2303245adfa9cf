// Multi-process benchmarks: N worker processes claiming from one instance file (3), and one workflow
// invocation as a process vs a bare better-sqlite3 insert (4).
import { type ChildProcess, fork, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { type Durability, freshDir, loadLib, nowMs, REPO_ROOT, removeDir } from './lib.js';
import type { FromWorker, ToWorker } from './worker.js';

const WORKER = join(REPO_ROOT, 'bench', 'worker.ts');

export interface ClaimRace {
  processes: number;
  items: number;
  /** From `go` to the last worker's report. */
  ms: number;
  itemsPerSec: number;
  /** Items whose work_item_claimed event appears more than once. */
  doubleClaims: number;
  /** Items some worker reported claiming that another worker also reported. */
  reportedTwice: number;
  /** Items not done (or done with attempts != 1) at the end. */
  notDoneOnce: number;
  /** Items no worker reported. */
  missing: number;
  chainOk: boolean;
  /** Calls refused with LOCK_TIMEOUT (each retried), the longest wait before one, and SQLite's codes. */
  lockTimeouts: number;
  lockTimeoutMaxWaitMs: number;
  lockTimeoutCodes: string[];
  perWorker: number[];
}

function waitFor(child: ChildProcess, type: FromWorker['type']): Promise<FromWorker> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: FromWorker) => {
      if (m.type === type) {
        cleanup();
        resolve(m);
      } else if (m.type === 'error') {
        cleanup();
        reject(new Error(`worker failed: ${m.message}`));
      }
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`worker exited with ${code} before '${type}'`));
    };
    const cleanup = () => {
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

/** Fills an instance with `items` items, races `processes` workers over it, and audits the result. */
export async function claimRace(
  processes: number,
  items: number,
  durability: Durability,
): Promise<ClaimRace> {
  const lib = await loadLib();
  const dir = freshDir(`race-${processes}`);
  try {
    const setup = await lib.openInstance({ dir, durability, worker: 'filler' });
    const ids = (
      await setup.work.enqueueMany(Array.from({ length: items }, (_, i) => ({ title: `job ${i}` })))
    ).map((i) => i.id);
    await setup.close();

    const children = Array.from({ length: processes }, (_, k) =>
      fork(WORKER, [], {
        cwd: REPO_ROOT,
        execArgv: ['--import', 'tsx'],
        env: { ...process.env, BENCH_DIR: dir, BENCH_WORKER: `w${k}`, BENCH_DURABILITY: durability },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      }),
    );
    try {
      await Promise.all(children.map((c) => waitFor(c, 'ready')));
      const done = children.map((c) => waitFor(c, 'done'));
      const t0 = nowMs();
      for (const c of children) c.send({ type: 'go' } satisfies ToWorker);
      const reports = (await Promise.all(done)) as Array<Extract<FromWorker, { type: 'done' }>>;
      const ms = nowMs() - t0;

      // Audit: every item claimed exactly once, by the workers' own reports and by the event log.
      const seen = new Set<string>();
      let reportedTwice = 0;
      for (const r of reports)
        for (const id of r.claimed) {
          if (seen.has(id)) reportedTwice += 1;
          seen.add(id);
        }
      const missing = ids.filter((id) => !seen.has(id)).length;
      const db = new Database(join(dir, 'state.sqlite'), { readonly: true });
      const doubleClaims = (
        db
          .prepare(
            `SELECT COUNT(*) AS n FROM (SELECT work_item_id FROM events WHERE type = 'work_item_claimed'
               GROUP BY work_item_id HAVING COUNT(*) > 1)`,
          )
          .get() as { n: number }
      ).n;
      const notDoneOnce = (
        db
          .prepare(`SELECT COUNT(*) AS n FROM work_items WHERE NOT (status = 'done' AND attempts = 1)`)
          .get() as { n: number }
      ).n;
      db.close();
      const check = await lib.openInstance({ dir, durability, worker: 'auditor' });
      const chainOk = (await check.events.verify()).ok;
      await check.close();
      return {
        processes,
        items,
        ms,
        itemsPerSec: (items / ms) * 1000,
        doubleClaims,
        reportedTwice,
        notDoneOnce,
        missing,
        chainOk,
        lockTimeouts: reports.reduce((n, r) => n + r.lockTimeouts.length, 0),
        lockTimeoutMaxWaitMs: Math.max(0, ...reports.flatMap((r) => r.lockTimeouts.map((l) => l.waitedMs))),
        lockTimeoutCodes: [...new Set(reports.flatMap((r) => r.lockTimeouts.map((l) => l.code)))],
        perWorker: reports.map((r) => r.claimed.length),
      };
    } finally {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill();
    }
  } finally {
    removeDir(dir);
  }
}

export interface ProcessRun {
  ms: number;
  rssKb: number;
}

/** Runs a command under /usr/bin/time; wall time measured here, peak RSS (KiB) from time's %M. */
function timed(cmd: string[], env: NodeJS.ProcessEnv, timeFile: string): ProcessRun {
  const t0 = nowMs();
  const r = spawnSync('/usr/bin/time', ['-f', '%M', '-o', timeFile, ...cmd], {
    cwd: REPO_ROOT,
    env,
    encoding: 'utf8',
  });
  const ms = nowMs() - t0;
  if (r.status !== 0) throw new Error(`${cmd.join(' ')} failed (${r.status}): ${r.stderr}`);
  const rssKb = Number.parseInt(readFileSync(timeFile, 'utf8').trim().split('\n').pop() ?? '', 10);
  return { ms, rssKb };
}

/** The floor: Node starts, loads better-sqlite3, opens a WAL database and inserts one row durably. */
const FLOOR_SCRIPT = [
  "const Database = require('better-sqlite3');",
  'const db = new Database(process.env.BENCH_DB, { timeout: 5000 });',
  "db.pragma('journal_mode = WAL');",
  "db.pragma('synchronous = FULL');",
  "db.prepare('INSERT INTO t (title, created_at) VALUES (?, ?)').run('bench item', Date.now());",
  'db.close();',
].join(' ');

export interface WorkflowProcessResult {
  cli: ProcessRun[];
  floor: ProcessRun[];
  bareNode: ProcessRun[];
  itemsEnqueued: number;
}

/**
 * `node dist/cli/main.js EnqueueWorkItem` with the MF_* contract, vs the floor, vs `node -e ''`.
 * Runs are interleaved so drifting machine load hits all three alike.
 */
export async function workflowProcess(runs: number, warmup = 2): Promise<WorkflowProcessResult> {
  const lib = await loadLib();
  const dir = freshDir('cli');
  const instDir = join(dir, 'agent');
  const floorDb = join(dir, 'floor.sqlite');
  const timeFile = join(dir, 'time.txt');
  try {
    // The instance exists already (a host scaffolds it once); each invocation enqueues one item.
    const inst = await lib.openInstance({ dir: instDir });
    await inst.close();
    const fdb = new Database(floorDb);
    fdb.pragma('journal_mode = WAL');
    fdb.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, title TEXT NOT NULL, created_at INTEGER NOT NULL)');
    fdb.close();

    const cliEnv = {
      ...process.env,
      MF_INSTANCE_DIR: instDir,
      MF_TRIGGER_PAYLOAD_JSON: JSON.stringify({ title: 'bench item', priority: 1 }),
    };
    const floorEnv = { ...process.env, BENCH_DB: floorDb };
    const out: WorkflowProcessResult = { cli: [], floor: [], bareNode: [], itemsEnqueued: 0 };
    for (let i = 0; i < runs + warmup; i++) {
      const order = i % 3;
      const one = (which: number) => {
        if (which === 0)
          return {
            k: 'cli' as const,
            r: timed(['node', 'dist/cli/main.js', 'EnqueueWorkItem'], cliEnv, timeFile),
          };
        if (which === 1)
          return { k: 'floor' as const, r: timed(['node', '-e', FLOOR_SCRIPT], floorEnv, timeFile) };
        return { k: 'bareNode' as const, r: timed(['node', '-e', ''], process.env, timeFile) };
      };
      for (let j = 0; j < 3; j++) {
        const { k, r } = one((order + j) % 3);
        if (i >= warmup) out[k].push(r);
      }
    }
    const check = await lib.openInstance({ dir: instDir });
    out.itemsEnqueued = (await check.work.counts()).pending;
    await check.close();
    return out;
  } finally {
    rmSync(timeFile, { force: true });
    removeDir(dir);
  }
}
