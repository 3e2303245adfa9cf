// A durable AI SDK agent: the first worker process dies in the middle of the agent loop; a second one finishes
// the run, replaying the model calls and tool results the first recorded.
// Usage: node main.mjs <dir>, then: npx agentstate steps <item id> --dir <dir>
import { spawn } from 'node:child_process';
import { openInstance } from '@agentstate/store';

const dir = process.argv[2] ?? '.agentstate-durable-agent';
const worker = new URL('./worker.mjs', import.meta.url).pathname;
const runWorker = (env) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [worker, dir], {
      stdio: 'inherit',
      env: { ...process.env, ...env },
    });
    child.on('exit', (code, signal) =>
      code === 0 || signal === 'SIGKILL' ? resolve(signal) : reject(new Error(`worker exited ${code}`)),
    );
  });

const inst = await openInstance({ dir });
const item = await inst.work.enqueue({ title: 'weather report', kind: 'report' });
console.log(`enqueued ${item.id}`);
console.log('first worker:');
console.log(`  killed: ${(await runWorker({ CRASH: '1' })) === 'SIGKILL'}`);
console.log('second worker (once the dead one’s lease ran out):');
await runWorker({});
const done = await inst.work.get(item.id);
console.log(`report: ${done.result}`);
for (const r of await inst.work.steps(item.id)) console.log(`  step ${r.name} (attempt ${r.attempt})`);
await inst.close();
