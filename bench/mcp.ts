// `npm run bench -- --only mcp`: what agentstate's MCP server costs an agent — the tools/list size in characters and
// tokens (chars/4), the stdio round trip of claim+resolve and commit next to the same calls on the library
// in the same run (the MCP overhead per call), resume's output for 10 / 100 / 1,000 items, and the size of
// every tool's result at its largest on instances of 100 / 1,000 / 10,000 items with a 400 KB document, next
// to the result budget (issue 40).
// Options: --calls N (default 300); --parts list,trips,resume,results (default all). With MEMORY_SERVER=<path
// to @modelcontextprotocol/server-memory's dist/index.js>, its tools/list is measured live in the same run.
// AGENTSTATE_MCP_MAX_RESULT, when set, is passed to the servers of the results part and is the budget shown.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { type Instance, openInstance } from '../src/instance/instance.js';
import { createAgentStateMcp } from '../src/mcp/index.js';
import {
  type BigInstance,
  type BigInstanceShape,
  DEFAULT_SHAPE,
  fillBigInstance,
} from '../test/helpers/big-instance.js';
import { fmt, textTable } from './lib.js';

const { values: args } = parseArgs({
  options: {
    calls: { type: 'string', default: '300' },
    parts: { type: 'string', default: 'list,trips,resume,results' },
  },
});
const CALLS = Math.max(20, Number.parseInt(args.calls ?? '300', 10));
const PARTS = new Set((args.parts ?? '').split(',').map((p) => p.trim()));
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

/** The result budget of issue 40: what the server keeps a tool result within unless told otherwise. */
const BUDGET = Number.parseInt(process.env.AGENTSTATE_MCP_MAX_RESULT ?? '100000', 10);

/** The official client's stdio read buffer (STDIO_DEFAULT_MAX_BUFFER_SIZE): a longer message closes the connection. */
const SDK_STDIO_BUFFER = 10 * 1024 * 1024;

/** One measured call: the whole result as JSON (content + structuredContent), as a host receives it. */
interface Measured {
  items: number;
  tool: string;
  args: string;
  chars: number;
  /** Of which the text content (what a host without structuredContent shows the model). */
  text: number;
  /** Of which structuredContent. */
  structured: number;
  /** The refusal's first line, or what went wrong on the wire. */
  note: string | null;
  /** The `next` the result carries (the input of the next page), as JSON. */
  next: string | null;
}

/** A call of the plan; `label` names its arguments in the table when they are long. */
interface Call {
  tool: string;
  args: Record<string, unknown>;
  label?: string;
}

/** `agentstate mcp` over stdio as a host spawns it, with the official client; reconnects after a lost connection. */
class StdioSession {
  client: Client | null = null;
  constructor(
    readonly dir: string,
    readonly flags: string[],
  ) {}

  async connect(maxBufferSize?: number): Promise<Client> {
    await this.client?.close().catch(() => {});
    const client = new Client({ name: 'bench-results', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, '--dir', this.dir, 'mcp', '--model', 'bench', ...this.flags],
        env: process.env.AGENTSTATE_MCP_MAX_RESULT
          ? { AGENTSTATE_MCP_MAX_RESULT: process.env.AGENTSTATE_MCP_MAX_RESULT }
          : {},
        stderr: 'pipe',
        ...(maxBufferSize ? { maxBufferSize } : {}),
      }),
    );
    this.client = client;
    return client;
  }

  async close(): Promise<void> {
    await this.client?.close().catch(() => {});
    this.client = null;
  }
}

/** The `next` a paged result may carry (the input of the next page), wherever the server puts it. */
function nextOf(r: Record<string, unknown>): string | null {
  const sc = r.structuredContent as Record<string, unknown> | undefined;
  const meta = r._meta as Record<string, unknown> | undefined;
  const next = sc?.next ?? meta?.next ?? r.next;
  return next === undefined || next === null ? null : JSON.stringify(next);
}

/** The size of a result as a host receives it: its content and structuredContent, as JSON. */
function sizeOf(r: Record<string, unknown>): number {
  return JSON.stringify({ content: r.content, structuredContent: r.structuredContent }).length;
}

/**
 * Calls `call` and measures its result; a refusal is measured all the same. A result too long for the official
 * client's stdio buffer closes the connection, as it would a host's: it is measured again over a connection with a
 * larger buffer, and the session reconnected as before for the calls after it.
 */
