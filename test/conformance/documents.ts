// Store conformance, versioned documents: compare-and-swap commits, patches, write ids, no-ops,
// provenance, history, diff, fork, projection and retention.
import { describe, expect } from 'vitest';
import type { DocumentWrite, StoreBackend } from '../../src/core/backend.js';
import { contentHash } from '../../src/core/json.js';
import type { JsonObject } from '../../src/core/types.js';
import { type ConformanceTest, eventCount, expectCode } from './setup.js';

/**
 * A write as the store would send it for `kind/id` at `expected_version` (body, hash and its
 * state_committed event), for tests that speak to the backend interface directly.
 */
function craftedWrite(
  kind: string,
  id: string,
  expected_version: number,
  expected_hash: string | null,
  body: JsonObject,
  now: number,
  noop = false,
): DocumentWrite {
  const content_hash = contentHash(body);
  return {
    kind,
    id,
    expected_version,
    expected_hash,
    body,
    content_hash,
    noop,
    actor: 'agent',
    actor_kind: 'system',
    provenance: null,
    write_id: null,
    request_hash: '',
    reason: noop ? 'crafted' : null,
    override: null,
    forked_from: null,
    now,
    keep_versions: null,
    events: [
      {
        type: 'state_committed',
        stream: `doc:${kind}/${id}`,
        data: noop
          ? {
              kind,
              id,
              version: expected_version,
              parent_version: expected_version,
              actor_kind: 'system',
              noop,
              reason: 'crafted',
            }
          : {
              kind,
              id,
              version: expected_version + 1,
              parent_version: expected_version,
              actor_kind: 'system',
              noop,
              content_hash,
              write_id: null,
              reason: null,
            },
        actor: 'agent',
        correlation_id: null,
        causation_id: null,
        work_item_id: null,
        created_at: now,
      },
    ],
    enqueue: [],
    resolve: [],
  };
}

/**
 * A backend whose storage can be swapped under the store that uses it, as when an instance's file is
 * replaced by a backup or another copy while a process keeps it open.
 */
function swappable(first: StoreBackend): { backend: StoreBackend; swap(to: StoreBackend): void } {
  let under = first;
  return {
    backend: new Proxy(first, { get: (_target, p) => Reflect.get(under, p) }),
    swap: (to) => {
      under = to;
    },
  };
}

