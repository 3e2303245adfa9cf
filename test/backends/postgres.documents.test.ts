// PostgreSQL's document commit (src/backends/postgres/documents.ts), write by write: each of its three
// statement paths — a plain commit (one event, one statement), a commit with several events (a kind's
// effects) and one that enqueues or resolves work items — stores exactly what SQLite stores for the same
// writes (rows, events and their hashes), refuses a stale write without a trace, and wakes watchers with
// the newest position it appended. A history row refused by a unique index (a write id used again, a version
// or seq already there) is STATE_CONFLICT, any other unique violation is not. Writes are built here as the
// document store builds them (src/core/documents/commit.ts, write), so each path is reached on purpose.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPostgresBackend, type PostgresBackend } from '../../src/backends/postgres/backend.js';
import { PostgresConnection } from '../../src/backends/postgres/connection.js';
import { createDocumentBackend } from '../../src/backends/postgres/documents.js';
import { AppendHint } from '../../src/backends/postgres/events.js';
import { openSqliteBackend } from '../../src/backends/sqlite/backend.js';
import type {
  DocumentBackend,
  DocumentWrite,
  NewEvent,
  NewWorkItem,
  StatusChange,
  StoreBackend,
} from '../../src/core/backend.js';
import { canonicalJson, sha256 } from '../../src/core/json.js';
import type { JsonObject } from '../../src/core/types.js';
import { adminQuery, PG_URL, postgresForThisFile } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

const schema = await postgresForThisFile();
const suite = schema === null ? describe.skip : describe;
let n = 0;

/** The clock of every write here: rows and event hashes must come out the same on both backends. */
const NOW = 1_767_225_600_000;

/** The wake-up hint of a store, recording each position it is told of (and still sending it). */
class RecordingHint extends AppendHint {
  readonly positions: number[] = [];
  override appended(position: number): void {
    this.positions.push(position);
    super.appended(position);
  }
}

interface PgUnderTest {
  instance: string;
  backend: PostgresBackend;
  /** The commit code on a connection of its own, with a recording hint. */
  docs: DocumentBackend;
  hint: RecordingHint;
  /** The same, on a store without a hint (notify: false). */
  quiet: DocumentBackend;
  close(): Promise<void>;
}

async function openPg(): Promise<PgUnderTest> {
  const instance = `pgdocs/${++n}`;
  const opts = { url: PG_URL, schema: schema!, instance, poolSize: 4 };
  const backend = await openPostgresBackend(opts);
  const conn = await PostgresConnection.open(opts);
  const hint = new RecordingHint(conn);
  return {
    instance,
    backend,
    docs: createDocumentBackend(conn, hint),
    hint,
    quiet: createDocumentBackend(conn, null),
    async close() {
      await hint.drain();
      await conn.close();
      await backend.close();
    },
  };
}

async function openLite(): Promise<StoreBackend> {
  return openSqliteBackend({ path: join(tempDir(), `lite${++n}.db`) });
}

function event(type: string, kind: string, id: string, data: JsonObject): NewEvent {
  return {
    type,
    stream: `doc:${kind}/${id}`,
    data,
    actor: 'planner',
    correlation_id: null,
    causation_id: null,
    work_item_id: null,
    created_at: NOW,
  };
}

/** A document as a writer last read it: the version and content hash the next write is conditional on. */
interface Read {
  kind: string;
  id: string;
  version: number;
  hash: string | null;
}

const fresh = (kind: string, id: string): Read => ({ kind, id, version: 0, hash: null });

/** The write that turns the document `from` into `body` (its state_committed event first), as #write builds it. */
function change(from: Read, body: JsonObject, over: Partial<DocumentWrite> = {}): DocumentWrite {
  const text = canonicalJson(body);
  const hash = sha256(text);
  const noop = over.noop ?? false;
  return {
    kind: from.kind,
    id: from.id,
    expected_version: from.version,
    expected_hash: from.hash,
    body,
    body_text: noop ? undefined : text,
    content_hash: hash,
    noop,
    forked_from: null,
    now: NOW,
    keep_versions: null,
    actor: 'planner',
    actor_kind: 'model',
    provenance: null,
    write_id: null,
    request_hash: '',
    reason: null,
    override: null,
    events: [
      event('state_committed', from.kind, from.id, {
        version: noop ? from.version : from.version + 1,
        parent_version: from.version,
        content_hash: hash,
      }),
    ],
    enqueue: [],
    resolve: [],
    ...over,
  };
}

