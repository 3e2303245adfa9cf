// AgentStateSessionStore: the Claude Agent SDK's SessionStore contract (claude-agent-sdk.cases.ts, the SDK's
// docs as tests; the SDK ships no conformance suite) on every backend, and what the store promises beyond
// it: an injected clock's mtime, hostile input refused with nothing written, a retry after a crash, many
// writers on one session (two handles, two processes), the log left verifiable.
import { describe, expect, it } from 'vitest';
import { AgentStateSessionStore } from '../../src/adapters/claude-agent-sdk/index.js';
import type { Instance } from '../../src/index.js';
import { backendsForThisFile } from '../helpers/backends.js';
import { race } from '../helpers/racers.js';
import { type Entry, type Fold, line, type Summary, sessionStoreCases } from './claude-agent-sdk.cases.js';

const WRITER = new URL('../fixtures/claude-session-writer.mjs', import.meta.url).pathname;

/**
 * A stand-in for the SDK's foldSessionSummary (set-once and last-wins fields, as its docs describe), so the
 * store's part, keeping whatever the fold returns, is tested without the SDK; docs/claude-agent-sdk.md says
 * how the real one was run through the same cases.
 */
const fold: Fold = (prev, key, entries, options) => {
  const data: Record<string, unknown> = { ...(prev?.data ?? {}) };
  for (const e of entries) {
    if (data.createdAt === undefined && typeof e.timestamp === 'string')
      data.createdAt = Date.parse(e.timestamp);
    if (data.cwd === undefined && typeof e.cwd === 'string') data.cwd = e.cwd;
    for (const f of ['customTitle', 'aiTitle', 'gitBranch', 'tag'])
      if (typeof e[f] === 'string') data[f] = e[f];
    if (e.type === 'user') data.lastPrompt = JSON.stringify(e.message);
  }
  return { sessionId: key.sessionId, mtime: options?.mtime ?? prev?.mtime ?? 0, data };
};

