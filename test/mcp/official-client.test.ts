// The official MCP TypeScript SDK client as hosts embed it (issue 23): `@modelcontextprotocol/sdk` 1.x (Claude
// Code, Cursor, VS Code, Claude Desktop) drives `agentstate mcp` — the built CLI — over stdio and Streamable
// HTTP, on the 2025-03-26, 2025-06-18 and 2025-11-25 handshakes; the v2 client drives the 2026-07-28 era, with
// each result put through the 1.x client's own checks. Every tool goes into every refusal it can produce and
// through its successes: callTool must return (the 1.x client throws when structuredContent does not match the
// tool's outputSchema, on error results too) and a refusal must name its code in the text the model reads.
// One server process per transport and era (one HTTP process for all of them), reused across calls.
import { join } from 'node:path';
import {
  Client as Client2,
  StreamableHTTPClientTransport as Http2,
  type Transport as Transport2,
} from '@modelcontextprotocol/client';
import { StdioClientTransport as Stdio2 } from '@modelcontextprotocol/client/stdio';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as Stdio1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as Http1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport as Transport1 } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolResultSchema,
  ResourceUpdatedNotificationSchema,
  type CallToolResult as Result1,
  type Tool as Tool1,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Instance, openInstance } from '../../src/instance/instance.js';
import { DEFAULT_TOOLS } from '../../src/mcp/tools.js';
import { CLI, cleanEnv } from '../helpers/cli.js';
import { startMcpHttp } from '../helpers/mcp-http.js';
import { tempDir } from '../helpers/tmp.js';
import { refusalOf } from './helpers.js';

const root = tempDir();
const dir = join(root, 'inst');
const MODEL = 'official-client-model';
let inst: Instance;
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  inst = await openInstance({ dir });
});
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => {});
  await inst.close();
});

/** One connected host: how it calls a tool, and the tool list it cached. */
interface Session {
  call(name: string, args: unknown): Promise<Result1>;
  tools: Tool1[];
}

// ---------------------------------------------------------------------------------------------------
// The 1.x client's checks of a tools/call result (client/index.js callTool), for results the v2 client got.

const ajv1 = new AjvJsonSchemaValidator();
function accepted1x(tools: Tool1[], name: string, raw: unknown): Result1 {
  const result = CallToolResultSchema.parse(raw);
  const schema = tools.find((t) => t.name === name)?.outputSchema;
  if (schema) {
    if (!result.structuredContent && !result.isError) {
      throw new Error(`Tool ${name} has an output schema but did not return structured content`);
    }
    if (result.structuredContent) {
      const v = ajv1.getValidator(schema)(result.structuredContent);
      if (!v.valid) {
        throw new Error(`Structured content does not match the tool's output schema: ${v.errorMessage}`);
      }
    }
  }
  return result;
}

// ---------------------------------------------------------------------------------------------------
// Connecting: one server process per stdio session, one HTTP process for every HTTP session.

const serverArgs = ['--dir', dir, 'mcp', '--model', MODEL];
/** `agentstate mcp` over stdio, as a host spawns it. */
const stdioServer = () => ({
  command: process.execPath,
  args: [CLI, ...serverArgs],
  env: cleanEnv() as Record<string, string>,
});

/** Waits for a notification (polls `got`, up to 20 s). */
async function until(got: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !got(); i++) await new Promise((r) => setTimeout(r, 50));
}

/** The 1.x client's initialize asks for its latest version; this asks for `version` instead. */
function handshake<T extends Transport1>(t: T, version: string): T {
  const send = t.send.bind(t);
  t.send = (m, o) => {
    const msg = m as { method?: string; params?: Record<string, unknown> };
    return send(
      msg.method === 'initialize'
        ? ({ ...m, params: { ...msg.params, protocolVersion: version } } as typeof m)
        : m,
      o,
    );
  };
  return t;
}

async function session1x(transport: Transport1, name: string): Promise<Session & { client: Client1 }> {
  const client = new Client1({ name, version: '1.0.0' });
  await client.connect(transport);
  closers.push(() => client.close());
  // Hosts list the tools first; the 1.x client caches each outputSchema's validator from that list.
  const { tools } = await client.listTools();
  return {
    client,
    tools,
    call: (n, args) =>
      client.callTool({ name: n, arguments: args as Record<string, unknown> }) as Promise<Result1>,
  };
}

