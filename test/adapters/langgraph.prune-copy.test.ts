// Retention and copies of LangGraph threads: prune keeps the newest checkpoints and everything they still
// need (older versions holding their channel values); copyThread makes a thread that resumes as the original.
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import type { CheckpointTuple } from '@langchain/langgraph-checkpoint';
import { describe, expect, it } from 'vitest';
import { AgentStateSaver } from '../../src/adapters/langgraph/index.js';
import { backendsForThisFile } from '../helpers/backends.js';

const State = Annotation.Root({
  count: Annotation<number>({ reducer: (_a, b) => b, default: () => 0 }),
  log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
  // Written once by the input and never again: its value lives in the thread's first versions.
  brief: Annotation<string>({ reducer: (_a, b) => b, default: () => '' }),
});

function counter(saver: AgentStateSaver, until: number) {
  return new StateGraph(State)
    .addNode('step', (s) => ({ count: s.count + 1, log: [`step ${s.count + 1}`] }))
    .addEdge(START, 'step')
    .addConditionalEdges('step', (s) => (s.count >= until ? END : 'step'))
    .compile({ checkpointer: saver });
}

async function all(saver: AgentStateSaver, thread: string): Promise<CheckpointTuple[]> {
  const out: CheckpointTuple[] = [];
  for await (const t of saver.list({ configurable: { thread_id: thread } })) out.push(t);
  return out;
}

for (const backend of await backendsForThisFile()) {
  describe(`AgentStateSaver on ${backend.name}`, () => {
    it('prunes old checkpoints but keeps every version a kept one still needs', async () => {
      const inst = await backend.open();
      try {
        const saver = new AgentStateSaver(inst);
        const graph = counter(saver, 10);
        const config = { configurable: { thread_id: 'p' } };
        await graph.invoke({ brief: 'count to ten' }, config);
        const before = await all(saver, 'p');
        expect(before).toHaveLength(12);
        // `brief` was stored by the input checkpoint: keeping the newest 3 keeps it too.
        const r = await saver.prune('p', { keep: 3 });
        const after = await all(saver, 'p');
        expect(after.length).toBeGreaterThanOrEqual(3);
        expect(after.length + r.removed).toBeLessThanOrEqual(12);
        for (const t of after.slice(0, 3)) {
          const original = before.find((b) => b.checkpoint.id === t.checkpoint.id)!;
          expect(t).toEqual(original);
        }
        expect((await graph.getState(config)).values).toEqual({
          count: 10,
          brief: 'count to ten',
          log: Array.from({ length: 10 }, (_, i) => `step ${i + 1}`),
        });
        // A saver that stores old values again every 4 checkpoints: prune can take what is older.
        const inst2 = await backend.open();
        try {
          const s2 = new AgentStateSaver(inst2, { restoreAfter: 4 });
          await counter(s2, 10).invoke({ count: 0 }, { configurable: { thread_id: 'q' } });
          const b2 = await all(s2, 'q');
          const r2 = await s2.prune('q', { keep: 3 });
          const a2 = await all(s2, 'q');
          expect(a2.map((t) => t.checkpoint.id)).toEqual(b2.slice(0, a2.length).map((t) => t.checkpoint.id));
          expect(r2.removed).toBeGreaterThanOrEqual(12 - 3 - 4);
          expect(a2).toEqual(b2.slice(0, a2.length));
          // The thread goes on from the kept head.
          await counter(s2, 12).invoke({ log: ['again'] }, { configurable: { thread_id: 'q' } });
          expect((await counter(s2, 12).getState({ configurable: { thread_id: 'q' } })).values.count).toBe(
            12,
          );
        } finally {
          await inst2.close();
        }
      } finally {
        await inst.close();
      }
    });

    it('copies a thread: same history, and the copy goes its own way', async () => {
      const inst = await backend.open();
      try {
        const saver = new AgentStateSaver(inst);
        const graph = counter(saver, 5);
        await graph.invoke({ brief: 'five' }, { configurable: { thread_id: 'src' } });
        const { checkpoints } = await saver.copyThread('src', 'dst');
        const src = await all(saver, 'src');
        const dst = await all(saver, 'dst');
        expect(checkpoints).toBe(src.length);
        const strip = (t: CheckpointTuple) => ({ ...t, config: undefined, parentConfig: undefined });
        expect(dst.map(strip)).toEqual(src.map(strip));
        expect(dst.every((t) => t.config.configurable?.thread_id === 'dst')).toBe(true);
        await counter(saver, 7).invoke({ log: ['again'] }, { configurable: { thread_id: 'dst' } });
        expect((await graph.getState({ configurable: { thread_id: 'dst' } })).values.count).toBe(7);
        expect((await graph.getState({ configurable: { thread_id: 'src' } })).values.count).toBe(5);
        await expect(saver.copyThread('src', 'dst')).rejects.toMatchObject({ code: 'STATE_CONFLICT' });
        // deleteThread removes the copy and leaves the source.
        await saver.deleteThread('dst');
        expect(await all(saver, 'dst')).toEqual([]);
        expect(await all(saver, 'src')).toHaveLength(src.length);
      } finally {
        await inst.close();
      }
    });
  });
}
