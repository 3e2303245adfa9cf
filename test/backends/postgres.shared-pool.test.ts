// One pg pool per database URL and pool settings (issue 11, point 4): instances opened on one URL share a
// pool, counted in pg_stat_activity; the last close ends it with no connection left; a closed handle still
// refuses while another on the pool works; racing opens get one pool; terminations and LISTEN stay per
// handle and recover.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openPostgresBackend } from '../../src/backends/postgres/backend.js';
import { openPools, PostgresConnection } from '../../src/backends/postgres/connection.js';
import { migrationNames } from '../../src/backends/postgres/migrate.js';
import { type Instance, openInstance } from '../../src/instance/instance.js';
import { adminQuery, PG_URL, postgresForThisFile } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

const schema = await postgresForThisFile();
const suite = schema === null ? describe.skip : describe;
const root = tempDir('agentstate-pg-pool-');
let n = 0;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A fresh application_name: this test's connections, and its pool key, are its own. */
function appName(): string {
  return `agentstate-pool-${process.pid}-${++n}`;
}

function url(s = schema!): string {
  const u = new URL(PG_URL);
  u.searchParams.set('schema', s);
  return u.toString();
}

function open(app: string, name: string, extra: { poolSize?: number; url?: string } = {}): Promise<Instance> {
  return openInstance({
    host: 'pool',
    name,
    root,
    url: extra.url ?? url(),
    postgres: { applicationName: app, poolSize: extra.poolSize ?? 3 },
  });
}

/** Server connections with this application_name. */
async function connections(app: string): Promise<number> {
  const rows = await adminQuery<{ n: number }>(
    'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
    [app],
  );
  return rows[0]!.n;
}

/** Waits until the server shows `want` connections of `app` (a closed socket leaves pg_stat_activity shortly after). */
async function settle(app: string, want: number): Promise<number> {
  let seen = await connections(app);
  for (let i = 0; i < 200 && seen !== want; i++) {
    await sleep(25);
    seen = await connections(app);
  }
  return seen;
}

const poolsOf = (app: string) => openPools().filter((p) => p.application_name === app);

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