/** Commits `w` and returns what the next write reads: the version written and its content hash. */
async function commit(docs: DocumentBackend, w: DocumentWrite): Promise<Read> {
  const entry = await docs.commit(w);
  return { kind: w.kind, id: w.id, version: entry.version, hash: entry.content_hash };
}

function item(id: string, status: NewWorkItem['status'] = 'pending'): NewWorkItem {
  return {
    id,
    title: `decide ${id}`,
    kind: null,
    status,
    priority: 0,
    payload: { about: id },
    idempotency_key: `doc:json/plan#${id}`,
    blocked_by: [],
    not_before: null,
    max_attempts: 3,
    created_at: NOW,
    actor: 'planner',
    actor_kind: 'model',
  };
}

function answer(id: string): StatusChange {
  return {
    id,
    from: ['waiting_human'],
    to: 'done',
    event: 'work_item_resolved',
    result: { approved: true },
    error: null,
    actor: 'alice',
    actor_kind: 'human',
    now: NOW,
  };
}

/** Everything a store holds about `kind/id` and its log: what two backends given the same writes must agree on. */
async function snapshot(b: StoreBackend, kind: string, id: string, items: string[] = []) {
  return {
    document: await b.docs.get(kind, id),
    history: await b.docs.history(kind, id, { afterSeq: 0, limit: 100, reverse: false }),
    events: await b.events.scan(0, 1000),
    items: await Promise.all(items.map((x) => b.work.get(x))),
  };
}

/** The stored row of a document and of its history, as SQL sees them (NULL is not JSON null). */
async function rawRows(instance: string, kind: string, id: string) {
  const doc = await adminQuery<{ forked_from_is_null: boolean; forked_from: unknown }>(
    `SELECT forked_from IS NULL AS forked_from_is_null, forked_from FROM "${schema}".documents
     WHERE instance = $1 AND kind = $2 AND id = $3`,
    [instance, kind, id],
  );
  const history = await adminQuery<{
    version: number;
    noop: boolean;
    body_is_null: boolean;
    provenance_is_null: boolean;
    override_is_null: boolean;
    provenance: unknown;
    override: unknown;
  }>(
    `SELECT version, noop, body IS NULL AS body_is_null, provenance IS NULL AS provenance_is_null,
       override IS NULL AS override_is_null, provenance, override
     FROM "${schema}".document_history WHERE instance = $1 AND kind = $2 AND id = $3 ORDER BY seq`,
    [instance, kind, id],
  );
  return { doc: doc[0], history };
}

/** Runs the same writes (`run`) on a fresh store of each backend and returns both snapshots. */
async function onBoth(
  run: (docs: DocumentBackend, b: StoreBackend) => Promise<void>,
  kind: string,
  id: string,
  items: string[] = [],
) {
  const pg = await openPg();
  const lite = await openLite();
  try {
    await run(pg.docs, pg.backend);
    await run(lite.docs, lite);
    return {
      pg: await snapshot(pg.backend, kind, id, items),
      lite: await snapshot(lite, kind, id, items),
    };
  } finally {
    await lite.close();
    await pg.close();
  }
}

