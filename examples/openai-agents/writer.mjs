// One process talking to an agent (a scripted model: offline, deterministic) on a shared session.
// Usage: node writer.mjs <dir> <name> <turns>
import { openInstance } from '@agentstate/store';
import { AgentStateSession } from '@agentstate/store/openai-agents';
import { Agent, run, setTracingDisabled } from '@openai/agents';
import { assistantMessage, modelResponse, ScriptedModel } from '@openai/agents-core/testing';

setTracingDisabled(true);
const [dir, name, turns] = process.argv.slice(2);
const inst = await openInstance({ dir, worker: name });
const session = new AgentStateSession(inst, { sessionId: 'shared-chat' });
const n = Number(turns ?? 3);
const model = new ScriptedModel(
  Array.from({ length: n }, (_, i) => modelResponse([assistantMessage(`${name} answer ${i}`)])),
);
const agent = new Agent({ name: 'assistant', model });
for (let i = 0; i < n; i++) await run(agent, `${name} question ${i}`, { session });
await inst.close();