async function measure(session: StdioSession, items: number, call: Call): Promise<[Measured, unknown]> {
  const row: Measured = {
    items,
    tool: call.tool,
    args: call.label ?? JSON.stringify(call.args),
    chars: 0,
    text: 0,
    structured: 0,
    note: null,
    next: null,
  };
  const once = async (client: Client) => {
    const r = (await client.callTool({ name: call.tool, arguments: call.args })) as Record<string, unknown>;
    row.chars = sizeOf(r);
    row.text = JSON.stringify(r.content ?? null).length;
    row.structured = JSON.stringify(r.structuredContent ?? null).length;
    row.next = nextOf(r);
    if (r.isError) {
      const text = (r.content as Array<{ text?: string }> | undefined)?.[0]?.text ?? '';
      row.note = `refused: ${text.split('\n')[0]!.slice(0, 60)}`;
    }
    return r.structuredContent;
  };
  try {
    return [row, await once(session.client ?? (await session.connect()))];
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (!/closed|not connected/i.test(message)) {
      row.note = `error: ${message.slice(0, 60)}`;
      return [row, null];
    }
    try {
      const result = await once(await session.connect(1024 * 1024 * 1024));
      row.note =
        row.chars > SDK_STDIO_BUFFER
          ? `connection closed by the SDK client (over its ${fmt(SDK_STDIO_BUFFER / 1024 / 1024, 0)} MiB stdio buffer)`
          : `connection lost on the first call (${message.slice(0, 40)}); measured on a second`;
      return [row, result];
    } catch (again) {
      row.note = `connection lost: ${(again instanceof Error ? again.message : String(again)).slice(0, 60)}`;
      return [row, null];
    } finally {
      await session.connect();
    }
  }
}

/** The shape measured at `items`: issue 40's default, scaled (30% held, 15% resolved, at most 300 and 150). */
function shapeFor(items: number): BigInstanceShape {
  return {
    ...DEFAULT_SHAPE,
    items,
    batches: items > 1000 ? 100 : 1,
    claimed: Math.min(DEFAULT_SHAPE.claimed, Math.floor(items * 0.3)),
    done: Math.min(DEFAULT_SHAPE.done, Math.floor(items * 0.15)),
  };
}

/** What each server is asked: its tools at their largest on the instance `big`, the session's worker a holder. */
function plans(big: BigInstance): Array<{ name: string; flags: string[]; calls: Call[] }> {
  const doc = big.bigDoc;
  const holder = big.stepsItem?.worker ?? 'planner';
  const stepsItem = big.stepsItem;
  return [
    {
      name: 'default',
      flags: ['--worker', holder],
      calls: [
        { tool: 'resume', args: {} },
        { tool: 'resume', args: { full: true } },
        { tool: 'resume', args: { full: true, after: 0, events: 1000, ready: 100 } },
        { tool: 'read_events', args: { after: 0, limit: 1 } },
        { tool: 'read_events', args: { after: 0, limit: 1000 } },
        { tool: 'read_events', args: { reverse: true, limit: 1000 } },
        { tool: 'get_document', args: { ...doc }, label: '{big doc}' },
        { tool: 'get_document', args: { ...doc, version: 1 }, label: '{big doc, version: 1}' },
        { tool: 'get_document', args: { ...doc, paths: ['tasks'] }, label: '{big doc, paths: [tasks]}' },
        { tool: 'history', args: { ...doc, after: 0, limit: 1000 }, label: '{big doc, limit: 1000}' },
        { tool: 'claim', args: {} },
        // heartbeat and resolve act on the item the claim above took (filled in when it is known).
        { tool: 'heartbeat', args: {}, label: '{id, attempt} of the claim' },
        { tool: 'resolve', args: {}, label: '{id, attempt, done} of the claim' },
        { tool: 'enqueue', args: { title: 'bench: one more item', payload: { n: 1 } } },
        {
          tool: 'commit',
          args: {
            ...doc,
            expected_version: 3,
            merge_patch: { owner: 'bench' },
            provenance: { prompt_ref: 'b' },
          },
          label: '{big doc, merge_patch}',
        },
        { tool: 'append_event', args: { type: 'note', stream: 'bench', data: { text: 'measured' } } },
      ],
    },
    {
      // The runs toolset: what an agent waking durable runs is served.
      name: 'runs',
      flags: ['--worker', holder, '--tools', 'runs'],
      calls: stepsItem
        ? [
            { tool: 'list_steps', args: { id: stepsItem.id }, label: `{id} (${big.shape.steps} steps)` },
            {
              tool: 'signal',
              args: { id: stepsItem.id, name: 'approved', payload: { by: 'bench' } },
              label: '{id, name, payload} (a held item)',
            },
          ]
        : [],
    },
    {
      // Tools a host can add by name (--tools) that answer lists or whole documents.
      name: 'opt-in',
      flags: ['--worker', holder, '--tools', 'list_items,claim_many,get_item,list_documents,diff'],
      calls: [
        { tool: 'list_items', args: {} },
        { tool: 'list_items', args: { limit: 100_000 } },
        { tool: 'claim_many', args: { limit: 1000 } },
        { tool: 'get_item', args: { id: big.held[holder]![0]! }, label: '{id} (a held item)' },
        { tool: 'list_documents', args: {} },
        { tool: 'diff', args: { ...doc, from: 0 }, label: '{big doc, from: 0}' },
      ],
    },
  ];
}