suite('postgres document commit: what each path stores', () => {
  it('a fork’s forked_from, provenance and override are stored exactly, and SQL NULL where a write has none', async () => {
    const forkedFrom = { kind: 'json', id: 'template', version: 7 };
    const provenance = { model_id: 'claude', run_id: 'run-9', step_id: 'draft' };
    const override = { rules: ['budget-limit'], reason: 'approved by finance' };
    const pg = await openPg();
    try {
      const v1 = await commit(
        pg.docs,
        change(fresh('json', 'plan'), { step: 1 }, { forked_from: forkedFrom, provenance, override }),
      );
      await commit(pg.docs, change(v1, { step: 2 }, { reason: 'plain' }));
      await commit(pg.docs, change(fresh('json', 'own'), { step: 1 }));

      // Read back through every reader: nothing of the three is lost or reshaped.
      expect((await pg.backend.docs.get('json', 'plan'))?.forked_from).toEqual(forkedFrom);
      const [first, second] = await pg.backend.docs.history('json', 'plan', {
        afterSeq: 0,
        limit: 10,
        reverse: false,
      });
      expect(first).toMatchObject({ version: 1, provenance, override });
      expect(second).toMatchObject({ version: 2, provenance: null, override: null, reason: 'plain' });
      expect((await pg.backend.docs.getVersion('json', 'plan', 1)) as { entry: unknown }).toMatchObject({
        entry: { provenance, override },
      });

      // As SQL sees them: absent is NULL (as SQLite stores it and as an imported dump loads it), never JSON null.
      const plan = await rawRows(pg.instance, 'json', 'plan');
      expect(plan.doc).toEqual({ forked_from_is_null: false, forked_from: forkedFrom });
      expect(plan.history).toEqual([
        expect.objectContaining({
          version: 1,
          provenance_is_null: false,
          override_is_null: false,
          provenance,
          override,
        }),
        expect.objectContaining({ version: 2, provenance_is_null: true, override_is_null: true }),
      ]);
      expect((await rawRows(pg.instance, 'json', 'own')).doc).toEqual({
        forked_from_is_null: true,
        forked_from: null,
      });
    } finally {
      await pg.close();
    }
  });

  it('the same writes store the same document, history and events (hashes too) as SQLite', async () => {
    const forkedFrom = { kind: 'json', id: 'template', version: 2 };
    const { pg, lite } = await onBoth(
      async (docs) => {
        const v1 = await commit(
          docs,
          change(
            fresh('json', 'plan'),
            { goal: 'ship', steps: [] },
            {
              forked_from: forkedFrom,
              provenance: { model_id: 'm1', input_hash: 'abc' },
              override: { rules: ['size'], reason: 'big on purpose' },
              write_id: 'w-1',
              request_hash: 'r-1',
              reason: 'start',
            },
          ),
        );
        const v2 = await commit(
          docs,
          change(v1, { goal: 'ship', steps: ['build'] }, { actor_kind: 'human' }),
        );
        // A no-op: a version recorded, nothing changed, no body in its history entry.
        await commit(
          docs,
          change(v2, { goal: 'ship', steps: ['build'] }, { noop: true, reason: 'reviewed: keep as is' }),
        );
      },
      'json',
      'plan',
    );
    expect(pg.document).toMatchObject({ version: 2, forked_from: forkedFrom, body: { steps: ['build'] } });
    expect(pg.history.map((h) => [h.version, h.noop, h.reason])).toEqual([
      [1, false, 'start'],
      [2, false, null],
      [2, true, 'reviewed: keep as is'],
    ]);
    expect(pg.events.map((e) => [e.type, e.stream_seq])).toEqual([
      ['state_committed', 1],
      ['state_committed', 2],
      ['state_committed', 3],
    ]);
    expect(pg).toEqual(lite);
  });

  it('a no-op writes a history entry without a body, on both backends alike', async () => {
    const pg = await openPg();
    try {
      const v1 = await commit(pg.docs, change(fresh('json', 'n'), { a: 1 }));
      const entry = await pg.docs.commit(change(v1, { a: 1 }, { noop: true, reason: 'checked' }));
      expect(entry).toMatchObject({ version: 1, parent_version: 1, noop: true, reason: 'checked' });
      const raw = await rawRows(pg.instance, 'json', 'n');
      expect(raw.history.map((h) => [h.version, h.noop, h.body_is_null])).toEqual([
        [1, false, false],
        [1, true, true],
      ]);
      expect((await pg.backend.docs.get('json', 'n'))?.version).toBe(1);
    } finally {
      await pg.close();
    }
  });

  it('a commit with several events (a kind’s effects) stores all of them, in order, as SQLite does', async () => {
    const { pg, lite } = await onBoth(
      async (docs) => {
        const w = change(fresh('json', 'plan'), { total: 3 });
        w.events.push(
          event('budget_warning', 'json', 'plan', { total: 3 }),
          event('budget_exceeded', 'json', 'plan', { total: 3 }),
        );
        await commit(docs, w);
      },
      'json',
      'plan',
    );
    expect(pg.events.map((e) => [e.position, e.type, e.stream_seq])).toEqual([
      [1, 'state_committed', 1],
      [2, 'budget_warning', 2],
      [3, 'budget_exceeded', 3],
    ]);
    expect(pg).toEqual(lite);
  });

  it('a commit that enqueues items and one that resolves a decision store items and events as SQLite does', async () => {
    const { pg, lite } = await onBoth(
      async (docs, b) => {
        await b.work.enqueue([item('ask', 'waiting_human')]);
        const v1 = await commit(docs, {
          ...change(fresh('json', 'plan'), { n: 1 }),
          enqueue: [item('next')],
        });
        // The human's answer, recorded with the commit that carries it (one event of its own: the plain shape
        // but for the resolve).
        const v2 = await commit(docs, {
          ...change(v1, { n: 2, approved: true }),
          resolve: [answer('ask')],
        });
        // The same item asked for again (its key is the document's): the item there already stands, and no
        // second work_item_enqueued is written.
        await commit(docs, { ...change(v2, { n: 3 }), enqueue: [{ ...item('next'), id: 'next-again' }] });
      },
      'json',
      'plan',
      ['ask', 'next', 'next-again'],
    );
    expect(pg.items.map((i) => [i?.id, i?.status])).toEqual([
      ['ask', 'done'],
      ['next', 'pending'],
      [undefined, undefined],
    ]);
    expect(pg.items[0]?.result).toEqual({ approved: true });
    expect(pg.events.map((e) => e.type)).toEqual([
      'work_item_enqueued',
      'work_item_enqueued',
      'state_committed',
      'state_committed',
      'work_item_resolved',
      'state_committed',
    ]);
    expect(pg).toEqual(lite);
  });
});

