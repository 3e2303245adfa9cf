// Step 1: run the graph until it stops before `act`; the process then ends. Usage: node start.mjs <dir>
import { openGraph, THREAD } from './graph.mjs';

const { inst, graph } = await openGraph(process.argv[2] ?? '.agentstate-example');
await graph.invoke({ task: 'write the release notes' }, THREAD);
const state = await graph.getState(THREAD);
console.log(`stopped before: ${state.next.join(', ')}`);
console.log(`steps so far: ${state.values.steps.length}`);
await inst.close();