async function resultSizes() {
  console.log(
    `\ntool results at their largest over stdio (JSON of content + structuredContent), against a budget of ${fmt(BUDGET)} chars ≈ ${fmt(BUDGET / 4)} tokens`,
  );
  const rows: Measured[] = [];
  const lists: string[][] = [];
  for (const n of [100, 1000, 10_000]) {
    const dir = join(tmp, `results-${n}`);
    const shape = shapeFor(n);
    const t0 = performance.now();
    const inst = await openInstance({ dir, durability: 'normal' });
    const big = await fillBigInstance(inst, shape);
    const head = (await inst.events.head())?.position ?? 0;
    await inst.close();
    console.log(
      `  ${fmt(n)} items in ${shape.batches} enqueue call(s), ${shape.claimed} held by ${Object.keys(big.held).length} workers, ${shape.done} resolved, 3 decisions, ${big.docs.length} documents (one of ${fmt(shape.docChars)} chars): ${fmt(head, 0)} events, built in ${fmt(performance.now() - t0)} ms`,
    );
    for (const server of plans(big)) {
      const session = new StdioSession(dir, server.flags);
      try {
        const client = await session.connect();
        const list = await client.listTools();
        const tools = list.tools.map((t) => t.name);
        const listChars = JSON.stringify(list).length;
        lists.push([fmt(n), server.name, fmt(listChars), fmt(Math.round(listChars / 4)), tools.join(', ')]);
        // Every tool listed is called: with the plan's arguments, or with none when the plan does not name it.
        const calls = [
          ...server.calls.filter((c) => tools.includes(c.tool)),
          ...tools
            .filter((t) => !server.calls.some((c) => c.tool === t) && server.name === 'default')
            .map((tool) => ({ tool, args: {} })),
        ];
        type Held = { id: string; attempts: number };
        let claimed = null as Held | null;
        for (const call of calls) {
          if (call.tool === 'heartbeat' && Object.keys(call.args).length === 0) {
            if (!claimed) continue;
            call.args = { id: claimed.id, attempt: claimed.attempts };
          }
          if (call.tool === 'resolve' && Object.keys(call.args).length === 0) {
            if (!claimed) continue;
            call.args = { id: claimed.id, attempt: claimed.attempts, status: 'done', result: { ok: true } };
          }
          const [row, result] = await measure(session, n, call);
          if (call.tool === 'claim') claimed = (result as { item?: Held } | null)?.item ?? null;
          rows.push(row);
        }
      } finally {
        await session.close();
      }
    }
  }
  console.log('');
  console.log(textTable(['items', 'server', 'tools/list chars', '≈ tokens', 'tools'], lists));
  console.log('');
  const whole = (x: number) => fmt(x, 0);
  console.log(
    textTable(
      [
        'items',
        'tool',
        'arguments',
        'chars',
        'text',
        'structured',
        '≈ tokens',
        '× budget',
        'over',
        'next / note',
      ],
      rows.map((r) => [
        fmt(r.items),
        r.tool,
        r.args.length > 44 ? `${r.args.slice(0, 43)}…` : r.args,
        whole(r.chars),
        whole(r.text),
        whole(r.structured),
        whole(r.chars / 4),
        fmt(r.chars / BUDGET, 2),
        r.chars > BUDGET ? 'OVER' : '',
        [r.next && `next ${r.next.slice(0, 40)}`, r.note].filter(Boolean).join('; '),
      ]),
    ),
  );
  const over = rows.filter((r) => r.chars > BUDGET);
  console.log(
    `\n${over.length} of ${rows.length} results over the budget of ${fmt(BUDGET)} chars; the largest ${fmt(Math.max(...rows.map((r) => r.chars)), 0)} chars (${rows.reduce((a, r) => (r.chars > a.chars ? r : a)).tool})`,
  );
}

try {
  if (PARTS.has('list')) await toolList();
  if (PARTS.has('trips')) await roundTrips();
  if (PARTS.has('resume')) await resumeSizes();
  if (PARTS.has('results')) await resultSizes();
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
