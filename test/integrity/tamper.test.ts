// The tamper suite, on SQLite and on PostgreSQL: an instance with every kind of activity verifies clean
// (also while others write to it), then each way of changing it behind agentstate's back gets the verdict
// it must get from the real CLI's `verify`, plain and with `--head` (which tampering the plain checks catch,
// which only a head kept elsewhere catches), and the same tampering carried through a dump into
// `instance import` is refused with nothing written.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { computeEventHash } from '../../src/core/hash.js';
import { contentHash } from '../../src/core/json.js';
import type { IntegrityProblem, Json, JsonObject, VerifyResult } from '../../src/core/types.js';
import { type AgentStateError, EXIT_CODES } from '../../src/errors.js';
import { type Instance, openInstance } from '../../src/instance/instance.js';
import { invoke } from '../../src/service/invoke.js';
import { runCli } from '../helpers/cli.js';
import { PG_URL, postgresForThisFile } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir();
const schema = await postgresForThisFile();
let n = 0;

const T0 = Date.parse('2026-03-01T00:00:00.000Z');
const example = (name: string): JsonObject =>
  JSON.parse(readFileSync(new URL(`../kinds/examples/${name}.json`, import.meta.url), 'utf8')) as JsonObject;

/** A stored event row, as both backends give it to the tamperer. */
interface EventRow {
  position: number;
  stream: string;
  stream_seq: number;
  type: string;
  data: string;
  actor: string | null;
  correlation_id: string | null;
  causation_id: string | null;
  work_item_id: string | null;
  created_at: number;
  prev_hash: string;
  hash: string;
}

/** What an attacker with write access to the storage can do, per backend (each the way it must be done there). */
interface Tamperer {
  /** Sets columns of a work item row (JSON columns given as values). */
  setItem(id: string, set: Record<string, Json>): Promise<void>;
  /** Sets a document's body, and its content_hash when given. */
  setDocument(kind: string, id: string, body: JsonObject, hash?: string): Promise<void>;
  /** Replaces a history entry with one of another body and hash (DELETE + INSERT: no trigger stops that). */
  replaceHistory(kind: string, id: string, version: number, body: JsonObject): Promise<void>;
  /** Removes a history entry (retention may, but only from the oldest end). */
  deleteHistory(kind: string, id: string, version: number): Promise<void>;
  events(): Promise<EventRow[]>;
  /**
   * Rewrites an event in place with a recomputed hash (SQLite: INSERT OR REPLACE with the trigger that
   * refuses it dropped first; PostgreSQL: UPDATE with triggers off), fixing PostgreSQL's head row too.
   */
  rewriteEvent(position: number, data: Json): Promise<void>;
  /** Removes the newest `count` events (triggers dropped or off), rewinding what names the head. */
  deleteNewest(count: number, opts: { rewindStreams: boolean }): Promise<void>;
}

interface Backend {
  name: string;
  url: string | undefined;
  tamperer(inst: Instance): Tamperer;
  /** INSERT OR REPLACE over a stored event with the triggers in place (SQLite only). */
  replaceRefused?(inst: Instance): void;
}