suite('postgres: one pool per database URL', () => {
  it('six instances on one URL use one pool of poolSize connections; the last close ends it with none left', async () => {
    const app = appName();
    const insts = [];
    for (let i = 0; i < 6; i++) insts.push(await open(app, `agent-${i}`));
    try {
      expect(poolsOf(app)).toEqual([expect.objectContaining({ max: 3, users: 6 })]);
      // Every instance busy at once: six pools would open up to 18 connections, one opens at most 3.
      await Promise.all(
        insts.flatMap((inst) => Array.from({ length: 4 }, (_, k) => inst.work.enqueue({ title: `t${k}` }))),
      );
      const held = await connections(app);
      expect(held).toBeGreaterThan(0);
      expect(held).toBeLessThanOrEqual(3);
      for (const inst of insts) expect((await inst.work.list()).length).toBe(4);

      // All but the last closed: it keeps working on the same pool.
      const last = insts.pop()!;
      await Promise.all(insts.map((i) => i.close()));
      expect(poolsOf(app)).toEqual([expect.objectContaining({ users: 1 })]);
      await last.work.enqueue({ title: 'after the others closed' });
      expect((await last.work.list()).length).toBe(5);
      expect((await last.events.verify()).ok).toBe(true);
      await last.close();
      expect(poolsOf(app)).toEqual([]);
      expect(await settle(app, 0)).toBe(0);
    } finally {
      await Promise.all(insts.map((i) => i.close()));
    }
  });

  it('a closed handle refuses with STORAGE_UNAVAILABLE (closed) while another handle on its pool works', async () => {
    const app = appName();
    const a = await open(app, 'closed-a');
    const b = await open(app, 'closed-b');
    const again = await open(app, 'closed-b');
    try {
      await a.work.enqueue({ title: 'a' });
      await a.close();
      // Closing twice gives the pool back once: b and its second handle still hold it.
      await a.close();
      expect(poolsOf(app)).toEqual([expect.objectContaining({ users: 2 })]);
      for (const call of [
        () => a.work.enqueue({ title: 'x' }),
        () => a.work.list(),
        () => a.events.read({}),
      ]) {
        await expect(call()).rejects.toMatchObject({
          code: 'STORAGE_UNAVAILABLE',
          details: { closed: true },
        });
      }
      await b.work.enqueue({ title: 'b' });
      await b.close();
      await expect(b.work.list()).rejects.toMatchObject({ details: { closed: true } });
      // A second handle on b's instance is a handle of its own: b's close did not close it.
      expect((await again.work.list()).map((i) => i.title)).toEqual(['b']);
    } finally {
      await Promise.all([a.close(), b.close(), again.close()]);
    }
    expect(poolsOf(app)).toEqual([]);
    expect(await settle(app, 0)).toBe(0);
  });

  it('a connection handle closed twice gives the pool back once', async () => {
    const app = appName();
    const opts = { url: PG_URL, schema: schema!, applicationName: app };
    const one = await PostgresConnection.open({ ...opts, instance: 'twice/one' });
    const two = await PostgresConnection.open({ ...opts, instance: 'twice/two' });
    expect(one.shared).toBe(two.shared);
    await one.close();
    await one.close();
    expect(poolsOf(app)).toEqual([expect.objectContaining({ users: 1 })]);
    expect((await two.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one).toBe(1);
    await two.close();
    expect(poolsOf(app)).toEqual([]);
  });

  it('ten opens racing on a new schema get one pool, and apply each migration once', async () => {
    const app = appName();
    const fresh = `${schema}_race`;
    try {
      const backends = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          openPostgresBackend({
            url: PG_URL,
            schema: fresh,
            instance: `race/${i}`,
            applicationName: app,
            poolSize: 2,
          }),
        ),
      );
      try {
        expect(poolsOf(app)).toEqual([expect.objectContaining({ users: 10, max: 2 })]);
        expect(
          backends.filter((b) => b.migrationsApplied.length > 0).map((b) => b.migrationsApplied),
        ).toEqual([migrationNames()]);
        const rows = await adminQuery<{ name: string }>(`SELECT name FROM "${fresh}".schema_migrations`);
        expect(rows.length).toBe(migrationNames().length);
        expect(await connections(app)).toBeLessThanOrEqual(2);
      } finally {
        await Promise.all(backends.map((b) => b.close()));
      }
      expect(poolsOf(app)).toEqual([]);
    } finally {
      await adminQuery(`DROP SCHEMA IF EXISTS "${fresh}" CASCADE`);
    }
  });

  it('the pool key is the URL and every pool setting: other settings get a pool of their own, another schema does not', async () => {
    const app = appName();
    const other = `${schema}_other`;
    const a = await open(app, 'key-a', { poolSize: 2 });
    const b = await open(app, 'key-b', { poolSize: 3 });
    const c = await open(app, 'key-c', { poolSize: 2, url: url(other) });
    try {
      expect(
        poolsOf(app)
          .map((p) => [p.max, p.users])
          .sort(),
      ).toEqual([
        [2, 2],
        [3, 1],
      ]);
      // The pool list never shows a password.
      const secret = await openPostgresBackend({
        url: PG_URL.replace('postgres@', 'postgres:hunter2@'),
        schema: schema!,
        instance: 'key/secret',
        applicationName: app,
      });
      expect(JSON.stringify(openPools())).not.toContain('hunter2');
      await secret.close();
      await c.work.enqueue({ title: 'in the other schema' });
      expect(await a.work.list()).toEqual([]);
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
      await adminQuery(`DROP SCHEMA IF EXISTS "${other}" CASCADE`);
    }
    expect(poolsOf(app)).toEqual([]);
  });

  it('a failed open gives its use of the pool back', async () => {
    const app = appName();
    await expect(
      openInstance({
        host: 'pool',
        name: 'never-opened',
        root,
        url: url(),
        create: false,
        postgres: { applicationName: app },
      }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(poolsOf(app)).toEqual([]);
    expect(await settle(app, 0)).toBe(0);
  });

  it('connections terminated under two instances sharing a pool: both carry on, nothing unhandled', async () => {
    const app = appName();
    const a = await open(app, 'term-a');
    const b = await open(app, 'term-b');
    try {
      await Promise.all([a.work.enqueue({ title: 'a1' }), b.work.enqueue({ title: 'b1' }), a.work.list()]);
      for (let round = 0; round < 3; round++) {
        const killed = await adminQuery<{ ok: boolean }>(
          'SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1',
          [app],
        );
        expect(killed.length).toBeGreaterThan(0);
        await sleep(50);
        // Reads retry on a fresh connection; transactions whose connection was already dead are re-run.
        await a.work.enqueue({ title: `a-after-${round}` });
        expect((await b.work.list()).length).toBe(1 + round);
        await b.work.enqueue({ title: `b-after-${round}` });
      }
      expect((await a.events.verify()).ok).toBe(true);
      expect((await b.events.verify()).ok).toBe(true);
      expect(unhandled).toEqual([]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
    expect(await settle(app, 0)).toBe(0);
  });

  it('listeners stay per handle: closing one instance stops its LISTEN, the other keeps getting its hints', async () => {
    const app = appName();
    const a = await open(app, 'listen-a');
    const b = await open(app, 'listen-b');
    const pb = b.backend as unknown as { listen(fn: (p: number) => void): Promise<() => Promise<void>> };
    const pa = a.backend as unknown as typeof pb;
    const seenA: number[] = [];
    const seenB: number[] = [];
    try {
      await pa.listen((p) => seenA.push(p));
      await pb.listen((p) => seenB.push(p));
      const listening = () =>
        adminQuery("SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'", [
          app,
        ]).then((r) => r.length);
      expect(await listening()).toBe(2);
      await a.close();
      for (let i = 0; i < 200 && (await listening()) !== 1; i++) await sleep(10);
      expect(await listening()).toBe(1);
      await b.events.append({ type: 'note' });
      for (let i = 0; i < 200 && seenB.length === 0; i++) await sleep(10);
      expect(seenB).toEqual([1]);
      expect(seenA).toEqual([]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
    expect(await settle(app, 0)).toBe(0);
  });
});
