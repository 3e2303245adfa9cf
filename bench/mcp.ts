// `npm run bench -- --only mcp`: what agentstate's MCP server costs an agent — the tools/list size in characters and
// tokens (chars/4), the stdio round trip of claim+resolve and commit next to the same calls on the library
// in the same run (the MCP overhead per call), and resume's output for 10 / 100 / 1,000 items.
// Options: --calls N (default 300). With MEMORY_SERVER=<path to @modelcontextprotocol/server-memory's
// dist/index.js>, its tools/list is measured live in the same run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { type Instance, openInstance } from '../src/instance/instance.js';
import { createAgentStateMcp } from '../src/mcp/index.js';

const { values: args } = parseArgs({ options: { calls: { type: 'string', default: '300' } } });
const CALLS = Math.max(20, Number.parseInt(args.calls ?? '300', 10));
const CLI = new URL('../dist/cli/main.js', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'agentstate-bench-mcp-'));

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const ms = (x: number) => `${x.toFixed(3)} ms`;

async function inProcess(inst: Instance, options: { tools?: string } = {}) {
  const mcp = createAgentStateMcp({ instance: inst, model: 'bench', ...options });
  const [c, s] = InMemoryTransport.createLinkedPair();
  const server = await mcp.factory({ era: 'legacy' });
  await server.connect(s);
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(c);
  return {
    client,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

async function toolList() {
  const inst = await openInstance({ dir: join(tmp, 'list') });
  const rows: Array<[string, number]> = [];
  for (const set of ['all', 'core']) {
    const { client, close } = await inProcess(inst, { tools: set });
    const list = await client.listTools();
    rows.push([`agentstate (${set}, ${list.tools.length} tools)`, JSON.stringify(list).length]);
    if (set === 'all') {
      for (const t of list.tools)
        console.log(
          `  ${t.name.padEnd(14)} ${JSON.stringify(t).length} chars ≈ ${Math.round(JSON.stringify(t).length / 4)} tokens`,
        );
    }
    await close();
  }
  await inst.close();
  if (process.env.MEMORY_SERVER) {
    const client = new Client({ name: 'bench', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [process.env.MEMORY_SERVER],
        env: { MEMORY_FILE_PATH: join(tmp, 'memory.jsonl') },
      }),
    );
    const list = await client.listTools();
    rows.push([
      `reference memory server (${list.tools.length} tools, measured)`,
      JSON.stringify(list).length,
    ]);
    await client.close();
  }
  console.log('\ntools/list');
  for (const [name, chars] of rows)
    console.log(`  ${name.padEnd(48)} ${chars} chars ≈ ${Math.round(chars / 4)} tokens`);
  console.log('  Task Master core (7 tools, as published, PR #1490)          ≈ 5,000 tokens');
  console.log('  Task Master all (59 tools, as published, #1280)             ≈ 45,000 tokens');
}

async function roundTrips() {
  // The library, in this process: the same calls, durable SQLite (synchronous=FULL) as the server's.
  const lib = await openInstance({ dir: join(tmp, 'lib') });
  await lib.work.enqueueMany(Array.from({ length: CALLS }, (_, i) => ({ title: `t${i}` })));
  const libPair: number[] = [];
  const libCommit: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const t0 = performance.now();
    const item = (await lib.work.claim({ worker: 'w' }))!;
    await lib.work.resolve({ id: item.id, worker: 'w', attempt: item.attempts, status: 'done' });
    libPair.push(performance.now() - t0);
  }
  for (let i = 0; i < CALLS; i++) {
    const t0 = performance.now();
    await lib.docs.commit({
      kind: 'json',
      id: 'd',
      expected_version: i,
      body: { i },
      actor_kind: 'model',
      provenance: { model_id: 'bench', run_id: 'r', step_id: `s${i}`, prompt_ref: 'p' },
    });
    libCommit.push(performance.now() - t0);
  }
  await lib.close();

  const dir = join(tmp, 'stdio');
  const inst = await openInstance({ dir });
  await inst.work.enqueueMany(Array.from({ length: CALLS }, (_, i) => ({ title: `t${i}` })));
  await inst.close();
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, '--dir', dir, 'mcp', '--model', 'bench'],
    }),
  );
  const pair: number[] = [];
  const commit: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const t0 = performance.now();
    const item = (await client.callTool({ name: 'claim', arguments: {} })).structuredContent as {
      item: { id: string; attempts: number };
    };
    await client.callTool({
      name: 'resolve',
      arguments: { id: item.item.id, attempt: item.item.attempts, status: 'done' },
    });
    pair.push(performance.now() - t0);
  }
  for (let i = 0; i < CALLS; i++) {
    const t0 = performance.now();
    const r = await client.callTool({
      name: 'commit',
      arguments: { kind: 'json', id: 'd', expected_version: i, body: { i }, provenance: { prompt_ref: 'p' } },
    });
    if (r.isError) throw new Error(JSON.stringify(r.content));
    commit.push(performance.now() - t0);
  }
  await client.close();
  console.log(`\nround trips, ${CALLS} calls each (p50 / p95)`);
  const row = (name: string, mcp: number[], direct: number[]) =>
    console.log(
      `  ${name.padEnd(16)} MCP stdio ${ms(pct(mcp, 50))} / ${ms(pct(mcp, 95))}   library ${ms(pct(direct, 50))} / ${ms(pct(direct, 95))}   overhead p50 ${ms(pct(mcp, 50) - pct(direct, 50))}`,
    );
  row('claim+resolve', pair, libPair);
  row('commit', commit, libCommit);
}

async function resumeSizes() {
  console.log('\nresume output (structuredContent JSON + text form)');
  for (const n of [10, 100, 1000]) {
    const inst = await openInstance({ dir: join(tmp, `resume-${n}`) });
    await inst.work.enqueueMany(
      Array.from({ length: n }, (_, i) => ({
        title: `task number ${i} of the release plan`,
        priority: i % 7,
        payload: { i },
      })),
    );
    for (let i = 0; i < 5; i++)
      await inst.docs.commit({ kind: 'json', id: `doc-${i}`, expected_version: 0, body: { i } });
    const { client, close } = await inProcess(inst);
    for (let i = 0; i < 3; i++) await client.callTool({ name: 'claim', arguments: {} });
    const r = await client.callTool({ name: 'resume', arguments: {} });
    const structured = JSON.stringify(r.structuredContent).length;
    const text = (r.content as Array<{ text: string }>)[0]!.text.length;
    const full = await client.callTool({ name: 'resume', arguments: { full: true, after: 0 } });
    const fullChars = JSON.stringify(full.structuredContent).length;
    console.log(
      `  ${String(n).padStart(5)} items: compact ${structured} + ${text} chars ≈ ${Math.round((structured + text) / 4)} tokens; full ${fullChars} chars ≈ ${Math.round(fullChars / 4)} tokens`,
    );
    await close();
    await inst.close();
  }
}

try {
  await toolList();
  await roundTrips();
  await resumeSizes();
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