suite('postgres document commit: stale writes leave no trace', () => {
  /** The document at version 2 (written behind the writer's back), read by the writer at version 1. */
  async function movedOn(pg: PgUnderTest): Promise<Read> {
    const v1 = await commit(pg.docs, change(fresh('json', 'plan'), { n: 1 }));
    await commit(pg.docs, change(v1, { n: 2 }));
    return v1;
  }

  const cases: Array<[string, (w: DocumentWrite) => DocumentWrite]> = [
    ['a plain commit', (w) => w],
    [
      'a commit with several events',
      (w) => ({ ...w, events: [...w.events, event('budget_warning', w.kind, w.id, { n: 3 })] }),
    ],
    ['a commit that enqueues', (w) => ({ ...w, enqueue: [item('late')] })],
    ['a commit that resolves a decision', (w) => ({ ...w, resolve: [answer('ask')] })],
  ];
  for (const [what, shape] of cases) {
    it(`${what} on a version that moved on is STATE_CONFLICT, writing no row, item or event`, async () => {
      const pg = await openPg();
      try {
        await pg.backend.work.enqueue([item('ask', 'waiting_human')]);
        const stale = await movedOn(pg);
        const before = await snapshot(pg.backend, 'json', 'plan', ['ask', 'late']);
        const hinted = pg.hint.positions.length;
        await expect(pg.docs.commit(shape(change(stale, { n: 3 })))).rejects.toMatchObject({
          code: 'STATE_CONFLICT',
          details: { kind: 'json', id: 'plan', expected: 1, actual: 2 },
        });
        expect(await snapshot(pg.backend, 'json', 'plan', ['ask', 'late'])).toEqual(before);
        expect(before.items.map((i) => i?.status ?? null)).toEqual(['waiting_human', null]);
        expect(pg.hint.positions.length).toBe(hinted);
      } finally {
        await pg.close();
      }
    });
  }

  it('a change to a document that does not exist is STATE_CONFLICT at version 0, not a crash', async () => {
    const pg = await openPg();
    try {
      await expect(
        pg.docs.commit(change({ kind: 'json', id: 'gone', version: 3, hash: sha256('{}') }, { n: 4 })),
      ).rejects.toMatchObject({
        code: 'STATE_CONFLICT',
        details: { kind: 'json', id: 'gone', expected: 3, actual: 0 },
      });
      expect(await pg.backend.docs.get('json', 'gone')).toBeNull();
    } finally {
      await pg.close();
    }
  });
});

