// Two LangGraph runs on one thread at once: the official PostgresSaver lets both extend the thread (a
// silent fork, langgraph #8796); AgentStateSaver saves one and refuses the other with a typed conflict,
// while LangGraph's own time travel (invoke or updateState from an older checkpoint) still branches.
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { describe, expect, it } from 'vitest';
import { AgentStateSaver, ThreadConflictError } from '../../src/adapters/langgraph/index.js';
import { isAgentStateError } from '../../src/index.js';
import { backendsForThisFile } from '../helpers/backends.js';
import { forks, history } from '../helpers/langgraph.js';
import { adminQuery, PG_URL, postgresForThisFile } from '../helpers/postgres.js';

const State = Annotation.Root({
  log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

/** Resolves once `n` callers are waiting (or after `ms`, when the other run never gets there). */
function barrier(n: number, ms = 1500): () => Promise<void> {
  let waiting = 0;
  let release!: () => void;
  const all = new Promise<void>((r) => {
    release = r;
  });
  return async () => {
    if (++waiting >= n) release();
    await Promise.race([all, new Promise((r) => setTimeout(r, ms))]);
  };
}

function buildGraph(saver: BaseCheckpointSaver, meet: () => Promise<void>, label: string) {
  return new StateGraph(State)
    .addNode('work', async () => {
      await meet();
      return { log: [`work by ${label}`] };
    })
    .addEdge(START, 'work')
    .addEdge('work', END)
    .compile({ checkpointer: saver });
}

/** Seeds a thread with one run, then runs two graphs (two savers, as two processes would) on it at once. */
async function raceTwoRuns(saverA: BaseCheckpointSaver, saverB: BaseCheckpointSaver, thread: string) {
  const config = { configurable: { thread_id: thread } };
  await buildGraph(saverA, async () => {}, 'seed').invoke({ log: ['seed'] }, config);
  const meet = barrier(2);
  const results = await Promise.allSettled([
    buildGraph(saverA, meet, 'A').invoke({ log: ['A'] }, config),
    buildGraph(saverB, meet, 'B').invoke({ log: ['B'] }, config),
  ]);
  return results;
}

const pgSchema = await postgresForThisFile();

describe('the official PostgresSaver', () => {
  it.skipIf(pgSchema === null)('forks a thread when two runs extend it at once', async () => {
    const schema = `${pgSchema}_official`;
    await adminQuery(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    const a = PostgresSaver.fromConnString(PG_URL, { schema });
    const b = PostgresSaver.fromConnString(PG_URL, { schema });
    try {
      await a.setup();
      const results = await raceTwoRuns(a, b, 'thread-1');
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
      const fork = forks(await history(a, 'thread-1'));
      expect(fork.length).toBeGreaterThan(0);
    } finally {
      await a.end();
      await b.end();
      await adminQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });
});

for (const backend of await backendsForThisFile()) {
  describe(`AgentStateSaver on ${backend.name}`, () => {
    it('saves one of two runs racing on a thread and refuses the other: no fork', async () => {
      const inst = await backend.open('race');
      const other = await backend.open('race');
      try {
        const results = await raceTwoRuns(new AgentStateSaver(inst), new AgentStateSaver(other), 'thread-1');
        const rejected = results.filter((r) => r.status === 'rejected');
        expect(rejected).toHaveLength(1);
        const err = (rejected[0] as PromiseRejectedResult).reason;
        expect(isAgentStateError(err, 'STATE_CONFLICT')).toBe(true);
        expect(err).toBeInstanceOf(ThreadConflictError);
        const tuples = await history(new AgentStateSaver(inst), 'thread-1');
        expect(forks(tuples)).toEqual([]);
        // The thread holds the seed run and exactly one of the two racers.
        const last = tuples[0]!.checkpoint.channel_values.log as string[];
        expect(last.slice(0, 2)).toEqual(['seed', 'work by seed']);
        expect([
          ['A', 'work by A'],
          ['B', 'work by B'],
        ]).toContainEqual(last.slice(2));
      } finally {
        await inst.close();
        await other.close();
      }
    });

    it('keeps time travel: a run or an update from an older checkpoint branches as LangGraph intends', async () => {
      const inst = await backend.open();
      try {
        const saver = new AgentStateSaver(inst);
        const graph = buildGraph(saver, async () => {}, 'g');
        const config = { configurable: { thread_id: 't' } };
        await graph.invoke({ log: ['one'] }, config);
        await graph.invoke({ log: ['two'] }, config);
        const states = [];
        for await (const s of graph.getStateHistory(config)) states.push(s);
        // The state after the first run: replay from it with new input, and update it.
        const after1 = states.find((s) => (s.values.log as string[]).join() === 'one,work by g')!;
        const replayed = await graph.invoke({ log: ['three'] }, after1.config);
        expect(replayed.log).toEqual(['one', 'work by g', 'three', 'work by g']);
        const updated = await graph.updateState(after1.config, { log: ['edited'] });
        const at = await graph.getState(updated);
        expect(at.values.log).toEqual(['one', 'work by g', 'edited']);
        // Both branches hang off the checkpoint after the first run; the latest is the update.
        const tuples = await history(saver, 't');
        expect(forks(tuples)).toEqual([after1.config.configurable?.checkpoint_id]);
        expect((await graph.getState(config)).values.log).toEqual(['one', 'work by g', 'edited']);
        // And a new run on the thread continues from that latest checkpoint.
        expect((await graph.invoke({ log: ['four'] }, config)).log).toEqual([
          'one',
          'work by g',
          'edited',
          'four',
          'work by g',
        ]);
      } finally {
        await inst.close();
      }
    });
  });
}