const sqlite: Backend = {
  name: 'sqlite',
  url: undefined,
  tamperer(inst) {
    const run = (fn: (db: Database.Database) => void) => {
      const db = new Database(inst.paths.db);
      try {
        fn(db);
      } finally {
        db.close();
      }
    };
    const JSON_COLS = new Set(['payload', 'notes', 'result', 'blocked_by']);
    const events = () => {
      const db = new Database(inst.paths.db, { readonly: true });
      try {
        return db.prepare('SELECT * FROM events ORDER BY position').all() as EventRow[];
      } finally {
        db.close();
      }
    };
    return {
      async setItem(id, set) {
        run((db) => {
          for (const [col, v] of Object.entries(set)) {
            db.prepare(`UPDATE work_items SET ${col} = ? WHERE id = ?`).run(
              JSON_COLS.has(col) ? JSON.stringify(v) : v,
              id,
            );
          }
        });
      },
      async setDocument(kind, id, body, hash) {
        run((db) =>
          db
            .prepare(
              'UPDATE documents SET body = ?, content_hash = COALESCE(?, content_hash) WHERE kind = ? AND id = ?',
            )
            .run(JSON.stringify(body), hash ?? null, kind, id),
        );
      },
      async replaceHistory(kind, id, version, body) {
        run((db) => {
          const row = db
            .prepare('SELECT * FROM document_history WHERE kind = ? AND id = ? AND version = ? AND noop = 0')
            .get(kind, id, version) as Record<string, unknown>;
          db.prepare('DELETE FROM document_history WHERE kind = ? AND id = ? AND seq = ?').run(
            kind,
            id,
            row.seq,
          );
          const next: Record<string, unknown> = {
            ...row,
            body: JSON.stringify(body),
            content_hash: contentHash(body),
          };
          const cols = Object.keys(next);
          db.prepare(
            `INSERT INTO document_history (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
          ).run(...cols.map((c) => next[c]));
        });
      },
      async deleteHistory(kind, id, version) {
        run((db) =>
          db
            .prepare('DELETE FROM document_history WHERE kind = ? AND id = ? AND version = ?')
            .run(kind, id, version),
        );
      },
      events: async () => events(),
      async rewriteEvent(position, data) {
        const e = events().find((x) => x.position === position)!;
        const next = { ...e, data: JSON.stringify(data) };
        next.hash = computeEventHash(next.prev_hash, next);
        run((db) => {
          db.exec('DROP TRIGGER events_no_replace');
          const cols = Object.keys(next) as Array<keyof EventRow>;
          db.prepare(
            `INSERT OR REPLACE INTO events (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
          ).run(...cols.map((c) => next[c]));
        });
      },
      async deleteNewest(count) {
        // Nothing but the events themselves names the head here.
        run((db) => {
          db.exec('DROP TRIGGER events_no_delete');
          db.prepare('DELETE FROM events WHERE position > (SELECT MAX(position) FROM events) - ?').run(count);
        });
      },
    };
  },
  replaceRefused(inst) {
    const db = new Database(inst.paths.db);
    try {
      const e = db.prepare('SELECT * FROM events ORDER BY position DESC LIMIT 1').get() as EventRow;
      const next = { ...e, data: '{"forged":true}' };
      next.hash = computeEventHash(next.prev_hash, next);
      const cols = Object.keys(next) as Array<keyof EventRow>;
      expect(() =>
        db
          .prepare(
            `INSERT OR REPLACE INTO events (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
          )
          .run(...cols.map((c) => next[c])),
      ).toThrow(/append-only/);
    } finally {
      db.close();
    }
  },
};

/** Runs statements on one connection (session settings such as session_replication_role hold for all). */
async function pgSession(statements: Array<[string, unknown[]?]>): Promise<Array<Record<string, unknown>[]>> {
  const client = new pg.Client({ connectionString: PG_URL });
  client.on('error', () => {});
  await client.connect();
  try {
    const out: Array<Record<string, unknown>[]> = [];
    for (const [sql, params] of statements) out.push((await client.query(sql, params)).rows);
    return out;
  } finally {
    await client.end();
  }
}

const postgres: Backend = {
  name: 'postgres',
  url: schema === null ? undefined : `${PG_URL}?schema=${schema}`,
  tamperer(inst) {
    const s = `"${schema}"`;
    const key = `${inst.host}/${inst.name}`;
    const JSON_COLS = new Set(['payload', 'notes', 'result']);
    const events = async () => {
      const [rows] = await pgSession([
        [
          `SELECT position::int, stream, stream_seq::int, type, data::text AS data, actor, correlation_id,
             causation_id, work_item_id, created_at::float8 AS created_at, prev_hash, hash
           FROM ${s}.events WHERE instance = $1 ORDER BY position`,
          [key],
        ],
      ]);
      return rows as unknown as EventRow[];
    };
    return {
      async setItem(id, set) {
        for (const [col, v] of Object.entries(set)) {
          await pgSession([
            [
              `UPDATE ${s}.work_items SET ${col} = $1${JSON_COLS.has(col) ? '::jsonb' : ''} WHERE instance = $2 AND id = $3`,
              [JSON_COLS.has(col) ? JSON.stringify(v) : v, key, id],
            ],
          ]);
        }
      },
      async setDocument(kind, id, body, hash) {
        await pgSession([
          [
            `UPDATE ${s}.documents SET body = $1::jsonb, content_hash = COALESCE($2, content_hash)
             WHERE instance = $3 AND kind = $4 AND id = $5`,
            [JSON.stringify(body), hash ?? null, key, kind, id],
          ],
        ]);
      },
      async replaceHistory(kind, id, version, body) {
        const where = 'instance = $1 AND kind = $2 AND id = $3 AND version = $4 AND NOT noop';
        await pgSession([
          [
            `CREATE TEMP TABLE h AS SELECT * FROM ${s}.document_history WHERE ${where}`,
            [key, kind, id, version],
          ],
          [`DELETE FROM ${s}.document_history WHERE ${where}`, [key, kind, id, version]],
          ['UPDATE h SET body = $1::jsonb, content_hash = $2', [JSON.stringify(body), contentHash(body)]],
          [`INSERT INTO ${s}.document_history SELECT * FROM h`],
        ]);
      },
      async deleteHistory(kind, id, version) {
        await pgSession([
          [
            `DELETE FROM ${s}.document_history WHERE instance = $1 AND kind = $2 AND id = $3 AND version = $4`,
            [key, kind, id, version],
          ],
        ]);
      },
      events,
      async rewriteEvent(position, data) {
        const all = await events();
        const e = all.find((x) => x.position === position)!;
        const next = { ...e, data: JSON.stringify(data) };
        next.hash = computeEventHash(next.prev_hash, next);
        await pgSession([
          ['SET session_replication_role = replica'],
          [
            `UPDATE ${s}.events SET data = $1::json, hash = $2 WHERE instance = $3 AND position = $4`,
            [next.data, next.hash, key, position],
          ],
          [
            `UPDATE ${s}.event_heads SET hash = $1 WHERE instance = $2 AND position = $3`,
            [next.hash, key, position],
          ],
        ]);
      },
      async deleteNewest(count, opts) {
        const all = await events();
        const kept = all.slice(0, all.length - count);
        const last = kept[kept.length - 1]!;
        const statements: Array<[string, unknown[]?]> = [
          ['SET session_replication_role = replica'],
          [`DELETE FROM ${s}.events WHERE instance = $1 AND position > $2`, [key, last.position]],
          [
            `UPDATE ${s}.event_heads SET position = $1, hash = $2 WHERE instance = $3`,
            [last.position, last.hash, key],
          ],
        ];
        if (opts.rewindStreams) {
          const rewound = new Map<string, number>();
          for (const e of all.slice(kept.length)) {
            if (!rewound.has(e.stream)) rewound.set(e.stream, e.stream_seq);
          }
          for (const [stream, first] of rewound) {
            statements.push([
              `UPDATE ${s}.event_streams SET seq = $1 WHERE instance = $2 AND stream = $3`,
              [first - 1, key, stream],
            ]);
          }
          statements.push([`DELETE FROM ${s}.event_streams WHERE instance = $1 AND seq = 0`, [key]]);
        }
        await pgSession(statements);
      },
    };
  },
};

const backends = [sqlite, ...(schema === null ? [] : [postgres])];

function freshDir(label: string): string {
  return join(root, `${label}-${++n}`);
}

function cli(b: Backend, dir: string, ...args: string[]) {
  return runCli(['--dir', dir, '--json', ...args], { AGENTSTATE_URL: b.url });
}

/** `agentstate verify --json [--head …]` as a subprocess: its JSON and its exit code. */
function verify(b: Backend, dir: string, head?: string | null): VerifyResult & { code: number } {
  const r = cli(b, dir, 'verify', ...(head ? ['--head', head] : []));
  expect(r.json, r.stderr).toBeTypeOf('object');
  return { ...(r.json as VerifyResult), code: r.code };
}

/**
 * The same verify operation the CLI runs, in this process (the CLI's part, JSON and the exit code of a failed
 * verify, is tested through the subprocess above in the clean and text cases).
 */
async function verifyHere(
  b: Backend,
  dir: string,
  head?: string | null,
): Promise<VerifyResult & { code: number }> {
  const r = (await invoke('verify', head ? { head } : {}, {
    instance: { dir, url: b.url },
    env: {},
  })) as VerifyResult;
  return { ...r, code: r.ok ? 0 : EXIT_CODES.INTEGRITY_VIOLATION };
}

const kinds = (r: VerifyResult) => [...new Set(r.problems.map((p: IntegrityProblem) => p.problem))].sort();

/**
 * Every kind of activity through the library: enqueues (payload, key, blockers, not_before, max_attempts,
 * waiting for a human), claims, heartbeats, an expired lease reclaimed and one spent, a release, annotations
 * (merges and deletions), claimMany/resolveMany, cancel, park/unpark, a human's answer, replay; documents
 * with merge and JSON patches, a write-id retry, no-ops, an unchanged commit, a fork, retention pruning,
 * a TaskIR whose escalation parks an item whose answer commits the task, an agent-run, and plain events.
 */
async function activity(inst: Instance, advance: (ms: number) => void): Promise<Record<string, string>> {
  const w = inst.work;
  const a = await w.enqueue({
    title: 'a',
    payload: { n: 1, deep: { x: [1, null, 'é'] } },
    priority: 5,
    idempotency_key: 'k-a',
    max_attempts: 2,
  });
  const b = await w.enqueue({
    title: 'b',
    blocked_by: [a.id],
    not_before: new Date(T0 + 1000).toISOString(),
  });
  await w.enqueue({ title: 'a again', idempotency_key: 'k-a' });
  const c = await w.enqueue({ title: 'c', kind: 'k', payload: [1, 2] });
  const human = await w.enqueue({ title: 'ask', waiting_human: true });
  const parked = await w.enqueue({ title: 'to park' });
  await w.claim({ worker: 'w1', id: a.id, lease_ms: 1000 });
  await w.heartbeat({ id: a.id, worker: 'w1', attempt: 1, lease_ms: 2000 });
  await w.annotate({ id: a.id, worker: 'w1', attempt: 1, notes: { step: 1, tmp: 'x' } });
  advance(5000);
  await w.reclaimExpired();
  await w.claim({ worker: 'w2', id: a.id, lease_ms: 1000 });
  advance(5000);
  // This claim first reclaims a's spent lease (a fails), then takes c.
  const c1 = (await w.claim({ worker: 'w3', kind: 'k' }))!;
  await w.release({ id: c.id, worker: 'w3', attempt: c1.attempts });
  const c2 = (await w.claim({ worker: 'w3', id: c.id }))!;
  await w.annotate({ id: c.id, notes: { tmp: null, nested: { a: 1, keep: [true] } } });
  await w.annotate({ id: c.id, notes: { nested: { b: 2, a: null } } });
  await w.resolve({
    id: c.id,
    worker: 'w3',
    attempt: c2.attempts,
    status: 'done',
    result: { files: [1, 2] },
  });
  await w.park({ id: parked.id, reason: 'needs a look' });
  await w.unpark({ id: parked.id, reason: 'looked' });
  await w.enqueueMany([{ title: 'e1' }, { title: 'e2', priority: 2 }, { title: 'e3' }]);
  const many = await w.claimMany({ worker: 'w4', limit: 3 });
  await w.resolveMany(
    many.map((i, k) =>
      k === 0
        ? { id: i.id, worker: 'w4', status: 'failed' as const, error: 'boom' }
        : { id: i.id, worker: 'w4', status: 'done' as const, result: k },
    ),
  );
  await w.cancel({ id: b.id, reason: 'not needed' });
  await w.resolve({ id: human.id, worker: 'ana', status: 'done', result: { answer: 'yes' } });
  const held = (await w.claim({ worker: 'w5', lease_ms: 60_000 }))!;
  await w.replayPending();
  await inst.events.append({ type: 'note', work_item_id: c.id, data: { text: 'héllo', z: [null] } });

  const d = inst.docs;
  const plan = { kind: 'json', id: 'plan' };
  await d.commit({ ...plan, expected_version: 0, body: { steps: ['x'] }, actor: 'ana', actor_kind: 'human' });
  await d.commit({ ...plan, expected_version: 1, merge_patch: { done: false }, write_id: 'w1' });
  await d.commit({ ...plan, expected_version: 1, merge_patch: { done: false }, write_id: 'w1' });
  await d.commit({ ...plan, expected_version: 2, noop: true, reason: 'checked', write_id: 'n1' });
  await d.commit({ ...plan, expected_version: 2, body: { steps: ['x'], done: false } });
  await d.commit({ ...plan, expected_version: 2, json_patch: [{ op: 'add', path: '/steps/-', value: 'y' }] });
  await d.commit({
    ...plan,
    expected_version: 3,
    merge_patch: { done: true },
    actor: 'model-1',
    actor_kind: 'model',
    provenance: { model_id: 'm', run_id: 'r', step_id: 's', input_hash: 'h' },
  });
  await d.fork({ ...plan, version: 2, new_id: 'plan-copy' });
  for (let v = 4; v < 8; v++) await d.commit({ ...plan, expected_version: v, merge_patch: { v } });
  await d.commit({ ...plan, expected_version: 8, noop: true, reason: 'still current' });
  await d.prune({ ...plan, keep: 3 });

  const task = { kind: 'task-ir', id: 'task' };
  await d.commit({ ...task, expected_version: 0, body: example('task-ir.open') });
  const open = structuredClone((await d.get(task)).body);
  (open.ambiguities as JsonObject[])[0]!.status = 'escalated';
  await d.commit({ ...task, expected_version: 1, body: open });
  const [question] = await w.list({ status: 'waiting_human' });
  await w.resolve({
    id: question!.id,
    status: 'done',
    actor: 'alice',
    actor_kind: 'human',
    result: { answer: 'preserve' },
  });
  await d.commit({
    kind: 'agent-run',
    id: 'run',
    expected_version: 0,
    body: {
      run_id: 'run',
      agent: 'coder',
      status: 'running',
      intent: { text: 'fix it' },
      task_ir: { id: 'task' },
    },
    actor: 'coder',
  });
  return { a: a.id, b: b.id, c: c.id, held: held.id, human: human.id };
}

async function seeded(b: Backend, label: string, retention?: number) {
  const dir = freshDir(label);
  let t = T0;
  const inst = await openInstance({
    dir,
    ...(b.url ? { url: b.url } : {}),
    clock: () => t,
    ...(retention ? { retention } : {}),
  });
  const ids = await activity(inst, (ms) => {
    t += ms;
  });
  return { dir, inst, ids };
}

describe.each(backends)('$name: an untouched instance verifies clean', (b) => {
  it('every kind of activity verifies with no problem, plain, with its own head, and after an export and import', async () => {
    const { dir, inst } = await seeded(b, 'clean', 5);
    await inst.close();
    const r = verify(b, dir);
    expect(r.problems).toEqual([]);
    expect(r).toMatchObject({ ok: true, code: 0, checked: { counters: b.name === 'postgres' } });
    expect(r.checked.work_items).toBe(9);
    expect(r.checked.documents).toBe(4);
    expect(r.anchor).toBe(`${r.events}:${r.head}`);
    expect(verify(b, dir, r.anchor)).toMatchObject({ ok: true, code: 0, expected_head: { matches: true } });
    const text = runCli(['--dir', dir, 'verify', '--head', r.anchor!], { AGENTSTATE_URL: b.url });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`head ${r.anchor}`);
    expect(text.stdout).toMatch(
      /chain intact; \d+ work items and 4 documents \(\d+ versions\) match the log/,
    );

    const file = join(root, `clean-${++n}.jsonl`);
    const exported = cli(b, dir, 'instance', 'export', file);
    expect(exported.code, exported.stderr).toBe(0);
    expect((exported.json as { anchor: string }).anchor).toBe(r.anchor);
    for (const target of backends) {
      const into = freshDir(`clean-into-${target.name}`);
      const imported = cli(target, into, 'instance', 'import', file);
      expect(imported.code, imported.stderr).toBe(0);
      expect(imported.json).toMatchObject({ verified: true, anchor: r.anchor });
      expect(verify(target, into, r.anchor)).toMatchObject({ ok: true, problems: [] });
    }
    // The dashboard stamp carries the head too.
    expect(cli(b, dir, 'dashboard').code).toBe(0);
    expect(readFileSync(join(dir, 'dashboard.md'), 'utf8')).toContain(`head=${r.anchor}`);
  });

  it('a verify while other writers commit sees one snapshot: no false alarm', async () => {
    const { dir, inst } = await seeded(b, 'busy');
    const writer = await openInstance({ dir, ...(b.url ? { url: b.url } : {}) });
    let stop = false;
    const writes = (async () => {
      for (let i = 0; !stop && i < 300; i++) {
        const item = await writer.work.enqueue({ title: `w${i}`, payload: { i } });
        const held = await writer.work.claim({ worker: 'busy', id: item.id });
        await writer.work.annotate({ id: item.id, notes: { i } });
        if (held) await writer.work.resolve({ id: item.id, worker: 'busy', status: 'done', result: i });
        await writer.docs.commit({
          kind: 'json',
          id: `busy-${i % 3}`,
          expected_version: Math.floor(i / 3),
          body: { i },
        });
      }
    })();
    try {
      for (let k = 0; k < 4; k++) {
        const r = await inst.events.verify();
        expect(r.problems).toEqual([]);
      }
    } finally {
      stop = true;
      await writes;
      await writer.close();
      await inst.close();
    }
  });
});

/** One tampering and the verdict it must get. */
interface Case {
  name: string;
  /** Which backends it applies to (default: all). */
  only?: string;
  /** Honest activity first, before the head is taken (what the tampering then removes or rewrites). */
  prepare?(inst: Instance, ids: Record<string, string>): Promise<void>;
  tamper(t: Tamperer, ids: Record<string, string>): Promise<void>;
  /** Problem kinds plain verify must report; [] means plain verify passes (only --head can tell). */
  plain: string[];
  /** Problem kinds verify --head <the head before tampering> must report. */
  head: string[];
  /** A substring of the problems' messages. */
  says?: RegExp;
  /**
   * Every row_differs problem, plain and anchored, as `<ids key>.<field>`: each rewritten field must be
   * reported on its own (a check dropped for one field must fail the case even when others still differ).
   */
  differs?: string[];
}

const noteData = { text: 'forged' };

const cases: Case[] = [
  {
    name: 'a work item row: status and result',
    tamper: (t, ids) => t.setItem(ids.c!, { status: 'failed', result: { files: [] } }),
    plain: ['row_differs'],
    head: ['row_differs'],
    says: /status is "failed", the log says "done"/,
  },
  {
    name: 'a work item row: attempts, notes and payload',
    tamper: (t, ids) => t.setItem(ids.a!, { attempts: 1, notes: { step: 2 }, payload: { n: 2 } }),
    plain: ['row_differs'],
    head: ['row_differs'],
    says: /payload hashes to/,
  },
  {
    name: 'a work item row: lease owner of an item in flight, max_attempts and priority',
    tamper: (t, ids) => t.setItem(ids.held!, { lease_owner: 'intruder', max_attempts: 99, priority: 100 }),
    plain: ['row_differs'],
    head: ['row_differs'],
    says: /lease_owner is "intruder"/,
  },
  {
    name: 'a work item row: a cascade undone behind the log (status, cascaded_from), a policy changed',
    prepare: async (inst, ids) => {
      const top = await inst.work.enqueue({ title: 'top' });
      const dep = await inst.work.enqueue({
        title: 'dep',
        blocked_by: [top.id],
        on_blocker_failure: 'cascade',
      });
      const other = await inst.work.enqueue({ title: 'other', blocked_by: [top.id] });
      await inst.work.cancel({ id: top.id });
      await inst.work.retry({ id: top.id });
      await inst.work.cancel({ id: top.id });
      ids.dep = dep.id;
      ids.other = other.id;
    },
    tamper: async (t, ids) => {
      await t.setItem(ids.dep!, { status: 'pending', cascaded_from: null, resolved_at: null });
      await t.setItem(ids.other!, { on_blocker_failure: 'cascade' });
    },
    plain: ['row_differs'],
    head: ['row_differs'],
    says: /cascaded_from is null, the log says "wi_|on_blocker_failure is "cascade", the log says "wait"/,
  },
  {
    name: 'a work item row: the traceparent it carries, rewritten and set where none was',
    prepare: async (inst, ids) => {
      const traced = await inst.work.enqueue({
        title: 'traced',
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      });
      ids.traced = traced.id;
    },
    tamper: async (t, ids) => {
      await t.setItem(ids.traced!, {
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01',
      });
      await t.setItem(ids.a!, { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
    },
    plain: ['row_differs'],
    head: ['row_differs'],
    says: /traceparent is "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", the log says null/,
  },
  {
    name: 'a work item row: its kind, and the time it was created',
    tamper: async (t, ids) => {
      await t.setItem(ids.c!, { kind: 'other' });
      await t.setItem(ids.b!, { created_at: T0 - 86_400_000 });
    },
    plain: ['row_differs'],
    head: ['row_differs'],
    differs: ['b.created_at', 'c.kind'],
    says: /kind is "other", the log says "k"/,
  },
  {
    name: "a work item row: an idempotency key given a document's doc: prefix (a human decision), and one taken off",
    prepare: async (inst, ids) => {
      // The TaskIR's escalated ambiguity: an item a document enqueued, so only a human answers it.
      const asked = (await inst.work.list({ limit: 100 })).filter((i) =>
        i.idempotency_key?.startsWith('doc:'),
      );
      expect(asked).toHaveLength(1);
      ids.asked = asked[0]!.id;
    },
    tamper: async (t, ids) => {
      await t.setItem(ids.human!, { idempotency_key: 'doc:json/plan#approve' });
      await t.setItem(ids.asked!, { idempotency_key: null });
    },
    plain: ['row_differs'],
    head: ['row_differs'],
    differs: ['asked.idempotency_key', 'human.idempotency_key'],
    says: /idempotency_key is "doc:json\/plan#approve", the log says null/,
  },
  {
    name: 'a work item row: its blockers emptied, an error added, a concurrency key set',
    tamper: async (t, ids) => {
      await t.setItem(ids.b!, { blocked_by: [] });
      await t.setItem(ids.c!, { error: 'forged' });
      await t.setItem(ids.held!, { concurrency_key: 'openai:org-1' });
    },
    // The blocker row of b is still there: work_item_blockers names a blocker b's row no longer does.
    plain: ['event_missing', 'row_differs'],
    head: ['event_missing', 'row_differs'],
    differs: ['b.blocked_by', 'c.error', 'held.concurrency_key'],
    says: /concurrency_key is "openai:org-1", the log says null/,
  },
  {
    name: 'a document body, content hash left alone',
    tamper: (t) => t.setDocument('json', 'plan', { steps: ['evil'] }),
    plain: ['content_hash_mismatch'],
    head: ['content_hash_mismatch'],
  },
  {
    name: 'a document body with its content hash recomputed',
    tamper: (t) => {
      const body = { steps: ['evil'] };
      return t.setDocument('json', 'plan', body, contentHash(body));
    },
    plain: ['row_differs'],
    head: ['row_differs'],
    says: /content_hash is/,
  },
  {
    name: 'a kept history entry replaced by another body with its hash',
    tamper: (t) => t.replaceHistory('json', 'plan', 7, { forged: true }),
    plain: ['row_differs'],
    head: ['row_differs'],
  },
  {
    name: 'a history entry removed from the middle',
    tamper: (t) => t.deleteHistory('json', 'plan', 7),
    plain: ['history_gap'],
    head: ['history_gap'],
  },
  {
    name: 'the newest event (a state_committed) rewritten with a recomputed hash',
    tamper: async (t) => {
      const last = (await t.events()).at(-1)!;
      expect(last.type).toBe('state_committed');
      const data = JSON.parse(last.data) as JsonObject;
      await t.rewriteEvent(last.position, { ...data, content_hash: contentHash({ other: 1 }) });
    },
    plain: ['row_differs'],
    head: ['head_mismatch', 'row_differs'],
  },
  {
    name: 'an event in the middle rewritten with a recomputed hash',
    tamper: async (t) => {
      const note = (await t.events()).find((e) => e.type === 'note')!;
      await t.rewriteEvent(note.position, noteData);
    },
    plain: ['chain_broken'],
    head: ['chain_broken', 'head_mismatch'],
  },
  {
    name: 'the newest event (a step of a durable run) rewritten with a recomputed hash to name another worker',
    prepare: async (inst, ids) => {
      const held = await inst.work.get(ids.held!);
      const run = await inst.work.run({ id: held.id, worker: 'w5', attempt: held.attempts });
      await run.step('charge', () => ({ charged: 42 }));
    },
    tamper: async (t) => {
      const last = (await t.events()).at(-1)!;
      expect(last.type).toBe('work_step_completed');
      const data = JSON.parse(last.data) as JsonObject;
      await t.rewriteEvent(last.position, { ...data, worker: 'mallory', result: { charged: 0 } });
    },
    // The fold knows who held the lease on that attempt: a record by anyone else is caught without a head.
    plain: ['record_unfenced'],
    head: ['head_mismatch', 'record_unfenced'],
    says: /by mallory, but the lease was w5's/,
  },
  {
    name: 'a step of a durable run in the middle of the log rewritten with a recomputed hash',
    prepare: async (inst, ids) => {
      const held = await inst.work.get(ids.held!);
      const run = await inst.work.run({ id: held.id, worker: 'w5', attempt: held.attempts });
      await run.step('charge', () => ({ charged: 42 }));
      await inst.events.append({ type: 'note', data: { text: 'after the step' } });
    },
    tamper: async (t) => {
      const step = (await t.events()).find((e) => e.type === 'work_step_completed')!;
      const data = JSON.parse(step.data) as JsonObject;
      await t.rewriteEvent(step.position, { ...data, result: { charged: 0 } });
    },
    plain: ['chain_broken'],
    head: ['chain_broken', 'head_mismatch'],
  },
  {
    name: 'the newest event (a plain note) rewritten with a recomputed hash',
    prepare: async (inst) => {
      await inst.events.append({ type: 'note', data: { text: 'original' } });
    },
    tamper: async (t) => {
      const last = (await t.events()).at(-1)!;
      await t.rewriteEvent(last.position, noteData);
    },
    // Nothing else records a plain event: only the head kept elsewhere shows the rewrite.
    plain: [],
    head: ['head_mismatch'],
  },
  {
    name: 'the newest events removed, among them a resolve',
    prepare: async (inst, ids) => {
      await inst.work.resolve({ id: ids.held!, worker: 'w5', status: 'done', result: 'late' });
      await inst.events.appendMany([{ type: 'note' }, { type: 'note' }]);
    },
    tamper: (t) => t.deleteNewest(3, { rewindStreams: true }),
    plain: ['row_differs'],
    head: ['head_mismatch', 'row_differs'],
    says: /status is "done", the log says "in_flight"/,
  },
  {
    name: 'the newest plain events removed',
    only: 'sqlite',
    prepare: async (inst) => {
      await inst.events.appendMany([{ type: 'note' }, { type: 'note', stream: 'other' }]);
    },
    tamper: (t) => t.deleteNewest(2, { rewindStreams: true }),
    plain: [],
    head: ['head_mismatch'],
    says: /not in the log, which ends at/,
  },
  {
    name: 'the newest plain events removed under session_replication_role = replica, event_heads rewound',
    only: 'postgres',
    prepare: async (inst) => {
      await inst.events.appendMany([{ type: 'note' }, { type: 'note', stream: 'other' }]);
    },
    tamper: (t) => t.deleteNewest(2, { rewindStreams: false }),
    // The stream counters still name the removed events.
    plain: ['counter_mismatch'],
    head: ['counter_mismatch', 'head_mismatch'],
    says: /events were removed/,
  },
  {
    name: 'the newest plain events removed under replica role, event_heads and event_streams rewound',
    only: 'postgres',
    prepare: async (inst) => {
      await inst.events.appendMany([{ type: 'note' }, { type: 'note', stream: 'other' }]);
    },
    tamper: (t) => t.deleteNewest(2, { rewindStreams: true }),
    plain: [],
    head: ['head_mismatch'],
  },
];

describe.each(backends)('$name: tampering and the verdicts of verify', (b) => {
  if (b.replaceRefused) {
    it('INSERT OR REPLACE over an event with a recomputed hash is refused while the triggers stand', async () => {
      const { dir, inst } = await seeded(b, 'replace');
      const before = verify(b, dir).anchor;
      await inst.close();
      b.replaceRefused!(inst);
      expect(verify(b, dir, before)).toMatchObject({ ok: true, code: 0 });
    });
  }

  for (const c of cases.filter((x) => x.only === undefined || x.only === b.name)) {
    it(c.name, async () => {
      const { dir, inst, ids } = await seeded(b, 'tamper');
      await c.prepare?.(inst, ids);
      await inst.close();
      // The head as someone kept it before the tampering.
      const before = await verifyHere(b, dir);
      expect(before.ok).toBe(true);
      await c.tamper(b.tamperer(inst), ids);
      const plain = await verifyHere(b, dir);
      expect(kinds(plain), JSON.stringify(plain.problems)).toEqual([...c.plain].sort());
      expect(plain.ok).toBe(c.plain.length === 0);
      expect(plain.code).toBe(c.plain.length === 0 ? 0 : 3);
      const anchored = await verifyHere(b, dir, before.anchor);
      expect(kinds(anchored), JSON.stringify(anchored.problems)).toEqual([...c.head].sort());
      expect(anchored.code).toBe(3);
      expect(anchored.expected_head?.matches).toBe(!c.head.includes('head_mismatch'));
      if (c.says) {
        expect([...plain.problems, ...anchored.problems].map((p) => p.message).join('\n')).toMatch(c.says);
      }
      if (c.differs) {
        const name = new Map(Object.entries(ids).map(([k, id]) => [id, k]));
        for (const r of [plain, anchored]) {
          const got = r.problems
            .filter((p) => p.problem === 'row_differs')
            .map((p) => `${name.get(p.key) ?? p.key}.${p.field}`);
          expect([...new Set(got)].sort(), JSON.stringify(r.problems)).toEqual([...c.differs].sort());
        }
      }
    });
  }

  it('the text output names the first broken link and lists the problems', async () => {
    const { dir, inst, ids } = await seeded(b, 'text');
    const t = b.tamperer(inst);
    const note = (await t.events()).find((e) => e.type === 'note')!;
    await t.rewriteEvent(note.position, noteData);
    await t.setItem(ids.c!, { status: 'failed' });
    await inst.close();
    const r = runCli(['--dir', dir, 'verify'], { AGENTSTATE_URL: b.url });
    expect(r.code).toBe(3);
    expect(r.stdout).toContain(`BROKEN at event #${note.position + 1}: prev_hash does not match`);
    expect(r.stdout).toMatch(/status is "failed", the log says "done"/);
    const bad = runCli(['--dir', dir, 'verify', '--head', '12:nothex'], { AGENTSTATE_URL: b.url });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/head must be position:hash/);
  });
});

/** A dump edited line by line: `edit` gets the records (parsed) and returns them; the trailer is fixed up. */
function editDump(
  file: string,
  edit: (records: Array<{ t: string; row: Record<string, unknown> }>) => void,
): string {
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
  const header = lines[0]!;
  const records = lines.slice(1, -1).map((l) => JSON.parse(l) as { t: string; row: Record<string, unknown> });
  edit(records);
  const counts = { work_items: 0, events: 0, documents: 0, history: 0 };
  const key = {
    work_item: 'work_items',
    event: 'events',
    document: 'documents',
    history: 'history',
  } as const;
  for (const r of records) counts[key[r.t as keyof typeof key]] += 1;
  const out = `${file}.edited-${++n}.jsonl`;
  writeFileSync(
    out,
    `${[header, ...records.map((r) => JSON.stringify(r)), JSON.stringify({ t: 'end', counts })].join('\n')}\n`,
  );
  return out;
}

function rehash(row: Record<string, unknown>): void {
  row.hash = computeEventHash(row.prev_hash as string, row as unknown as EventRow);
}

describe.each(backends)('$name: the same tampering through a dump into instance import', (b) => {
  const dumps: Array<
    [string, (records: Array<{ t: string; row: Record<string, unknown> }>) => void, RegExp]
  > = [
    [
      'a work item row',
      (rs) => {
        const done = rs.find((r) => r.t === 'work_item' && r.row.status === 'done')!;
        done.row.status = 'failed';
      },
      /status is "failed", the log says "done"/,
    ],
    [
      'a document body with its content hash',
      (rs) => {
        const doc = rs.find((r) => r.t === 'document' && r.row.id === 'plan')!;
        doc.row.body = { forged: true };
        doc.row.content_hash = contentHash(doc.row.body);
      },
      /documents json\/plan: content_hash is/,
    ],
    [
      'a history entry with its content hash',
      (rs) => {
        const h = rs.find((r) => r.t === 'history' && r.row.id === 'plan' && r.row.body !== null)!;
        h.row.body = { forged: true };
        h.row.content_hash = contentHash(h.row.body);
      },
      /document_history json\/plan@\d+: content_hash is/,
    ],
    [
      'an event rewritten with a recomputed hash',
      (rs) => {
        const note = rs.find((r) => r.t === 'event' && r.row.type === 'note')!;
        note.row.data = JSON.stringify(noteData);
        rehash(note.row);
      },
      /event chain is broken at event #\d+: prev_hash does not match/,
    ],
    [
      'the newest events removed, among them a resolve',
      (rs) => {
        const last = rs.findLastIndex((r) => r.t === 'event' && r.row.type === 'work_item_resolved');
        for (let i = rs.length - 1; i >= last; i--) if (rs[i]!.t === 'event') rs.splice(i, 1);
      },
      /the log says/,
    ],
  ];

  // One seeded instance exported once (by the CLI); each case edits its own copy of the dump.
  let dump: Promise<string> | null = null;
  const exported = () => {
    dump ??= (async () => {
      const { dir, inst } = await seeded(b, 'dump');
      await inst.close();
      const file = join(root, `dump-${++n}.jsonl`);
      expect(cli(b, dir, 'instance', 'export', file).code).toBe(0);
      return file;
    })();
    return dump;
  };

  /** `instance import` of `file` into a fresh instance: the CLI (exit code, JSON error) or the operation. */
  async function importRefused(target: Backend, into: string, file: string, viaCli: boolean) {
    if (viaCli) {
      const r = cli(target, into, 'instance', 'import', file);
      expect(r.code, r.stdout).toBe(3);
      return (r.errorJson as { error: { code: string; message: string; problems: unknown[] } }).error;
    }
    const err = await invoke(
      'import_instance',
      { path: file },
      { instance: { dir: into, url: target.url }, env: {} },
    ).then(
      () => expect.unreachable('the import was not refused'),
      (e: unknown) => e as AgentStateError,
    );
    return {
      code: err.code,
      message: err.message,
      problems: (err.details as { problems: unknown[] }).problems,
    };
  }

  for (const [k, [what, edit, says]] of dumps.entries()) {
    it(`${what}: refused, nothing written`, async () => {
      const edited = editDump(await exported(), edit);
      for (const target of backends) {
        const into = freshDir(`into-${target.name}`);
        // The first case through the CLI, as a person runs it; the rest through the operation it runs.
        const err = await importRefused(target, into, edited, k === 0);
        expect(err.code).toBe('INTEGRITY_VIOLATION');
        expect(err.message).toMatch(says);
        expect(err.problems.length).toBeGreaterThan(0);
        const check = await openInstance({ dir: into, ...(target.url ? { url: target.url } : {}) });
        expect(await check.events.head()).toBeNull();
        expect(await check.work.list()).toEqual([]);
        expect(await check.docs.list()).toEqual([]);
        await check.close();
      }
    });
  }

  it('the newest plain events removed from a dump import cleanly, but verify --head with the old head tells', async () => {
    const { dir, inst } = await seeded(b, 'dump-notes');
    await inst.events.appendMany([{ type: 'note' }, { type: 'note' }]);
    await inst.close();
    const file = join(root, `dump-${++n}.jsonl`);
    const exported = cli(b, dir, 'instance', 'export', file);
    const anchor = (exported.json as { anchor: string }).anchor;
    const edited = editDump(file, (rs) => {
      rs.splice(rs.findLastIndex((r) => r.t === 'event') - 1, 2);
    });
    const into = freshDir('into-notes');
    expect(cli(b, into, 'instance', 'import', edited).code).toBe(0);
    const r = verify(b, into, anchor);
    expect(kinds(r)).toEqual(['head_mismatch']);
    expect(r.code).toBe(3);
  });
});
