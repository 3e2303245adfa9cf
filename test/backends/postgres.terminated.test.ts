// PostgreSQL connections terminated under a running store (pg_terminate_backend, 57P01): the process never
// dies of an unhandled 'error' event, the call in flight fails STORAGE_UNAVAILABLE or succeeds, the next
// call reconnects by itself, nothing acknowledged is lost, and a LISTEN connection is re-established.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openPostgresBackend } from '../../src/backends/postgres/backend.js';
import { PostgresConnection } from '../../src/backends/postgres/connection.js';
import { openInstance } from '../../src/instance/instance.js';
import { adminQuery, PG_URL, postgresForThisFile } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

const schema = await postgresForThisFile();
const suite = schema === null ? describe.skip : describe;
const WORKER = new URL('../fixtures/pg-terminated-worker.ts', import.meta.url).pathname;
const root = tempDir('agentstate-pg-terminated-');
let n = 0;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A fresh application_name, so the test terminates its own connections and nobody else's. */
function appName(): string {
  return `agentstate-term-${process.pid}-${++n}`;
}

/** Terminates every backend with this application_name (only this test's own); returns how many. */
async function terminate(app: string): Promise<number> {
  const rows = await adminQuery<{ ok: boolean }>(
    'SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()',
    [app],
  );
  return rows.filter((r) => r.ok).length;
}

function storeUrl(): string {
  const u = new URL(PG_URL);
  u.searchParams.set('schema', schema!);
  return u.toString();
}

// Anything unhandled in this process (an 'error' event nobody listens to, a stray rejection) is counted here.
const unhandled: unknown[] = [];
const onUnhandled = (err: unknown) => unhandled.push(err);
beforeEach(() => {
  unhandled.length = 0;
  process.on('uncaughtException', onUnhandled);
  process.on('unhandledRejection', onUnhandled);
});
afterEach(() => {
  process.off('uncaughtException', onUnhandled);
  process.off('unhandledRejection', onUnhandled);
});

// biome-ignore lint/suspicious/noExplicitAny: one JSON line of the worker's output.
type Line = any;

