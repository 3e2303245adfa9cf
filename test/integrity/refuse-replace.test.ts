// The log refuses to be rewritten in place: SQLite's INSERT OR REPLACE fires no DELETE trigger, so its own
// triggers refuse an insert that collides with a stored event or history entry; PostgreSQL's
// INSERT … ON CONFLICT DO UPDATE fires the UPDATE triggers, which refuse it.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openInstance } from '../../src/instance/instance.js';
import { adminQuery, PG_URL, postgresForThisFile } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir();
let n = 0;

async function seeded(url?: string) {
  const inst = await openInstance({ dir: join(root, `i${++n}`), ...(url ? { url } : {}) });
  for (let i = 1; i <= 3; i++) await inst.events.append({ type: 'note', data: { i } });
  await inst.docs.commit({ kind: 'json', id: 'plan', expected_version: 0, body: { a: 1 }, write_id: 'w1' });
  await inst.docs.commit({ kind: 'json', id: 'plan', expected_version: 1, body: { a: 2 } });
  return inst;
}

describe('sqlite: REPLACE cannot rewrite the log', () => {
  it('INSERT OR REPLACE over an event is refused, whether it collides on the position or the stream sequence', async () => {
    const inst = await seeded();
    await inst.close();
    const db = new Database(inst.paths.db);
    try {
      const before = db.prepare('SELECT * FROM events ORDER BY position').all();
      const replace = db.prepare(
        `INSERT OR REPLACE INTO events (position, stream, stream_seq, type, data, actor, correlation_id,
           causation_id, work_item_id, created_at, prev_hash, hash)
         SELECT position, stream, stream_seq, type, ?, actor, correlation_id, causation_id, work_item_id,
           created_at, prev_hash, hash FROM events WHERE position = ?`,
      );
      expect(() => replace.run('{"i":33}', 2)).toThrow(/append-only/);
      // Same stream and sequence, a new position: REPLACE would delete event 3 through the unique index.
      expect(() =>
        db
          .prepare(
            `REPLACE INTO events (position, stream, stream_seq, type, data, created_at, prev_hash, hash)
             SELECT 99, stream, stream_seq, type, '{"i":0}', created_at, prev_hash, hash FROM events WHERE position = 3`,
          )
          .run(),
      ).toThrow(/append-only/);
      // The upsert form is refused too.
      expect(() =>
        db
          .prepare(
            `INSERT INTO events (position, stream, stream_seq, type, data, created_at, prev_hash, hash)
             SELECT position, stream, stream_seq, type, data, created_at, prev_hash, hash FROM events WHERE position = 1
             ON CONFLICT (position) DO UPDATE SET data = '{}'`,
          )
          .run(),
      ).toThrow(/append-only/);
      expect(db.prepare('SELECT * FROM events ORDER BY position').all()).toEqual(before);
    } finally {
      db.close();
    }
  });

  it('INSERT OR REPLACE over a history entry is refused (by seq, by version and by write id)', async () => {
    const inst = await seeded();
    await inst.close();
    const db = new Database(inst.paths.db);
    try {
      const before = db.prepare('SELECT * FROM document_history ORDER BY seq').all();
      const cols =
        'kind, id, seq, version, parent_version, noop, body, content_hash, actor, actor_kind, provenance, write_id, request_hash, reason, override, created_at';
      const copy = (seq: string, version: string, writeId: string) =>
        `INSERT OR REPLACE INTO document_history (${cols})
         SELECT kind, id, ${seq}, ${version}, parent_version, noop, '{"a":9}', content_hash, actor, actor_kind,
           provenance, ${writeId}, request_hash, reason, override, created_at FROM document_history WHERE seq = 1`;
      expect(() => db.prepare(copy('seq', 'version', 'write_id')).run()).toThrow(/immutable/);
      expect(() => db.prepare(copy('7', 'version', 'NULL')).run()).toThrow(/immutable/);
      expect(() => db.prepare(copy('7', '9', 'write_id')).run()).toThrow(/immutable/);
      expect(db.prepare('SELECT * FROM document_history ORDER BY seq').all()).toEqual(before);
    } finally {
      db.close();
    }
  });

  it('appends and commits (no-ops included) still insert freely', async () => {
    const inst = await seeded();
    await inst.events.appendMany([{ type: 'a' }, { type: 'b', stream: 's' }, { type: 'c', stream: 's' }]);
    await inst.docs.commit({ kind: 'json', id: 'plan', expected_version: 2, noop: true, reason: 'same' });
    await inst.docs.commit({ kind: 'json', id: 'plan', expected_version: 2, noop: true, reason: 'again' });
    expect((await inst.events.verify()).ok).toBe(true);
    await inst.close();
  });
});

const schema = await postgresForThisFile();
const pg = schema === null ? describe.skip : describe;

pg('postgres: an upsert cannot rewrite the log', () => {
  it('INSERT … ON CONFLICT DO UPDATE on events and on document_history fires the UPDATE triggers, which refuse it', async () => {
    const inst = await seeded(`${PG_URL}?schema=${schema}`);
    const key = `${inst.host}/${inst.name}`;
    await inst.close();
    const s = `"${schema}"`;
    const events = () => adminQuery(`SELECT * FROM ${s}.events WHERE instance = $1 ORDER BY position`, [key]);
    const history = () =>
      adminQuery(`SELECT * FROM ${s}.document_history WHERE instance = $1 ORDER BY seq`, [key]);
    const before = { events: await events(), history: await history() };
    await expect(
      adminQuery(
        `INSERT INTO ${s}.events SELECT * FROM ${s}.events WHERE instance = $1 AND position = 2
         ON CONFLICT (instance, position) DO UPDATE SET data = '{"i":33}'`,
        [key],
      ),
    ).rejects.toThrow(/append-only: UPDATE/);
    await expect(
      adminQuery(
        `INSERT INTO ${s}.document_history SELECT * FROM ${s}.document_history WHERE instance = $1 AND seq = 1
         ON CONFLICT (instance, kind, id, seq) DO UPDATE SET body = '{"a":9}'`,
        [key],
      ),
    ).rejects.toThrow(/immutable: UPDATE/);
    expect({ events: await events(), history: await history() }).toEqual(before);
  });
});
