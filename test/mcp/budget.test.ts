// Every answer fits an agent's context (issue 40): `agentstate mcp`, driven by the official 1.x client hosts
// embed (it checks every structuredContent against the tool's output schema), over stdio and Streamable HTTP,
// on the instance of the issue (1,000 items enqueued in one batch, 300 held, 150 resolved, a 400 KB document)
// and on one of 10,000 items in 100 batches: every tool at its largest stays within the budget, paging
// read_events from position 0 reaches the head with every event once, a large document is read by its parts,
// and a lowered budget (--max-result-chars, AGENTSTATE_MCP_MAX_RESULT) is honoured.
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openInstance } from '../../src/instance/instance.js';
import { DEFAULT_MAX_RESULT_CHARS } from '../../src/mcp/budget.js';
import { type BigInstance, DEFAULT_SHAPE, fillBigInstance, LARGE_SHAPE } from '../helpers/big-instance.js';
import { CLI, cleanEnv, runCli } from '../helpers/cli.js';
import { startMcpHttp } from '../helpers/mcp-http.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir();
const closers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => {});
});

/** Fills an instance in `dir` and closes it (the server opens it). */
async function build(dir: string, shape: typeof DEFAULT_SHAPE): Promise<BigInstance & { head: number }> {
  const inst = await openInstance({ dir });
  try {
    const big = await fillBigInstance(inst, shape);
    return { ...big, head: (await inst.events.head())!.position };
  } finally {
    await inst.close();
  }
}

interface Host {
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  tools: string[];
}

/** The big document's version now. */
async function versionOf(h: Host, big: BigInstance): Promise<number> {
  const r = await h.call('get_document', { ...big.bigDoc, paths: ['/title'] });
  return (structured(r).document as { version: number }).version;
}

let runs = 0;
/** Runs every largest call on `h`; each result within `budget` (and, when `ok`, no refusal). */
async function callLargest(h: Host, big: BigInstance, budget: number, ok = true): Promise<void> {
  for (const [name, args] of largestCalls(big, runs++, await versionOf(h, big))) {
    const r = await h.call(name, args);
    const what = `${name} ${JSON.stringify(args).slice(0, 80)} at ${budget}`;
    if (ok) expect(r.isError, `${what}: ${text(r).slice(0, 300)}`).toBeFalsy();
    expect(chars(r), what).toBeLessThanOrEqual(budget);
  }
}

async function host(transport: StdioClientTransport | StreamableHTTPClientTransport): Promise<Host> {
  const client = new Client({ name: 'budget-test', version: '1.0.0' });
  await client.connect(transport);
  closers.push(() => client.close());
  const { tools } = await client.listTools();
  return {
    tools: tools.map((t) => t.name),
    // The 1.x client throws when structuredContent does not match the tool's output schema.
    call: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult,
  };
}

function stdioHost(dir: string, args: string[] = [], env: Record<string, string> = {}): Promise<Host> {
  return host(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, '--dir', dir, 'mcp', '--worker', 'planner', '--model', 'm', ...args],
      env: { ...(cleanEnv() as Record<string, string>), ...env },
      stderr: 'ignore',
    }),
  );
}

async function httpHost(dir: string, args: string[] = []): Promise<Host> {
  const server = await startMcpHttp(['--dir', dir, 'mcp', '--worker', 'planner', '--model', 'm', ...args]);
  closers.push(server.stop);
  const { url } = server;
  return host(new StreamableHTTPClientTransport(new URL(url)));
}

/** What a result carries, as the host receives it: its text and its structured content. */
const chars = (r: CallToolResult) =>
  JSON.stringify({ content: r.content, structuredContent: r.structuredContent }).length;
const structured = (r: CallToolResult) => r.structuredContent as Record<string, unknown>;
const text = (r: CallToolResult) => (r.content[0] as { text: string }).text;

/**
 * The largest calls of every default tool on a big instance (writes last: they change what reads see); the
 * k-th run heartbeats and resolves the k-th item planner holds, and commits on `version` of the big document.
 */
