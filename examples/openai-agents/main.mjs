// Two processes write one OpenAI Agents session at once; then the whole conversation is read back.
// Usage: node main.mjs <dir>, then: npx agentstate events --dir <dir> --type session_item_added
import { spawn } from 'node:child_process';
import { openInstance } from '@agentstate/store';
import { AgentStateSession } from '@agentstate/store/openai-agents';

const dir = process.argv[2] ?? '.agentstate-example';
const writer = new URL('./writer.mjs', import.meta.url).pathname;
const runOne = (name) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [writer, dir, name, '3'], { stdio: 'inherit' });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${name} exited ${code}`))));
  });
await Promise.all([runOne('alice'), runOne('bob')]);
const inst = await openInstance({ dir });
const items = await new AgentStateSession(inst, { sessionId: 'shared-chat' }).getItems();
for (const item of items)
  console.log(
    `${item.role}: ${typeof item.content === 'string' ? item.content : item.content.map((c) => c.text).join('')}`,
  );
console.log(`items: ${items.length}`);
await inst.close();
