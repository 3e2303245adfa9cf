// SQLite's append hints (issue 41): a commit that appends events wakes this process's listeners at once (on
// any of its connections to the file), another process's commit wakes them through the watch of the WAL file
// (or, where it cannot be watched, a poll of PRAGMA data_version), and writes that append nothing, or no
// writes at all, wake nobody; the same under Bun (bun:sqlite). Each test waits on conditions (a listener
// called, the watch's own counters), never on wall time. The CLI runs from dist/ (`npm run build`).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteBackend } from '../../src/backends/sqlite/backend.js';
import { AppendHints } from '../../src/backends/sqlite/connection.js';
import { type Instance, openInstance } from '../../src/instance/instance.js';
import { BUN, cleanEnv, runCliAsync } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir();
let n = 0;

/** Waits until `cond` holds (checked every 5 ms; a condition that never holds fails on the test timeout). */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 5));
}

/** A fresh instance folder, and the process-wide hints of its database (there once it is open). */
async function fresh(): Promise<{ dir: string; a: Instance; hints: () => AppendHints }> {
  const dir = join(root, `w${++n}`);
  const a = await openInstance({ dir });
  return { dir, a, hints: () => AppendHints.of(a.paths.db) as AppendHints };
}

/** A listener that records the positions it is told. */
async function listening(inst: Instance): Promise<{ calls: number[]; stop: () => Promise<void> }> {
  const calls: number[] = [];
  expect(inst.backend.capabilities.notify).toBe(true);
  const stop = await inst.backend.listen!((position) => calls.push(position));
  return { calls, stop };
}

const head = async (inst: Instance) => (await inst.events.head())?.position ?? 0;

for (const mode of ['watching the WAL file', 'polling data_version'] as const) {
  describe(`sqlite append hints, ${mode}`, () => {
    beforeAll(() => {
      AppendHints.watchWalFile = mode === 'watching the WAL file';
    });
    const platformDefault = AppendHints.watchWalFile;
    afterAll(() => {
      AppendHints.watchWalFile = platformDefault;
    });

    it("an enqueue in this process, on the listener's connection or another to the file, is hinted before the call returns", async () => {
      const { dir, a } = await fresh();
      const b = await openInstance({ dir });
      try {
        const { calls, stop } = await listening(a);
        await a.work.enqueue({ title: 'same connection' });
        // Told right after the commit (not by the watch, which answers only after a timer or a file event).
        expect(calls).toEqual([await head(a)]);
        await b.work.enqueue({ title: 'another connection of this process' });
        expect(calls).toEqual([calls[0], await head(a)]);
        await stop();
        await b.work.enqueue({ title: 'after stop' });
        expect(calls.length).toBe(2);
      } finally {
        await b.close();
        await a.close();
      }
    });

    it('an enqueue by another process (the CLI) is hinted', async () => {
      const { dir, a } = await fresh();
      try {
        const { calls, stop } = await listening(a);
        const r = await runCliAsync(['--dir', dir, 'enqueue', 'from another process']);
        expect(r.code, r.stderr).toBe(0);
        await until(() => calls.length > 0);
        expect(calls.at(-1)).toBe(await head(a));
        expect((await a.work.list({})).map((i) => i.title)).toEqual(['from another process']);
        await stop();
      } finally {
        await a.close();
      }
    });

    it('commits that append no events, and no writes at all, wake no listener', async () => {
      const { a, hints } = await fresh();
      const raw = new Database(a.paths.db);
      try {
        await a.work.enqueue({ title: 'before listening' });
        const { calls, stop } = await listening(a);
        // Another connection commits five times, appending no event: the watch sees each commit, hints none.
        raw.exec('CREATE TABLE IF NOT EXISTS scratch (x INTEGER)');
        for (let k = 0; k < 5; k++) {
          const seen = hints().commitsSeen;
          raw.prepare('INSERT INTO scratch VALUES (?)').run(k);
          await until(() => hints().commitsSeen > seen);
        }
        // Then nothing is written: no hint across many checks while polling; when watching the file, no check
        // is even scheduled once the checks that follow a change are done.
        if (mode === 'polling data_version') {
          const checks = hints().checks;
          await until(() => hints().checks >= checks + 50);
        } else {
          await until(() => !hints().scheduled);
        }
        expect(calls).toEqual([]);
        await stop();
      } finally {
        raw.close();
        await a.close();
      }
    });
  });
}

describe('sqlite append hints: lifecycle', () => {
  it('the watch runs only while someone listens; the registry forgets a file no connection has open', async () => {
    const { a, hints } = await fresh();
    const path = a.paths.db;
    expect(hints().watching).toBe(false);
    const first = await listening(a);
    const second = await listening(a);
    expect(hints().watching).toBe(true);
    expect(hints().listeners).toBe(2);
    await first.stop();
    expect(hints().watching).toBe(true);
    await second.stop();
    expect(hints().watching).toBe(false);
    // Closing the store stops the listeners it still has, and the watch with them.
    await listening(a);
    expect(hints().watching).toBe(true);
    await a.close();
    expect(AppendHints.of(path)).toBeUndefined();
    await expect(a.backend.listen!(() => {})).rejects.toMatchObject({ code: 'STORAGE_UNAVAILABLE' });
  });

  it('an in-memory database hints its own appends, with no watch', async () => {
    const backend = await openSqliteBackend({ path: ':memory:' });
    try {
      const calls: number[] = [];
      const stop = await backend.listen!((p) => calls.push(p));
      const event = {
        type: 'note',
        stream: 's',
        data: null,
        actor: null,
        correlation_id: null,
        causation_id: null,
        work_item_id: null,
        created_at: 0,
      };
      await backend.events.append([event, event]);
      expect(calls).toEqual([2]);
      await stop();
    } finally {
      await backend.close();
    }
  });
});

describe('sqlite append hints under Bun (bun:sqlite)', () => {
  it.skipIf(!existsSync(BUN))(
    "a listener in a Bun process is told of its own enqueue at once, and of another process's",
    async () => {
      const dir = join(root, `bun${++n}`);
      // The instance exists before Bun opens it, as a worker's would.
      const a = await openInstance({ dir });
      const child = spawn(
        BUN,
        [new URL('../fixtures/sqlite-wake-listener.ts', import.meta.url).pathname, dir],
        {
          env: cleanEnv(),
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      const next = async () => {
        const line = await lines.next();
        if (line.done) throw new Error(`the Bun process ended: ${stderr}`);
        return JSON.parse(line.value) as Record<string, unknown>;
      };
      try {
        expect(await next()).toEqual({ driver: 'bun:sqlite', notify: true });
        expect(await next()).toMatchObject({ own: 1 });
        expect(await next()).toEqual({ listening: true });
        await a.work.enqueue({ title: 'from a node process' });
        expect(await next()).toEqual({ hinted: await head(a) });
      } finally {
        child.kill();
        await a.close();
      }
    },
  );
});
