// PostgreSQL-only guarantees: instances sharing a schema never see each other, triggers keep events
// append-only, concurrent startups migrate once, tailing under concurrent appenders misses nothing, racing
// claims and commits stay exclusive, and faults are typed (password redacted) and recovered from.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { openPostgresBackend, type PostgresBackend } from '../../src/backends/postgres/backend.js';
import { mapPgError } from '../../src/backends/postgres/connection.js';
import { migrationNames } from '../../src/backends/postgres/migrate.js';
import { openSqliteBackend } from '../../src/backends/sqlite/backend.js';
import type { NewEvent, StoreBackend } from '../../src/core/backend.js';
import { claimedEvent, resolvedEvent } from '../../src/core/codecs/work-items.js';
import { DocumentStore } from '../../src/core/documents/store.js';
import { EventLog } from '../../src/core/events/log.js';
import { computeEventHash } from '../../src/core/hash.js';
import { applyMergePatch, contentHash } from '../../src/core/json.js';
import { exportInstance, importInstance } from '../../src/core/portable.js';
import type { JsonObject, WorkItem } from '../../src/core/types.js';
import { batchEvents } from '../../src/core/work/batches.js';
import { WorkQueue } from '../../src/core/work/queue.js';
import { getKind, validateSchema } from '../../src/kinds/registry.js';
import { adminQuery, PG_URL, postgresForThisFile } from '../helpers/postgres.js';
import { rejection } from '../helpers/refusals.js';
import { tempDir } from '../helpers/tmp.js';
import { enqueueStuck, expectBlockerRowsReported, type StuckIds } from './stuck-fixture.js';

const schema = await postgresForThisFile();
const suite = schema === null ? describe.skip : describe;
let n = 0;

type Extra = Partial<Parameters<typeof openPostgresBackend>[0]>;

function open(instance = `spec/${++n}`, extra: Extra = {}): Promise<PostgresBackend> {
  return openPostgresBackend({ url: PG_URL, schema: schema!, instance, poolSize: 4, ...extra });
}

function services(backend: StoreBackend, actor = 'agent') {
  return {
    work: new WorkQueue(backend, { clock: Date.now, defaultWorker: actor }),
    events: new EventLog(backend, Date.now, actor),
    docs: new DocumentStore(backend, {
      clock: Date.now,
      actor,
      keepVersions: null,
      kinds: async () => ({ get: getKind, validateSchema }),
    }),
  };
}

/** Returns once the server shows a session waiting on a lock held by the backend `pid`. */
async function untilBlockedBy(pid: number): Promise<void> {
  const waiting = async () =>
    (
      await adminQuery<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND $1 = ANY(pg_blocking_pids(pid))",
        [pid],
      )
    )[0]!.n > 0;
  while (!(await waiting())) await new Promise((r) => setTimeout(r, 10));
}

function event(type: string, extra: Partial<NewEvent> = {}): NewEvent {
  return {
    type,
    stream: 'instance',
    data: null,
    actor: 'test',
    correlation_id: null,
    causation_id: null,
    work_item_id: null,
    created_at: Date.now(),
    ...extra,
  };
}

/**
 * Rows the server read or updated in `tables` of this file's schema so far (seq and index scans, bitmap heap
 * scans, updates): what the calls between two readings touched. A backend's counters reach them when its
 * connections end, so it waits until two readings 300 ms apart agree.
 */
async function rowsTouched(tables: string[]): Promise<number> {
  const read = async () =>
    (
      await adminQuery<{ n: string }>(
        `SELECT COALESCE(sum(seq_tup_read + COALESCE(idx_tup_fetch, 0) + n_tup_upd), 0)::text AS n
         FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = ANY($2::text[])`,
        [schema, tables],
      )
    )[0]?.n;
  let last = await read();
  for (let k = 0; k < 20; k++) {
    await new Promise((r) => setTimeout(r, 300));
    const now = await read();
    if (now === last) return Number(now);
    last = now;
  }
  return Number(last);
}

