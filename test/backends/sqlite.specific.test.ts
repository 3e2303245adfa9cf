// SQLite-only guarantees: triggers enforce append-only even for plain sqlite3, tampering is detected,
// durability pragmas, migrations and the committed schema snapshot, and the plans of reads that must cost what
// they find.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { openSqliteBackend } from '../../src/backends/sqlite/backend.js';
import { SqliteConnection } from '../../src/backends/sqlite/connection.js';
import { migrationNames } from '../../src/backends/sqlite/migrate.js';
import { openInstance } from '../../src/instance/instance.js';
import { tempDir } from '../helpers/tmp.js';
import { enqueueStuck, expectBlockerRowsReported } from './stuck-fixture.js';

const dir = tempDir();
let n = 0;
const fresh = () => join(dir, `db-${++n}`);

function sqlite3(db: string, sql: string): { code: number | null; stderr: string; stdout: string } {
  const r = spawnSync('sqlite3', [db, sql], { encoding: 'utf8' });
  return { code: r.status, stderr: r.stderr, stdout: r.stdout };
}

const hasSqlite3 = spawnSync('sqlite3', ['-version']).status === 0;

describe('sqlite: append-only events', () => {
  it.skipIf(!hasSqlite3)(
    'UPDATE and DELETE on events fail even through the plain sqlite3 shell',
    async () => {
      const inst = await openInstance({ dir: fresh() });
      await inst.events.append({ type: 'note', data: { v: 1 } });
      await inst.close();
      const upd = sqlite3(inst.paths.db, 'UPDATE events SET data = \'{"v":2}\' WHERE position = 1;');
      expect(upd.code).not.toBe(0);
      expect(upd.stderr).toMatch(/append-only/);
      const del = sqlite3(inst.paths.db, 'DELETE FROM events;');
      expect(del.code).not.toBe(0);
      expect(sqlite3(inst.paths.db, 'SELECT data FROM events;').stdout.trim()).toBe('{"v":1}');
    },
  );

  it('the triggers also hold for a raw better-sqlite3 connection', async () => {
    const inst = await openInstance({ dir: fresh() });
    await inst.events.append({ type: 'note' });
    await inst.close();
    const db = new Database(inst.paths.db);
    expect(() => db.prepare("UPDATE events SET type = 'x'").run()).toThrow(/append-only/);
    expect(() => db.prepare('DELETE FROM events').run()).toThrow(/append-only/);
    db.close();
  });

  it('verify reports the first broken link after tampering that bypassed the triggers', async () => {
    const inst = await openInstance({ dir: fresh() });
    for (let i = 1; i <= 5; i++) await inst.events.append({ type: 'note', data: { i } });
    expect((await inst.events.verify()).ok).toBe(true);
    await inst.close();
    const db = new Database(inst.paths.db);
    db.exec('DROP TRIGGER events_no_update');
    db.prepare('UPDATE events SET data = \'{"i":33}\' WHERE position = 3').run();
    db.close();
    const again = await openInstance({ dir: inst.paths.dir });
    const r = await again.events.verify();
    expect(r.ok).toBe(false);
    expect(r.broken).toEqual({ position: 3, reason: 'hash does not match the event content' });
    expect(r.events).toBe(2);
    await again.close();
  });

  it('verify reports a removed event as a gap', async () => {
    const inst = await openInstance({ dir: fresh() });
    for (let i = 1; i <= 4; i++) await inst.events.append({ type: 'note', data: { i } });
    await inst.close();
    const db = new Database(inst.paths.db);
    db.exec('DROP TRIGGER events_no_delete');
    db.prepare('DELETE FROM events WHERE position = 2').run();
    db.close();
    const again = await openInstance({ dir: inst.paths.dir });
    expect((await again.events.verify()).broken?.position).toBe(3);
    await again.close();
  });
});

