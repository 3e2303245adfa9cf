// The document commit path as an agent builder relies on it, on every backend: the write counters metrics
// read (a replay is not a commit, only STATE_CONFLICT is a conflict), write ids (a replay returns the
// original result, a no-op's included; a reuse for another change says so; a replay never skips the input
// rules), the remembered latest version (used when it matches, never letting a stale writer win, a store
// failure not retried behind the caller's back), the input shapes refused before anything is written, and
// what a kind's rules are told about a write.
import { describe, expect, it } from 'vitest';
import type { StoreBackend } from '../../src/core/backend.js';
import { isStaleVersion } from '../../src/core/documents/retry.js';
import type { CommitContext } from '../../src/core/kind.js';
import type { JsonObject } from '../../src/core/types.js';
import { StateConflictError } from '../../src/errors.js';
import type { Instance } from '../../src/instance/instance.js';
import { createStore } from '../../src/instance/store.js';
import { registerKind } from '../../src/kinds/registry.js';
import { backendsForThisFile } from '../helpers/backends.js';
import { rejection } from '../helpers/refusals.js';

const backends = await backendsForThisFile();

const T0 = Date.parse('2026-03-01T09:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

/** What the probe kind's rules were told about each write. */
const seen: Array<
  Omit<CommitContext, 'read' | 'missingEvents' | 'actor' | 'actor_kind' | 'now' | 'answering'>
> = [];
// A kind of this file's own (registerKind, as docs/kinds.md describes) whose rules record what they see and
// whose `rev` field the store keeps equal to the version.
registerKind({
  name: 'probe-ctx',
  description: 'records what its rules are told about a write',
  schema: { type: 'object' },
  versionField: 'rev',
  check(_next, _prev, ctx) {
    const { kind, id, fromVersion, toVersion, role, provenance, override, reason } = ctx;
    seen.push({ kind, id, fromVersion, toVersion, role, provenance, override, reason });
    return undefined;
  },
});

describe('isStaleVersion', () => {
  it('is a stale version only when the conflict names both the version read and the version found', () => {
    expect(isStaleVersion(new StateConflictError('x', { expected: 2, actual: 3 }))).toBe(true);
    // Without both, nothing says a fresh read would get past it.
    expect(isStaleVersion(new StateConflictError('x', { expected: 2 }))).toBe(false);
    expect(isStaleVersion(new StateConflictError('x', { actual: 3 }))).toBe(false);
    expect(isStaleVersion(new StateConflictError('x', { expected: '2', actual: 3 }))).toBe(false);
  });
});

/**
 * `backend` with its document operations seen by `hook` first (which may count them or fail one), and the
 * answer of those named in `after` handed to it before the caller gets it (to stage what another process
 * does in between).
 */
function watched(
  backend: StoreBackend,
  hook: (op: string) => void,
  after: Record<string, (answer: unknown, args: unknown[]) => Promise<unknown>> = {},
): StoreBackend {
  const docs = new Proxy(backend.docs, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function') return v;
      return async (...args: unknown[]) => {
        hook(String(prop));
        const answer = await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        const then = after[String(prop)];
        return then ? then(answer, args) : answer;
      };
    },
  });
  return new Proxy(backend, {
    get(target, prop, receiver) {
      if (prop === 'docs') return docs;
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

for (const b of backends) {
  describe(`document commits on ${b.name}`, () => {
    /** An instance on a clock the test moves, and another store over its backend (which remembers nothing). */
    async function open(): Promise<{
      inst: Instance;
      other: Instance['docs'];
      over: (backend: StoreBackend) => Instance['docs'];
      advance: (ms: number) => void;
    }> {
      let now = T0;
      const clock = () => now;
      const inst = await b.open(undefined, { clock });
      const over = (backend: StoreBackend) => createStore(backend, { clock, actor: 'agent' }).docs;
      return {
        inst,
        other: over(inst.backend),
        over,
        advance: (ms) => {
          now += ms;
        },
      };
    }

    const head = async (inst: Instance) => (await inst.events.head())?.position ?? 0;

    it('counts commits and conflicts per kind for metrics: a replay is not a commit, only STATE_CONFLICT is a conflict', async () => {
      const { inst } = await open();
      try {
        const doc = { kind: 'json', id: 'counted' };
        expect(inst.docs.writeCounts().get('json')).toBeUndefined();
        await inst.docs.commit({ ...doc, expected_version: 0, body: { n: 0 } });
        expect(Object.fromEntries(inst.docs.writeCounts())).toEqual({ json: { commits: 1, conflicts: 0 } });
        const first = await inst.docs.commit({ ...doc, expected_version: 1, body: { n: 1 }, write_id: 'w1' });
        const again = await inst.docs.commit({ ...doc, expected_version: 1, body: { n: 1 }, write_id: 'w1' });
        expect([first.replayed, again.replayed]).toEqual([false, true]);
        expect(Object.fromEntries(inst.docs.writeCounts())).toEqual({ json: { commits: 2, conflicts: 0 } });
        await rejection(inst.docs.commit({ ...doc, expected_version: 1, body: { n: 9 } }));
        // Refusals of other kinds are neither.
        const refused = await rejection(inst.docs.commit({ ...doc, expected_version: 2, noop: true }));
        expect(refused.code).toBe('INVALID_INPUT');
        await inst.docs.commit({ kind: 'probe-ctx', id: 'counted', expected_version: 0, body: {} });
        expect(Object.fromEntries(inst.docs.writeCounts())).toEqual({
          json: { commits: 2, conflicts: 1 },
          'probe-ctx': { commits: 1, conflicts: 0 },
        });
      } finally {
        await inst.close();
      }
    });

    it('a stale commit with a write_id never used before is STATE_CONFLICT with the actual version', async () => {
      const { inst } = await open();
      try {
        const doc = { kind: 'json', id: 'stale' };
        await inst.docs.commit({ ...doc, expected_version: 0, body: { n: 1 } });
        const err = await rejection(
          inst.docs.commit({ ...doc, expected_version: 0, body: { n: 2 }, write_id: 'never-used' }),
        );
        expect(err).toMatchObject({ code: 'STATE_CONFLICT', details: { expected: 0, actual: 1 } });
        expect((await inst.docs.get(doc)).body).toEqual({ n: 1 });
        expect(inst.docs.writeCounts().get('json')).toEqual({ commits: 1, conflicts: 1 });
      } finally {
        await inst.close();
      }
    });

    it('a retry with a committed write_id is still held to the input rules (provenance, override)', async () => {
      const { inst } = await open();
      try {
        const doc = { kind: 'json', id: 'model-plan' };
        const provenance = { model_id: 'm-1', run_id: 'r-1', step_id: 's-1', input_hash: 'h' };
        await inst.docs.commit({ ...doc, expected_version: 0, body: { n: 0 } });
        const write = { ...doc, expected_version: 1, merge_patch: { n: 1 }, write_id: 'model-step-1' };
        await inst.docs.commit({ ...write, actor: 'planner', actor_kind: 'model', provenance });
        // The same change and write id without the provenance a model write needs: refused, not replayed.
        const missing = await rejection(
          inst.docs.commit({ ...write, actor: 'planner', actor_kind: 'model' }),
        );
        expect(missing.code).toBe('PROVENANCE_REQUIRED');
        const badOverride = await rejection(
          inst.docs.commit({ ...write, override: { rules: 'all', reason: 'x' } as never }),
        );
        expect(badOverride).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'override' } });
        // With them, the retry gets the original result.
        expect(
          await inst.docs.commit({ ...write, actor: 'planner', actor_kind: 'model', provenance }),
        ).toMatchObject({ version: 2, replayed: true, changed: true, body: { n: 1 } });
        expect((await inst.docs.history(doc)).entries.length).toBe(2);
      } finally {
        await inst.close();
      }
    });

    it('a write_id reused for another change is STATE_CONFLICT saying so, with the actual version', async () => {
      const { inst } = await open();
      try {
        const doc = { kind: 'json', id: 'reused' };
        await inst.docs.commit({ ...doc, expected_version: 0, body: { n: 0 }, write_id: 'step-1' });
        await inst.docs.commit({ ...doc, expected_version: 1, body: { n: 1 } });
        const err = await rejection(
          inst.docs.commit({ ...doc, expected_version: 2, body: { n: 2 }, write_id: 'step-1' }),
        );
        expect(err).toMatchObject({
          code: 'STATE_CONFLICT',
          message: 'write_id step-1 was already used for a different change to json/reused',
          details: { write_id: 'step-1', expected: 2, actual: 2 },
        });
        expect((await inst.docs.get(doc)).version).toBe(2);
      } finally {
        await inst.close();
      }
    });

    it('a replayed no-op returns its original result with the body it left unchanged, and writes nothing', async () => {
      const { inst, other } = await open();
      try {
        const doc = { kind: 'json', id: 'checked' };
        await inst.docs.commit({ ...doc, expected_version: 0, body: { n: 1 } });
        const noop = {
          ...doc,
          expected_version: 1,
          noop: true,
          reason: 'checked',
          write_id: 'look-1',
        } as const;
        const r = await inst.docs.commit(noop);
        expect(r).toMatchObject({ version: 1, noop: true, changed: false, replayed: false, body: { n: 1 } });
        for (const docs of [inst.docs, other]) {
          expect(await docs.commit(noop)).toEqual({ ...r, replayed: true });
        }
        // A replayed change reports the change it made.
        const change = { ...doc, expected_version: 1, body: { n: 2 }, write_id: 'step-2' };
        const c = await inst.docs.commit(change);
        expect(c).toMatchObject({ version: 2, changed: true, replayed: false });
        expect(await other.commit(change)).toEqual({ ...c, replayed: true });
        expect((await inst.docs.history(doc)).entries.map((e) => [e.version, e.noop, e.write_id])).toEqual([
          [1, false, null],
          [1, true, 'look-1'],
          [2, false, 'step-2'],
        ]);
        expect(inst.docs.writeCounts().get('json')).toEqual({ commits: 3, conflicts: 0 });
      } finally {
        await inst.close();
      }
    });

    it('a replay whose version retention removes while it is being read still answers with the original result', async () => {
      const { inst, over } = await open();
      try {
        // Retention running in another process between the replay's lookup of the write id and its read of
        // the version: here, a prune staged right after the lookup.
        let pruneAfterLookup: string | null = null;
        const docs = over(
          watched(inst.backend, () => undefined, {
            findWrite: async (found, [kind, id]) => {
              if (pruneAfterLookup === id) {
                pruneAfterLookup = null;
                await inst.backend.docs.prune(kind as string, id as string, 1);
              }
              return found;
            },
          }),
        );
        const change = { kind: 'json', id: 'kept', expected_version: 0, body: { n: 1 }, write_id: 'w1' };
        const first = await inst.docs.commit(change);
        await inst.docs.commit({ kind: 'json', id: 'kept', expected_version: 1, body: { n: 2 } });
        pruneAfterLookup = 'kept';
        // The change's entry kept its body: that is the answer.
        expect(await docs.commit(change)).toEqual({ ...first, replayed: true });

        await inst.docs.commit({ kind: 'json', id: 'looked', expected_version: 0, body: { n: 1 } });
        const noop = {
          kind: 'json',
          id: 'looked',
          expected_version: 1,
          noop: true,
          reason: 'ok',
          write_id: 'l1',
        };
        const r = await inst.docs.commit(noop);
        await inst.docs.commit({ kind: 'json', id: 'looked', expected_version: 1, body: { n: 2 } });
        pruneAfterLookup = 'looked';
        // A no-op's entry keeps no body and the version it left unchanged is gone: still an object body.
        expect(await docs.commit(noop)).toEqual({ ...r, replayed: true, body: {} });
        expect(pruneAfterLookup).toBeNull();
        expect(
          (await inst.docs.history({ kind: 'json', id: 'looked' })).entries.map((e) => e.version),
        ).toEqual([2]);
      } finally {
        await inst.close();
      }
    });

    it('refuses a no-op with a change, a no-op without a reason or a document, and a commit without exactly one change, writing nothing', async () => {
      const { inst } = await open();
      try {
        const doc = { kind: 'json', id: 'shapes' };
        const refusals: Array<[Parameters<Instance['docs']['commit']>[0], string, RegExp]> = [
          [
            { ...doc, expected_version: 0, noop: true, reason: 'r', body: {} },
            'noop',
            /^a no-op carries no body or patch$/,
          ],
          [
            { ...doc, expected_version: 0, noop: true, reason: 'r', merge_patch: {} },
            'noop',
            /^a no-op carries no body or patch$/,
          ],
          [{ ...doc, expected_version: 0, noop: true }, 'reason', /^a no-op needs a reason$/],
          [{ ...doc, expected_version: 0, noop: true, reason: '' }, 'reason', /^a no-op needs a reason$/],
          [{ ...doc, expected_version: 0 }, 'body', /^give exactly one of body, merge_patch or json_patch/],
          [
            { ...doc, expected_version: 0, body: {}, json_patch: [] },
            'body',
            /^give exactly one of body, merge_patch or json_patch/,
          ],
          [
            { ...doc, expected_version: 0, noop: true, reason: 'nothing to do' },
            'noop',
            /^json\/shapes does not exist: there is nothing to leave unchanged$/,
          ],
        ];
        for (const [input, field, message] of refusals) {
          const err = await rejection(inst.docs.commit(input));
          expect(err.code, JSON.stringify(input)).toBe('INVALID_INPUT');
          expect(err.message, JSON.stringify(input)).toMatch(message);
          expect(err.details, JSON.stringify(input)).toMatchObject({ field });
        }
        expect(await inst.docs.find('json', 'shapes')).toBeNull();
        expect(await head(inst)).toBe(0);
      } finally {
        await inst.close();
      }
    });

    it('an override must be { rules: string[], reason: string }: any other shape is INVALID_INPUT and writes nothing; one that is is kept in history', async () => {
      const { inst } = await open();
      try {
        const doc = { kind: 'json', id: 'overridden' };
        const bad: unknown[] = [
          { rules: 'budget-limit', reason: 'approved' },
          { rules: [1], reason: 'approved' },
          { rules: ['budget-limit', 2], reason: 'approved' },
          { rules: ['budget-limit'] },
          { rules: ['budget-limit'], reason: 5 },
          { rules: ['budget-limit'], reason: '' },
          { reason: 'approved' },
        ];
        for (const override of bad) {
          const err = await rejection(
            inst.docs.commit({ ...doc, expected_version: 0, body: { n: 1 }, override: override as never }),
          );
          expect(err, JSON.stringify(override)).toMatchObject({
            code: 'INVALID_INPUT',
            message: 'override must be { rules: string[], reason: string }',
            details: { field: 'override' },
          });
        }
        expect(await inst.docs.find('json', 'overridden')).toBeNull();
        expect(await head(inst)).toBe(0);
        const override = { rules: ['budget-limit', 'freeze'], reason: 'approved by ops' };
        await inst.docs.commit({ ...doc, expected_version: 0, body: { n: 1 }, override });
        await inst.docs.commit({
          ...doc,
          expected_version: 1,
          body: { n: 2 },
          override: { rules: [], reason: 'none' },
        });
        await inst.docs.commit({ ...doc, expected_version: 2, body: { n: 3 } });
        // What was not given is kept as null.
        expect(
          (await inst.docs.history(doc)).entries.map((e) => [e.override, e.provenance, e.reason, e.write_id]),
        ).toEqual([
          [override, null, null, null],
          [{ rules: [], reason: 'none' }, null, null, null],
          [null, null, null, null],
        ]);
      } finally {
        await inst.close();
      }
    });

    it("a kind's rules are told the versions, role, provenance, override and reason of the write, null for what was not given", async () => {
      const { inst } = await open();
      try {
        const doc = { kind: 'probe-ctx', id: `told-${b.name}` };
        const provenance = { model_id: 'm-1', run_id: 'r-1', step_id: 's-1', prompt_ref: 'p' };
        const override = { rules: ['some-rule'], reason: 'approved' };
        seen.length = 0;
        const r1 = await inst.docs.commit({
          ...doc,
          expected_version: 0,
          body: { a: 1 },
          role: 'planner',
          provenance,
          override,
          reason: 'first plan',
        });
        const r2 = await inst.docs.commit({ ...doc, expected_version: 1, merge_patch: { a: 2 } });
        expect(seen).toStrictEqual([
          {
            ...doc,
            fromVersion: 0,
            toVersion: 1,
            role: 'planner',
            provenance,
            override,
            reason: 'first plan',
          },
          {
            ...doc,
            fromVersion: 1,
            toVersion: 2,
            role: null,
            provenance: null,
            override: null,
            reason: null,
          },
        ]);
        expect([r1.body, r2.body]).toEqual([
          { a: 1, rev: 1 },
          { a: 2, rev: 2 },
        ]);
        // The version field is the store's: the same body again, without it or with another, changes nothing.
        for (const body of [{ a: 2 }, { a: 2, rev: 7 }] as JsonObject[]) {
          expect(await inst.docs.commit({ ...doc, expected_version: 2, body })).toMatchObject({
            version: 2,
            changed: false,
            body: { a: 2, rev: 2 },
          });
        }
        expect((await inst.docs.history(doc)).entries.length).toBe(2);
      } finally {
        await inst.close();
      }
    });

    it('a commit that changes nothing reports the version found and when it was committed, from any store', async () => {
      const { inst, other, advance } = await open();
      try {
        const a = { kind: 'json', id: 'a' };
        const c1 = await inst.docs.commit({ ...a, expected_version: 0, body: { same: true } });
        advance(60_000);
        // Another document with the same body, committed later through the same store.
        await inst.docs.commit({ kind: 'json', id: 'b', expected_version: 0, body: { same: true } });
        advance(60_000);
        const expected = {
          kind: 'json',
          id: 'a',
          version: 1,
          previous_version: 1,
          changed: false,
          noop: false,
          replayed: false,
          content_hash: c1.content_hash,
          write_id: null,
          committed_at: iso(T0),
          body: { same: true },
        };
        // The store that committed it remembers it; the other does not.
        expect(await inst.docs.commit({ ...a, expected_version: 1, body: { same: true } })).toEqual(expected);
        expect(await other.commit({ ...a, expected_version: 1, merge_patch: { same: true } })).toEqual(
          expected,
        );
        expect((await inst.docs.history(a)).entries.length).toBe(1);
      } finally {
        await inst.close();
      }
    });

    it('a store that remembers a version is STATE_CONFLICT when it changes nothing but the document moved on and back (A→B→A)', async () => {
      const { inst, other } = await open();
      try {
        const doc = { kind: 'json', id: 'aba' };
        const v1 = await inst.docs.commit({ ...doc, expected_version: 0, body: { a: 1 } });
        await other.commit({ ...doc, expected_version: 1, body: { a: 2 } });
        const v3 = await other.commit({ ...doc, expected_version: 2, body: { a: 1 } });
        expect(v3.content_hash).toBe(v1.content_hash);
        const events = await head(inst);
        // By the remembered version 1 nothing changes; the document is at version 3.
        const err = await rejection(inst.docs.commit({ ...doc, expected_version: 1, body: { a: 1 } }));
        expect(err).toMatchObject({ code: 'STATE_CONFLICT', details: { expected: 1, actual: 3 } });
        expect(await head(inst)).toBe(events);
        expect(await inst.docs.commit({ ...doc, expected_version: 3, body: { a: 1 } })).toMatchObject({
          version: 3,
          changed: false,
        });
      } finally {
        await inst.close();
      }
    });

    it('a commit on the version the store committed last reads nothing first; one that changes nothing reads once to confirm', async () => {
      const { inst, over } = await open();
      try {
        let reads = 0;
        const docs = over(
          watched(inst.backend, (op) => {
            if (op === 'get') reads++;
          }),
        );
        const doc = { kind: 'json', id: 'remembered' };
        const counts: number[] = [];
        await docs.commit({ ...doc, expected_version: 0, body: { a: 1 } });
        counts.push(reads);
        expect(await docs.commit({ ...doc, expected_version: 1, merge_patch: { b: 2 } })).toMatchObject({
          version: 2,
          body: { a: 1, b: 2 },
        });
        counts.push(reads);
        expect(await docs.commit({ ...doc, expected_version: 2, merge_patch: { b: 2 } })).toMatchObject({
          version: 2,
          changed: false,
        });
        counts.push(reads);
        expect(await docs.commit({ ...doc, expected_version: 2, merge_patch: { c: 3 } })).toMatchObject({
          version: 3,
          body: { a: 1, b: 2, c: 3 },
        });
        counts.push(reads);
        expect(counts).toEqual([1, 1, 2, 2]);
      } finally {
        await inst.close();
      }
    });

    it('a store failure while committing on a remembered version is the caller’s error: not retried, nothing written', async () => {
      const { inst, over } = await open();
      try {
        const dropped = Object.assign(new Error('Connection terminated unexpectedly'), {
          code: 'ECONNRESET',
        });
        let failNext = false;
        const docs = over(
          watched(inst.backend, (op) => {
            if (op === 'commit' && failNext) {
              failNext = false;
              throw dropped;
            }
          }),
        );
        const doc = { kind: 'json', id: 'dropped' };
        await docs.commit({ ...doc, expected_version: 0, body: { a: 1 } });
        failNext = true;
        expect(await rejection(docs.commit({ ...doc, expected_version: 1, merge_patch: { b: 2 } }))).toBe(
          dropped,
        );
        expect(await inst.docs.get(doc)).toMatchObject({ version: 1, body: { a: 1 } });
        // The caller decides to try again; it lands.
        expect(await docs.commit({ ...doc, expected_version: 1, merge_patch: { b: 2 } })).toMatchObject({
          version: 2,
          body: { a: 1, b: 2 },
        });
      } finally {
        await inst.close();
      }
    });
  });
}