function largestCalls(
  big: BigInstance,
  k: number,
  version: number,
): Array<[string, Record<string, unknown>]> {
  const held = big.held.planner![k]!;
  return [
    ['resume', {}],
    ['resume', { full: true }],
    ['resume', { full: true, after: 0, events: 1000, ready: 100 }],
    ['read_events', { after: 0, limit: 1 }],
    ['read_events', { after: 0, limit: 100_000 }],
    ['read_events', { reverse: true, limit: 100_000 }],
    ['read_events', { type: 'work_item_enqueued', limit: 100_000 }],
    ['get_document', { ...big.bigDoc }],
    ['get_document', { ...big.bigDoc, max_chars: 100_000_000 }],
    ['get_document', { ...big.bigDoc, version: 1 }],
    ['get_document', { ...big.bigDoc, paths: ['/tasks', '/title'] }],
    ['history', { ...big.bigDoc, limit: 10_000 }],
    ['claim', {}],
    ['heartbeat', { id: held }],
    ['enqueue', { title: 'one more', payload: { big: 'x'.repeat(900_000) } }],
    ['append_event', { type: 'note', data: { big: 'y'.repeat(900_000) } }],
    [
      'commit',
      {
        ...big.bigDoc,
        expected_version: version,
        merge_patch: { note: 'z' },
        provenance: { input_hash: 'h' },
      },
    ],
    ['resolve', { id: held, status: 'done', result: { big: 'r'.repeat(900_000) } }],
  ];
}

/** Pages read_events from position 0 with `next` until it is absent; every position once, in order. */
async function pageToHead(h: Host, args: Record<string, unknown> = {}): Promise<number[]> {
  const positions: number[] = [];
  let cursor: Record<string, unknown> = { after: 0, ...args };
  for (let k = 0; k < 10_000; k++) {
    const r = await h.call('read_events', cursor);
    expect(r.isError, text(r)).toBeFalsy();
    expect(chars(r)).toBeLessThanOrEqual(DEFAULT_MAX_RESULT_CHARS);
    const s = structured(r);
    positions.push(...(s.events as Array<{ position: number }>).map((e) => e.position));
    if (s.next === undefined) break;
    cursor = { ...args, ...(s.next as Record<string, unknown>) };
  }
  return positions;
}

