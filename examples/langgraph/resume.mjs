// Step 2, in a new process: resume the thread from the store and run it to the end.
// Usage: node resume.mjs <dir>, then: npx agentstate events --dir <dir> --type langgraph_checkpoint
import { openGraph, THREAD } from './graph.mjs';

const { inst, graph } = await openGraph(process.argv[2] ?? '.agentstate-example');
const result = await graph.invoke(null, THREAD);
console.log(`report: ${result.report}`);
const history = [];
for await (const s of graph.getStateHistory(THREAD)) history.push(s);
console.log(`checkpoints: ${history.length}`);
await inst.close();
