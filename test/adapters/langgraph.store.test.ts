// AgentStateStore against LangGraph's store semantics (put/get/search with filters and prefixes/delete/
// listNamespaces), namespaces scoped by equality, and every put a version with history and provenance.
import { describe, expect, it } from 'vitest';
import { AgentStateStore, storeItemId } from '../../src/adapters/langgraph/index.js';
import { isAgentStateError } from '../../src/index.js';
import { backendsForThisFile } from '../helpers/backends.js';

for (const backend of await backendsForThisFile()) {
  describe(`AgentStateStore on ${backend.name}`, () => {
    it('puts, gets, searches, deletes and lists namespaces as LangGraph’s store does', async () => {
      const inst = await backend.open();
      try {
        const store = new AgentStateStore(inst);
        await store.put(['users', 'ana', 'prefs'], 'theme', { color: 'dark', size: 3 });
        await store.put(['users', 'ana', 'prefs'], 'lang', { code: 'pt', size: 1 });
        await store.put(['users', 'bob', 'prefs'], 'theme', { color: 'light', size: 2 });
        await store.put(['docs'], 'readme', { text: 'hello' });
        const got = await store.get(['users', 'ana', 'prefs'], 'theme');
        expect(got?.value).toEqual({ color: 'dark', size: 3 });
        expect(got?.namespace).toEqual(['users', 'ana', 'prefs']);
        expect(got?.createdAt).toBeInstanceOf(Date);
        expect(await store.get(['users', 'ana', 'prefs'], 'missing')).toBeNull();
        const keys = async (prefix: string[], options = {}) =>
          (await store.search(prefix, options)).map((i) => `${i.namespace.join('/')}:${i.key}`).sort();
        expect(await keys(['users'])).toEqual([
          'users/ana/prefs:lang',
          'users/ana/prefs:theme',
          'users/bob/prefs:theme',
        ]);
        expect(await keys(['users', 'ana'])).toEqual(['users/ana/prefs:lang', 'users/ana/prefs:theme']);
        expect(await keys([], { filter: { color: 'dark' } })).toEqual(['users/ana/prefs:theme']);
        expect(await keys(['users'], { filter: { size: { $gte: 2 } } })).toEqual([
          'users/ana/prefs:theme',
          'users/bob/prefs:theme',
        ]);
        expect(await keys(['users'], { filter: { color: { $ne: 'dark' } } })).toEqual([
          'users/ana/prefs:lang',
          'users/bob/prefs:theme',
        ]);
        expect(await store.search(['users'], { limit: 1, offset: 1 })).toHaveLength(1);
        expect(await store.listNamespaces()).toEqual([
          ['docs'],
          ['users', 'ana', 'prefs'],
          ['users', 'bob', 'prefs'],
        ]);
        expect(await store.listNamespaces({ prefix: ['users'], maxDepth: 2 })).toEqual([
          ['users', 'ana'],
          ['users', 'bob'],
        ]);
        expect(await store.listNamespaces({ suffix: ['prefs'] })).toHaveLength(2);
        await store.delete(['users', 'ana', 'prefs'], 'lang');
        expect(await store.get(['users', 'ana', 'prefs'], 'lang')).toBeNull();
        expect(await keys(['users', 'ana'])).toEqual(['users/ana/prefs:theme']);
        // A read in a batch sees the store before the batch's puts.
        const [before] = await store.batch([
          { namespace: ['docs'], key: 'readme' },
          { namespace: ['docs'], key: 'readme', value: { text: 'bye' } },
        ]);
        expect((before as { value: unknown }).value).toEqual({ text: 'hello' });
        expect((await store.get(['docs'], 'readme'))?.value).toEqual({ text: 'bye' });
      } finally {
        await inst.close();
      }
    });

    it('never leaks across namespaces: labels match by equality, not by pattern', async () => {
      const inst = await backend.open();
      try {
        const store = new AgentStateStore(inst);
        await store.put(['tenant_a'], 'secret', { v: 1 });
        await store.put(['tenant%'], 'secret', { v: 2 });
        await store.put(['tenant'], 'public', { v: 3 });
        await store.put(['tenant', 'a#b'], 'odd', { v: 4 });
        const ns = async (prefix: string[]) =>
          (await store.search(prefix)).map((i) => i.namespace.join('/')).sort();
        expect(await ns(['tenant'])).toEqual(['tenant', 'tenant/a#b']);
        expect(await ns(['tenant_'])).toEqual([]);
        expect(await ns(['tenant%'])).toEqual(['tenant%']);
        expect(await ns(['tenant_a'])).toEqual(['tenant_a']);
        expect((await store.get(['tenant', 'a#b'], 'odd'))?.value).toEqual({ v: 4 });
      } finally {
        await inst.close();
      }
    });

    it('keeps every put as a version with its actor and provenance; hostile values are refused', async () => {
      const inst = await backend.open();
      try {
        const store = new AgentStateStore(inst).as({
          actor: 'memory-agent',
          actorKind: 'model',
          provenance: { model_id: 'm-1', run_id: 'r-1', step_id: 's-1', prompt_ref: 'prompts/memory.md' },
        });
        await store.put(['facts'], 'city', { name: 'Lisbon' });
        await store.put(['facts'], 'city', { name: 'Porto' });
        await store.delete(['facts'], 'city');
        const id = storeItemId(['facts'], 'city');
        expect(id).toBe('facts#city');
        const h = await inst.docs.history({ kind: 'langgraph-store', id });
        expect(
          h.entries.map((e) => [e.version, e.actor, e.actor_kind, e.provenance?.model_id, e.reason]),
        ).toEqual([
          [1, 'memory-agent', 'model', 'm-1', 'put'],
          [2, 'memory-agent', 'model', 'm-1', 'put'],
          [3, 'memory-agent', 'model', 'm-1', 'delete'],
        ]);
        expect((await inst.docs.get({ kind: 'langgraph-store', id, version: 1 })).body.value).toEqual({
          name: 'Lisbon',
        });
        const diff = await inst.docs.diff({ kind: 'langgraph-store', id, from: 1, to: 2 });
        expect(diff.patch).toEqual([{ op: 'replace', path: '/value/name', value: 'Porto' }]);
        // A model without provenance, a prototype key, an empty label: typed refusals, nothing written.
        const refusals = await Promise.allSettled([
          new AgentStateStore(inst, { actorKind: 'model' }).put(['facts'], 'x', { a: 1 }),
          store.put(['facts'], 'y', JSON.parse('{"__proto__": {"admin": true}}')),
          store.put(['facts', ''], 'z', { a: 1 }),
          store.put(['facts'], '', { a: 1 }),
        ]);
        expect(refusals.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected', 'rejected']);
        const codes = refusals.map((r) => (r as PromiseRejectedResult).reason);
        expect(isAgentStateError(codes[0], 'PROVENANCE_REQUIRED')).toBe(true);
        expect(isAgentStateError(codes[1], 'INVALID_INPUT')).toBe(true);
        expect((await inst.docs.list({ kind: 'langgraph-store' })).map((d) => d.id)).toEqual(['facts#city']);
        expect(
          (await inst.events.read({ type: ['langgraph_store_put', 'langgraph_store_deleted'] })).length,
        ).toBe(3);
      } finally {
        await inst.close();
      }
    });

    it('stores a value as JSON.stringify writes it: a Date, a URL; a bigint or a Map is refused', async () => {
      const inst = await backend.open();
      try {
        const store = new AgentStateStore(inst);
        const when = new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6));
        await store.put(['notes'], 'visit', { when, where: new URL('https://example.test/a b'), n: 1 });
        expect((await store.get(['notes'], 'visit'))?.value).toEqual({
          when: '2026-01-02T03:04:05.006Z',
          where: 'https://example.test/a%20b',
          n: 1,
        });
        // Read back the same on every handle, and from the history.
        const id = storeItemId(['notes'], 'visit');
        expect((await inst.docs.get({ kind: 'langgraph-store', id, version: 1 })).body.value).toMatchObject({
          when: '2026-01-02T03:04:05.006Z',
        });
        const head = (await inst.events.head())?.position;
        for (const value of [{ big: 10n }, { m: new Map([['a', 1]]) }]) {
          const err = await store.put(['notes'], 'bad', value).then(
            () => null,
            (e: unknown) => e,
          );
          expect(isAgentStateError(err, 'INVALID_INPUT'), String(err)).toBe(true);
        }
        expect((await inst.events.head())?.position).toBe(head);
        expect(await store.get(['notes'], 'bad')).toBeNull();
        expect((await inst.events.verify()).problems).toEqual([]);
      } finally {
        await inst.close();
      }
    });
  });
}