describe('the issue instance: 1,000 items in one batch, 300 held, 150 resolved, a 400 KB document', () => {
  const dir = join(root, 'default');
  let big: BigInstance & { head: number };
  beforeAll(async () => {
    big = await build(dir, { ...DEFAULT_SHAPE, steps: 20 });
  }, 120_000);

  for (const transport of ['stdio', 'http'] as const) {
    it(`over ${transport}: every tool at its largest stays within 100,000 characters`, async () => {
      const h = transport === 'stdio' ? await stdioHost(dir) : await httpHost(dir);
      await callLargest(h, big, DEFAULT_MAX_RESULT_CHARS);
    }, 120_000);
  }

  it('resume {} at 1,000 items, holding 75 of them, is under 1.5k tokens; the full form fits the budget', async () => {
    const h = await stdioHost(dir);
    const r = await h.call('resume', { after: 0 });
    expect(chars(r) / 4).toBeLessThan(1_500);
    const s = structured(r);
    expect(s.held).toHaveLength(5);
    expect(s.more_held).toBe(big.held.planner!.length - 5);
    // The leases that end first are the ones shown.
    const shown = (s.held as Array<{ lease_expires_at: string }>).map((w) => w.lease_expires_at);
    expect([...shown].sort()).toEqual(shown);
    const full = await h.call('resume', { full: true, after: 0 });
    expect(chars(full)).toBeLessThanOrEqual(DEFAULT_MAX_RESULT_CHARS);
    expect(structured(full).omitted).toMatch(/list_items/);
  }, 60_000);

  it('read_events {limit: 1}: the batch event of 1,000 items is its count and first ids', async () => {
    const h = await stdioHost(dir);
    const r = await h.call('read_events', { after: 0, limit: 1 });
    const [e] = structured(r).events as Array<{
      position: number;
      type: string;
      data: Record<string, unknown>;
    }>;
    expect(e!.type).toBe('work_items_enqueued');
    expect(e!.data.batch_of).toBe(1000);
    expect(e!.data.first_ids).toHaveLength(5);
    expect(chars(r)).toBeLessThan(2_000);
    // The page was full: the next one is named.
    expect(structured(r).next).toEqual({ after: e!.position });
    // One item's part of the batch, read by its id.
    const id = (e!.data.first_ids as string[])[0]!;
    const mine = structured(await h.call('read_events', { work_item_id: id, limit: 5 })).events as Array<{
      type: string;
      work_item_id: string;
      data: Record<string, unknown>;
    }>;
    expect(mine[0]).toMatchObject({ type: 'work_item_enqueued', work_item_id: id });
    expect(typeof mine[0]!.data.title).toBe('string');
  }, 60_000);

  it('paging read_events from position 0 reaches the head, every event once, no page over the budget', async () => {
    const h = await stdioHost(dir);
    const head = structured(await h.call('resume')).position as number;
    const positions = await pageToHead(h);
    expect(positions).toEqual(Array.from({ length: head }, (_, k) => k + 1));
    // A position past the head says so.
    const past = await h.call('read_events', { after: head + 5 });
    expect(past.isError).toBe(true);
    expect(text(past)).toMatch(/^INVALID_INPUT: .*past the head/);
  }, 120_000);

  it('a large document: its outline first, then a part by JSON Pointer, never the body twice', async () => {
    const h = await stdioHost(dir);
    const whole = structured(await h.call('get_document', { ...big.bigDoc })).document as Record<
      string,
      unknown
    >;
    expect(whole.body).toBeUndefined();
    expect(whole.chars as number).toBeGreaterThan(400_000);
    const parts = whole.outline as Array<{ path: string; type: string; chars: number; length?: number }>;
    const tasks = parts.find((p) => p.path === '/tasks')!;
    expect(tasks).toMatchObject({ type: 'array' });
    // The array's own outline, then one task by its pointer.
    const list = structured(await h.call('get_document', { ...big.bigDoc, paths: ['/tasks'] }))
      .document as Record<string, unknown>;
    expect(list.too_large).toEqual(['/tasks']);
    const first = (list.outline as Array<{ path: string }>)[0]!.path;
    expect(first).toBe('/tasks/0');
    const one = await h.call('get_document', { ...big.bigDoc, paths: [first, '/title'] });
    const values = (structured(one).document as { values: Record<string, unknown> }).values;
    expect(Object.keys(values)).toEqual([first, '/title']);
    // One pointer alone is a list of one.
    const title = await h.call('get_document', { ...big.bigDoc, paths: '/title' });
    expect(Object.keys((structured(title).document as { values: object }).values)).toEqual(['/title']);
    // Small results keep their text form; the text of a large one does not repeat the body.
    expect(text(one)).toContain('/title');
    const r = await h.call('get_document', { ...big.bigDoc, max_chars: 90_000 });
    expect(text(r).length).toBeLessThan(1_000);
  }, 60_000);

  it('a lowered budget is honoured: --max-result-chars 10000 and AGENTSTATE_MCP_MAX_RESULT=4000', async () => {
    for (const [h, budget] of [
      [await stdioHost(dir, ['--max-result-chars', '10000']), 10_000],
      [await stdioHost(dir, [], { AGENTSTATE_MCP_MAX_RESULT: '4000' }), 4_000],
    ] as const) {
      await callLargest(h, big, budget);
      // Paged to the end within it.
      let cursor: Record<string, unknown> = { after: 0 };
      const seen: number[] = [];
      for (let k = 0; k < 5_000; k++) {
        const r = await h.call('read_events', cursor);
        expect(chars(r)).toBeLessThanOrEqual(budget);
        seen.push(...(structured(r).events as Array<{ position: number }>).map((e) => e.position));
        if (!structured(r).next) break;
        cursor = structured(r).next as Record<string, unknown>;
      }
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen.at(-1)).toBeGreaterThanOrEqual(big.head);
    }
  }, 240_000);

  it('a budget too small or not a number is refused before anything is served (exit 2)', async () => {
    for (const bad of ['100', 'lots', '-5']) {
      const r = runCli(['--dir', dir, 'mcp', '--max-result-chars', bad]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/max-result-chars.*whole number of characters/);
    }
    const env = runCli(['--dir', dir, 'mcp'], { AGENTSTATE_MCP_MAX_RESULT: '1e9' });
    expect(env.code).toBe(2);
    expect(env.stderr).toMatch(/AGENTSTATE_MCP_MAX_RESULT/);
    // serve's /mcp: the same rule, before it listens.
    const serve = runCli(['--dir', dir, 'serve', '--port', '0', '--mcp-max-result-chars', '1999']);
    expect(serve.code, serve.stderr).toBe(2);
    expect(serve.stderr).toMatch(/--mcp-max-result-chars/);
  });
});

describe('10,000 items in 100 batch events', () => {
  const dir = join(root, 'large');
  let big: BigInstance & { head: number };
  beforeAll(async () => {
    big = await build(dir, LARGE_SHAPE);
  }, 240_000);

  it('every tool at its largest within the budget, and read_events paged from 0 to the head', async () => {
    const h = await stdioHost(dir);
    await callLargest(h, big, DEFAULT_MAX_RESULT_CHARS);
    const before = big.head;
    const positions = await pageToHead(h);
    expect(positions.slice(0, before)).toEqual(Array.from({ length: before }, (_, k) => k + 1));
    // Per-item views of 100 batch events (100 records at one position each): paged to the end as well.
    const enqueued = await pageToHead(h, { type: 'work_item_enqueued' });
    expect(new Set(enqueued).size).toBeGreaterThanOrEqual(100);
  }, 300_000);
});
