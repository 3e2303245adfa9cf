// PostgreSQL behind a transaction pooler (PgBouncer in pool_mode = transaction, as Supabase's and Neon's
// poolers serve it): `?pool_mode=transaction` opens where startup parameters are refused, keeps no session
// state (timeouts by SET LOCAL in each transaction, no named statements, no LISTEN), LOCK_TIMEOUT still
// fires, a worker runs and verifies through it, and a pooler in the way without that mode is a typed error
// that says what to change, never a raw SQLSTATE.

import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openPostgresBackend } from '../../src/backends/postgres/backend.js';
import { PostgresConnection } from '../../src/backends/postgres/connection.js';
import { openInstance } from '../../src/instance/instance.js';
import { createWorker } from '../../src/worker/worker.js';
import { runCli } from '../helpers/cli.js';
import { type PgBouncer, pgbouncerForThisFile } from '../helpers/pgbouncer.js';
import { PG_URL, postgresForThisFile } from '../helpers/postgres.js';
import { rejection } from '../helpers/refusals.js';
import { tempDir } from '../helpers/tmp.js';

const schema = await postgresForThisFile();
// Refuses startup parameters (PgBouncer's default), two server connections shared by every client.
const strict = schema === null ? null : await pgbouncerForThisFile();
// Drops the timeouts silently and has one server connection: what made every second open fail with 42P05.
const lenient =
  schema === null
    ? null
    : await pgbouncerForThisFile({
        poolSize: 1,
        ignoreStartupParameters: ['lock_timeout', 'idle_in_transaction_session_timeout'],
      });
const suite = strict === null || lenient === null ? describe.skip : describe;
let n = 0;

const pooled = (b: PgBouncer | null) => `${b!.url}?pool_mode=transaction&schema=${schema}`;

/** Runs `sql` on `clients` connections through the pooler at once, each inside a transaction it holds until all have answered. */
async function onEveryServerConnection<R>(url: string, clients: number, sql: string): Promise<R[]> {
  const opened = await Promise.all(
    Array.from({ length: clients }, async () => {
      const c = new pg.Client({ connectionString: url });
      c.on('error', () => {});
      await c.connect();
      return c;
    }),
  );
  try {
    // BEGIN pins a server connection to each client until COMMIT: `clients` of them, all different.
    await Promise.all(opened.map((c) => c.query('BEGIN')));
    const rows = await Promise.all(opened.map(async (c) => (await c.query(sql)).rows[0] as R));
    await Promise.all(opened.map((c) => c.query('COMMIT')));
    return rows;
  } finally {
    await Promise.all(opened.map((c) => c.end().catch(() => {})));
  }
}