suite('postgres document commit: the wake-up hint', () => {
  it('each path tells the hint the newest position it appended, and runs as well without a hint', async () => {
    const pg = await openPg();
    try {
      await pg.backend.work.enqueue([item('ask', 'waiting_human')]); // position 1
      const head = async () => (await pg.backend.events.head())?.position;

      const v1 = await commit(pg.docs, change(fresh('json', 'plan'), { n: 1 })); // plain: 2
      expect(pg.hint.positions).toEqual([2]);
      const several = change(v1, { n: 2 });
      several.events.push(
        event('budget_warning', 'json', 'plan', {}),
        event('budget_exceeded', 'json', 'plan', {}),
      );
      const v2 = await commit(pg.docs, several); // several events: 3..5
      expect(pg.hint.positions).toEqual([2, 5]);
      const v3 = await commit(pg.docs, { ...change(v2, { n: 3 }), enqueue: [item('next')] }); // 6, 7
      expect(pg.hint.positions).toEqual([2, 5, 7]);
      const v4 = await commit(pg.docs, { ...change(v3, { n: 4 }), resolve: [answer('ask')] }); // 8, 9
      expect(pg.hint.positions).toEqual([2, 5, 7, 9]);
      expect(await head()).toBe(9);

      // A store without a hint (notify: false) commits on every path just the same.
      const q1 = await commit(pg.quiet, change(v4, { n: 5 }));
      const q2 = change(q1, { n: 6 });
      q2.events.push(event('budget_warning', 'json', 'plan', {}));
      const q3 = await commit(pg.quiet, q2);
      await commit(pg.quiet, { ...change(q3, { n: 7 }), enqueue: [item('after')] });
      expect((await pg.backend.docs.get('json', 'plan'))?.version).toBe(7);
      expect(await head()).toBe(14);
      expect(pg.hint.positions).toEqual([2, 5, 7, 9]);
    } finally {
      await pg.close();
    }
  });
});

suite('postgres document commit: a history row refused by a unique index', () => {
  it('a write id already used for another version of the document is STATE_CONFLICT naming the write id', async () => {
    const pg = await openPg();
    try {
      const v1 = await commit(
        pg.docs,
        change(fresh('json', 'plan'), { n: 1 }, { write_id: 'w-1', request_hash: 'a' }),
      );
      const events = (await pg.backend.events.scan(0, 100)).length;
      let refused: unknown;
      try {
        await pg.docs.commit(change(v1, { n: 2 }, { write_id: 'w-1', request_hash: 'b' }));
      } catch (err) {
        refused = err;
      }
      expect(refused).toMatchObject({
        code: 'STATE_CONFLICT',
        message: 'write_id w-1 was already used for a change to json/plan',
      });
      expect((refused as { details: unknown }).details).toStrictEqual({
        kind: 'json',
        id: 'plan',
        write_id: 'w-1',
        expected: 1,
        actual: 1,
      });
      // Nothing of the refused write stays: the conditional write that matched was rolled back with it.
      expect(await pg.backend.docs.get('json', 'plan')).toMatchObject({ version: 1, body: { n: 1 } });
      expect((await pg.backend.events.scan(0, 100)).length).toBe(events);
      // The same on the path that enqueues.
      await expect(
        pg.docs.commit({
          ...change(v1, { n: 2 }, { write_id: 'w-1', request_hash: 'c' }),
          enqueue: [item('x')],
        }),
      ).rejects.toMatchObject({
        code: 'STATE_CONFLICT',
        details: { write_id: 'w-1', expected: 1, actual: 1 },
      });
      expect(await pg.backend.work.get('x')).toBeNull();
    } finally {
      await pg.close();
    }
  });

  /** The document at version 2, then `set` done to its row behind the store's back (`$2`: version 1's hash). */
  async function tampered(pg: PgUnderTest, set: string): Promise<{ v1: Read; v2: Read }> {
    const v1 = await commit(pg.docs, change(fresh('json', 'plan'), { n: 1 }));
    const v2 = await commit(pg.docs, change(v1, { n: 2 }));
    await adminQuery(
      `UPDATE "${schema}".documents SET ${set} WHERE instance = $1 AND kind = 'json' AND id = 'plan'`,
      set.includes('$2') ? [pg.instance, v1.hash] : [pg.instance],
    );
    return { v1, v2 };
  }

  it('a version already in history is STATE_CONFLICT without a write id (write_id: null in its details)', async () => {
    const pg = await openPg();
    try {
      // The row back at version 1 (a restore) while history kept version 2 and the seq runs on: the next
      // commit writes version 2 once more.
      const { v1 } = await tampered(pg, `version = 1, content_hash = $2, body = '{"n":1}'`);
      let refused: unknown;
      try {
        await pg.docs.commit(change(v1, { n: 22 }));
      } catch (err) {
        refused = err;
      }
      expect(refused).toMatchObject({
        code: 'STATE_CONFLICT',
        message: 'json/plan is at version 1, not 1: read it again and retry',
      });
      expect((refused as { details: unknown }).details).toStrictEqual({
        kind: 'json',
        id: 'plan',
        write_id: null,
        expected: 1,
        actual: 1,
      });
      expect((await pg.backend.docs.getVersion('json', 'plan', 2)) as { body: unknown }).toMatchObject({
        body: { n: 2 },
      });
    } finally {
      await pg.close();
    }
  });

  it('a history seq already taken is STATE_CONFLICT as well', async () => {
    const pg = await openPg();
    try {
      // Still at version 2, but the seq counter set back: the next entry (version 3) would take seq 2 again.
      const { v2 } = await tampered(pg, 'last_seq = 1');
      await expect(pg.docs.commit(change(v2, { n: 3 }))).rejects.toMatchObject({
        code: 'STATE_CONFLICT',
        details: { kind: 'json', id: 'plan', write_id: null, expected: 2, actual: 2 },
      });
      expect(
        await pg.backend.docs.history('json', 'plan', { afterSeq: 0, limit: 10, reverse: false }),
      ).toHaveLength(2);
      expect((await pg.backend.docs.get('json', 'plan'))?.version).toBe(2);
    } finally {
      await pg.close();
    }
  });

  it('another unique violation (an enqueued item id already taken) is not turned into STATE_CONFLICT', async () => {
    const pg = await openPg();
    try {
      await pg.backend.work.enqueue([{ ...item('taken'), idempotency_key: 'elsewhere' }]);
      await expect(
        pg.docs.commit({ ...change(fresh('json', 'plan'), { n: 1 }), enqueue: [item('taken')] }),
      ).rejects.toMatchObject({ code: '23505', constraint: 'work_items_pkey' });
      expect(await pg.backend.docs.get('json', 'plan')).toBeNull();
    } finally {
      await pg.close();
    }
  });
});