suite('postgres: instance isolation', () => {
  it('two instances in one schema never see each other’s items, events or documents', async () => {
    // LIKE wildcards in keys: equality only, so `h/a%` can never match `h/ab`.
    const [a, b] = await Promise.all([open(`h/a%_${n}`), open(`h/ab_${n}`)]);
    try {
      const sa = services(a);
      const sb = services(b);
      const ia = await sa.work.enqueue({ title: 'only a', idempotency_key: 'same-key' });
      const ib = await sb.work.enqueue({ title: 'only b', idempotency_key: 'same-key' });
      expect(ib.id).not.toBe(ia.id);
      expect((await sa.work.list()).map((i) => i.title)).toEqual(['only a']);
      expect(await sb.work.find(ia.id)).toBeNull();
      expect((await sb.work.claim({ worker: 'wb' }))?.id).toBe(ib.id);
      expect(await sb.work.claim({ worker: 'wb' })).toBeNull();
      await expect(sb.work.annotate({ id: ia.id, notes: { x: 1 } })).rejects.toMatchObject({
        code: 'NOT_FOUND',
      });
      await expect(sb.work.cancel({ id: ia.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect((await sa.work.counts()).pending).toBe(1);
      expect((await sb.work.counts()).in_flight).toBe(1);

      await sa.events.append({ type: 'note', data: { who: 'a' } });
      await sb.events.append({ type: 'note', data: { who: 'b' } });
      const ea = await sa.events.read();
      const eb = await sb.events.read();
      expect(ea.map((e) => e.position)).toEqual([1, 2]);
      expect(eb.map((e) => e.position)).toEqual([1, 2, 3]);
      expect(ea.some((e) => JSON.stringify(e.data).includes('"b"'))).toBe(false);
      expect(await sb.events.read({ work_item_id: ia.id })).toEqual([]);
      expect((await sa.events.verify()).ok).toBe(true);
      expect((await sb.events.verify()).ok).toBe(true);

      await sa.docs.commit({ kind: 'json', id: 'plan', expected_version: 0, body: { owner: 'a' } });
      await sb.docs.commit({ kind: 'json', id: 'plan', expected_version: 0, body: { owner: 'b' } });
      await sa.docs.commit({ kind: 'json', id: 'a-only', expected_version: 0, body: {} });
      expect((await sa.docs.get({ kind: 'json', id: 'plan' })).body).toEqual({ owner: 'a' });
      expect((await sb.docs.get({ kind: 'json', id: 'plan' })).body).toEqual({ owner: 'b' });
      expect(await sb.docs.find('json', 'a-only')).toBeNull();
      expect((await sb.docs.list()).map((d) => d.id)).toEqual(['plan']);
      expect((await sb.docs.history({ kind: 'json', id: 'plan' })).entries.length).toBe(1);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

suite('postgres: annotate', () => {
  it('merges notes exactly as RFC 7396 (the same result as the core and SQLite json_patch)', async () => {
    const b = await open();
    try {
      const work = services(b).work;
      const cases: Array<[JsonObject, JsonObject]> = [
        [{ a: { b: 1, c: 2 } }, { a: { b: null, d: { e: 1 } } }],
        [{ a: 1 }, { a: { b: null, c: 'x' } }],
        [{ a: [1, 2] }, { a: [3] }],
        [{ a: { x: 1 } }, { a: 5 }],
        [{}, { k: { n: null } }],
        [
          { 'a.b/c': 1, 'é ∑': { '': 0 } },
          { 'é ∑': { '': null, z: true }, 'a.b/c': null },
        ],
        [{ keep: 'me' }, {}],
        [{ deep: { l1: { l2: { l3: 1, gone: 2 } } } }, { deep: { l1: { l2: { gone: null, l3: [null] } } } }],
      ];
      for (const [start, patch] of cases) {
        const item = await work.enqueue({ title: 'x' });
        await work.annotate({ id: item.id, notes: start });
        const got = await work.annotate({ id: item.id, notes: patch });
        expect(got.notes).toEqual(applyMergePatch(applyMergePatch({}, start), patch));
      }
    } finally {
      await b.close();
    }
  });
});

suite('postgres: moving instances', () => {
  async function snapshot(b: StoreBackend) {
    const s = services(b);
    const doc = { kind: 'json', id: 'plan' };
    return {
      items: await s.work.list({ limit: 1000 }),
      events: await s.events.read({ limit: 1000 }),
      doc: await s.docs.get(doc),
      v1: await s.docs.get({ ...doc, version: 1 }),
      history: await s.docs.history(doc),
    };
  }

  it('SQLite → PostgreSQL → SQLite through the portable dump keeps everything, and the store keeps working', async () => {
    const dir = tempDir();
    const lite = await openSqliteBackend({ path: join(dir, 'source.sqlite') });
    const src = services(lite);
    const a = await src.work.enqueue({ title: 'a', payload: { n: 1 }, idempotency_key: 'k-a' });
    await src.work.enqueue({ title: 'b', blocked_by: [a.id], priority: 3 });
    await src.work.claim({ worker: 'w', id: a.id });
    await src.work.annotate({ id: a.id, notes: { session: 's1' } });
    await src.events.append({
      type: 'note',
      data: { text: 'héllo ✓', nested: { z: 1, a: [true, null, 1.5] } },
    });
    const doc = { kind: 'json', id: 'plan' };
    await src.docs.commit({ ...doc, expected_version: 0, body: { steps: ['x'] } });
    await src.docs.commit({ ...doc, expected_version: 1, merge_patch: { done: true }, write_id: 'w1' });
    await src.docs.commit({ ...doc, expected_version: 2, noop: true, reason: 'checked' });
    const file = join(dir, 'lite.jsonl');
    const { path: _path, ...counts } = await exportInstance(lite, { host: 'h', name: 'lite' }, file);

    const pgb = await open();
    try {
      const dst = services(pgb);
      expect(await importInstance(pgb, dst.events, file)).toMatchObject({ verified: true, ...counts });
      expect(await snapshot(pgb)).toEqual(await snapshot(lite));
      // Positions, stream sequences, history seqs and write ids carry on where the source stopped.
      const next = await dst.events.append({ type: 'after-import', work_item_id: a.id });
      expect(next.position).toBe(counts.events + 1);
      expect(next.stream_seq).toBe((await src.events.read({ work_item_id: a.id })).length + 1);
      expect(
        (await dst.docs.commit({ ...doc, expected_version: 1, merge_patch: { done: true }, write_id: 'w1' }))
          .replayed,
      ).toBe(true);
      await dst.docs.commit({ ...doc, expected_version: 2, merge_patch: { more: 1 } });
      expect((await dst.docs.history(doc)).entries.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
      expect((await dst.events.verify()).ok).toBe(true);
      await expect(importInstance(pgb, dst.events, file)).rejects.toMatchObject({ code: 'INVALID_INPUT' });

      const back = join(dir, 'pg.jsonl');
      await exportInstance(pgb, { host: 'h', name: 'pg' }, back);
      const lite2 = await openSqliteBackend({ path: join(dir, 'back.sqlite') });
      expect(await importInstance(lite2, services(lite2).events, back)).toMatchObject({ verified: true });
      expect(await snapshot(lite2)).toEqual(await snapshot(pgb));
      await lite2.close();
    } finally {
      await Promise.all([pgb.close(), lite.close()]);
    }
  });
});

suite('postgres: append-only events', () => {
  it('UPDATE, DELETE and TRUNCATE on events fail for any client; history rows cannot be updated', async () => {
    const b = await open();
    try {
      const log = services(b).events;
      await log.append({ type: 'note', data: { v: 1 } });
      await services(b).docs.commit({ kind: 'json', id: 'd', expected_version: 0, body: { v: 1 } });
      const events = `"${schema}".events`;
      await expect(
        adminQuery(`UPDATE ${events} SET data = '{"v":2}' WHERE instance = $1`, [b.instance]),
      ).rejects.toThrow(/events are append-only: UPDATE is not allowed/);
      await expect(adminQuery(`DELETE FROM ${events} WHERE instance = $1`, [b.instance])).rejects.toThrow(
        /append-only: DELETE/,
      );
      await expect(adminQuery(`TRUNCATE ${events}`)).rejects.toThrow(/append-only: TRUNCATE/);
      await expect(
        adminQuery(`UPDATE "${schema}".document_history SET reason = 'x' WHERE instance = $1`, [b.instance]),
      ).rejects.toThrow(/document history is immutable/);
      expect((await log.read()).map((e) => e.data)).toEqual([{ v: 1 }, expect.anything()]);
      expect((await log.verify()).ok).toBe(true);
    } finally {
      await b.close();
    }
  });

  it('text a backend would store differently (a lone surrogate, NUL) is refused before it is written', async () => {
    const b = await open();
    try {
      const log = services(b).events;
      await expect(log.append({ type: 'note', actor: 'bad\ud800actor' })).rejects.toMatchObject({
        code: 'INVALID_INPUT',
      });
      await expect(log.append({ type: 'note', data: { s: 'nul\u0000' } })).rejects.toMatchObject({
        code: 'INVALID_INPUT',
      });
      expect(await log.read()).toEqual([]);
      await log.append({ type: 'note', actor: 'fine' });
      expect((await log.verify()).ok).toBe(true);
    } finally {
      await b.close();
    }
  });

  it('the hash chain computed by the server is the one the library verifies, for any storable text', async () => {
    const b = await open();
    try {
      const log = services(b).events;
      const printable = (s: string) => [...s].filter((ch) => ch >= ' ' && ch !== '\u007f').join('');
      const nasty = [
        'plain',
        'quote " and backslash \\ and slash /',
        'controls \b\f\n\r\t \u0001 \u001f \u007f',
        'unicode é ß 日本 \u2028 \u2029 emoji 🧪',
        '{"looks": "like json"}',
      ];
      for (const [k, s] of nasty.entries()) {
        const stored = await log.append({
          type: `note.k${k}`,
          stream: `s/k${k}`,
          data: { s, nested: [s, { s }], n: k, f: 1.5, neg: -0.25, big: 2 ** 53 - 1, none: null },
          // Names refuse control characters; everything else goes through as is.
          actor: printable(s),
          correlation_id: printable(s),
          causation_id: k % 2 === 0 ? null : printable(s),
        });
        // The returned record is what the server stored and hashed.
        expect(stored.hash).toBe(
          computeEventHash(stored.prev_hash, {
            ...stored,
            data: JSON.stringify(stored.data),
            created_at: Date.parse(stored.created_at),
          }),
        );
      }
      // Several events, several streams, one call: the chain and the stream numbers run through the batch.
      await log.appendMany(
        nasty.map((s, k) => ({ type: 'batch', stream: k % 2 === 0 ? 'even' : `odd-${k}`, data: { s } })),
      );
      const all = await log.read({ limit: 100 });
      expect(all.map((e) => e.position)).toEqual(all.map((_, k) => k + 1));
      expect(all.filter((e) => e.stream === 'even').map((e) => e.stream_seq)).toEqual([1, 2, 3]);
      expect(await log.verify()).toMatchObject({ ok: true, events: nasty.length * 2 });
    } finally {
      await b.close();
    }
  });

  it('claims and resolves done in one statement store the events the library builds, byte for byte', async () => {
    const b = await open();
    try {
      const { work, events } = services(b);
      for (let k = 0; k < 10; k++) await work.enqueue({ title: `item ${k}` });
      // Names with every character class JSON escapes differently (names refuse control characters).
      const w1 = 'w1 "quoted" back\\slash /slash é 日本 \u2028 🧪';
      const w2 = 'w2 {"looks": "like json"}';
      const w3 = 'w3 \t tab';
      const now = Date.now();
      // w1 and w3 claim as a model, w2 as a tool: a batch of both kinds names each entry's kind, a batch of
      // one kind says it once (each entry naming its actor when it is not the first claimer).
      const kindOf = (worker: string) => (worker === w2 ? ('tool' as const) : ('model' as const));
      const claim = (claimers: Array<{ worker: string; limit: number }>) =>
        b.work.claim({
          claimers: claimers.map((c) => ({ ...c, lease_ms: 60_000, actor_kind: kindOf(c.worker) })),
          kind: null,
          id: null,
          now,
        });
      const expected: NewEvent[] = [];
      const claimedBy = (items: WorkItem[]) =>
        expected.push(
          ...batchEvents(
            items.map((i) => claimedEvent(i, i.lease_owner as string, kindOf(i.lease_owner as string), now)),
          ),
        );
      // A batch of three by one claimer, a batch shared by two claimers (coalesced calls), and a claim of
      // up to three that finds the one item left (the statement writes the lone item's own event).
      const three = await claim([{ worker: w1, limit: 3 }]);
      claimedBy(three);
      const sameKind = await claim([
        { worker: w1, limit: 1 },
        { worker: w3, limit: 1 },
      ]);
      claimedBy(sameKind);
      expect(sameKind.map((i) => i.lease_owner)).toEqual([w1, w3]);
      const shared = await claim([
        { worker: w2, limit: 2 },
        { worker: w1, limit: 2 },
      ]);
      claimedBy(shared);
      const lone = await claim([{ worker: w2, limit: 3 }]);
      claimedBy(lone);
      expect([three.length, lone.length, shared.length]).toEqual([3, 1, 4]);
      // Resolves: a batch with results and errors of any JSON, from two workers; then a lone one.
      const later = now + 1234;
      const q = (i: WorkItem, k: number) => ({
        id: i.id,
        worker: i.lease_owner as string,
        actor_kind: k % 2 === 0 ? ('tool' as const) : ('model' as const),
        attempt: k % 2 === 0 ? i.attempts : null,
        status: 'done' as const,
        result: k === 0 ? null : { k, s: w1, nested: [w2, { deep: '\u0001\t\n' }], f: 1.5, neg: -0.25 },
        error: k === 1 ? 'partly "wrong" \\ é' : null,
        retry_at: null,
        now: later,
      });
      const batch = [...three, ...shared].map(q);
      const resolved = await b.work.resolve(batch);
      expected.push(...batchEvents(resolved.map((i, k) => resolvedEvent(i, batch[k]!))));
      const one = [q(lone[0]!, 3)];
      const [r1] = await b.work.resolve(one);
      expected.push(...batchEvents([resolvedEvent(r1!, one[0]!)]));
      const stored = await adminQuery<{
        type: string;
        stream: string;
        actor: string;
        item: string | null;
        data: string;
      }>(
        `SELECT type, stream, actor, work_item_id AS item, data::text AS data FROM "${schema}".events
         WHERE instance = $1 AND type LIKE 'work_item%' AND type NOT LIKE '%enqueued' ORDER BY position`,
        [b.instance],
      );
      expect(stored).toEqual(
        expected.map((e) => ({
          type: e.type,
          stream: e.stream,
          actor: e.actor,
          item: e.work_item_id,
          data: JSON.stringify(e.data),
        })),
      );
      expect(stored.map((e) => e.type)).toEqual([
        'work_items_claimed',
        'work_items_claimed',
        'work_items_claimed',
        'work_item_claimed',
        'work_items_resolved',
        'work_item_resolved',
      ]);
      expect(await events.verify()).toMatchObject({ ok: true });
    } finally {
      await b.close();
    }
  });

  it('claims, heartbeats and resolves of a few items read only their rows, however many the instance holds', async () => {
    // The planner knows nothing of a new instance, and json_to_recordset is always "100 rows": joined by id,
    // an UPDATE of 8 items was planned as a scan of every item of the instance.
    const instance = `spec/plans-${++n}`;
    const counted = () => rowsTouched(['work_items']);
    const setup = await open(instance);
    try {
      const { work } = services(setup);
      for (let k = 0; k < 3; k++) {
        await work.enqueueMany(Array.from({ length: 1000 }, (_, i) => ({ title: `item ${k}-${i}` })));
      }
      // Most of them in flight, as under a busy queue.
      for (let k = 0; k < 2; k++) await work.claimMany({ worker: 'bulk', limit: 1000 });
    } finally {
      await setup.close();
    }
    const before = await counted();
    const b = await open(instance);
    const now = Date.now();
    try {
      const lease = (worker: string, limit: number) => ({
        worker,
        limit,
        lease_ms: 60_000,
        actor_kind: 'system' as const,
      });
      const base = { kind: null, id: null, now };
      const [single] = await b.work.claim({ ...base, claimers: [lease('one', 1)] });
      const eight = await b.work.claim({ ...base, claimers: [lease('a', 4), lease('b', 4)] });
      expect([single ? 1 : 0, eight.length]).toEqual([1, 8]);
      const held = (i: WorkItem) => ({ id: i.id, worker: i.lease_owner as string, attempt: i.attempts, now });
      const beats = await b.work.heartbeat(eight.map((i) => ({ ...held(i), lease_ms: 60_000 })));
      expect(beats.every((o) => o.ok)).toBe(true);
      const done = (i: WorkItem) => ({
        ...held(i),
        actor_kind: 'system' as const,
        status: 'done' as const,
        result: null,
        error: null,
        retry_at: null,
      });
      expect(await b.work.resolve(eight.map(done))).toHaveLength(8);
      expect(await b.work.resolve([done(single!)])).toHaveLength(1);
    } finally {
      await b.close();
    }
    // 9 claimed, 8 beaten, 9 resolved: 26 row updates, and reads of the ready index's first rows. A scan of
    // the instance reads its 3,000 rows at each statement.
    const touched = (await counted()) - before;
    expect(touched).toBeGreaterThanOrEqual(26);
    expect(touched).toBeLessThan(300);
  });

  it('a resolve of 500 finds each item by its key, in an instance the planner has no statistics of', async () => {
    // Statistics that know another instance and nothing of this one (a new instance of a busy store): with
    // them, each item of the batch was found by scanning work_items_status from the instance's first row.
    const instance = `spec/resolve500-${++n}`;
    const other = await open(`spec/resolve500-other-${n}`);
    try {
      await services(other).work.enqueueMany(Array.from({ length: 1000 }, (_, i) => ({ title: `o${i}` })));
    } finally {
      await other.close();
    }
    await adminQuery(`ANALYZE "${schema}".work_items`);
    const setup = await open(instance);
    let held: WorkItem[];
    try {
      const { work } = services(setup);
      for (let k = 0; k < 4; k++) {
        await work.enqueueMany(Array.from({ length: 1000 }, (_, i) => ({ title: `item ${k}-${i}` })));
      }
      held = await work.claimMany({ worker: 'w', limit: 500 });
    } finally {
      await setup.close();
    }
    const before = await rowsTouched(['work_items']);
    const b = await open(instance);
    try {
      const done = await services(b).work.resolveMany(
        held.map((i) => ({ id: i.id, worker: 'w', attempt: i.attempts, status: 'done' as const })),
      );
      expect(done.every((i) => i.status === 'done')).toBe(true);
    } finally {
      await b.close();
    }
    // 500 found and 500 updated; a scan per item reads thousands of rows for each.
    const touched = (await rowsTouched(['work_items'])) - before;
    expect(touched).toBeGreaterThanOrEqual(1_000);
    expect(touched).toBeLessThan(3_000);
  });

  it('blocked-on-failure lists and a failure’s cascade read only the items they find, however many are pending', async () => {
    // The old recursive query read every pending item's blocked_by at each step (pending × failed), and the
    // cascade every pending cascade item of the instance for each failed blocker.
    const instance = `spec/stuck-${++n}`;
    const setup = await open(instance);
    let ids: StuckIds;
    try {
      const { work } = services(setup);
      ids = await enqueueStuck(work);
      // 3,000 more pending items, each waiting on a blocker, a third of them cascading.
      const gates = await work.enqueueMany(Array.from({ length: 100 }, (_, i) => ({ title: `gate ${i}` })));
      for (let k = 0; k < 3; k++) {
        await work.enqueueMany(
          Array.from({ length: 1000 }, (_, i) => ({
            title: `waiting ${k}-${i}`,
            blocked_by: [gates[i % 100]!.id],
            on_blocker_failure: k === 0 ? ('cascade' as const) : ('wait' as const),
          })),
        );
      }
    } finally {
      await setup.close();
    }
    const tables = ['work_items', 'work_item_blockers'];
    const before = await rowsTouched(tables);
    const b = await open(instance);
    try {
      const { work } = services(b);
      expect((await work.list({ blocked_on_failure: true })).map((i) => i.id)).toEqual([ids.b, ids.c]);
      expect((await work.list({ blocked_on_failure: true, limit: 1 })).map((i) => i.id)).toEqual([ids.b]);
      await work.cancel({ id: ids.open });
      expect((await work.get(ids.gone)).status).toBe('cancelled');
    } finally {
      await b.close();
    }
    // Each list: the failed item, its edge and 2 items (and their blockers' states); the cancel: 2 updates
    // and their lookups. A walk of the pending items reads 3,000 rows at each step.
    const touched = (await rowsTouched(tables)) - before;
    expect(touched).toBeGreaterThan(0);
    expect(touched).toBeLessThan(300);
  });

  it('a read of several event types reads about as many events as it returns, however long the log', async () => {
    // The dashboard's newest outcomes and the retro's pages: with `type = ANY(…)` the planner walked the log
    // by position and filtered it, or read every event of those types and sorted them.
    const instance = `spec/types-${++n}`;
    const setup = await open(instance);
    try {
      // 4 events of the types asked for, 3,000 others, then 3,000 of those types: sparse then dense, so
      // either plan of the old SQL reads thousands of rows for one of the two reads below.
      const { events } = services(setup);
      await events.appendMany(['a', 'b', 'a', 'b'].map((type) => ({ type })));
      for (const type of ['x', 'ab']) {
        for (let k = 0; k < 3; k++) {
          await events.appendMany(
            Array.from({ length: 1000 }, (_, i) => ({ type: type === 'x' ? 'x' : i % 2 ? 'a' : 'b' })),
          );
        }
      }
    } finally {
      await setup.close();
    }
    const before = await rowsTouched(['events']);
    const b = await open(instance);
    try {
      const { events } = services(b);
      const newest = await events.read({ type: ['a', 'b'], until: 3004, reverse: true, limit: 3 });
      expect(newest.map((e) => e.position)).toEqual([4, 3, 2]);
      const page = await events.read({ type: ['b', 'a'], after: 1, limit: 2 });
      expect(page.map((e) => e.position)).toEqual([2, 3]);
    } finally {
      await b.close();
    }
    const touched = (await rowsTouched(['events'])) - before;
    expect(touched).toBeGreaterThan(0);
    expect(touched).toBeLessThan(100);
  });

  it('verify reports a blocker row removed or added behind the store', async () => {
    // blocked-on-failure and the cascade follow work_item_blockers alone: a row removed would hide c.
    const b = await open();
    try {
      const { work, events } = services(b);
      const ids = await enqueueStuck(work);
      expect((await events.verify()).ok).toBe(true);
      await adminQuery(`DELETE FROM "${schema}".work_item_blockers WHERE instance = $1 AND item = $2`, [
        b.instance,
        ids.c,
      ]);
      await adminQuery(
        `INSERT INTO "${schema}".work_item_blockers (instance, blocker, item) VALUES ($1, $2, $3)`,
        [b.instance, ids.a, ids.open],
      );
      const r = await events.verify();
      expectBlockerRowsReported(r, ids);
    } finally {
      await b.close();
    }
  });

  it('verify reports the first broken link after tampering that bypassed the triggers', async () => {
    const b = await open();
    try {
      const log = services(b).events;
      for (let i = 1; i <= 5; i++) await log.append({ type: 'note', data: { i } });
      await adminQuery(
        `DO $$ BEGIN
           ALTER TABLE "${schema}".events DISABLE TRIGGER events_no_update;
           UPDATE "${schema}".events SET data = '{"i":33}' WHERE instance = '${b.instance}' AND position = 3;
           ALTER TABLE "${schema}".events ENABLE TRIGGER events_no_update;
         END $$`,
      );
      const r = await log.verify();
      expect(r.ok).toBe(false);
      expect(r.broken).toEqual({ position: 3, reason: 'hash does not match the event content' });
    } finally {
      await b.close();
    }
  });
});

/** The schema as the catalog describes it, with the schema name replaced, for the committed snapshot. */
async function describeSchema(name: string): Promise<string> {
  const parts: string[] = [];
  const tables = await adminQuery<{ def: string }>(
    `SELECT 'CREATE TABLE ' || c.relname || E' (\\n' || string_agg('  ' || a.attname || ' ' ||
       format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END ||
       COALESCE(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), ''), E',\\n' ORDER BY a.attnum) || E'\\n);' AS def
     FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
     JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
     LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
     WHERE s.nspname = $1 AND c.relkind = 'r' GROUP BY c.relname ORDER BY c.relname`,
    [name],
  );
  parts.push(...tables.map((r) => r.def));
  const constraints = await adminQuery<{ def: string }>(
    `SELECT 'ALTER TABLE ' || c.relname || ' ADD CONSTRAINT ' || k.conname || ' ' || pg_get_constraintdef(k.oid) || ';' AS def
     FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace s ON s.oid = c.relnamespace
     WHERE s.nspname = $1 ORDER BY c.relname, k.conname`,
    [name],
  );
  parts.push(...constraints.map((r) => r.def));
  const indexes = await adminQuery<{ def: string }>(
    'SELECT indexdef || $2 AS def FROM pg_indexes WHERE schemaname = $1 ORDER BY tablename, indexname',
    [name, ';'],
  );
  parts.push(...indexes.map((r) => r.def));
  const triggers = await adminQuery<{ def: string }>(
    `SELECT pg_get_triggerdef(t.oid) || ';' AS def FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
     JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = $1 AND NOT t.tgisinternal
     ORDER BY c.relname, t.tgname`,
    [name],
  );
  parts.push(...triggers.map((r) => r.def));
  const functions = await adminQuery<{ def: string }>(
    `SELECT pg_get_functiondef(p.oid) || ';' AS def FROM pg_proc p JOIN pg_namespace s ON s.oid = p.pronamespace
     WHERE s.nspname = $1 ORDER BY p.proname`,
    [name],
  );
  parts.push(...functions.map((r) => r.def.trim()));
  return `${parts.join('\n\n').replaceAll(`"${name}"`, 'agentstate').replaceAll(name, 'agentstate')}\n`;
}

suite('postgres: migrations', () => {
  it('several backends starting at once on a new schema apply each migration exactly once', async () => {
    const fresh = `${schema}_m`;
    try {
      const backends = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          // A pool each (distinct application_name), as processes starting together would have.
          openPostgresBackend({
            url: PG_URL,
            schema: fresh,
            instance: `m/${i}`,
            poolSize: 2,
            applicationName: `migrator-${i}`,
          }),
        ),
      );
      const applied = backends.map((b) => b.migrationsApplied);
      expect(applied.filter((a) => a.length > 0)).toEqual([migrationNames()]);
      expect(applied.filter((a) => a.length === 0).length).toBe(5);
      const rows = await adminQuery<{ name: string }>(
        `SELECT name FROM "${fresh}".schema_migrations ORDER BY name`,
      );
      expect(rows.map((r) => r.name)).toEqual(migrationNames());
      // All of them work on the migrated schema.
      await Promise.all(backends.map((b) => services(b).work.enqueue({ title: 'x' })));
      await Promise.all(backends.map((b) => b.close()));
      const again = await openPostgresBackend({ url: PG_URL, schema: fresh, instance: 'm/again' });
      expect(again.migrationsApplied).toEqual([]);
      await again.close();
      await adminQuery(`INSERT INTO "${fresh}".schema_migrations VALUES ('9999-future.sql', 0)`);
      await expect(
        openPostgresBackend({ url: PG_URL, schema: fresh, instance: 'm/x' }),
      ).rejects.toMatchObject({
        code: 'STORAGE_UNAVAILABLE',
      });
    } finally {
      await adminQuery(`DROP SCHEMA IF EXISTS "${fresh}" CASCADE`);
    }
  });

  it('items enqueued before the blocker index existed are found by it once the store opens', async () => {
    // A schema at migration 0005, written as that version wrote it: a failed, b waits on it, c on b.
    const old = `${schema}_0005`;
    const dir = new URL('../../src/backends/postgres/migrations/', import.meta.url);
    const files = migrationNames().filter((m) => m < '0006');
    try {
      await adminQuery(
        `CREATE SCHEMA "${old}"; BEGIN; SET LOCAL search_path TO "${old}";
         ${files.map((f) => readFileSync(new URL(f, dir), 'utf8')).join('\n')};
         CREATE TABLE schema_migrations (name text PRIMARY KEY, applied_at bigint NOT NULL);
         INSERT INTO schema_migrations VALUES ${files.map((f) => `('${f}', 0)`).join(', ')};
         INSERT INTO work_items (instance, id, title, status, blocked_by, created_at, updated_at) VALUES
           ('old', 'wi_a', 'a', 'failed', '{}', 1, 1), ('old', 'wi_b', 'b', 'pending', '{wi_a}', 2, 2),
           ('old', 'wi_c', 'c', 'pending', '{wi_b,wi_a}', 3, 3), ('old', 'wi_d', 'd', 'pending', '{}', 4, 4),
           ('other', 'wi_b', 'b', 'pending', '{wi_a}', 2, 2);
         COMMIT;`,
      );
      const b = await openPostgresBackend({ url: PG_URL, schema: old, instance: 'old' });
      try {
        expect(b.migrationsApplied).toEqual(migrationNames().filter((m) => m >= '0006'));
        const q = { statuses: null, kind: null, blocked_on_failure: true, now: 5, limit: 10 };
        expect((await b.work.list(q)).map((i) => i.id)).toEqual(['wi_b', 'wi_c']);
      } finally {
        await b.close();
      }
    } finally {
      await adminQuery(`DROP SCHEMA IF EXISTS "${old}" CASCADE`);
    }
  });

  it('the schema matches the committed snapshot (migrations are immutable)', async () => {
    const b = await open();
    await b.close();
    const dump = await describeSchema(schema!);
    const snapshot = new URL('./postgres.schema.snapshot.sql', import.meta.url);
    if (process.env.UPDATE_SNAPSHOT) writeFileSync(snapshot, dump);
    expect(dump).toBe(readFileSync(snapshot, 'utf8'));
  });
});

function runAppender(instance: string, worker: string, count: number): Promise<{ appended: number }> {
  const fixture = new URL('../fixtures/pg-appender.ts', import.meta.url).pathname;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [
      '--import',
      'tsx',
      fixture,
      PG_URL,
      schema!,
      instance,
      worker,
      String(count),
    ]);
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('close', (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`${worker}: ${err}`)),
    );
  });
}

suite('postgres: concurrency', () => {
  it('a reader tailing while 4 processes append sees every event exactly once, in position order', async () => {
    const instance = `tail/${++n}`;
    const reader = await open(instance);
    try {
      const log = services(reader).events;
      const PER = 150;
      const WORKERS = 4;
      const ac = new AbortController();
      const seen: Array<{ position: number; worker: string; i: number }> = [];
      const tail = (async () => {
        for await (const e of log.tail({ pollMs: 2, signal: ac.signal })) {
          const d = e.data as { worker: string; i: number };
          seen.push({ position: e.position, worker: d.worker, i: d.i });
          if (seen.length === PER * WORKERS) ac.abort();
        }
      })();
      // An in-process appender on its own pool too, started once the processes are appending, so that its
      // commits interleave with theirs.
      const local = await open(instance);
      const localLog = new EventLog(local, Date.now, 'local');
      const inProcess = (async () => {
        while (!seen.some((s) => s.worker !== 'local')) await new Promise((r) => setTimeout(r, 5));
        for (let i = 0; i < PER; i++) {
          await localLog.append({ type: 'tick', stream: 'w:local', data: { worker: 'local', i } });
        }
      })();
      const results = await Promise.all([
        ...Array.from({ length: WORKERS - 1 }, (_, w) => runAppender(instance, `p${w}`, PER)),
        inProcess.then(() => ({ appended: PER })),
      ]);
      await local.close();
      expect(results.reduce((s, r) => s + r.appended, 0)).toBe(PER * WORKERS);
      const timeout = setTimeout(() => ac.abort(), 30_000);
      await tail;
      clearTimeout(timeout);
      expect(seen.map((s) => s.position)).toEqual(Array.from({ length: PER * WORKERS }, (_, i) => i + 1));
      // The writers really ran at the same time: the log switches writer many times.
      const switches = seen.filter((s, i) => i > 0 && s.worker !== seen[i - 1]!.worker).length;
      expect(switches).toBeGreaterThan(WORKERS * 4);
      for (const w of ['p0', 'p1', 'p2', 'local']) {
        expect(seen.filter((s) => s.worker === w).map((s) => s.i)).toEqual(
          Array.from({ length: PER }, (_, i) => i),
        );
      }
      const streams = await log.read({ stream: 'w:p1', limit: 1000 });
      expect(streams.map((e) => e.stream_seq)).toEqual(Array.from({ length: PER }, (_, i) => i + 1));
      expect(await log.verify()).toMatchObject({ ok: true, events: PER * WORKERS });
    } finally {
      await reader.close();
    }
  });

  it('8 claimers on separate connections claim each of 200 items exactly once', async () => {
    const instance = `race/${++n}`;
    const setup = await open(instance);
    await services(setup).work.enqueueMany(
      Array.from({ length: 200 }, (_, i) => ({ title: `t${i}`, priority: i % 5 })),
    );
    // A distinct application_name per claimer gives each its own pool (equal settings would share one).
    const claimers = await Promise.all(
      Array.from({ length: 8 }, (_, w) => open(instance, { poolSize: 2, applicationName: `claimer-${w}` })),
    );
    try {
      const won = await Promise.all(
        claimers.map(async (b, w) => {
          const q = services(b, `w${w}`).work;
          const mine: WorkItem[] = [];
          for (;;) {
            const got = await q.claimMany({ worker: `w${w}`, limit: w % 2 === 0 ? 1 : 3 });
            if (got.length === 0) break;
            mine.push(...got);
          }
          return mine;
        }),
      );
      const ids = won.flat().map((i) => i.id);
      expect(ids.length).toBe(200);
      expect(new Set(ids).size).toBe(200);
      expect(won.filter((w) => w.length > 0).length).toBeGreaterThan(1);
      const s = services(setup);
      expect((await s.work.counts()).in_flight).toBe(200);
      const claimed = await s.events.read({ type: 'work_item_claimed', limit: 1000 });
      expect(claimed.length).toBe(200);
      expect(new Set(claimed.map((e) => e.work_item_id)).size).toBe(200);
      expect((await s.events.verify()).ok).toBe(true);
    } finally {
      await Promise.all([setup.close(), ...claimers.map((b) => b.close())]);
    }
  });

  it('6 writers racing read–modify–commit on one document: one success per version, no lost update', async () => {
    const instance = `cas/${++n}`;
    const setup = await open(instance);
    const doc = { kind: 'json', id: 'counter' };
    await services(setup).docs.commit({ ...doc, expected_version: 0, body: { count: 0, log: [] } });
    // Each writer on a pool of its own (a distinct application_name), as separate processes would be.
    const writers = await Promise.all(
      Array.from({ length: 6 }, (_, w) => open(instance, { poolSize: 1, applicationName: `writer-${w}` })),
    );
    const TARGET = 60;
    try {
      const results = await Promise.all(
        writers.map(async (b, w) => {
          const docs = services(b, `w${w}`).docs;
          const wins: number[] = [];
          let conflicts = 0;
          for (let k = 0; ; k++) {
            const cur = await docs.get(doc);
            const body = cur.body as { count: number; log: string[] };
            if (body.count >= TARGET) break;
            try {
              const r = await docs.commit({
                ...doc,
                expected_version: cur.version,
                body: { count: body.count + 1, log: [...body.log, `w${w}:${k}`] },
              });
              wins.push(r.version);
            } catch (err) {
              if ((err as { code?: string }).code !== 'STATE_CONFLICT') throw err;
              conflicts++;
            }
          }
          return { wins, conflicts };
        }),
      );
      const versions = results.flatMap((r) => r.wins).sort((x, y) => x - y);
      expect(versions).toEqual(Array.from({ length: TARGET }, (_, i) => i + 2));
      expect(results.reduce((s, r) => s + r.conflicts, 0)).toBeGreaterThan(0);
      const s = services(setup);
      const final = await s.docs.get(doc);
      expect(final.version).toBe(TARGET + 1);
      expect((final.body as { log: string[] }).log.length).toBe(TARGET);
      const history = await s.docs.history({ ...doc, limit: 1000 });
      expect(history.entries.map((e) => e.version)).toEqual(
        Array.from({ length: TARGET + 1 }, (_, i) => i + 1),
      );
      expect(history.entries.map((e) => e.seq)).toEqual(Array.from({ length: TARGET + 1 }, (_, i) => i + 1));
      expect((await s.events.verify()).ok).toBe(true);
    } finally {
      await Promise.all([setup.close(), ...writers.map((b) => b.close())]);
    }
  });

  it('the NOTIFY hint reaches a listener of the same instance only', async () => {
    const instance = `notify/${++n}`;
    const b = await open(instance);
    const other = await open();
    try {
      const positions: number[] = [];
      const stop = await b.listen((p) => positions.push(p));
      await services(other).events.append({ type: 'elsewhere' });
      await services(b).events.append({ type: 'here' });
      await services(b).events.appendMany([{ type: 'a' }, { type: 'b' }]);
      for (let i = 0; i < 100 && positions.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
      expect(positions).toEqual([1, 3]);
      await stop();
    } finally {
      await Promise.all([b.close(), other.close()]);
    }
  });

  it('hints coalesce a burst into its newest position, and closing a store sends the one still pending', async () => {
    const instance = `notify/${++n}`;
    const listener = await open(instance);
    const writer = await open(instance);
    const positions: number[] = [];
    const stop = await listener.listen((p) => positions.push(p));
    try {
      const log = services(writer).events;
      for (let i = 0; i < 20; i++) await log.append({ type: 'burst' });
      // The last appends fall in a quiet interval; close() sends their hint instead of dropping it.
      await writer.close();
      for (let i = 0; i < 200 && positions.at(-1) !== 20; i++) await new Promise((r) => setTimeout(r, 10));
      expect(positions.at(-1)).toBe(20);
      expect(positions.length).toBeLessThan(20);
      expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    } finally {
      await stop();
      await Promise.all([listener.close(), writer.close()]);
    }
  });
});

/** A TCP forwarder to the test server that can be taken down and brought back on the same port. */
function proxy(): { url: () => string; up: () => Promise<void>; down: () => Promise<void> } {
  const target = new URL(PG_URL);
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  let port = 0;
  return {
    url: () => {
      const u = new URL(PG_URL);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    up: () =>
      new Promise((resolve) => {
        server = createServer((client) => {
          const upstream = tcpConnect(Number(target.port || 5432), target.hostname);
          sockets.add(client);
          sockets.add(upstream);
          const close = () => {
            client.destroy();
            upstream.destroy();
            sockets.delete(client);
            sockets.delete(upstream);
          };
          client.on('error', close).on('close', close);
          upstream.on('error', close).on('close', close);
          client.pipe(upstream).pipe(client);
        });
        server.listen(port, '127.0.0.1', () => {
          port = (server!.address() as { port: number }).port;
          resolve();
        });
      }),
    down: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        sockets.clear();
        if (server) server.close(() => resolve());
        else resolve();
      }),
  };
}

suite('postgres: faults', () => {
  it('an unreachable server is STORAGE_UNAVAILABLE, and no message shows the password', async () => {
    const secret = 'hunter2-s3cret';
    const url = `postgres://agent:${secret}@127.0.0.1:1/test`;
    const err = await rejection(openPostgresBackend({ url, instance: 'x/y', connectTimeoutMs: 2000 }));
    expect(err.code).toBe('STORAGE_UNAVAILABLE');
    expect(err.message).toMatch(/cannot use PostgreSQL at postgres:\/\/agent:\*\*\*@127\.0\.0\.1:1\/test/);
    expect(err.message).toMatch(/ECONNREFUSED/);
    for (const text of [err.message, JSON.stringify(err), inspect(err, { depth: 10 }), String(err.stack)]) {
      expect(text).not.toContain(secret);
    }
  });

  it('bad options are refused before connecting, without echoing the password', async () => {
    const err = await rejection(openPostgresBackend({ url: 'mysql://u:pw-x@h/db', instance: 'x' }));
    expect(err).toMatchObject({ code: 'INVALID_INPUT' });
    expect(err.message).not.toContain('pw-x');
    await expect(openPostgresBackend({ url: PG_URL, instance: '' })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
    await expect(
      openPostgresBackend({ url: PG_URL, instance: 'x', schema: 'Bad;Name' }),
    ).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
  });

  it('deadlocks, serialization failures and lock timeouts are LOCK_TIMEOUT, never INTERNAL', () => {
    for (const code of ['40P01', '40001', '55P03']) {
      expect(mapPgError(Object.assign(new Error('x'), { code }), 'postgres://h/db')).toMatchObject({
        code: 'LOCK_TIMEOUT',
      });
    }
    expect(mapPgError(Object.assign(new Error('bye'), { code: '57P01' }), 'postgres://h/db')).toMatchObject({
      code: 'STORAGE_UNAVAILABLE',
    });
  });

  it('a row lock held past lockTimeoutMs is LOCK_TIMEOUT, while a handle with a longer one still waits; both work once it is released', async () => {
    // Two handles on one instance, each with its own lock timeout (its own pool): the patient one queues on
    // the held lock first, so were the option not honoured (one timeout for both), it would give up first.
    const instance = `spec/${++n}`;
    const hasty = await open(instance, { lockTimeoutMs: 200 });
    const patient = await open(instance, { lockTimeoutMs: 3_600_000 });
    const pg = (await import('pg')).default;
    const holder = new pg.Client({ connectionString: PG_URL });
    try {
      const log = services(hasty).events;
      await log.append({ type: 'first' });
      await holder.connect();
      const [{ pid }] = (await holder.query('SELECT pg_backend_pid() AS pid')).rows as [{ pid: number }];
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "${schema}".event_heads WHERE instance = $1 FOR UPDATE`, [
        hasty.instance,
      ]);
      let waited: { ok: boolean; error?: unknown } | undefined;
      const queued = services(patient)
        .events.append({ type: 'patient' })
        .then(
          () => {
            waited = { ok: true };
          },
          (error: unknown) => {
            waited = { ok: false, error };
          },
        );
      // A condition, not a time: the server shows the patient append waiting on the holder's lock.
      await untilBlockedBy(pid);
      const refused = await rejection(log.append({ type: 'blocked' }));
      expect(refused).toMatchObject({ code: 'LOCK_TIMEOUT', details: { pg_code: '55P03' } });
      // The hasty handle gave up on its own timeout; the patient one, waiting longer, has not.
      expect(waited).toBeUndefined();
      await holder.query('ROLLBACK');
      await queued;
      expect(waited).toEqual({ ok: true });
      await log.append({ type: 'after' });
      expect((await log.read()).map((e) => e.type)).toEqual(['first', 'patient', 'after']);
      expect((await log.verify()).ok).toBe(true);
    } finally {
      await holder.end().catch(() => {});
      await hasty.close();
      await patient.close();
    }
  });

  it('a cascade waits for a dependant another transaction is changing, and leaves it as that one left it', async () => {
    const b = await open();
    const pg = (await import('pg')).default;
    const holder = new pg.Client({ connectionString: PG_URL });
    try {
      const { work, events } = services(b);
      const blocker = await work.enqueue({ title: 'blocker', max_attempts: 1 });
      const dep = await work.enqueue({
        title: 'dep',
        blocked_by: [blocker.id],
        on_blocker_failure: 'cascade',
      });
      await work.claim({ worker: 'w' });
      await holder.connect();
      const [{ pid }] = (await holder.query('SELECT pg_backend_pid() AS pid')).rows as [{ pid: number }];
      // Another transaction has the dependant (it takes it out of the queue, not yet committed).
      await holder.query('BEGIN');
      await holder.query(
        `UPDATE "${schema}".work_items SET status = 'cancelled', error = 'by another', resolved_at = $3, updated_at = $3
         WHERE instance = $1 AND id = $2`,
        [b.instance, dep.id, Date.now()],
      );
      const failing = work.resolve({ id: blocker.id, worker: 'w', status: 'failed', error: 'boom' });
      // A condition, not a time: the server shows the cascade waiting on the other transaction's row lock.
      await untilBlockedBy(pid);
      await holder.query('COMMIT');
      expect((await failing).status).toBe('failed');
      // The cascade saw the dependant as the other transaction left it (no longer pending) and left it alone:
      // it did not write its own cancellation over that one.
      expect(await work.get(dep.id)).toMatchObject({
        status: 'cancelled',
        error: 'by another',
        cascaded_from: null,
      });
      expect((await events.read({ work_item_id: dep.id })).map((e) => e.type)).toEqual([
        'work_item_enqueued',
      ]);
    } finally {
      await holder.end().catch(() => {});
      await b.close();
    }
  });

  it('a transaction failing after its conditional write rolls back everything', async () => {
    const b = await open();
    try {
      const s = services(b);
      await s.events.append({ type: 'before' });
      const head = await b.events.head();
      const write = {
        kind: 'json',
        id: 'atomic',
        expected_version: 0,
        expected_hash: null,
        body: { v: 1 },
        content_hash: 'h',
        noop: false,
        actor: 'a',
        actor_kind: 'system' as const,
        provenance: null,
        write_id: 'w-1',
        request_hash: 'r',
        reason: null,
        override: null,
        forked_from: null,
        now: Date.now(),
        keep_versions: null,
        enqueue: [
          {
            id: 'wi_effect',
            title: 'effect',
            kind: null,
            status: 'pending' as const,
            priority: 0,
            payload: null,
            idempotency_key: null,
            blocked_by: [],
            not_before: null,
            max_attempts: 3,
            created_at: Date.now(),
            actor: 'a',
            actor_kind: 'system' as const,
          },
        ],
        resolve: [],
        // PostgreSQL cannot store U+0000 in text: the event insert fails after the CAS statement succeeded.
        events: [event('state_committed', { stream: 'doc:json/atomic', actor: 'bad\u0000actor' })],
      };
      await expect(b.docs.commit(write)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      expect(await b.docs.get('json', 'atomic')).toBeNull();
      expect(await b.docs.findWrite('json', 'atomic', 'w-1')).toBeNull();
      expect(await b.work.get('wi_effect')).toBeNull();
      expect(await b.events.head()).toEqual(head);
      // The same commit, fixed, succeeds: nothing was left half-written (positions, seqs, rows).
      const committed = {
        kind: 'json',
        id: 'atomic',
        version: 1,
        parent_version: 0,
        actor_kind: 'system',
        noop: false,
        content_hash: contentHash(write.body),
        write_id: 'w-1',
        reason: null,
      };
      await b.docs.commit({
        ...write,
        content_hash: committed.content_hash,
        events: [
          event('state_committed', {
            stream: 'doc:json/atomic',
            data: committed,
            actor: 'a',
            created_at: write.now,
          }),
        ],
      });
      expect((await b.docs.get('json', 'atomic'))?.version).toBe(1);
      expect((await b.work.get('wi_effect'))?.status).toBe('pending');
      const all = await s.events.read();
      expect(all.map((e) => [e.position, e.type, e.stream_seq])).toEqual([
        [1, 'before', 1],
        [2, 'work_item_enqueued', 1],
        [3, 'state_committed', 1],
      ]);
      expect((await s.events.verify()).ok).toBe(true);
    } finally {
      await b.close();
    }
  });

  it('the pool recovers by itself after the server closes its connections', async () => {
    const app = `agentstate-recover-${process.pid}-${++n}`;
    const b = await open(undefined, { applicationName: app, poolSize: 3 });
    try {
      const s = services(b);
      await Promise.all([s.work.enqueue({ title: 'a' }), s.events.append({ type: 'x' }), s.work.list()]);
      const killed = await adminQuery<{ ok: boolean }>(
        'SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1',
        [app],
      );
      expect(killed.length).toBeGreaterThan(0);
      // Every kind of call works again at once: reads, transactions, the claim.
      expect((await s.work.list()).length).toBe(1);
      await s.work.enqueue({ title: 'b' });
      expect(await s.work.claim({ worker: 'w' })).not.toBeNull();
      expect((await s.events.verify()).ok).toBe(true);
    } finally {
      await b.close();
    }
  });

  it('while the server is unreachable calls are STORAGE_UNAVAILABLE; when it is back they work again', async () => {
    const p = proxy();
    await p.up();
    const b = await openPostgresBackend({
      url: p.url(),
      schema: schema!,
      instance: `proxy/${++n}`,
      poolSize: 2,
      connectTimeoutMs: 2000,
    });
    try {
      const s = services(b);
      await s.work.enqueue({ title: 'before' });
      await p.down();
      await expect(s.work.enqueue({ title: 'during' })).rejects.toMatchObject({
        code: 'STORAGE_UNAVAILABLE',
      });
      await expect(s.work.list()).rejects.toMatchObject({ code: 'STORAGE_UNAVAILABLE' });
      await expect(s.events.append({ type: 'x' })).rejects.toMatchObject({ code: 'STORAGE_UNAVAILABLE' });
      await p.up();
      await s.work.enqueue({ title: 'after' });
      expect((await s.work.list()).map((i) => i.title)).toEqual(['before', 'after']);
      expect((await s.events.verify()).ok).toBe(true);
    } finally {
      await b.close();
      await p.down();
    }
  });
});
