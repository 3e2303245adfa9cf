// Real workflows on agentstate's World through a crash, on SQLite and on PostgreSQL: the process running a
// workflow (serve-chain.mjs hosting workflows/chain.ts, compiled by the SDK's own `workflow build`) dies by
// SIGKILL between two steps; a new process started later (its store clock past the dead one's lease) finishes
// the run. Each step's side effect (a line in a file, as the outside world would see it) happened once, the
// run's events are dense 1-based positions, and `verify` finds the chain and the rows in step. And two
// processes serving one World on PostgreSQL: every message handled by one of them once, every step once.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { WORLD_MODULE } from './world.js';

const SERVER = new URL('./serve-chain.mjs', import.meta.url).pathname;
const root = mkdtempSync(join(tmpdir(), 'agentstate-wf-crash-'));
const url = process.env.AGENTSTATE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schemas: string[] = [];

afterAll(async () => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  for (const s of schemas) await client.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  await client.end();
});

/** A World process: its printed lines so far, a promise of its end, and a way to wait for a line. */
interface Proc {
  lines: string[];
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
  waitFor(prefix: string, count?: number): Promise<string[]>;
  kill(signal?: NodeJS.Signals): void;
}

function serveChain(env: Record<string, string>): Proc {
  const child = spawn(process.execPath, [SERVER], { env: { ...process.env, ...env }, cwd: root });
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  let buf = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    const parts = buf.split('\n');
    buf = parts.pop() ?? '';
    lines.push(...parts);
    for (const w of waiters) w();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>(
    (resolve) => {
      child.on('close', (code, signal) => {
        for (const w of waiters) w();
        resolve({ code, signal, stderr });
      });
    },
  );
  let closed = false;
  void ended.then(() => {
    closed = true;
  });
  return {
    lines,
    ended,
    kill: (signal = 'SIGTERM') => child.kill(signal),
    waitFor: (prefix, count = 1) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = lines.filter((l) => l.startsWith(prefix));
          if (found.length >= count) {
            waiters.delete(check);
            resolve(found);
          } else if (closed) {
            waiters.delete(check);
            reject(new Error(`the process ended before printing ${count} × "${prefix}": ${stderr}`));
          }
        };
        waiters.add(check);
        check();
      }),
  };
}

/** The side effects seen: `[tag, step, pid]` per line of the file. */
function effects(file: string): Array<[string, number, string]> {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [tag, i, pid] = l.split(' ');
      return [tag!, Number(i), pid!];
    });
}

const backends = [
  { name: 'sqlite', env: (dir: string) => ({ AGENTSTATE_WORKFLOW_DIR: dir, AGENTSTATE_WORKFLOW_URL: '' }) },
  {
    name: 'postgres',
    env: (dir: string) => {
      const schema = `agentstate_wf_crash_${process.pid}_${schemas.length}`;
      schemas.push(schema);
      return {
        AGENTSTATE_WORKFLOW_DIR: dir,
        AGENTSTATE_WORKFLOW_URL: url,
        AGENTSTATE_WORKFLOW_SCHEMA: schema,
      };
    },
  },
] as const;

async function openStore(env: Record<string, string>) {
  const { openInstance } = await import(new URL('../../../dist/index.js', import.meta.url).href);
  const { createWorldStorage } = await import(WORLD_MODULE.replace(/world\.js$/, 'storage.js'));
  const instance = await openInstance({
    dir: env.AGENTSTATE_WORKFLOW_DIR,
    ...(env.AGENTSTATE_WORKFLOW_URL ? { url: env.AGENTSTATE_WORKFLOW_URL } : {}),
    ...(env.AGENTSTATE_WORKFLOW_SCHEMA ? { schema: env.AGENTSTATE_WORKFLOW_SCHEMA } : {}),
  });
  return { instance, storage: createWorldStorage(instance) };
}