async function session2026(transport: Transport2, name: string): Promise<Session> {
  const client = new Client2(
    { name, version: '2.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(transport);
  closers.push(() => client.close());
  expect(client.getProtocolEra()).toBe('modern');
  const tools = (await client.listTools()).tools as unknown as Tool1[];
  return {
    tools,
    call: async (n, args) =>
      accepted1x(tools, n, await client.callTool({ name: n, arguments: args as Record<string, unknown> })),
  };
}

let http: Promise<string> | undefined;
/** `agentstate mcp --http --port 0`, started once; resolves with its URL. */
function httpUrl(): Promise<string> {
  http ??= startMcpHttp(serverArgs).then((server) => {
    closers.push(server.stop);
    return server.url;
  });
  return http;
}

// ---------------------------------------------------------------------------------------------------
// The sweep: every tool into each refusal it can produce, and its successes.

/** Refusal codes each tool is driven into (the sweep checks it met every one). */
const REFUSALS: Record<(typeof DEFAULT_TOOLS)[number], string[]> = {
  resume: ['INVALID_INPUT'],
  claim: ['INVALID_INPUT'], // an item that cannot be claimed (missing, held, a human's) is `item: null`
  heartbeat: ['INVALID_INPUT', 'NOT_FOUND', 'LEASE_LOST', 'INVALID_TRANSITION'],
  resolve: ['INVALID_INPUT', 'NOT_FOUND', 'LEASE_LOST', 'INVALID_TRANSITION', 'PERMISSION_DENIED'],
  enqueue: ['INVALID_INPUT'],
  get_document: ['INVALID_INPUT', 'NOT_FOUND'],
  commit: [
    'INVALID_INPUT',
    'STATE_CONFLICT',
    'PROVENANCE_REQUIRED',
    'VALIDATION_FAILED',
    'INVALID_TRANSITION',
    'PERMISSION_DENIED',
    'AMBIGUITY_UNRESOLVED',
  ],
  history: ['INVALID_INPUT', 'NOT_FOUND'],
  append_event: ['INVALID_INPUT', 'NOT_FOUND'],
  read_events: ['INVALID_INPUT'],
};

/** A value of another JSON type than the advertised schema allows. */
function wrongValue(schema: { type?: string | string[]; anyOf?: unknown[] }): unknown {
  const types = schema.anyOf ? ['string', 'array'] : [schema.type ?? []].flat();
  if (types.length === 0) return undefined; // any JSON value is allowed
  if (!types.includes('boolean')) return true;
  return 'not-a-boolean';
}

/** The required fields of each tool, valid, so a wrong-typed field is what is refused. */
const BASE: Record<string, Record<string, unknown>> = {
  heartbeat: { id: 'wi_base' },
  resolve: { id: 'wi_base', status: 'done' },
  enqueue: { title: 't' },
  get_document: { kind: 'json', id: 'd' },
  commit: { kind: 'json', id: 'd', expected_version: 0 },
  history: { kind: 'json', id: 'd' },
  append_event: { type: 't' },
};

/**
 * Drives `s` through every tool (its own items, documents and events, named after `p`). `hostile` adds the
 * per-field wrong-type and oversize calls, run once per transport and era (older handshakes differ in headers
 * only).
 */
async function sweep(s: Session, p: string, hostile = true): Promise<void> {
  const seen = new Map<string, Set<string>>();
  const text = (r: Result1) => (r.content as Array<{ text?: string }>).map((c) => c.text ?? '').join('\n');
  const ok = async (name: string, args: unknown): Promise<Record<string, unknown>> => {
    const r = await s.call(name, args);
    expect(r.isError, `${name} ${JSON.stringify(args)?.slice(0, 200)}: ${text(r)}`).toBeFalsy();
    expect(text(r).length, name).toBeGreaterThan(0);
    return r.structuredContent as Record<string, unknown>;
  };
  const refused = async (name: string, args: unknown, code: string) => {
    const r = await s.call(name, args);
    const what = `${name} ${JSON.stringify(args)?.slice(0, 200)}`;
    expect(r.isError, `${what}: ${text(r)}`).toBe(true);
    expect(text(r), what).toMatch(new RegExp(`^${code}: \\S`));
    expect(text(r), what).not.toMatch(/\n\s+at /);
    if (!seen.has(name)) seen.set(name, new Set());
    seen.get(name)!.add(code);
    return refusalOf(r)!;
  };
  const w = `${p}-worker`;
  const other = `${p}-other`;
  const PROV = { prompt_ref: `${p}: plan` };

  // resume
  expect(await ok('resume', { worker: w })).toMatchObject({ worker: w });
  await refused('resume', { documents: ['no-slash'] }, 'INVALID_INPUT');
  await refused('resume', { ready: -1 }, 'INVALID_INPUT');

  // enqueue
  const a = await ok('enqueue', { title: `${p} a`, kind: p, priority: 5, payload: { n: 1 } });
  const keyed = await ok('enqueue', { title: `${p} keyed`, kind: p, idempotency_key: `${p}-key` });
  expect((await ok('enqueue', { title: `${p} keyed`, kind: p, idempotency_key: `${p}-key` })).id).toBe(
    keyed.id,
  );
  const parked = await ok('enqueue', { title: `${p} parked`, kind: `${p}-parked`, waiting_human: true });
  await refused('enqueue', { title: '  ' }, 'INVALID_INPUT');
  await refused('enqueue', { title: 't', idempotency_key: 'doc:json/x#y' }, 'INVALID_INPUT');
  await refused('enqueue', { title: 't', blocked_by: ['wi_missing'] }, 'INVALID_INPUT');
  await refused('enqueue', { title: 't', not_before: 'soon' }, 'INVALID_INPUT');

  // claim
  const held = (await ok('claim', { kind: p, worker: w, lease_ms: 3_600_000 })).item as {
    id: string;
    attempts: number;
  };
  expect(held.id).toBe(a.id);
  expect((await ok('claim', { kind: `${p}-none`, worker: w })).item).toBeNull();
  await refused('claim', { lease_ms: -1 }, 'INVALID_INPUT');
  expect((await ok('claim', { id: 'wi_missing', worker: w })).item).toBeNull();
  expect((await ok('claim', { id: held.id, worker: other })).item).toBeNull();

  // heartbeat
  await ok('heartbeat', { id: held.id, attempt: held.attempts, worker: w, lease_ms: 3_600_000 });
  await refused('heartbeat', { id: held.id, attempt: held.attempts + 5, worker: w }, 'LEASE_LOST');
  await refused('heartbeat', { id: held.id, worker: other }, 'LEASE_LOST');
  await refused('heartbeat', { id: 'wi_missing', worker: w }, 'NOT_FOUND');
  await refused('heartbeat', { id: keyed.id as string, worker: w }, 'INVALID_TRANSITION');
  await refused('heartbeat', { id: held.id, lease_ms: 'long' }, 'INVALID_INPUT');

  // resolve
  await refused('resolve', { id: held.id, status: 'done', worker: other }, 'LEASE_LOST');
  const done = { id: held.id, status: 'done', attempt: held.attempts, worker: w, result: { n: 2 } };
  expect(await ok('resolve', done)).toMatchObject({ status: 'done', result: { n: 2 } });
  expect(await ok('resolve', done)).toMatchObject({ status: 'done' }); // a retry after a lost reply
  await refused('resolve', { ...done, status: 'failed' }, 'INVALID_TRANSITION');
  await refused('resolve', { id: 'wi_missing', status: 'done', worker: w }, 'NOT_FOUND');
  await refused('resolve', { id: held.id, status: 'maybe' }, 'INVALID_INPUT');

  // commit and the kinds' rules
  const doc = { kind: 'json', id: `${p}-plan`, provenance: PROV };
  expect(await ok('commit', { ...doc, expected_version: 0, body: { steps: ['a'] } })).toMatchObject({
    version: 1,
    changed: true,
  });
  await ok('commit', { ...doc, expected_version: 1, merge_patch: { owner: 'me' } });
  await ok('commit', {
    ...doc,
    expected_version: 2,
    json_patch: [{ op: 'add', path: '/steps/-', value: 'b' }],
  });
  const once = { ...doc, expected_version: 3, body: { steps: ['c'] }, write_id: `${p}-w1` };
  await ok('commit', once);
  expect(await ok('commit', once)).toMatchObject({ replayed: true, version: 4 });
  await ok('commit', { ...doc, expected_version: 4, noop: true, reason: 'checked, nothing to change' });
  const conflict = await refused('commit', { ...doc, expected_version: 1, body: {} }, 'STATE_CONFLICT');
  expect(conflict).toMatchObject({ expected: 1, actual: 4 });
  const noProv = await refused(
    'commit',
    { kind: 'json', id: `${p}-plan`, expected_version: 4, body: {} },
    'PROVENANCE_REQUIRED',
  );
  expect(noProv.missing).toEqual(['input_hash or prompt_ref']);
  const unknownKind = await refused(
    'commit',
    { ...doc, kind: 'note', expected_version: 0, body: {} },
    'INVALID_INPUT',
  );
  expect(unknownKind.message).toMatch(/known kinds: json/);
  await refused('commit', { ...doc, expected_version: 4 }, 'INVALID_INPUT'); // no change given
  const task = { kind: 'task-ir', id: `${p}-task`, provenance: PROV };
  await refused('commit', { ...task, expected_version: 0, body: { goal: 5 } }, 'VALIDATION_FAILED');
  const body = (status: string, extra: Record<string, unknown> = {}) => ({
    goal: 'g',
    acceptance_criteria: [{ id: 'ac1', text: 't' }],
    ambiguities: [{ id: 'q1', question: 'which?', status, ...extra }],
  });
  await ok('commit', { ...task, expected_version: 0, body: body('open') });
  // A run cannot start on a task with an open question: the model is told to escalate it.
  const run = {
    kind: 'agent-run',
    id: `${p}-run`,
    expected_version: 0,
    provenance: PROV,
    body: {
      run_id: `${p}-run`,
      agent: 'coder',
      status: 'running',
      intent: { text: 'go' },
      task_ir: { id: task.id },
    },
  };
  expect((await refused('commit', run, 'AMBIGUITY_UNRESOLVED')).escalate).toEqual(['q1']);
  await ok('commit', { ...task, expected_version: 1, body: body('escalated') });
  await refused('commit', { ...task, expected_version: 2, body: body('open') }, 'INVALID_TRANSITION');
  // The escalated question is a human's: a model answering it is refused, in the document and as an item.
  await refused(
    'commit',
    { ...task, expected_version: 2, body: body('resolved', { resolution: 'guess' }) },
    'PERMISSION_DENIED',
  );
  const decision = (await inst.work.list({ status: 'waiting_human', limit: 1000 })).find((d) =>
    d.title.includes(task.id),
  )!;
  expect(decision).toBeDefined();
  await refused('resolve', { id: decision.id, status: 'done', result: { answer: 'x' } }, 'PERMISSION_DENIED');
  expect((await ok('claim', { id: decision.id, worker: w })).item).toBeNull();
  expect((await ok('claim', { id: parked.id as string, worker: w })).item).toBeNull();

  // get_document, history
  expect((await ok('get_document', { kind: 'json', id: doc.id })).document).toMatchObject({ version: 4 });
  expect((await ok('get_document', { kind: 'json', id: doc.id, version: 1 })).document).toMatchObject({
    body: { steps: ['a'] },
  });
  expect((await ok('get_document', { kind: 'json', id: doc.id, paths: ['/steps'] })).document).toMatchObject({
    values: { '/steps': ['c'] },
  });
  await refused('get_document', { kind: 'json', id: `${p}-missing` }, 'NOT_FOUND');
  await refused('get_document', { kind: 'json', id: doc.id, version: 99 }, 'NOT_FOUND');
  await refused('get_document', { kind: 'json', id: doc.id, version: 1, paths: ['/steps'] }, 'INVALID_INPUT');
  expect(((await ok('history', { kind: 'json', id: doc.id })).entries as unknown[]).length).toBe(5);
  await refused('history', { kind: 'json', id: `${p}-missing` }, 'NOT_FOUND');
  await refused('history', { kind: 'json', id: doc.id, limit: 0 }, 'INVALID_INPUT');

  // append_event, read_events
  const e = await ok('append_event', { type: `${p}.note`, stream: p, data: { text: 'hi' } });
  await ok('append_event', { type: `${p}.note`, stream: p, work_item_id: held.id });
  await refused('append_event', { type: 'state_committed', data: {} }, 'INVALID_INPUT');
  await refused('append_event', { type: `${p}.note`, work_item_id: 'wi_missing' }, 'NOT_FOUND');
  const events = (await ok('read_events', { stream: p })).events as Array<{ position: number }>;
  expect(events.map((x) => x.position)).toContain(e.position);
  expect((await ok('read_events', { stream: `${p}-none` })).events).toEqual([]);
  await refused('read_events', { since: 'yesterday-ish' }, 'INVALID_INPUT');

  // Hostile arguments to every tool: unknown fields, each field with a wrong type, __proto__ keys, huge values.
  if (hostile) {
    for (const t of s.tools) {
      expect((await refused(t.name, { ...BASE[t.name], bogus: 1 }, 'INVALID_INPUT')).field, t.name).toBe(
        'bogus',
      );
      for (const [field, schema] of Object.entries(t.inputSchema.properties ?? {})) {
        const value = wrongValue(schema as Parameters<typeof wrongValue>[0]);
        if (value === undefined) continue;
        const r = await refused(t.name, { ...BASE[t.name], [field]: value }, 'INVALID_INPUT');
        expect(r.field, `${t.name}.${field}`).toBe(field);
      }
      await refused(t.name, JSON.parse('{"constructor":{"prototype":{"x":1}}}'), 'INVALID_INPUT');
    }
    const nested = JSON.parse('{"a":{"__proto__":{"polluted":true}}}');
    await refused('commit', { ...doc, id: `${p}-proto`, expected_version: 0, body: nested }, 'INVALID_INPUT');
    await refused('enqueue', { title: 't', payload: nested }, 'INVALID_INPUT');
    await refused('append_event', { type: 't', data: nested }, 'INVALID_INPUT');
    const huge = 'x'.repeat(1_500_000);
    await refused('enqueue', { title: huge }, 'INVALID_INPUT');
    await refused(
      'commit',
      { ...doc, id: `${p}-huge`, expected_version: 0, body: { s: huge } },
      'INVALID_INPUT',
    );
    await refused('append_event', { type: 't', data: { s: huge } }, 'INVALID_INPUT');
    await refused('get_document', { kind: 'json', id: huge }, 'INVALID_INPUT');
  }

  // Every refusal above reached the client as a readable result, and each tool met all of its codes.
  for (const [tool, codes] of Object.entries(REFUSALS)) {
    expect([...(seen.get(tool) ?? [])].sort(), tool).toEqual([...codes].sort());
  }
}

describe('the official 1.x client reads every result of every tool', () => {
  it('over stdio, 2025-11-25 handshake', async () => {
    const s = await session1x(new Stdio1(stdioServer()), 'host-stdio');
    expect(s.tools.map((t) => t.name)).toEqual([...DEFAULT_TOOLS]);
    await sweep(s, 'stdio25');
  }, 180_000);

  for (const version of ['2025-03-26', '2025-06-18', '2025-11-25']) {
    it(`over Streamable HTTP, ${version} handshake`, async () => {
      const transport = handshake(new Http1(new URL(await httpUrl())), version);
      const s = await session1x(transport, `host-http-${version}`);
      expect(transport.protocolVersion).toBe(version);
      await sweep(s, `http${version.replaceAll('-', '')}`, version === '2025-11-25');
    }, 180_000);
  }
});

describe('the 2026-07-28 era (v2 client), every result as the 1.x client checks it', () => {
  it('over stdio', async () => {
    const s = await session2026(new Stdio2(stdioServer()), 'host-stdio-2026');
    await sweep(s, 'stdio26');
  }, 180_000);

  it('over Streamable HTTP', async () => {
    const s = await session2026(new Http2(new URL(await httpUrl())), 'host-http-2026');
    await sweep(s, 'http26');
  }, 180_000);
});

describe('document subscriptions, as the 1.x client sees them', () => {
  it('are delivered where advertised: stdio, 2026-07-28 HTTP; a 2025-era HTTP session is offered none', async () => {
    const stdio = await session1x(new Stdio1(stdioServer()), 'host-subscriber');
    expect(stdio.client.getServerCapabilities()?.resources?.subscribe).toBe(true);
    await inst.docs.commit({ kind: 'json', id: 'watched', expected_version: 0, body: { v: 1 } });
    const updates: string[] = [];
    stdio.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
    });
    await stdio.client.subscribeResource({ uri: 'agentstate://json/watched' });
    // Another process (this one) commits: the server follows the log and notifies.
    await inst.docs.commit({ kind: 'json', id: 'watched', expected_version: 1, body: { v: 2 } });
    await until(() => updates.length > 0);
    expect(updates).toEqual(['agentstate://json/watched']);

    const overHttp = await session1x(new Http1(new URL(await httpUrl())), 'host-http-subscriber');
    expect(overHttp.client.getServerCapabilities()?.resources).toBeDefined();
    expect(overHttp.client.getServerCapabilities()?.resources?.subscribe).toBeFalsy();
    await expect(
      overHttp.client.subscribeResource({ uri: 'agentstate://json/watched' }),
    ).rejects.toMatchObject({
      code: -32601,
    });

    // A 2026-07-28 client over HTTP listens on a stream the server keeps open: it is delivered there.
    const modern = new Client2(
      { name: 'host-listener', version: '2.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await modern.connect(new Http2(new URL(await httpUrl())));
    closers.push(() => modern.close());
    const heard: string[] = [];
    modern.setNotificationHandler('notifications/resources/updated', (n) => {
      heard.push(n.params.uri);
    });
    const sub = await modern.listen({ resourceSubscriptions: ['agentstate://json/watched'] });
    expect(sub.honoredFilter.resourceSubscriptions).toEqual(['agentstate://json/watched']);
    await inst.docs.commit({ kind: 'json', id: 'watched', expected_version: 2, body: { v: 3 } });
    await until(() => heard.length > 0);
    expect(heard).toEqual(['agentstate://json/watched']);
    await sub.close();
  }, 120_000);
});