suite('postgres document commit: an event the database drops', () => {
  it('a plain commit whose event was not stored is reported, not returned as committed', async () => {
    const pg = await openPg();
    // A misconfigured trigger that silently skips this instance's events (RETURN NULL in a BEFORE trigger).
    const name = `drop_events_${n}`;
    await adminQuery(
      `CREATE FUNCTION "${schema}".${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
       CREATE TRIGGER ${name} BEFORE INSERT ON "${schema}".events FOR EACH ROW
         WHEN (NEW.instance = '${pg.instance}') EXECUTE FUNCTION "${schema}".${name}()`,
    );
    try {
      await expect(pg.docs.commit(change(fresh('json', 'plan'), { n: 1 }))).rejects.toMatchObject({
        code: 'INTERNAL',
        message: 'append_events stored 0 of 1 events',
      });
    } finally {
      await adminQuery(`DROP TRIGGER ${name} ON "${schema}".events; DROP FUNCTION "${schema}".${name}()`);
      await pg.close();
    }
  });
});

suite('postgres document commit: an append_events that is not the one this code expects', () => {
  it('a commit with several events that gets fewer rows back than it sent is reported, not returned', async () => {
    const pg = await openPg();
    // The store's function swapped for one that hands back only the first row (a migration gone wrong),
    // for this instance only; the real one is put back afterwards.
    const args = 'text, text[], text[], text[], text[], text[], text[], text[], bigint[], text[], text[]';
    const fn = `"${schema}".append_events`;
    await adminQuery(
      `ALTER FUNCTION ${fn}(${args}) RENAME TO append_events_real;
       CREATE FUNCTION ${fn}(${args}) RETURNS TABLE (e_position bigint, e_stream_seq bigint, e_prev_hash text,
         e_hash text) LANGUAGE sql AS $$
         SELECT * FROM "${schema}".append_events_real($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         LIMIT CASE WHEN $1 = '${pg.instance}' THEN 1 END $$`,
    );
    try {
      const w = change(fresh('json', 'plan'), { n: 1 });
      w.events.push(event('budget_warning', 'json', 'plan', {}));
      await expect(pg.docs.commit(w)).rejects.toMatchObject({
        code: 'INTERNAL',
        message: 'append_events stored 1 of 2 events',
      });
      expect(pg.hint.positions).toEqual([]);
    } finally {
      await adminQuery(
        `DROP FUNCTION ${fn}(${args}); ALTER FUNCTION "${schema}".append_events_real(${args}) RENAME TO append_events`,
      );
      await pg.close();
    }
  });
});
