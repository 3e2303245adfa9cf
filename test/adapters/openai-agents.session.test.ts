// AgentStateSession: the OpenAI Agents SDK's Session contract (the same answers as the SDK's own
// MemorySession), used by a real run, durable across instances, and safe for two processes at once.
import type { AgentInputItem } from '@openai/agents';
import { Agent, MemorySession, run, setTracingDisabled } from '@openai/agents';
import { assistantMessage, modelResponse, ScriptedModel } from '@openai/agents-core/testing';
import { describe, expect, it } from 'vitest';
import { AgentStateSession } from '../../src/adapters/openai-agents/index.js';
import { backendsForThisFile } from '../helpers/backends.js';
import { race } from '../helpers/racers.js';

setTracingDisabled(true);

const WRITER = new URL('../fixtures/session-writer.mjs', import.meta.url).pathname;
const msg = (content: string): AgentInputItem => ({ type: 'message', role: 'user', content });

/** Session writers, started together behind the gate (test/helpers/racers.ts). */
function writers(argsOf: string[][]): Promise<Array<{ worker: string; added: number }>> {
  return race(argsOf.map((args) => ({ script: WRITER, args, label: `writer ${args[1]}` })));
}

for (const backend of await backendsForThisFile()) {
  describe(`AgentStateSession on ${backend.name}`, () => {
    it('answers every call as the SDK’s MemorySession does', async () => {
      const inst = await backend.open();
      try {
        const ours = new AgentStateSession(inst, { sessionId: 's1' });
        const theirs = new MemorySession({ sessionId: 's1' });
        const steps: Array<(s: AgentStateSession | MemorySession) => Promise<unknown>> = [
          (s) => s.getSessionId(),
          (s) => s.getItems(),
          (s) => s.popItem(),
          (s) => s.addItems([msg('a'), msg('b')]),
          (s) => s.addItems([]),
          (s) => s.addItems([msg('c')]),
          (s) => s.getItems(),
          (s) => s.getItems(2),
          (s) => s.getItems(0),
          (s) => s.getItems(10),
          // Limits as MemorySession reads them: a fraction rounds up, Infinity is all, 0 or less is none.
          (s) => s.getItems(1.5),
          (s) => s.getItems(0.5),
          (s) => s.getItems(Number.POSITIVE_INFINITY),
          (s) => s.getItems(-1),
          (s) => s.popItem(),
          (s) => s.getItems(),
          (s) => s.addItems([msg('d')]),
          (s) => s.popItem(),
          (s) => s.popItem(),
          (s) => s.getItems(1),
          (s) => s.clearSession(),
          (s) => s.getItems(),
          (s) => s.popItem(),
          (s) => s.addItems([msg('e')]),
          (s) => s.getItems(),
        ];
        for (const [i, step] of steps.entries()) {
          expect(await step(ours), `step ${i}`).toEqual(await step(theirs));
        }
        // Durable: another handle on the instance sees the same session.
        const again = await backend.open(undefined, {});
        await again.close();
        expect(await new AgentStateSession(inst, { sessionId: 's1' }).getItems()).toEqual([msg('e')]);
        // And every item is an event of the session's stream; pops and clears are recorded too.
        const types = (await inst.events.read({ limit: 1000 })).map((e) => e.type);
        expect(types.filter((t) => t === 'session_item_added')).toHaveLength(5);
        expect(types.filter((t) => t === 'session_item_popped')).toHaveLength(3);
        expect(types.filter((t) => t === 'session_cleared')).toHaveLength(1);
      } finally {
        await inst.close();
      }
    });

    it('takes any session id a user system produces, each its own session, through the SDK’s runner', async () => {
      const inst = await backend.open();
      try {
        const ids = [
          'auth0|abc',
          'ana+agents@example.com',
          'dGVzdA==',
          'ticket#42',
          'a b',
          'a_20b',
          '_a_20b',
          'a%20b',
          'ünïcödé — 会话 🙂',
          '_leading',
          'x'.repeat(152),
          'y'.repeat(400),
          `${'y'.repeat(399)}z`,
          'line\nbreak\ttab',
          'user-42',
        ];
        const model = new ScriptedModel(ids.map((id) => modelResponse([assistantMessage(`hello ${id}`)])));
        const agent = new Agent({ name: 'assistant', model });
        for (const id of ids) {
          const result = await run(agent, `I am ${id}`, {
            session: new AgentStateSession(inst, { sessionId: id }),
          });
          expect(result.finalOutput).toBe(`hello ${id}`);
        }
        // Each id, on a new handle, finds its own two items and no one else's.
        const streams = new Set<string>();
        for (const id of ids) {
          const session = new AgentStateSession(inst, { sessionId: id });
          expect(await session.getSessionId()).toBe(id);
          const items = await session.getItems();
          expect(JSON.stringify(items)).toContain(`I am ${JSON.stringify(id).slice(1, -1)}`);
          expect(items).toHaveLength(2);
          streams.add(session.stream);
        }
        expect(streams.size).toBe(ids.length);
        // An id that always worked keeps its stream and document, so sessions stored before stay readable.
        expect(new AgentStateSession(inst, { sessionId: 'user-42' }).stream).toBe('session:user-42');
        expect(new AgentStateSession(inst, { sessionId: 'auth0|abc' }).stream).toBe('session:_auth0_7Cabc');
        expect((await inst.events.verify()).problems).toEqual([]);
      } finally {
        await inst.close();
      }
    });

    it('refuses, at construction, only a session id no store can keep; getItems(NaN) is refused', async () => {
      const inst = await backend.open();
      try {
        for (const sessionId of ['', 42, 'a\u0000b', 'lone \ud800', 'z'.repeat(10_001)]) {
          expect(
            () => new AgentStateSession(inst, { sessionId: sessionId as string }),
            String(sessionId),
          ).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', details: { field: 'sessionId' } }));
        }
        expect(() => new AgentStateSession(inst, { actor: 'bad\nactor' })).toThrow(
          expect.objectContaining({ code: 'INVALID_INPUT' }),
        );
        const session = new AgentStateSession(inst, { sessionId: 'limits' });
        await expect(session.getItems(Number.NaN)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
        await expect(session.getItems('2' as unknown as number)).rejects.toMatchObject({
          code: 'INVALID_INPUT',
        });
        expect(await inst.events.head()).toBeNull();
      } finally {
        await inst.close();
      }
    });

    it('carries a conversation across runs of an agent (a scripted model, offline)', async () => {
      const inst = await backend.open('conversation');
      try {
        const model = new ScriptedModel([
          modelResponse([assistantMessage('Hello Ana.')]),
          modelResponse([assistantMessage('You are Ana.')]),
        ]);
        const agent = new Agent({ name: 'assistant', model });
        await run(agent, 'I am Ana.', { session: new AgentStateSession(inst, { sessionId: 'chat' }) });
        // A new process would open the instance again: the session comes back from the store.
        const reopened = await backend.open('conversation');
        try {
          const result = await run(agent, 'Who am I?', {
            session: new AgentStateSession(reopened, { sessionId: 'chat' }),
          });
          expect(result.finalOutput).toBe('You are Ana.');
        } finally {
          await reopened.close();
        }
        const input = model.lastCall?.request.input as AgentInputItem[];
        expect(input.map((i) => ('content' in i ? JSON.stringify(i.content) : i.type)).join(' ')).toMatch(
          /I am Ana.*Hello Ana.*Who am I/,
        );
        const items = await new AgentStateSession(inst, { sessionId: 'chat' }).getItems();
        expect(items).toHaveLength(4);
      } finally {
        await inst.close();
      }
    });

    it('loses no item and keeps each writer’s order when two processes add 500 items each', async () => {
      const key = `two-${backend.name}`;
      const inst = await backend.open(key);
      const args = backend.cliArgs(key);
      const dir = args[1]!;
      const url = args[3];
      const results = await writers(['p1', 'p2'].map((w) => [dir, w, '500', ...(url ? [url] : [])]));
      expect(results.map((r) => r.added)).toEqual([500, 500]);
      try {
        const items = (await new AgentStateSession(inst, { sessionId: 'shared-session' }).getItems()).map(
          (i) => (i as { content: string }).content,
        );
        expect(items).toHaveLength(1000);
        for (const w of ['p1', 'p2']) {
          const mine = items.filter((c) => c.startsWith(`${w}:`));
          expect(mine).toEqual(Array.from({ length: 500 }, (_, n) => `${w}:${n}`));
        }
        // A pair added in one call stays together.
        for (const [i, c] of items.entries()) {
          const [w, n] = c.split(':') as [string, string];
          if (Number(n) % 10 === 9 && Number(n) < 499) expect(items[i + 1]).toBe(`${w}:${Number(n) + 1}`);
        }
      } finally {
        await inst.close();
      }
    });

    it('stores items as JSON.stringify writes them: a Date, a URL; a bigint or a Map is refused', async () => {
      const inst = await backend.open();
      try {
        const session = new AgentStateSession(inst, { sessionId: 'values' });
        const item = {
          ...msg('when?'),
          providerData: { at: new Date(Date.UTC(2026, 0, 2)), link: new URL('https://example.test/x') },
        } as AgentInputItem;
        await session.addItems([item]);
        expect(await session.getItems()).toEqual([
          {
            ...msg('when?'),
            providerData: { at: '2026-01-02T00:00:00.000Z', link: 'https://example.test/x' },
          },
        ]);
        for (const providerData of [{ big: 10n }, { m: new Map([['a', 1]]) }]) {
          const bad = { ...msg('x'), providerData } as AgentInputItem;
          await expect(session.addItems([msg('ok'), bad])).rejects.toMatchObject({ code: 'INVALID_INPUT' });
        }
        expect(await session.getItems()).toHaveLength(1);
        expect((await inst.events.verify()).problems).toEqual([]);
      } finally {
        await inst.close();
      }
    });
  });
}