for (const backend of await backendsForThisFile()) {
  describe(`AgentStateSessionStore on ${backend.name}`, () => {
    describe('the SessionStore contract', () => {
      sessionStoreCases({
        open: async () => {
          const inst = await backend.open();
          return {
            store: new AgentStateSessionStore(inst, { foldSessionSummary: fold }),
            fold,
            close: async () => {
              // Every case leaves a log that verifies: deletes and appends never rewrite an event.
              expect((await inst.events.verify()).problems).toEqual([]);
              await inst.close();
            },
          };
        },
      });
    });

    const withInstance =
      (fn: (inst: Instance) => Promise<void>, extra: Parameters<typeof backend.open>[1] = {}) =>
      async () => {
        const inst = await backend.open(undefined, extra);
        try {
          await fn(inst);
        } finally {
          await inst.close();
        }
      };

    let now = Date.UTC(2026, 0, 1);
    it(
      'mtime is the instance clock’s time of the last main append (an injected clock), the summary’s too',
      withInstance(
        async (inst) => {
          const s = new AgentStateSessionStore(inst, { foldSessionSummary: fold });
          const key = { projectKey: 'p', sessionId: 's' };
          now = Date.UTC(2026, 0, 1);
          await s.append(key, [line('a')]);
          expect(await s.listSessions('p')).toEqual([{ sessionId: 's', mtime: Date.UTC(2026, 0, 1) }]);
          now += 60_000;
          await s.append(key, [line('b')]);
          expect(await s.listSessions('p')).toEqual([
            { sessionId: 's', mtime: Date.UTC(2026, 0, 1) + 60_000 },
          ]);
          expect((await s.listSessionSummaries!('p'))[0]?.mtime).toBe(Date.UTC(2026, 0, 1) + 60_000);
          // A clock set back never moves mtime back.
          now -= 3_600_000;
          await s.append(key, [line('c')]);
          expect((await s.listSessions('p'))[0]?.mtime).toBe(Date.UTC(2026, 0, 1) + 60_000);
          // Without foldSessionSummary there is no listSessionSummaries: the SDK then loads each session.
          expect(new AgentStateSessionStore(inst).listSessionSummaries).toBeUndefined();
        },
        { clock: () => now },
      ),
    );

    it(
      'refuses hostile input with INVALID_INPUT and writes nothing',
      withInstance(async (inst) => {
        const s = new AgentStateSessionStore(inst, { foldSessionSummary: fold });
        const key = { projectKey: 'p', sessionId: 's' };
        const invalid = expect.objectContaining({ code: 'INVALID_INPUT' });
        const bad: unknown[] = [
          'not a list',
          null,
          [line('ok'), 'a string'],
          [line('ok'), null],
          [line('ok'), [1, 2]],
          [{ uuid: 'no-type' }],
          [{ type: 42 }],
          [JSON.parse('{"type":"user","__proto__":{"polluted":true}}')],
          [{ type: 'user', nested: JSON.parse('{"constructor":{"prototype":{"polluted":true}}}') }],
          [{ type: 'user', big: 'x'.repeat(2 * 1024 * 1024) }],
          [{ type: 'user', n: 10n }],
          [{ type: 'user', bad: 'lone \ud800' }],
        ];
        for (const [i, entries] of bad.entries())
          await expect(s.append(key, entries as Entry[]), `bad entries ${i}`).rejects.toEqual(invalid);
        const keys: unknown[] = [
          null,
          'p/s',
          { projectKey: 'p' },
          { projectKey: 'p', sessionId: '' },
          { projectKey: '', sessionId: 's' },
          { projectKey: 'p', sessionId: 's', subpath: '' },
          { projectKey: 'p', sessionId: 42 },
          { projectKey: 'p', sessionId: 'a\u0000b' },
          { projectKey: 'p', sessionId: 'z'.repeat(10_001) },
        ];
        for (const k of keys) {
          await expect(s.append(k as typeof key, [line('x')]), JSON.stringify(k)).rejects.toEqual(invalid);
          await expect(s.load(k as typeof key)).rejects.toEqual(invalid);
          await expect(s.delete(k as typeof key)).rejects.toEqual(invalid);
        }
        await expect(s.listSessions(42 as unknown as string)).rejects.toEqual(invalid);
        await expect(s.listSubkeys({ projectKey: 'p' } as typeof key)).rejects.toEqual(invalid);
        expect(() => new AgentStateSessionStore(inst, { actor: 'bad\nactor' })).toThrow(invalid);
        // Nothing was written: no event, no document, no pollution.
        expect(await inst.events.head()).toBeNull();
        expect(await inst.docs.list()).toEqual([]);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        expect(await s.load(key)).toBeNull();
      }),
    );

    it(
      'a retry after a crash between the control document and the entries stores each entry once',
      withInstance(async (inst) => {
        const s = new AgentStateSessionStore(inst);
        const key = { projectKey: 'p', sessionId: 's' };
        const batch = [line('a'), line('b')];
        // The process dies after the session's document is committed, before its entries are: a fault
        // injected in the one call, not a mock of the storage.
        const appendMany = inst.events.appendMany.bind(inst.events);
        inst.events.appendMany = async (inputs) => {
          if (inputs[0]?.type === 'claude_session_entry') throw new Error('crash');
          return appendMany(inputs);
        };
        await expect(s.append(key, batch)).rejects.toThrow('crash');
        inst.events.appendMany = appendMany;
        expect(await s.load(key)).toEqual([]);
        // The SDK retries the batch; one retry also landed twice (its answer was lost).
        await s.append(key, batch);
        await s.append(key, [...batch, line('c')]);
        expect((await s.load(key))?.map((e) => e.uuid)).toEqual([
          ...batch.map((e) => e.uuid),
          expect.any(String),
        ]);
        expect((await s.load(key))?.length).toBe(3);
        expect((await s.listSessions('p')).map((x) => x.sessionId)).toEqual(['s']);
      }),
    );

    it('keeps every entry once when two handles append to one session at once, the same uuids too', async () => {
      const key = `handles-${backend.name}`;
      const a = await backend.open(key);
      const b = await backend.open(key);
      try {
        const stores = [
          new AgentStateSessionStore(a, { foldSessionSummary: fold }),
          new AgentStateSessionStore(b, { foldSessionSummary: fold }),
        ];
        const session = { projectKey: 'p', sessionId: 'shared' };
        await Promise.all(
          stores.map(async (s, w) => {
            for (let n = 0; n < 40; n++) {
              const sub = n % 4 === 0 ? { ...session, subpath: `subagents/agent-${w}-${n}` } : session;
              await s.append(sub, [line(`${w}:${n}`, `${w}:${n}`), line(`shared:${n}`, `shared:${n}`)]);
            }
          }),
        );
        const loaded = (await stores[0]!.load(session))!.map((e) => e.uuid!);
        expect(new Set(loaded).size).toBe(loaded.length);
        const expected = [0, 1].flatMap((w) =>
          Array.from({ length: 40 }, (_, n) => n)
            .filter((n) => n % 4 !== 0)
            .map((n) => `${w}:${n}`),
        );
        expect(loaded.filter((u) => !u.startsWith('shared')).sort()).toEqual(expected.sort());
        expect(loaded.filter((u) => u.startsWith('shared')).length).toBe(30);
        // Each writer's entries in its own order.
        for (const w of [0, 1]) {
          const mine = loaded.filter((u) => u.startsWith(`${w}:`)).map((u) => Number(u.split(':')[1]));
          expect(mine).toEqual([...mine].sort((x, y) => x - y));
        }
        expect((await stores[1]!.listSubkeys(session)).length).toBe(20);
        expect((await stores[1]!.listSessionSummaries!('p')).map((x: Summary) => x.sessionId)).toEqual([
          'shared',
        ]);
        expect((await a.events.verify()).problems).toEqual([]);
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('loses no entry and doubles none when two processes append 150 batches each, one uuid in every batch shared', async () => {
      const key = `procs-${backend.name}`;
      const inst = await backend.open(key);
      const args = backend.cliArgs(key);
      const dir = args[1]!;
      const url = args[3];
      try {
        const results = await race<{ worker: string; appended: number }>(
          ['p1', 'p2'].map((w) => ({
            script: WRITER,
            args: [dir, w, '150', ...(url ? [url] : [])],
            label: `writer ${w}`,
          })),
        );
        expect(results.map((r) => r.appended)).toEqual([150, 150]);
        const loaded = (await new AgentStateSessionStore(inst).load({
          projectKey: 'race',
          sessionId: 'shared-session',
        }))!.map((e) => e.uuid!);
        expect(loaded).toHaveLength(2 * 150 * 2 + 150);
        expect(new Set(loaded).size).toBe(loaded.length);
        for (const w of ['p1', 'p2']) {
          // Each process's batches whole and in its order: a, then b, of batch n before batch n + 1.
          const mine = loaded.filter((u) => u.startsWith(`${w}:`));
          expect(mine).toEqual(Array.from({ length: 150 }, (_, n) => [`${w}:${n}:a`, `${w}:${n}:b`]).flat());
        }
        expect(await new AgentStateSessionStore(inst).listSessions('race')).toEqual([
          { sessionId: 'shared-session', mtime: expect.any(Number) },
        ]);
        expect((await inst.events.verify()).problems).toEqual([]);
      } finally {
        await inst.close();
      }
    });

    it('is durable: another handle on the instance loads, lists and deletes the same sessions', async () => {
      const key = `durable-${backend.name}`;
      const first = await backend.open(key);
      const entries = [line('kept'), { type: 'summary', summary: 'S', leafUuid: 'x' }];
      try {
        await new AgentStateSessionStore(first).append(
          { projectKey: 'p', sessionId: 's', subpath: 'subagents/agent-1' },
          entries,
        );
        await new AgentStateSessionStore(first).append({ projectKey: 'p', sessionId: 's' }, entries);
      } finally {
        await first.close();
      }
      const again = await backend.open(key);
      try {
        const s = new AgentStateSessionStore(again);
        expect(await s.load({ projectKey: 'p', sessionId: 's' })).toEqual(entries);
        expect(await s.listSubkeys({ projectKey: 'p', sessionId: 's' })).toEqual(['subagents/agent-1']);
        await s.delete({ projectKey: 'p', sessionId: 's' });
        expect(await s.listSessions('p')).toEqual([]);
        // The deletion is on record, and every entry event is still in the log.
        const types = (await again.events.read({ limit: 1000 })).map((e) => e.type);
        expect(types.filter((t) => t === 'claude_session_entry')).toHaveLength(4);
        expect(types.filter((t) => t === 'claude_session_deleted')).toHaveLength(1);
        expect((await again.events.verify()).problems).toEqual([]);
      } finally {
        await again.close();
      }
    });
  });
}