describe('sqlite: documents changed behind the store', () => {
  it('a commit never builds on a remembered body the file no longer holds, even at the same version', async () => {
    const inst = await openInstance({ dir: fresh() });
    try {
      const doc = { kind: 'json', id: 'restored' };
      await inst.docs.commit({ ...doc, expected_version: 0, body: { a: 1 } });
      // Someone restores another copy of version 1 into the file (a backup, a hand edit).
      const db = new Database(inst.paths.db);
      db.prepare(
        "UPDATE documents SET body = ?, content_hash = ? WHERE kind = 'json' AND id = 'restored'",
      ).run('{"a":2,"from":"backup"}', 'f'.repeat(64));
      db.close();
      const r = await inst.docs.commit({ ...doc, expected_version: 1, merge_patch: { b: 1 } });
      expect(r.version).toBe(2);
      expect(r.body).toEqual({ a: 2, from: 'backup', b: 1 });
    } finally {
      await inst.close();
    }
  });

  it('two handles on one file: a commit built on a remembered version loses to A→B→A (the UPDATE checks the version)', async () => {
    // Two handles on one file, as two processes would hold it; the second keeps one version of history.
    const folder = fresh();
    const a = await openInstance({ dir: folder });
    const b = await openInstance({ dir: folder, retention: 1 });
    try {
      const doc = { kind: 'json', id: 'aba' };
      // `a` remembers version 1, so its next commit at version 1 does not read the file first.
      const v1 = await a.docs.commit({ ...doc, expected_version: 0, body: { n: 1 } });
      await b.docs.commit({ ...doc, expected_version: 1, body: { n: 2 } });
      const v3 = await b.docs.commit({ ...doc, expected_version: 2, body: { n: 1 } });
      expect([v3.version, v3.content_hash]).toEqual([3, v1.content_hash]);
      await expect(
        a.docs.commit({ ...doc, expected_version: 1, merge_patch: { stale: true } }),
      ).rejects.toMatchObject({ code: 'STATE_CONFLICT', details: { expected: 1, actual: 3 } });
      expect(await b.docs.get(doc)).toMatchObject({ version: 3, body: { n: 1 } });
      expect((await b.docs.history(doc)).entries.map((e) => e.version)).toEqual([3]);
      expect((await a.events.verify()).problems).toEqual([]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('sqlite: connection settings', () => {
  it('uses WAL and synchronous=FULL by default, NORMAL only when asked', async () => {
    const pragmas = async (durability?: 'full' | 'normal') => {
      const path = `${fresh()}.sqlite`;
      const b = await openSqliteBackend({ path, ...(durability ? { durability } : {}) });
      // Read the pragmas through a second connection of the same file, and through the backend's own.
      const db = new Database(path);
      const mode = db.pragma('journal_mode', { simple: true });
      db.close();
      await b.close();
      return mode;
    };
    expect(await pragmas()).toBe('wal');
    // synchronous is per connection: check the backend's connection directly.
    const { SqliteConnection } = await import('../../src/backends/sqlite/connection.js');
    const full = await SqliteConnection.open({ path: `${fresh()}.sqlite` });
    expect(full.db.prepare('PRAGMA synchronous').get()).toEqual({ synchronous: 2 });
    full.close();
    const normal = await SqliteConnection.open({ path: `${fresh()}.sqlite`, durability: 'normal' });
    expect(normal.db.prepare('PRAGMA synchronous').get()).toEqual({ synchronous: 1 });
    normal.close();
  });

  it('opening waits for another process writing to the new file, then switches it to WAL (SQLite does not wait by itself)', async () => {
    const path = `${fresh()}.sqlite`;
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `const db = new (require('better-sqlite3'))(process.argv[1]);
         db.exec('CREATE TABLE t (x)'); db.exec('BEGIN IMMEDIATE; INSERT INTO t VALUES (1)');
         process.stdout.write('locked\\n');
         setTimeout(() => { db.exec('COMMIT'); db.close(); }, 700);`,
        path,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));
    const { SqliteConnection } = await import('../../src/backends/sqlite/connection.js');
    const conn = await SqliteConnection.open({ path, busyTimeoutMs: 5000 });
    expect(conn.db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
    expect(conn.db.prepare('SELECT x FROM t').all()).toEqual([{ x: 1 }]);
    conn.close();
  });

  it('records applied migrations once, and refuses a database from a newer version', async () => {
    const path = `${fresh()}.sqlite`;
    const b1 = await openSqliteBackend({ path });
    expect(b1.migrationsApplied).toEqual(migrationNames());
    await b1.close();
    const b2 = await openSqliteBackend({ path });
    expect(b2.migrationsApplied).toEqual([]);
    await b2.close();
    const db = new Database(path);
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?)').run('9999-future.sql', 0);
    db.close();
    await expect(openSqliteBackend({ path })).rejects.toMatchObject({ code: 'STORAGE_UNAVAILABLE' });
  });

  it('a file that is not a database is STORAGE_UNAVAILABLE, and is left untouched', async () => {
    const path = `${fresh()}.sqlite`;
    const garbage = Buffer.from('this is not a sqlite database, just some text '.repeat(200));
    writeFileSync(path, garbage);
    await expect(openSqliteBackend({ path })).rejects.toMatchObject({ code: 'STORAGE_UNAVAILABLE' });
    expect(readFileSync(path).equals(garbage)).toBe(true);
  });

  it('the schema matches the committed snapshot (migrations are immutable)', async () => {
    const path = `${fresh()}.sqlite`;
    const b = await openSqliteBackend({ path });
    await b.close();
    const dump = execFileSync(process.execPath, [
      '-e',
      `const D=require('better-sqlite3');const db=new D(${JSON.stringify(path)},{readonly:true});` +
        "for (const r of db.prepare(\"SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY type, name\").all()) console.log(r.sql + ';\\n');",
    ]).toString();
    const snapshot = new URL('./sqlite.schema.snapshot.sql', import.meta.url);
    if (process.env.UPDATE_SNAPSHOT) writeFileSync(snapshot, dump);
    expect(dump).toBe(readFileSync(snapshot, 'utf8'));
  });
});

describe('sqlite: reads that cost what they find', () => {
  type Ran = { sql: string; params: unknown[] };
  type PlanRow = { id: number; parent: number; detail: string };

  /** The statements the store ran during `fn`, with their parameters. */
  async function statementsOf(fn: () => Promise<unknown>): Promise<Ran[]> {
    const ran: Ran[] = [];
    const original = SqliteConnection.prototype.stmt;
    const spy = vi.spyOn(SqliteConnection.prototype, 'stmt').mockImplementation(function (
      this: SqliteConnection,
      sql: string,
    ) {
      const st = original.call(this, sql);
      const record =
        <R>(run: (...p: unknown[]) => R) =>
        (...params: unknown[]) => {
          ran.push({ sql, params });
          return run.apply(st, params);
        };
      return { run: record(st.run), get: record(st.get), all: record(st.all) };
    });
    try {
      await fn();
    } finally {
      spy.mockRestore();
    }
    return ran;
  }

  /** Plan rows that visit rows other than by id, blocker or the failed-items index. */
  const costly = (rows: PlanRow[]) =>
    rows
      .map((r) => r.detail)
      .filter((d) =>
        /work_items_(status|ready|cascade)\b|VIRTUAL TABLE|AUTOMATIC|^SCAN (?!(s|stuck)$)/.test(d),
      );

  /** The rows of `rows` under the first one whose detail matches `re` (the CTE's own plan). */
  function under(rows: PlanRow[], re: RegExp): PlanRow[] {
    const top = rows.find((r) => re.test(r.detail));
    if (!top) return [];
    const ids = new Set([top.id]);
    const out: PlanRow[] = [];
    for (const r of rows) {
      if (!ids.has(r.parent)) continue;
      ids.add(r.id);
      out.push(r);
    }
    return out;
  }

  it('blocked-on-failure lists and a failure’s cascade reach items by id, never by walking the pending ones', async () => {
    // The cost is the plan's, not the clock's: the old recursive query read every pending item's blocked_by
    // at each step (pending × failed), and the cascade every pending cascade item for each failed blocker.
    const inst = await openInstance({ dir: fresh() });
    const db = new Database(inst.paths.db, { readonly: true });
    try {
      const { work } = inst;
      const ids = await enqueueStuck(work);
      await work.enqueueMany(
        Array.from({ length: 50 }, (_, i) => ({ title: `other ${i}`, blocked_by: [ids.open] })),
      );

      const plans = async (fn: () => Promise<unknown>, pick: (sql: string) => boolean) => {
        const ran = (await statementsOf(fn)).filter((s) => pick(s.sql));
        expect(ran.length).toBeGreaterThan(0);
        return ran.map((s) => db.prepare(`EXPLAIN QUERY PLAN ${s.sql}`).all(...s.params) as PlanRow[]);
      };
      const listing = (sql: string) => sql.includes('ORDER BY w.priority');

      let listed: string[] = [];
      for (const plan of await plans(async () => {
        listed = (await work.list({ blocked_on_failure: true })).map((i) => i.id);
      }, listing)) {
        expect(costly(plan)).toEqual([]);
      }
      expect(listed).toEqual([ids.b, ids.c]);
      // The complement reads the items it lists, but finds the stuck ones the same way.
      for (const plan of await plans(() => work.list({ blocked_on_failure: false }), listing)) {
        const stuck = under(plan, /\bstuck\b/);
        expect(stuck.length).toBeGreaterThan(0);
        expect(costly(stuck)).toEqual([]);
      }
      // The dashboard's list of items blocked otherwise walks the pending items in claim order and stops at
      // its limit, as a claim does, instead of sorting them all.
      for (const plan of await plans(
        () => work.list({ ready: false, blocked_on_failure: false, limit: 5 }),
        listing,
      )) {
        const top = plan.filter((r) => r.parent === 0).map((r) => r.detail);
        expect(top.some((d) => d.includes('work_items_ready'))).toBe(true);
        expect(top).not.toContain('USE TEMP B-TREE FOR ORDER BY');
      }
      const cascades = (sql: string) => sql.startsWith('UPDATE') && sql.includes('cascaded_from = ?');
      for (const plan of await plans(() => work.cancel({ id: ids.open }), cascades)) {
        expect(costly(plan)).toEqual([]);
      }
      expect((await work.get(ids.gone)).status).toBe('cancelled');
    } finally {
      db.close();
      await inst.close();
    }
  });

  it('a read of several event types walks each type in order, never sorting all of their events', async () => {
    // The retro pages through a window by type and the dashboard reads the newest outcomes: with
    // `type IN (…)` SQLite read every event of those types after the cursor and sorted them for each page.
    const inst = await openInstance({ dir: fresh() });
    const db = new Database(inst.paths.db, { readonly: true });
    try {
      await inst.events.appendMany(['a', 'b', 'x'].map((type) => ({ type })));
      const ran = (
        await statementsOf(() => inst.events.read({ type: ['a', 'b'], after: 0, reverse: true, limit: 2 }))
      ).filter((s) => s.sql.includes('FROM events'));
      expect(ran).toHaveLength(1);
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${ran[0]!.sql}`).all(...ran[0]!.params) as PlanRow[];
      const walks = plan.filter((r) => r.detail.includes('events_type'));
      expect(walks.length).toBe(2);
      // Each walk is a subquery of its own (its LIMIT stops it), not the statement's scan.
      expect(walks.every((r) => r.parent !== 0)).toBe(true);
    } finally {
      db.close();
      await inst.close();
    }
  });

  it('verify reports a blocker row removed or added behind the store', async () => {
    // blocked-on-failure and the cascade follow work_item_blockers alone: a row removed would hide c.
    const inst = await openInstance({ dir: fresh() });
    const ids = await enqueueStuck(inst.work);
    expect((await inst.events.verify()).ok).toBe(true);
    await inst.close();
    const db = new Database(inst.paths.db);
    db.prepare('DELETE FROM work_item_blockers WHERE item = ?').run(ids.c);
    db.prepare('INSERT INTO work_item_blockers (blocker, item) VALUES (?, ?)').run(ids.a, ids.open);
    db.close();
    const again = await openInstance({ dir: inst.paths.dir });
    try {
      const r = await again.events.verify();
      expectBlockerRowsReported(r, ids);
    } finally {
      await again.close();
    }
  });

  it('items enqueued before the blocker index existed are found by it once the store opens', async () => {
    // A database at migration 0005, written as that version wrote it: a failed, b waits on it, c on b.
    const path = `${fresh()}.sqlite`;
    const db = new Database(path);
    const dirUrl = new URL('../../src/backends/sqlite/migrations/', import.meta.url);
    db.exec('CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)');
    for (const name of migrationNames().filter((m) => m < '0006')) {
      db.exec(readFileSync(new URL(name, dirUrl), 'utf8'));
      db.prepare('INSERT INTO schema_migrations VALUES (?, 0)').run(name);
    }
    const insert = db.prepare(
      'INSERT INTO work_items (id, title, status, blocked_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
    );
    insert.run('wi_a', 'a', 'failed', '[]', 1, 1);
    insert.run('wi_b', 'b', 'pending', '["wi_a"]', 2, 2);
    insert.run('wi_c', 'c', 'pending', '["wi_b","wi_a"]', 3, 3);
    insert.run('wi_d', 'd', 'pending', '[]', 4, 4);
    db.close();
    const b = await openSqliteBackend({ path });
    try {
      expect(b.migrationsApplied).toEqual(migrationNames().filter((m) => m >= '0006'));
      const listed = await b.work.list({
        statuses: null,
        kind: null,
        blocked_on_failure: true,
        now: 5,
        limit: 10,
      });
      expect(listed.map((i) => i.id)).toEqual(['wi_b', 'wi_c']);
    } finally {
      await b.close();
    }
  });
});
