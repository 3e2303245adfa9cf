// listInstances (issue 11, point 4): the instances under an embedded root and
// in a PostgreSQL schema, with their heads, sorted by key; none for an empty or missing store; names with
// dots and dashes; nothing created, migrated or left behind by listing.
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPostgresBackend } from '../../src/backends/postgres/backend.js';
import { openPools } from '../../src/backends/postgres/connection.js';
import { listInstances as listPostgresInstances } from '../../src/backends/postgres/instances.js';
import { openInstance } from '../../src/instance/instance.js';
import { listInstances } from '../../src/instance/list.js';
import { adminQuery, PG_URL, postgresForThisFile } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

const base = tempDir('agentstate-list-');
const schema = await postgresForThisFile();
const pgSuite = schema === null ? describe.skip : describe;
let n = 0;

/** Every file under `dir` with its size and mtime: what a listing must leave exactly as it was. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        const st = statSync(p);
        out[relative(dir, p)] = `${st.size}:${st.mtimeMs}`;
      }
    }
  };
  walk(dir);
  return out;
}

function pgUrl(s: string): string {
  const u = new URL(PG_URL);
  u.searchParams.set('schema', s);
  return u.toString();
}

describe('listInstances on embedded SQLite', () => {
  it('a missing root and an empty one list no instances, and neither is created', async () => {
    const missing = join(base, 'missing');
    expect(await listInstances({ root: missing })).toEqual([]);
    expect(() => statSync(missing)).toThrow();
    const empty = join(base, `empty-${++n}`);
    mkdirSync(empty);
    expect(await listInstances({ root: empty })).toEqual([]);
    expect(readdirSync(empty)).toEqual([]);
  });

  it('lists every <host>/agents/<name> with a state.sqlite, sorted, with its head; creates and leaves nothing', async () => {
    const root = join(base, `root-${++n}`);
    const a = await openInstance({ root, host: 'laptop', name: 'planner.v2-beta' });
    await a.events.append({ type: 'note' });
    await a.work.enqueue({ title: 'x' });
    const last = (await a.events.read({ reverse: true, limit: 1 }))[0]!;
    await a.close();
    await (await openInstance({ root, host: 'ci-runner.eu', name: 'a_worker' })).close();
    // Not instances: a folder without state.sqlite (what a PostgreSQL instance leaves locally), names
    // openInstance would refuse, other tools' folders in ~/.config, stray files.
    mkdirSync(join(root, 'laptop', 'agents', 'no-db'), { recursive: true });
    mkdirSync(join(root, 'laptop', 'agents', '.hidden'), { recursive: true });
    writeFileSync(join(root, 'laptop', 'agents', '.hidden', 'state.sqlite'), '');
    mkdirSync(join(root, 'git'), { recursive: true });
    writeFileSync(join(root, 'git', 'config'), '');
    writeFileSync(join(root, 'laptop', 'agents', 'file-not-folder'), '');
    const before = snapshot(root);

    const list = await listInstances({ root });
    expect(list).toEqual([
      {
        instance: 'ci-runner.eu/a_worker',
        host: 'ci-runner.eu',
        name: 'a_worker',
        events: 0,
        last_event_at: null,
        dir: join(root, 'ci-runner.eu', 'agents', 'a_worker'),
      },
      {
        instance: 'laptop/planner.v2-beta',
        host: 'laptop',
        name: 'planner.v2-beta',
        events: last.position,
        last_event_at: last.created_at,
        dir: join(root, 'laptop', 'agents', 'planner.v2-beta'),
      },
    ]);
    expect(last.position).toBe(2);
    // No -wal/-shm left, no file touched, no folder made.
    expect(snapshot(root)).toEqual(before);
  });

  it('a state.sqlite that cannot be read is listed with its error; the others still list', async () => {
    const root = join(base, `root-${++n}`);
    await (await openInstance({ root, host: 'h', name: 'good' })).close();
    mkdirSync(join(root, 'h', 'agents', 'bad'), { recursive: true });
    writeFileSync(join(root, 'h', 'agents', 'bad', 'state.sqlite'), 'not a database, just text '.repeat(50));
    const list = await listInstances({ root });
    expect(list.map((i) => [i.instance, i.events])).toEqual([
      ['h/bad', null],
      ['h/good', 0],
    ]);
    expect(list[0]!.error).toMatch(/not a database/);
    expect(list[1]!.error).toBeUndefined();
  });
});

pgSuite('listInstances on PostgreSQL', () => {
  it('a schema nothing was opened in lists none, and is not created', async () => {
    const never = `${schema}_never`;
    expect(await listInstances({ url: pgUrl(never) })).toEqual([]);
    const found = await adminQuery('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [
      never,
    ]);
    expect(found).toEqual([]);
  });

  it('lists the instance keys of one schema, sorted, with head position and newest event time', async () => {
    const s = `${schema}_list`;
    const url = pgUrl(s);
    // The URL as openInstance passes it on (?schema= taken out): the pool key of every store below.
    const bare = new URL(url);
    bare.searchParams.delete('schema');
    const root = join(base, `pg-${++n}`);
    try {
      const a = await openInstance({ root, host: 'laptop', name: 'planner.v2-beta', url });
      await a.events.append({ type: 'note' });
      await a.events.append({ type: 'note' });
      const head = (await a.events.read({ reverse: true, limit: 1 }))[0]!;
      const b = await openInstance({ root, host: 'ci-runner.eu', name: 'a_worker', url });
      // A key that is not host/name (openPostgresBackend takes any key).
      const solo = await openPostgresBackend({ url: bare.toString(), schema: s, instance: 'solo' });
      // Another schema's instances are not listed.
      const other = await openInstance({ root, host: 'laptop', name: 'elsewhere', url: pgUrl(`${s}_x`) });
      try {
        expect(await listInstances({ url })).toEqual([
          {
            instance: 'ci-runner.eu/a_worker',
            host: 'ci-runner.eu',
            name: 'a_worker',
            events: 0,
            last_event_at: null,
          },
          {
            instance: 'laptop/planner.v2-beta',
            host: 'laptop',
            name: 'planner.v2-beta',
            events: 2,
            last_event_at: head.created_at,
          },
          { instance: 'solo', host: null, name: null, events: 0, last_event_at: null },
        ]);
        // The schema option wins over ?schema=, as for openInstance.
        expect((await listInstances({ url: pgUrl(`${s}_x`), schema: s })).length).toBe(3);
        // With the instances' settings, the listing takes a use of their pool instead of opening one.
        const pools = openPools();
        expect(pools).toEqual([expect.objectContaining({ users: 4 })]);
        const listing = listPostgresInstances({ url: bare.toString(), schema: s });
        expect(openPools()).toEqual([{ ...pools[0], users: 5 }]);
        expect((await listing).length).toBe(3);
        expect(openPools()).toEqual(pools);
      } finally {
        await Promise.all([a.close(), b.close(), solo.close(), other.close()]);
      }
      expect(openPools()).toEqual([]);
    } finally {
      await adminQuery(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
      await adminQuery(`DROP SCHEMA IF EXISTS "${s}_x" CASCADE`);
    }
  });

  it('an unreachable server is STORAGE_UNAVAILABLE with the password redacted', async () => {
    const err = await listInstances({
      url: 'postgres://me:s3cret@127.0.0.1:1/db',
      postgres: { connectTimeoutMs: 2000 },
    }).catch((e: unknown) => e as Error & { code?: string });
    expect(err).toMatchObject({ code: 'STORAGE_UNAVAILABLE' });
    expect(String((err as Error).message)).not.toContain('s3cret');
  });
});
