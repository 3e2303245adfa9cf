// A small LangGraph graph with deterministic nodes, checkpointed in agentstate: plan → act → summarize,
// stopping before `act` so a person (or another process) can look before it runs.

import { openInstance } from '@agentstate/store';
import { AgentStateSaver } from '@agentstate/store/langgraph';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';

const State = Annotation.Root({
  task: Annotation({ reducer: (_a, b) => b, default: () => '' }),
  steps: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
  report: Annotation({ reducer: (_a, b) => b, default: () => null }),
});

/** Opens the instance in `dir` and compiles the graph with an AgentStateSaver on it. */
export async function openGraph(dir) {
  const inst = await openInstance({ dir, name: 'langgraph-example' });
  const graph = new StateGraph(State)
    .addNode('plan', (s) => ({ steps: [`plan: split "${s.task}" into 2 parts`] }))
    .addNode('act', () => ({ steps: ['act: part 1 done', 'act: part 2 done'] }))
    .addNode('summarize', (s) => ({ report: `${s.steps.length} steps for "${s.task}"` }))
    .addEdge(START, 'plan')
    .addEdge('plan', 'act')
    .addEdge('act', 'summarize')
    .addEdge('summarize', END)
    .compile({ checkpointer: new AgentStateSaver(inst), interruptBefore: ['act'] });
  return { inst, graph };
}

export const THREAD = { configurable: { thread_id: 'example-thread' } };
