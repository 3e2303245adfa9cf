// A process hosting the `chain` workflow (workflows/chain.ts, built by `workflow build`) on agentstate's World,
// for the crash and two-process tests. It opens the World (env AGENTSTATE_WORKFLOW_DIR / _URL / _SCHEMA, as
// the SDK would) on a clock shifted by CLOCK_OFFSET_MS (a restart "later", past a dead process's leases),
// serves the SDK's flow route (its bundle carries the steps: they run inline) on a free port, and starts the World's queue delivery. Then:
//   START=<n> with TAG=<t> and STEPS=<k>: starts n runs of chain(`<t>-<j>`, k), prints `run <runId>` for each;
//   WAIT=<id,id,…>: waits for those runs (and the ones it started) to end, prints `done <runId> <status> <output>`
//   for each, then exits 0; without runs to wait for it serves until killed.
// Every delivery it handles is appended to DELIVERIES_FILE as `<pid> <queue> <messageId>`.
import { appendFileSync } from 'node:fs';
import { serve } from '@hono/node-server';
import { getRun, start } from 'workflow/api';
import { setWorld } from 'workflow/runtime';
import { POST as flowPOST } from './.well-known/workflow/v1/flow.mjs';
import manifest from './.well-known/workflow/v1/manifest.json' with { type: 'json' };

// agentstate's World as built by `npm run build` (dist/ of this checkout).
const { createWorld } = await import(new URL('../../../dist/workflow-world/world.js', import.meta.url).href);
const offset = Number(process.env.CLOCK_OFFSET_MS ?? 0);
const world = await createWorld({ open: { clock: () => Date.now() + offset } });
setWorld(world);
const say = (line) => process.stdout.write(`${line}\n`);

function route(handler) {
  return (request) => {
    if (process.env.DELIVERIES_FILE) {
      const queue = request.headers.get('x-vqs-queue-name');
      const id = request.headers.get('x-vqs-message-id');
      appendFileSync(process.env.DELIVERIES_FILE, `${process.pid} ${queue} ${id}\n`);
    }
    return handler(request);
  };
}
const flow = route(flowPOST);

const server = serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch: (request) => {
    const { pathname } = new URL(request.url);
    if (request.method === 'POST' && pathname === '/.well-known/workflow/v1/flow') return flow(request);
    return new Response('not found', { status: 404 });
  },
});
await new Promise((resolve) => server.once('listening', resolve));
process.env.WORKFLOW_LOCAL_BASE_URL = `http://127.0.0.1:${server.address().port}`;
await world.start();
say(`listening ${server.address().port}`);

const runs = (process.env.WAIT ?? '').split(',').filter(Boolean);
const chain = manifest.workflows['workflows/chain.ts'].chain;
for (let j = 0; j < Number(process.env.START ?? 0); j++) {
  const run = await start(chain, [`${process.env.TAG}-${j}`, Number(process.env.STEPS ?? 3)]);
  say(`run ${run.runId}`);
  runs.push(run.runId);
}

if (runs.length > 0) {
  await Promise.all(
    runs.map(async (id) => {
      const run = getRun(id);
      for (;;) {
        const status = await run.status;
        if (status === 'completed' || status === 'failed' || status === 'cancelled') {
          const output = status === 'completed' ? await run.returnValue : null;
          say(`done ${id} ${status} ${JSON.stringify(output)}`);
          return;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    }),
  );
  await world.close();
  server.close();
  process.exit(0);
}