suite('PostgreSQL through PgBouncer in transaction mode', () => {
  it('without pool_mode, a pooler that refuses startup parameters is STORAGE_UNAVAILABLE saying to add ?pool_mode=transaction', async () => {
    const err = await rejection(
      openPostgresBackend({ url: strict!.url, schema: schema!, instance: `pooled/${++n}` }),
    );
    expect(err.code).toBe('STORAGE_UNAVAILABLE');
    expect(err.message).toMatch(/unsupported startup parameter/);
    expect(err.message).toContain('?pool_mode=transaction');
    // The CLI: exit 5 and the same advice, never `internal error`.
    const dir = tempDir();
    const r = runCli(['init', '--dir', `${dir}/a`, '--url', `${strict!.url}?schema=${schema}`]);
    expect(r.code).toBe(5);
    expect(r.stderr).toContain('?pool_mode=transaction');
    expect(r.stderr).toContain('STORAGE_UNAVAILABLE');
  });

  it('with ?pool_mode=transaction the CLI opens, works and verifies through it', () => {
    const dir = `${tempDir()}/cli`;
    const url = pooled(strict);
    expect(runCli(['init', '--dir', dir, '--url', url]).code).toBe(0);
    const e = runCli(['enqueue', 'through the pooler', '--dir', dir, '--url', url, '--json']);
    expect(e.code).toBe(0);
    const id = (e.json as { id: string }).id;
    const c = runCli(['claim', '--dir', dir, '--url', url, '--json']);
    expect((c.json as { id: string }).id).toBe(id);
    expect(runCli(['resolve', id, 'done', '--dir', dir, '--url', url]).code).toBe(0);
    const v = runCli(['verify', '--dir', dir, '--url', url, '--json']);
    expect(v.code).toBe(0);
    expect(v.json).toMatchObject({ ok: true });
  });

  it('a direct connection (session mode) keeps its hints and the 1 s idle poll; pool_mode=session says the same', async () => {
    for (const url of [`${PG_URL}?schema=${schema}`, `${PG_URL}?schema=${schema}&pool_mode=session`]) {
      const inst = await openInstance({ dir: `${tempDir()}/direct`, url });
      try {
        expect(inst.backend.capabilities.notify).toBe(true);
        expect(inst.work.idlePollMs).toBe(1000);
      } finally {
        await inst.close();
      }
    }
  });

  it('an unknown pool_mode is INVALID_INPUT before any connection', async () => {
    const err = await rejection(
      openPostgresBackend({
        url: `${strict!.url}?pool_mode=statement`,
        schema: schema!,
        instance: `pooled/${++n}`,
      }),
    );
    expect(err.code).toBe('INVALID_INPUT');
    expect(err.message).toMatch(/pool_mode must be "session" or "transaction"/);
  });

  it("the pooler's own errors say what to change (no such database)", async () => {
    const url = strict!.url.replace(/\/[^/]+$/, '/no_such_db_here');
    const err = await rejection(
      openPostgresBackend({
        url: `${url}?pool_mode=transaction`,
        schema: schema!,
        instance: `pooled/${++n}`,
      }),
    );
    expect(err.code).toBe('STORAGE_UNAVAILABLE');
    expect(err.message).toMatch(/no such database/);
    expect(err.message).toMatch(/\[databases\]/);
  });

  it('named prepared statements behind a pooler that drops the timeouts: 42P05 is STORAGE_UNAVAILABLE saying what to change; pool_mode=transaction opens', async () => {
    // The first store prepares its statements on the one server connection; the next client's first
    // Parse of the same name finds it there.
    const first = await openPostgresBackend({
      url: lenient!.url,
      schema: schema!,
      instance: `pooled/${++n}`,
    });
    await first.work.list({ statuses: null, kind: null, now: Date.now(), limit: 1 });
    await first.close();
    const err = await rejection(
      (async () => {
        const second = await openPostgresBackend({
          url: lenient!.url,
          schema: schema!,
          instance: `pooled/${++n}`,
        });
        try {
          await second.work.list({ statuses: null, kind: null, now: Date.now(), limit: 1 });
        } finally {
          await second.close();
        }
      })(),
    );
    expect(err.code).toBe('STORAGE_UNAVAILABLE');
    expect(err.details?.pg_code).toBe('42P05');
    expect(err.message).toContain('?pool_mode=transaction');
    const third = await openPostgresBackend({
      url: `${lenient!.url}?pool_mode=transaction`,
      schema: schema!,
      instance: `pooled/${++n}`,
    });
    try {
      expect(await third.work.list({ statuses: null, kind: null, now: Date.now(), limit: 1 })).toEqual([]);
    } finally {
      await third.close();
    }
  });

  it('every transaction and every lone statement runs with the lock and idle-in-transaction timeouts', async () => {
    const conn = await PostgresConnection.open({
      url: `${strict!.url}?pool_mode=transaction`,
      schema: schema!,
      instance: `pooled/${++n}`,
      lockTimeoutMs: 1234,
    });
    const sql = `SELECT current_setting('lock_timeout') AS l, current_setting('idle_in_transaction_session_timeout') AS i, $1::text AS x`;
    try {
      const inTx = await conn.transaction(async (tx) => {
        const a = await tx.query<{ l: string; i: string }>(sql, [conn.instance]);
        const b = await tx.queryAndCommit<{ l: string; i: string }>(sql, [conn.instance]);
        return [a.rows[0], b.rows[0]];
      });
      const lone = await conn.transaction((tx) =>
        tx.queryAndCommit<{ l: string; i: string }>(sql, [conn.instance]),
      );
      const read = await conn.query<{ l: string; i: string }>(sql, [conn.instance]);
      for (const row of [...inTx, lone.rows[0], read.rows[0]]) {
        expect(row).toMatchObject({ l: '1234ms', i: '1min' });
      }
    } finally {
      await conn.close();
    }
  });

  it('LOCK_TIMEOUT still fires through the pooler', async () => {
    const url = pooled(strict);
    const inst = await openInstance({ dir: `${tempDir()}/lock`, url, postgres: { lockTimeoutMs: 200 } });
    const holder = new pg.Client({ connectionString: PG_URL });
    holder.on('error', () => {});
    await holder.connect();
    try {
      await inst.work.enqueue({ title: 'first' });
      // Every append takes the instance's event head row: held here, directly on the server.
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "${schema}".event_heads WHERE instance = $1 FOR UPDATE`, [
        `${inst.host}/${inst.name}`,
      ]);
      const err = await rejection(inst.work.enqueue({ title: 'waits for the head row' }));
      expect(err.code).toBe('LOCK_TIMEOUT');
      await holder.query('ROLLBACK');
      expect((await inst.work.list({})).map((i) => i.title)).toEqual(['first']);
      expect((await inst.events.verify()).ok).toBe(true);
    } finally {
      await holder.end();
      await inst.close();
    }
  });

  it('a worker runs 200 items through it, nothing lost or doubled, and the instance verifies; no session state is left on the server connections', async () => {
    const url = pooled(strict);
    const inst = await openInstance({ dir: `${tempDir()}/worker`, url });
    try {
      // No LISTEN behind a transaction pooler: the worker learns of work by polling.
      expect(inst.backend.capabilities.notify).toBe(false);
      // ... and polls sooner when idle than where a hint would wake it.
      expect(inst.work.idlePollMs).toBe(250);
      const runs = new Map<string, number>();
      const worker = createWorker({
        instance: inst,
        concurrency: 4,
        handlers: {
          '*': async (item) => {
            runs.set(item.id, (runs.get(item.id) ?? 0) + 1);
            return { n: item.payload };
          },
        },
      });
      let done = 0;
      const allDone = new Promise<void>((resolve) => {
        worker.on('resolved', (item) => {
          if (item.status === 'done' && ++done === 200) resolve();
        });
      });
      const stopped = worker.start();
      // Enqueued after the worker went idle: it finds them by polling.
      const ids = (
        await inst.work.enqueueMany(
          Array.from({ length: 200 }, (_, k) => ({ title: `item ${k}`, payload: k })),
        )
      ).map((i) => i.id);
      await allDone;
      await worker.stop();
      await stopped;
      expect(ids.every((id) => runs.get(id) === 1)).toBe(true);
      const v = await inst.events.verify();
      expect(v.ok).toBe(true);
      // Both server connections of the pooler: session settings at their defaults, nothing prepared by
      // name, nothing listened for.
      const rows = await onEveryServerConnection<{
        l: string;
        i: string;
        prepared: number;
        listening: number;
      }>(
        strict!.url,
        2,
        `SELECT current_setting('lock_timeout') AS l, current_setting('idle_in_transaction_session_timeout') AS i,
                (SELECT count(*)::int FROM pg_prepared_statements) AS prepared,
                (SELECT count(*)::int FROM pg_listening_channels()) AS listening`,
      );
      for (const row of rows) expect(row).toEqual({ l: '0', i: '0', prepared: 0, listening: 0 });
    } finally {
      await inst.close();
    }
  });
});