describe.each(backends)('$name: a workflow through a SIGKILL between two steps', (b) => {
  for (const killAt of [2, 0]) {
    it(`killed as step ${killAt} of 4 begins: after a restart the run completes, each step's effect happened once`, async () => {
      const env = b.env(join(root, `${b.name}-kill-${killAt}`, 'world'));
      const file = join(root, `${b.name}-kill-${killAt}.effects`);
      writeFileSync(file, '');
      const tag = `kill${killAt}-ü|+`;
      const first = serveChain({
        ...env,
        EFFECTS_FILE: file,
        START: '1',
        TAG: tag,
        STEPS: '4',
        KILL_AT_STEP: String(killAt),
      });
      const [runLine] = await first.waitFor('run ');
      const runId = runLine!.split(' ')[1]!;
      const end = await first.ended;
      expect(end.signal).toBe('SIGKILL');
      const before = effects(file);
      // What the killed process did: the steps before the kill, once each, and nothing after.
      expect(before.map(([, i]) => i)).toEqual([0, 1, 2, 3].slice(0, killAt));

      // Two hours later on the store's clock: the dead process's lease on its message has run out.
      const second = serveChain({
        ...env,
        EFFECTS_FILE: file,
        WAIT: runId,
        CLOCK_OFFSET_MS: String(2 * 3_600_000),
      });
      const [done] = await second.waitFor('done ');
      expect(done).toBe(`done ${runId} completed 6`);
      expect((await second.ended).code).toBe(0);

      const seen = effects(file);
      expect(seen.map(([t]) => t).every((t) => t === `${tag}-0`)).toBe(true);
      expect([0, 1, 2, 3].map((i) => seen.filter(([, x]) => x === i).length)).toEqual([1, 1, 1, 1]);
      // The steps recorded before the kill were not run again by the second process.
      const secondPids = new Set(seen.slice(killAt).map(([, , pid]) => pid));
      expect(secondPids.size).toBe(1);
      expect(seen.slice(0, killAt).every(([, , pid]) => !secondPids.has(pid))).toBe(true);

      const { instance, storage } = await openStore(env);
      try {
        const run = await storage.runs.get(runId);
        expect(run.status).toBe('completed');
        // The run's events: dense 1-based positions, each step started before it completed.
        const events: Array<{ eventId: string; eventType: string; correlationId?: string }> = [];
        let cursor: string | undefined;
        for (;;) {
          const page = await storage.events.list({ runId, pagination: { sortOrder: 'asc', cursor } });
          events.push(...page.data);
          if (!page.hasMore) break;
          cursor = page.cursor;
        }
        expect(events.map((e) => e.eventId)).toEqual(
          events.map((_, n) => `evnt_${String(n + 1).padStart(26, '0')}`),
        );
        expect(events.filter((e) => e.eventType === 'step_completed')).toHaveLength(4);
        expect(events.at(-1)?.eventType).toBe('run_completed');
        const report = await instance.events.verify();
        expect(report.ok).toBe(true);
      } finally {
        await instance.close();
      }
    }, 120_000);
  }
});

describe('postgres: two processes serving one World', () => {
  it('every message is handled by one process once, every step runs once, both processes take part', async () => {
    const env = backends[1].env(join(root, 'two', 'world'));
    const file = join(root, 'two.effects');
    const deliveries = join(root, 'two.deliveries');
    writeFileSync(file, '');
    writeFileSync(deliveries, '');
    // Two deliveries at a time each, so neither can take every message while the other stands by.
    const shared = {
      ...env,
      EFFECTS_FILE: file,
      DELIVERIES_FILE: deliveries,
      AGENTSTATE_WORKFLOW_CONCURRENCY: '2',
    };
    const other = serveChain(shared);
    await other.waitFor('listening ');
    const runs = 12;
    const starter = serveChain({ ...shared, START: String(runs), TAG: 'two', STEPS: '3' });
    const done = await starter.waitFor('done ', runs);
    expect(done.every((l) => l.endsWith(' completed 3'))).toBe(true);
    expect((await starter.ended).code).toBe(0);
    other.kill('SIGTERM');
    await other.ended;

    const seen = effects(file);
    expect(seen).toHaveLength(runs * 3);
    expect(new Set(seen.map(([t, i]) => `${t} ${i}`)).size).toBe(runs * 3);
    const handled = readFileSync(deliveries, 'utf8').trim().split('\n');
    const ids = handled.map((l) => l.split(' ')[2]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(handled.map((l) => l.split(' ')[0])).size).toBe(2);

    const { instance } = await openStore(env);
    try {
      expect((await instance.events.verify()).ok).toBe(true);
    } finally {
      await instance.close();
    }
  }, 180_000);
});
