// The app: an HTTP server hosting the built workflows (.well-known/workflow/v1/flow.mjs, made by
// `npx workflow build`; on this SDK line it runs the steps too, inline) on agentstate's World, on embedded SQLite in --dir. It starts one run of the
// supportAgent workflow (or, with --resume <runId>, waits for a run a dead process left), prints what
// happens, and exits 0 once the run has completed, printing its output.
//
//   node run.mjs [--dir <folder>] [--resume <runId>]
//
// env: EFFECTS_FILE (where the tools and the model append their lines) [default: <dir>/effects.log];
// CLOCK_OFFSET_MS: added to the store's clock, so a restart runs "later", past a dead process's lease on
// its queue message (5 minutes), and takes that message over; HANG_IN_TOOL_B=1: tool B's step waits
// forever before its side effect (test.mjs kills the process there).
//
// Lines printed: `listening <url>`, `run <runId>`, the tools' `tool A start attempt=<n>` … lines,
// `status <status>`, `stream <text>` (the text the agent streamed to the run's stream) and `output <json>`.
import { createServer } from 'node:http';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createWorld } from '@agentstate/store/workflow-world';
import { getRun, start } from 'workflow/api';
import { setWorld } from 'workflow/runtime';
import { POST as flowPOST } from './.well-known/workflow/v1/flow.mjs';
import manifest from './.well-known/workflow/v1/manifest.json' with { type: 'json' };

const { values } = parseArgs({
  options: { dir: { type: 'string', default: '.workflow-data/agentstate' }, resume: { type: 'string' } },
});
const dir = resolve(values.dir);
process.env.EFFECTS_FILE ??= join(dir, 'effects.log');
const say = (line) => process.stdout.write(`${line}\n`);

// The World, on an instance whose clock may run ahead (CLOCK_OFFSET_MS).
const offset = Number(process.env.CLOCK_OFFSET_MS ?? 0);
const world = await createWorld({ dir, open: { clock: () => Date.now() + offset } });
setWorld(world);

// The queue POSTs each message to the built flow handler (this SDK line's combined handler: it replays the
// workflow and runs its steps inline, so no /step route); node:http in front of its fetch-style POST.
const server = createServer(async (req, res) => {
  try {
    if (req.method !== 'POST' || req.url !== '/.well-known/workflow/v1/flow') {
      res.writeHead(404).end();
      return;
    }
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string') headers.set(name, value);
    }
    const request = new Request(`http://localhost${req.url}`, {
      method: 'POST',
      headers,
      body: Buffer.concat(chunks),
    });
    const response = await flowPOST(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  } catch (err) {
    process.stderr.write(`handler error: ${err?.stack ?? err}\n`);
    if (!res.headersSent) res.writeHead(500);
    res.end(String(err));
  }
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const url = `http://127.0.0.1:${server.address().port}`;
process.env.WORKFLOW_LOCAL_BASE_URL = url;
say(`listening ${url}`);

// Delivery starts here; it also re-enqueues the runs left pending or running by a dead process.
await world.start();

let runId = values.resume;
if (runId === undefined) {
  const run = await start(manifest.workflows['workflows/agent.ts'].supportAgent, [
    'Please refund my order 42.',
  ]);
  runId = run.runId;
}
say(`run ${runId}`);

const run = getRun(runId);
let exitCode = 0;
try {
  const output = await run.returnValue;
  say(`status ${await run.status}`);
  // The agent streamed UI message chunks to the run's stream (in the same store): its text deltas.
  let streamed = '';
  for await (const chunk of run.getReadable()) {
    if (chunk?.type === 'text-delta') streamed += chunk.delta;
  }
  say(`stream ${streamed}`);
  say(`output ${JSON.stringify(output)}`);
} catch (err) {
  say(`status ${await run.status}`);
  process.stderr.write(`run failed: ${err?.stack ?? err}\n`);
  exitCode = 1;
}
server.close();
await world.close();
process.exit(exitCode);