suite('postgres: connections terminated under a running worker process', () => {
  it('the worker survives 60 rounds of terminations; calls succeed or fail STORAGE_UNAVAILABLE; nothing acknowledged is lost', async () => {
    const app = appName();
    const dir = join(root, 'worker');
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER, dir, storeUrl(), app, '6'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const lines: Line[] = [];
    let buf = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const parts = buf.split('\n');
      buf = parts.pop()!;
      for (const p of parts) lines.push(JSON.parse(p));
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    let exitCode: number | null | undefined;
    const exited = new Promise<number | null>((resolve) =>
      child.on('close', (code) => {
        exitCode = code;
        resolve(code);
      }),
    );
    const acks = (from = 0) => lines.slice(from).filter((l) => l.ack !== undefined).length;
    const waitFor = async (what: string, cond: () => boolean, ms: number) => {
      const deadline = Date.now() + ms;
      while (!cond()) {
        if (exitCode !== undefined) {
          throw new Error(`worker exited ${exitCode} while waiting for ${what}: ${stderr}`);
        }
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${stderr}`);
        await sleep(10);
      }
    };

    let terminated = 0;
    try {
      await waitFor('50 writes', () => acks() >= 50, 60_000);
      for (let round = 0; round < 60; round++) {
        terminated += await terminate(app);
        await sleep(10 + Math.floor(Math.random() * 60));
      }
      // It goes on by itself: new writes are acknowledged, and the LISTEN connection is back (a hint arrives).
      const after = lines.length;
      await waitFor('20 writes after the terminations', () => acks(after) >= 20, 60_000);
      await waitFor(
        'a hint after the terminations',
        () => lines.slice(after).some((l) => l.hint !== undefined),
        30_000,
      );
      child.stdin.end('stop\n');
      expect(await exited, stderr).toBe(0);
    } finally {
      if (exitCode === undefined) child.kill('SIGKILL');
    }

    expect(stderr).not.toMatch(/Unhandled|uncaught/i);
    expect(lines.at(-1)).toEqual({ done: true });
    expect(terminated).toBeGreaterThan(60);
    const failures = lines.filter((l) => l.fail !== undefined);
    expect(failures.filter((l) => l.code !== 'STORAGE_UNAVAILABLE')).toEqual([]);
    console.info(
      `worker: ${acks()} writes acknowledged, ${terminated} connections terminated, ${failures.length} calls failed STORAGE_UNAVAILABLE`,
    );

    // Nothing acknowledged is lost: every acknowledged enqueue is stored, every acknowledged resolve is done.
    const check = await openInstance({ dir, url: storeUrl() });
    try {
      const items = new Map((await check.work.list({ limit: 100_000 })).map((i) => [i.id, i]));
      const enqueued = lines.filter((l) => l.ack === 'enqueue');
      const resolved = lines.filter((l) => l.ack === 'resolve');
      expect(enqueued.length).toBeGreaterThan(0);
      expect(resolved.length).toBeGreaterThan(0);
      for (const a of enqueued) expect(items.has(a.id)).toBe(true);
      for (const a of resolved) expect(items.get(a.id)?.status).toBe('done');
      const resolvedEvents = new Set(
        (await check.events.read({ type: 'work_item_resolved', limit: 100_000 })).map((e) => e.work_item_id),
      );
      for (const a of resolved) expect(resolvedEvents.has(a.id)).toBe(true);
      const verify = await check.events.verify();
      expect(verify.ok).toBe(true);
    } finally {
      await check.close();
    }
  });
});

suite('postgres: a connection terminated inside the library', () => {
  it('mid-transaction (waiting on a lock): the call rejects STORAGE_UNAVAILABLE, nothing is unhandled, the next call works', async () => {
    const app = appName();
    const inst = await openInstance({
      dir: join(root, 'mid-tx'),
      url: storeUrl(),
      postgres: { applicationName: app, poolSize: 2, lockTimeoutMs: 30_000 },
    });
    const instance = `${inst.host}/${inst.name}`;
    const admin = new (await import('pg')).default.Client({ connectionString: PG_URL });
    admin.on('error', () => {});
    await admin.connect();
    try {
      await inst.work.enqueue({ title: 'before' });
      // Hold the instance's event head, so the next write blocks inside its transaction.
      await admin.query('BEGIN');
      await admin.query(`SELECT 1 FROM "${schema}".event_heads WHERE instance = $1 FOR UPDATE`, [instance]);
      const blocked = inst.work.enqueue({ title: 'during' });
      blocked.catch(() => {});
      let pids: number[] = [];
      for (let i = 0; i < 500 && pids.length === 0; i++) {
        await sleep(10);
        pids = (
          await adminQuery<{ pid: number }>(
            "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
            [app],
          )
        ).map((r) => r.pid);
      }
      expect(pids.length).toBe(1);
      await adminQuery('SELECT pg_terminate_backend($1)', [pids[0]]);
      await expect(blocked).rejects.toMatchObject({ code: 'STORAGE_UNAVAILABLE' });
      await admin.query('ROLLBACK');

      // The pool opens a new connection by itself; the store is whole.
      await inst.work.enqueue({ title: 'after' });
      const titles = (await inst.work.list()).map((i) => i.title);
      expect(titles).toContain('before');
      expect(titles).toContain('after');
      expect((await inst.events.verify()).ok).toBe(true);
      await sleep(50);
      expect(unhandled).toEqual([]);
    } finally {
      await admin.end().catch(() => {});
      await inst.close();
    }
  });

  it('between two statements of a transaction: it is re-run on a fresh connection (COMMIT was never sent)', async () => {
    const app = appName();
    const conn = await PostgresConnection.open({
      url: PG_URL,
      instance: 'term/between',
      schema: schema!,
      applicationName: app,
      poolSize: 2,
    });
    try {
      let runs = 0;
      const out = await conn.transaction(async (tx) => {
        runs++;
        const r = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid', []);
        if (runs === 1) {
          await adminQuery('SELECT pg_terminate_backend($1)', [r.rows[0]!.pid]);
          // The server's goodbye arrives while this client is checked out and idle.
          await sleep(200);
        }
        return (await tx.queryAndCommit<{ one: number }>('SELECT 1 AS one', [])).rows[0]!.one;
      });
      expect(out).toBe(1);
      expect(runs).toBe(2);
      expect((await conn.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one).toBe(1);
      expect(unhandled).toEqual([]);
    } finally {
      await conn.close();
    }
  });

  it('a LISTEN connection that is terminated is re-established, and hints arrive again', async () => {
    const app = appName();
    const b = await openPostgresBackend({
      url: PG_URL,
      schema: schema!,
      instance: 'term/listen',
      applicationName: app,
      poolSize: 2,
    });
    const positions: number[] = [];
    const stop = await b.listen((p) => positions.push(p));
    try {
      const append = () =>
        b.events.append([
          {
            type: 'tick',
            stream: 'instance',
            data: null,
            actor: 't',
            correlation_id: null,
            causation_id: null,
            work_item_id: null,
            created_at: Date.now(),
          },
        ]);
      await append();
      for (let i = 0; i < 200 && positions.length === 0; i++) await sleep(10);
      expect(positions).toEqual([1]);
      // Each round kills the listener; the next round waits until it is LISTENing again.
      for (let round = 0; round < 3; round++) {
        let listening = 0;
        for (let i = 0; i < 1000 && listening === 0; i++) {
          listening = (
            await adminQuery(
              "SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'",
              [app],
            )
          ).length;
          if (listening === 0) await sleep(10);
        }
        expect(listening).toBe(1);
        expect(await terminate(app)).toBeGreaterThan(0);
      }
      // The hint of an append is lost while the listener is down; appends go on until one arrives.
      const deadline = Date.now() + 20_000;
      while (positions.length < 2 && Date.now() < deadline) {
        await append();
        await sleep(200);
      }
      expect(positions.length).toBeGreaterThanOrEqual(2);
      expect(unhandled).toEqual([]);
    } finally {
      await stop();
      await b.close();
    }
  });
});
