// AgentStateSaver beyond the official contract: every checkpoint in the audit log, pending writes that
// race without loss, hostile input refused with typed errors and nothing written.
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import { describe, expect, it } from 'vitest';
import { AgentStateSaver } from '../../src/adapters/langgraph/index.js';
import { isAgentStateError } from '../../src/index.js';
import { backendsForThisFile } from '../helpers/backends.js';

const State = Annotation.Root({
  log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

for (const backend of await backendsForThisFile()) {
  describe(`AgentStateSaver on ${backend.name}`, () => {
    it('appends an event per checkpoint (thread, id, parent, step, node) in the commit that stores it', async () => {
      const inst = await backend.open();
      try {
        const graph = new StateGraph(State)
          .addNode('plan', () => ({ log: ['planned'] }))
          .addNode('act', () => ({ log: ['acted'] }))
          .addEdge(START, 'plan')
          .addEdge('plan', 'act')
          .addEdge('act', END)
          .compile({ checkpointer: new AgentStateSaver(inst) });
        await graph.invoke({ log: [] }, { configurable: { thread_id: 'run-1' } });
        const events = await inst.events.read({ type: 'langgraph_checkpoint' });
        const data = events.map((e) => e.data as Record<string, unknown>);
        expect(data.map((d) => [d.source, d.step, d.nodes])).toEqual([
          ['input', -1, []],
          ['loop', 0, []],
          ['loop', 1, ['plan']],
          ['loop', 2, ['act']],
        ]);
        for (const [i, d] of data.entries()) {
          expect(d.thread_id).toBe('run-1');
          expect(d.checkpoint_ns).toBe('');
          expect(d.parent_checkpoint_id).toBe(i === 0 ? null : data[i - 1]!.checkpoint_id);
        }
        // Each event sits next to the state_committed of its version, on the document's stream.
        const stream = events[0]!.stream;
        expect(stream).toBe('doc:langgraph-thread/run-1');
        const types = (await inst.events.read({ stream })).map((e) => e.type);
        expect(types.filter((t) => t === 'state_committed')).toHaveLength(4);
        const writes = await inst.events.read({ type: 'langgraph_writes' });
        expect(writes.length).toBeGreaterThan(0);
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
      }
    });

    it('keeps every pending write of tasks writing to one checkpoint at once', async () => {
      const inst = await backend.open();
      try {
        const saver = new AgentStateSaver(inst);
        const config = await saver.put(
          { configurable: { thread_id: 'w', checkpoint_ns: '' } },
          { ...emptyCheckpoint(), id: uuid6(-1) },
          { source: 'loop', step: 0, parents: {} },
          {},
        );
        const other = new AgentStateSaver(inst);
        await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            (i % 2 ? saver : other).putWrites(
              config,
              [['out', i]],
              `task-${String(i).padStart(2, '0')}`,
              `~p${i}`,
            ),
          ),
        );
        const t = await saver.getTuple(config);
        expect(t?.pendingWrites?.map((w) => w[2]).sort((a, b) => Number(a) - Number(b))).toEqual(
          Array.from({ length: 20 }, (_, i) => i),
        );
        // In writesSortKey order: by task path first.
        const paths = Array.from({ length: 20 }, (_, i) => `~p${i}`).sort();
        expect(t?.pendingWrites?.map((w) => `~p${w[2]}`)).toEqual(paths);
      } finally {
        await inst.close();
      }
    });

    it('refuses hostile input with typed errors and writes nothing', async () => {
      const inst = await backend.open();
      try {
        const saver = new AgentStateSaver(inst);
        const cp = { ...emptyCheckpoint(), id: uuid6(-1) };
        const md = { source: 'input' as const, step: -1, parents: {} };
        const refusals = [
          saver.put({}, cp, md, {}),
          saver.put({ configurable: { thread_id: 42 } }, cp, md, {}),
          saver.put({ configurable: { thread_id: 't', checkpoint_ns: { x: 1 } } }, cp, md, {}),
          saver.put({ configurable: { thread_id: 't' } }, { ...cp, id: '' }, md, {}),
          saver.put(
            { configurable: { thread_id: 't' } },
            {
              ...cp,
              channel_values: JSON.parse('{"__proto__": 1}'),
              channel_versions: JSON.parse('{"__proto__": 1}'),
            },
            md,
            JSON.parse('{"__proto__": 1}'),
          ),
          saver.putWrites({ configurable: { thread_id: 't' } }, [['a', 1]], 'task'),
          saver.deleteThread(''),
        ];
        for (const [i, r] of (await Promise.allSettled(refusals)).entries()) {
          expect(r.status, `refusal ${i}`).toBe('rejected');
          expect(isAgentStateError((r as PromiseRejectedResult).reason, 'INVALID_INPUT')).toBe(true);
        }
        // A thread id that is no plain document id still works (hashed id), and reads back exactly.
        const odd = `a#b%c\u0001/../${'x'.repeat(300)}`;
        const c = await saver.put({ configurable: { thread_id: odd } }, cp, md, {});
        expect((await saver.getTuple({ configurable: { thread_id: odd } }))?.config).toEqual(c);
        expect(await saver.getTuple({ configurable: { thread_id: 't' } })).toBeUndefined();
        expect((await inst.docs.list({ kind: 'langgraph-thread' })).map((d) => d.id)).toHaveLength(1);
        // A checkpoint id is never overwritten with other content.
        await expect(
          saver.put({ configurable: { thread_id: odd } }, { ...cp, ts: 'other' }, md, {}),
        ).rejects.toMatchObject({
          code: 'STATE_CONFLICT',
        });
        // The same checkpoint again is a retry, not a conflict.
        await expect(saver.put({ configurable: { thread_id: odd } }, cp, md, {})).resolves.toEqual(c);
      } finally {
        await inst.close();
      }
    });
  });
}