export function documentConformance(name: string, t: ConformanceTest): void {
  describe(`${name}: versioned documents`, () => {
    const doc = { kind: 'json', id: 'plan' };

    t(
      'create needs expected_version 0; a second create is STATE_CONFLICT with expected and actual',
      async (c) => {
        const r = await c.docs.commit({ ...doc, expected_version: 0, body: { steps: [] } });
        expect(r).toMatchObject({
          version: 1,
          previous_version: 0,
          changed: true,
          noop: false,
          replayed: false,
        });
        const details = await expectCode(
          c.docs.commit({ ...doc, expected_version: 0, body: { other: 1 } }),
          'STATE_CONFLICT',
        );
        expect(details).toMatchObject({ expected: 0, actual: 1 });
        expect((await c.docs.get(doc)).body).toEqual({ steps: [] });
      },
    );

    t('a stale commit is STATE_CONFLICT and writes nothing (no history, no event)', async (c) => {
      await c.docs.commit({ ...doc, expected_version: 0, body: { n: 1 } });
      await c.docs.commit({ ...doc, expected_version: 1, body: { n: 2 } });
      const events = await eventCount(c);
      const details = await expectCode(
        c.docs.commit({ ...doc, expected_version: 1, body: { n: 99 } }),
        'STATE_CONFLICT',
      );
      expect(details).toMatchObject({ expected: 1, actual: 2 });
      await expectCode(c.docs.commit({ ...doc, expected_version: 5, body: { n: 99 } }), 'STATE_CONFLICT');
      expect(await eventCount(c)).toBe(events);
      expect((await c.docs.history(doc)).entries.length).toBe(2);
      expect((await c.docs.get(doc)).body).toEqual({ n: 2 });
    });

    t('a store that remembers an older version still conflicts, then patches the newest body', async (c) => {
      // Two stores over one backend: each remembers only its own last commit.
      const other = c.docsKeeping(1_000_000);
      await c.docs.commit({ ...doc, expected_version: 0, body: { a: 1, tags: ['x'] } });
      await other.commit({ ...doc, expected_version: 1, merge_patch: { b: 2 } });
      const details = await expectCode(
        c.docs.commit({ ...doc, expected_version: 1, merge_patch: { a: 9 } }),
        'STATE_CONFLICT',
      );
      expect(details).toMatchObject({ expected: 1, actual: 2 });
      const r = await c.docs.commit({ ...doc, expected_version: 2, merge_patch: { a: 3 } });
      expect(r.body).toEqual({ a: 3, b: 2, tags: ['x'] });
      expect((await c.docs.history(doc)).entries.map((e) => e.version)).toEqual([1, 2, 3]);
    });

    t(
      'changing a returned or passed body afterwards never changes what the next commit builds on',
      async (c) => {
        const body = { a: 1, list: [1, 2] };
        const r1 = await c.docs.commit({ ...doc, expected_version: 0, body });
        body.list.push(3);
        r1.body.a = 'mutated';
        (r1.body.list as number[]).push(4);
        const r2 = await c.docs.commit({ ...doc, expected_version: 1, merge_patch: { b: true } });
        expect(r2.body).toEqual({ a: 1, list: [1, 2], b: true });
        (r2.body.list as number[]).length = 0;
        const r3 = await c.docs.commit({
          ...doc,
          expected_version: 2,
          json_patch: [{ op: 'add', path: '/c', value: 1 }],
        });
        expect(r3.body).toEqual({ a: 1, list: [1, 2], b: true, c: 1 });
        expect((await c.docs.get(doc)).body).toEqual(r3.body);
        const same = await c.docs.commit({ ...doc, expected_version: 3, merge_patch: { c: 1 } });
        expect(same.changed).toBe(false);
        same.body.c = 'mutated';
        const r4 = await c.docs.commit({ ...doc, expected_version: 3, merge_patch: { d: 1 } });
        expect(r4.body).toEqual({ a: 1, list: [1, 2], b: true, c: 1, d: 1 });
      },
    );

    t('body, merge_patch and json_patch each yield expected_version + 1', async (c) => {
      await c.docs.commit({ ...doc, expected_version: 0, body: { a: 1, b: { c: 2 } } });
      const m = await c.docs.commit({
        ...doc,
        expected_version: 1,
        merge_patch: { b: { c: null, d: 3 }, e: [1] },
      });
      expect(m).toMatchObject({ version: 2, body: { a: 1, b: { d: 3 }, e: [1] } });
      const j = await c.docs.commit({
        ...doc,
        expected_version: 2,
        json_patch: [
          { op: 'replace', path: '/a', value: 10 },
          { op: 'add', path: '/e/-', value: 2 },
        ],
      });
      expect(j).toMatchObject({ version: 3, body: { a: 10, b: { d: 3 }, e: [1, 2] } });
      await expectCode(
        c.docs.commit({ ...doc, expected_version: 3, json_patch: [{ op: 'test', path: '/a', value: 1 }] }),
        'STATE_CONFLICT',
      );
      await expectCode(
        c.docs.commit({ ...doc, expected_version: 3, json_patch: [{ op: 'bogus', path: '/a' }] as never }),
        'INVALID_INPUT',
      );
      await expectCode(
        c.docs.commit({ ...doc, expected_version: 3, body: {}, merge_patch: {} }),
        'INVALID_INPUT',
      );
      await expectCode(c.docs.commit({ ...doc, expected_version: 3 }), 'INVALID_INPUT');
      expect((await c.docs.get(doc)).version).toBe(3);
    });

    t(
      'a JSON Patch resolves pointers in the document, never in what a JavaScript object inherits',
      async (c) => {
        await c.docs.commit({ ...doc, expected_version: 0, body: { a: 1, o: { x: 1 } } });
        // Each would read Object.prototype's functions into the body, stored unlike its hash (verify broke).
        for (const op of [
          { op: 'copy', from: '/valueOf', path: '/x' },
          { op: 'move', from: '/toString', path: '/-' },
          { op: 'move', from: '/o/hasOwnProperty', path: '/y' },
          { op: 'replace', path: '/isPrototypeOf', value: 2 },
          { op: 'remove', path: '/toString' },
          { op: 'add', path: '/toString/x', value: 1 },
        ]) {
          const d = await expectCode(
            c.docs.commit({ ...doc, expected_version: 1, json_patch: [op] as never }),
            'INVALID_INPUT',
          );
          expect(d.pointer, JSON.stringify(op)).toMatch(/^\/0\/(path|from)$/);
        }
        // A test of such a name fails as for any absent member.
        await expectCode(
          c.docs.commit({
            ...doc,
            expected_version: 1,
            json_patch: [{ op: 'test', path: '/toString', value: {} }],
          }),
          'STATE_CONFLICT',
        );
        expect((await c.docs.get(doc)).version).toBe(1);
        // Such a name is an ordinary key to add, and then to copy, move or remove.
        const j = await c.docs.commit({
          ...doc,
          expected_version: 1,
          json_patch: [
            { op: 'add', path: '/toString', value: 'mine' },
            { op: 'copy', from: '/toString', path: '/o/valueOf' },
            { op: 'remove', path: '/toString' },
          ],
        });
        expect(j.body).toEqual({ a: 1, o: { x: 1, valueOf: 'mine' } });
        expect((await c.docs.get(doc)).body).toEqual(j.body);
      },
    );

    t(
      'a retry with the same write_id and payload returns the original result; another payload conflicts',
      async (c) => {
        await c.docs.commit({ ...doc, expected_version: 0, body: { n: 0 } });
        const first = await c.docs.commit({
          ...doc,
          expected_version: 1,
          merge_patch: { n: 1 },
          write_id: 'step-7',
        });
        await c.docs.commit({ ...doc, expected_version: 2, merge_patch: { n: 2 } });
        const retry = await c.docs.commit({
          ...doc,
          expected_version: 1,
          merge_patch: { n: 1 },
          write_id: 'step-7',
        });
        expect(retry).toMatchObject({
          version: first.version,
          replayed: true,
          body: { n: 1 },
          write_id: 'step-7',
        });
        expect((await c.docs.get(doc)).version).toBe(3);
        const reused = await expectCode(
          c.docs.commit({ ...doc, expected_version: 3, merge_patch: { n: 5 }, write_id: 'step-7' }),
          'STATE_CONFLICT',
        );
        // The error reports where the document really is, not the reused write's parent.
        expect(reused).toMatchObject({ write_id: 'step-7', actual: 3 });
        expect((await c.docs.history(doc)).entries.length).toBe(3);
      },
    );

    t('an explicit no-op is recorded in history with the version unchanged', async (c) => {
      await c.docs.commit({ ...doc, expected_version: 0, body: { n: 1 } });
      const r = await c.docs.commit({
        ...doc,
        expected_version: 1,
        noop: true,
        reason: 'checked, nothing to change',
      });
      expect(r).toMatchObject({ version: 1, noop: true, changed: false });
      const { entries } = await c.docs.history(doc);
      expect(entries.map((e) => [e.version, e.noop, e.reason])).toEqual([
        [1, false, null],
        [1, true, 'checked, nothing to change'],
      ]);
      await expectCode(c.docs.commit({ ...doc, expected_version: 1, noop: true }), 'INVALID_INPUT');
      await expectCode(
        c.docs.commit({ ...doc, expected_version: 0, noop: true, reason: 'x' }),
        'STATE_CONFLICT',
      );
      expect(
        (await c.events.read({ type: 'state_committed' })).map((e) => (e.data as { noop: boolean }).noop),
      ).toEqual([false, true]);
    });

    t('a commit that changes nothing is reported as such and writes nothing', async (c) => {
      await c.docs.commit({ ...doc, expected_version: 0, body: { a: 1, b: 2 } });
      const events = await eventCount(c);
      const r = await c.docs.commit({ ...doc, expected_version: 1, body: { b: 2, a: 1 } });
      expect(r).toMatchObject({ version: 1, changed: false, noop: false });
      expect(await eventCount(c)).toBe(events);
      expect((await c.docs.history(doc)).entries.length).toBe(1);
    });

    t(
      'every version keeps actor, actor kind, provenance, write id, parent, time and hash, with a state_committed event',
      async (c) => {
        const provenance = { model_id: 'm-1', input_hash: 'abc', run_id: 'r1', step_id: 's3' };
        await c.docs.commit({
          ...doc,
          expected_version: 0,
          body: { n: 1 },
          actor: 'alice',
          actor_kind: 'human',
        });
        c.advance(5);
        const r = await c.docs.commit({
          ...doc,
          expected_version: 1,
          body: { n: 2 },
          actor: 'planner-llm',
          actor_kind: 'model',
          provenance,
          write_id: 'w-2',
          reason: 'replan',
        });
        const [e1, e2] = (await c.docs.history(doc)).entries;
        expect(e1).toMatchObject({
          version: 1,
          parent_version: 0,
          actor: 'alice',
          actor_kind: 'human',
          provenance: null,
        });
        expect(e2).toMatchObject({
          version: 2,
          parent_version: 1,
          actor: 'planner-llm',
          actor_kind: 'model',
          provenance,
          write_id: 'w-2',
          reason: 'replan',
          content_hash: r.content_hash,
          created_at: new Date(c.now()).toISOString(),
        });
        expect(e2!.content_hash).toMatch(/^[0-9a-f]{64}$/);
        const events = await c.events.read({ stream: 'doc:json/plan' });
        expect(events.map((e) => [e.type, (e.data as { version: number }).version, e.actor])).toEqual([
          ['state_committed', 1, 'alice'],
          ['state_committed', 2, 'planner-llm'],
        ]);
        expect((await c.events.verify()).ok).toBe(true);
      },
    );

    t('a model write without provenance is PROVENANCE_REQUIRED and writes nothing', async (c) => {
      await expectCode(
        c.docs.commit({ ...doc, expected_version: 0, body: {}, actor_kind: 'model' }),
        'PROVENANCE_REQUIRED',
      );
      await expectCode(
        c.docs.commit({
          ...doc,
          expected_version: 0,
          body: {},
          actor_kind: 'model',
          provenance: { model_id: 'm' },
        }),
        'PROVENANCE_REQUIRED',
      );
      expect(await c.docs.find('json', 'plan')).toBeNull();
      expect(await eventCount(c)).toBe(0);
    });

    t('reads any version; diff is an RFC 6902 patch from one version to another', async (c) => {
      await c.docs.commit({ ...doc, expected_version: 0, body: { a: 1, list: [1] } });
      await c.docs.commit({ ...doc, expected_version: 1, body: { a: 2, list: [1, 2], added: true } });
      await c.docs.commit({ ...doc, expected_version: 2, body: { list: [2] } });
      expect((await c.docs.get({ ...doc, version: 1 })).body).toEqual({ a: 1, list: [1] });
      expect((await c.docs.get({ ...doc, version: 2 })).version).toBe(2);
      await expectCode(c.docs.get({ ...doc, version: 9 }), 'NOT_FOUND');
      await expectCode(c.docs.get({ kind: 'json', id: 'nope' }), 'NOT_FOUND');
      const d = await c.docs.diff({ ...doc, from: 1, to: 3 });
      const { applyPatch } = (await import('fast-json-patch')).default;
      expect(applyPatch({ a: 1, list: [1] }, d.patch as never, true, false).newDocument).toEqual({
        list: [2],
      });
      const fromEmpty = (await c.docs.diff({ ...doc, from: 0, to: 1 })).patch;
      expect(fromEmpty.every((op) => op.op === 'add')).toBe(true);
      expect(applyPatch({}, fromEmpty as never, true, false).newDocument).toEqual({ a: 1, list: [1] });
    });

    t('history pages in order', async (c) => {
      for (let v = 0; v < 7; v++) await c.docs.commit({ ...doc, expected_version: v, body: { v } });
      const p1 = await c.docs.history({ ...doc, limit: 3 });
      const p2 = await c.docs.history({ ...doc, limit: 3, after: p1.next_after! });
      const p3 = await c.docs.history({ ...doc, limit: 3, after: p2.next_after! });
      expect([...p1.entries, ...p2.entries, ...p3.entries].map((e) => e.version)).toEqual([
        1, 2, 3, 4, 5, 6, 7,
      ]);
      expect(p3.next_after).toBeNull();
      expect(
        (await c.docs.history({ ...doc, reverse: true, limit: 2 })).entries.map((e) => e.version),
      ).toEqual([7, 6]);
    });

    t('fork copies a version into a new document and records where it came from', async (c) => {
      await c.docs.commit({ ...doc, expected_version: 0, body: { v: 1 } });
      await c.docs.commit({ ...doc, expected_version: 1, body: { v: 2 } });
      const f = await c.docs.fork({ ...doc, version: 1, new_id: 'plan-b' });
      expect(f).toMatchObject({ id: 'plan-b', version: 1, body: { v: 1 } });
      expect((await c.docs.get({ kind: 'json', id: 'plan-b' })).forked_from).toEqual({
        kind: 'json',
        id: 'plan',
        version: 1,
      });
      await expectCode(c.docs.fork({ ...doc, new_id: 'plan-b' }), 'STATE_CONFLICT');
    });

    t('project returns only the named fields and the version they were read at', async (c) => {
      await c.docs.commit({
        ...doc,
        expected_version: 0,
        body: { position: { block: 3, step: 'x' }, big: 'y'.repeat(1000) },
      });
      const p = await c.docs.project({
        ...doc,
        paths: ['position.block', '/position/step', 'missing.field'],
      });
      expect(p).toEqual({
        kind: 'json',
        id: 'plan',
        version: 1,
        values: { 'position.block': 3, '/position/step': 'x' },
        missing: ['missing.field'],
      });
      // A component commits against the version it projected at.
      await c.docs.commit({ ...doc, expected_version: p.version, merge_patch: { position: { block: 4 } } });
      await expectCode(
        c.docs.commit({ ...doc, expected_version: p.version, merge_patch: { big: 'z' } }),
        'STATE_CONFLICT',
      );
    });

    t(
      'retention keeps the newest N versions, never the latest; a pruned version is a typed NOT_FOUND',
      async (c) => {
        const docs = c.docsKeeping(3);
        for (let v = 0; v < 6; v++) await docs.commit({ ...doc, expected_version: v, body: { v } });
        expect((await docs.history(doc)).entries.map((e) => e.version)).toEqual([4, 5, 6]);
        const details = await expectCode(docs.get({ ...doc, version: 2 }), 'NOT_FOUND');
        expect(details.pruned).toBe(true);
        expect((await docs.get({ ...doc, version: 4 })).body).toEqual({ v: 3 });
        expect(await c.docs.prune({ ...doc, keep: 1 })).toEqual({ removed: 2 });
        expect((await c.docs.get(doc)).body).toEqual({ v: 5 });
        expect((await c.docs.history(doc)).entries.map((e) => e.version)).toEqual([6]);
      },
    );

    t('unknown kinds and hostile ids are refused', async (c) => {
      await expectCode(
        c.docs.commit({ kind: 'nope', id: 'x', expected_version: 0, body: {} }),
        'INVALID_INPUT',
      );
      await expectCode(
        c.docs.commit({ kind: 'json', id: '', expected_version: 0, body: {} }),
        'INVALID_INPUT',
      );
      await expectCode(
        c.docs.commit({ kind: 'json', id: 'x', expected_version: -1, body: {} }),
        'INVALID_INPUT',
      );
      await expectCode(
        c.docs.commit({ kind: 'json', id: 'x', expected_version: 0, body: [] as never }),
        'INVALID_INPUT',
      );
      expect(await eventCount(c)).toBe(0);
    });
  });

  describe(`${name}: the conditional write checks version and content hash`, () => {
    const doc = { kind: 'json', id: 'plan' };

    t(
      'a write naming the right version but another content hash is STATE_CONFLICT and writes nothing',
      async (c) => {
        const v1 = await c.docs.commit({ ...doc, expected_version: 0, body: { a: 1 } });
        const v2 = await c.docs.commit({ ...doc, expected_version: 1, body: { a: 2 } });
        const before = { head: await c.backend.events.head(), history: (await c.docs.history(doc)).entries };
        // Built on a copy of version 2 that is not the one stored (its hash is version 1's).
        for (const w of [
          craftedWrite('json', 'plan', 2, v1.content_hash, { a: 3 }, c.now()),
          craftedWrite('json', 'plan', 2, contentHash({ other: true }), { a: 3 }, c.now()),
          craftedWrite('json', 'plan', 2, v1.content_hash, { a: 2 }, c.now(), true),
        ]) {
          const details = await expectCode(c.backend.docs.commit(w), 'STATE_CONFLICT');
          expect(details).toMatchObject({ expected: 2, actual: 2 });
        }
        expect(await c.docs.get(doc)).toMatchObject({
          version: 2,
          body: { a: 2 },
          content_hash: v2.content_hash,
        });
        expect({ head: await c.backend.events.head(), history: (await c.docs.history(doc)).entries }).toEqual(
          before,
        );
        // The same writes naming the stored hash land.
        await c.backend.docs.commit(
          craftedWrite('json', 'plan', 2, v2.content_hash, { a: 2 }, c.now(), true),
        );
        await c.backend.docs.commit(craftedWrite('json', 'plan', 2, v2.content_hash, { a: 3 }, c.now()));
        expect(await c.docs.get(doc)).toMatchObject({ version: 3, body: { a: 3 } });
      },
    );

    t(
      'a write or no-op naming a version of a document that does not exist is STATE_CONFLICT with actual 0 and writes nothing',
      async (c) => {
        const hash = contentHash({ a: 1 });
        for (const w of [
          craftedWrite('json', 'ghost', 1, hash, { a: 2 }, c.now()),
          craftedWrite('json', 'ghost', 1, hash, { a: 1 }, c.now(), true),
        ]) {
          const details = await expectCode(c.backend.docs.commit(w), 'STATE_CONFLICT');
          expect(details, `noop: ${w.noop}`).toMatchObject({
            kind: 'json',
            id: 'ghost',
            expected: 1,
            actual: 0,
          });
        }
        expect(await c.docs.find('json', 'ghost')).toBeNull();
        expect(await eventCount(c)).toBe(0);
      },
    );

    t(
      'a no-op naming an older version is STATE_CONFLICT even when the document is back at that body (A→B→A)',
      async (c) => {
        const v1 = await c.docs.commit({ ...doc, expected_version: 0, body: { a: 1 } });
        await c.docs.commit({ ...doc, expected_version: 1, body: { a: 2 } });
        await c.docs.commit({ ...doc, expected_version: 2, body: { a: 1 } });
        const before = { head: await c.backend.events.head(), history: (await c.docs.history(doc)).entries };
        const details = await expectCode(
          c.backend.docs.commit(craftedWrite('json', 'plan', 1, v1.content_hash, { a: 1 }, c.now(), true)),
          'STATE_CONFLICT',
        );
        expect(details).toMatchObject({ expected: 1, actual: 3 });
        expect({ head: await c.backend.events.head(), history: (await c.docs.history(doc)).entries }).toEqual(
          before,
        );
      },
    );

    t(
      'a store that remembers a document the storage no longer holds is STATE_CONFLICT (actual 0) for a change, a no-op or no change',
      async (c) => {
        // Another copy of the instance (a backup from before the document was written) put under the store.
        const restored = await c.another();
        const storage = swappable(c.backend);
        const s = c.over(storage.backend);
        const writes = [
          { merge_patch: { b: 1 } },
          { noop: true, reason: 'checked' },
          { body: { a: 1 } },
        ] as const;
        for (const k of writes.keys()) {
          await s.docs.commit({ kind: 'json', id: `gone-${k}`, expected_version: 0, body: { a: 1 } });
        }
        storage.swap(restored.backend);
        for (const [k, w] of writes.entries()) {
          const details = await expectCode(
            s.docs.commit({ kind: 'json', id: `gone-${k}`, expected_version: 1, ...w }),
            'STATE_CONFLICT',
          );
          expect(details, JSON.stringify(w)).toMatchObject({ expected: 1, actual: 0 });
        }
        expect(await restored.docs.list({})).toEqual([]);
        expect(await eventCount(restored)).toBe(0);
      },
    );

    t(
      'a commit built on a remembered version is STATE_CONFLICT once another writer moved the document on and back to that body (A→B→A)',
      async (c) => {
        // `a` commits version 1 and remembers it, so its next commit at version 1 reads nothing first. Another
        // writer (another handle, one that keeps a single version, then one that keeps all) then writes
        // version 2 and a version 3 whose body is version 1's: the content hash matches what `a` remembers,
        // only the version differs. With the history pruned, nothing else would stop the stale write.
        for (const [id, other] of [
          ['pruned', c.docsKeeping(1)],
          ['kept', c.docs],
        ] as const) {
          const a = c.over(c.backend).docs;
          const doc = { kind: 'json', id };
          const v1 = await a.commit({ ...doc, expected_version: 0, body: { a: 1 } });
          await other.commit({ ...doc, expected_version: 1, body: { a: 2 } });
          const v3 = await other.commit({ ...doc, expected_version: 2, body: { a: 1 } });
          expect([v3.version, v3.content_hash]).toEqual([3, v1.content_hash]);
          const stored = async () => ({
            doc: await c.docs.get(doc),
            history: (await c.docs.history(doc)).entries,
            head: await c.backend.events.head(),
          });
          const before = await stored();
          const details = await expectCode(
            a.commit({ ...doc, expected_version: 1, merge_patch: { b: 1 } }),
            'STATE_CONFLICT',
          );
          expect(details).toMatchObject({ expected: 1, actual: 3 });
          expect(await stored()).toEqual(before);
          // Built on the version that is there, the same change lands.
          expect(await a.commit({ ...doc, expected_version: 3, merge_patch: { b: 1 } })).toMatchObject({
            version: 4,
            body: { a: 1, b: 1 },
          });
        }
      },
    );

    t(
      'a store that remembers a version never builds on it once the storage holds another body at that version',
      async (c) => {
        // Another copy of the instance (a backup, a dump loaded elsewhere) whose documents are at the same
        // version with other bodies: only the content hash tells the two version 1s apart.
        const restored = await c.another();
        const storage = swappable(c.backend);
        const s = c.over(storage.backend);
        const ids = ['patched', 'noop', 'same'];
        for (const id of ids) {
          await restored.docs.commit({
            kind: 'json',
            id,
            expected_version: 0,
            body: { a: 2, from: 'backup' },
          });
          // `s` commits version 1 itself, so it remembers that body and skips reading it next time.
          await s.docs.commit({ kind: 'json', id, expected_version: 0, body: { a: 1 } });
        }
        storage.swap(restored.backend);
        const backup = (await restored.docs.get({ kind: 'json', id: 'noop' })).content_hash;

        const patched = await s.docs.commit({
          kind: 'json',
          id: 'patched',
          expected_version: 1,
          merge_patch: { b: 1 },
        });
        expect(patched).toMatchObject({ version: 2, body: { a: 2, from: 'backup', b: 1 } });
        const noop = await s.docs.commit({
          kind: 'json',
          id: 'noop',
          expected_version: 1,
          noop: true,
          reason: 'checked',
        });
        expect(noop).toMatchObject({
          version: 1,
          noop: true,
          body: { a: 2, from: 'backup' },
          content_hash: backup,
        });
        // Nothing to change by the remembered copy, but the stored body differs: the commit lands.
        const same = await s.docs.commit({ kind: 'json', id: 'same', expected_version: 1, body: { a: 1 } });
        expect(same).toMatchObject({ version: 2, changed: true, body: { a: 1 } });
        expect((await restored.docs.get({ kind: 'json', id: 'same' })).body).toEqual({ a: 1 });
        expect((await restored.docs.get({ kind: 'json', id: 'patched' })).body).toEqual({
          a: 2,
          from: 'backup',
          b: 1,
        });
        expect(
          (await restored.docs.history({ kind: 'json', id: 'noop' })).entries.map((e) => [
            e.version,
            e.noop,
            e.content_hash,
          ]),
        ).toEqual([
          [1, false, backup],
          [1, true, backup],
        ]);
        // The original copy is untouched.
        for (const id of ids)
          expect(await c.docs.get({ kind: 'json', id })).toMatchObject({ version: 1, body: { a: 1 } });
      },
    );
  });
}
