// ask_human: a person answers a work item waiting for a human in the host, through MCP elicitation, driven by
// the official clients in process — the v2 client on a 2025-era connection (the SDK's shim sends
// elicitation/create) and on the 2026-07-28 era over Streamable HTTP (input_required, the client fulfils and
// retries), and the 1.x client hosts embed. The answer does what the dashboard's does (resolve a decision;
// unpark or cancel a parked item), recorded as the human's with `via: 'elicitation'` and the host's client;
// decline, cancel, a host without elicitation, and every hostile call or response write nothing.
import {
  Client as Client2,
  StreamableHTTPClientTransport as Http2,
  type Transport as Transport2,
} from '@modelcontextprotocol/client';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { createMcpHandler, InMemoryTransport, type JSONRPCMessage } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventRecord, JsonObject, WorkItem } from '../../src/core/types.js';
import type { Instance } from '../../src/instance/instance.js';
import { type AgentStateMcp, createAgentStateMcp, DEFAULT_TOOLS } from '../../src/mcp/index.js';
import { runOperation } from '../../src/service/invoke.js';
import { type BackendUnderTest, backendsForThisFile } from '../helpers/backends.js';
import { refusalOf } from './helpers.js';

const backends = await backendsForThisFile();

type Reply = { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> };
type CallResult = {
  isError?: boolean;
  content?: unknown;
  structuredContent?: Record<string, unknown>;
};

/** A host: calls tools, and counts (and answers) every elicitation/create the server sends it. */
interface Host {
  call(name: string, args: Record<string, unknown>): Promise<CallResult>;
  listTools(): Promise<string[]>;
  /** The elicitation requests seen on the wire (params), however the client handles them. */
  asked: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

const CLIENT = { name: 'host-app', version: '4.5.6' };
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

/** Counts server→client elicitation/create requests crossing a linked pair (as JSON text, like a wire). */
function countingPair(asked: Array<Record<string, unknown>>): [InMemoryTransport, InMemoryTransport] {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const send = serverSide.send.bind(serverSide);
  serverSide.send = (m: JSONRPCMessage, o?: Parameters<typeof send>[1]) => {
    const msg = JSON.parse(JSON.stringify(m)) as { method?: string; params?: Record<string, unknown> };
    if (msg.method === 'elicitation/create') asked.push(msg.params ?? {});
    return send(msg as JSONRPCMessage, o);
  };
  const csend = clientSide.send.bind(clientSide);
  clientSide.send = (m: JSONRPCMessage, o?: Parameters<typeof csend>[1]) =>
    csend(JSON.parse(JSON.stringify(m)) as JSONRPCMessage, o);
  return [clientSide, serverSide];
}

/** The v2 client on a 2025-era in-process connection; `reply` answers the form (none: no capability). */
async function host2025(mcp: AgentStateMcp, reply?: () => Reply): Promise<Host> {
  const asked: Array<Record<string, unknown>> = [];
  const [clientSide, serverSide] = countingPair(asked);
  const server = await mcp.factory({ era: 'legacy' });
  await server.connect(serverSide);
  const client = new Client2(CLIENT, reply ? { capabilities: { elicitation: { form: {} } } } : {});
  if (reply) client.setRequestHandler('elicitation/create', async () => reply() as never);
  await client.connect(clientSide);
  return hostOf(asked, client as unknown as HostClient, server);
}

/** What both clients offer the tests. */
interface HostClient {
  callTool(r: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  listTools(): Promise<{ tools: Array<{ name: string }> }>;
  close(): Promise<void>;
}

/** A connected client as the tests drive it, closed after the test. */
function hostOf(asked: Host['asked'], client: HostClient, server: { close(): Promise<void> }): Host {
  const h: Host = {
    asked,
    call: (name, args) => client.callTool({ name, arguments: args }) as Promise<CallResult>,
    listTools: async () => (await client.listTools()).tools.map((t) => t.name),
    close: async () => {
      await client.close();
      await server.close();
    },
  };
  cleanups.push(h.close);
  return h;
}

/** The 1.x client (what hosts embed today) declaring `elicitation: {}`, on a 2025-era connection. */
async function host1x(mcp: AgentStateMcp, reply: () => Reply): Promise<Host> {
  const asked: Array<Record<string, unknown>> = [];
  const [clientSide, serverSide] = countingPair(asked);
  const server = await mcp.factory({ era: 'legacy' });
  await server.connect(serverSide);
  const client = new Client1(CLIENT, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async () => reply());
  await client.connect(clientSide as never);
  return hostOf(asked, client as unknown as HostClient, server);
}

/** The v2 client on the 2026-07-28 era over Streamable HTTP (in process): the form rides input_required. */
async function host2026(mcp: AgentStateMcp, reply?: () => Reply): Promise<Host> {
  const asked: Array<Record<string, unknown>> = [];
  const handler = createMcpHandler(mcp.factory);
  const transport = new Http2(new URL('http://127.0.0.1/mcp'), {
    fetch: async (url: string | URL | Request, init?: RequestInit) => {
      const res = await handler.fetch(new Request(url, init));
      const text = await res.clone().text();
      // An input_required result carries the form in-band: count each elicitation it asks for.
      for (const _ of text.matchAll(/"method":"elicitation\/create"/g)) asked.push({});
      return res;
    },
  });
  const client = new Client2(CLIENT, {
    versionNegotiation: { mode: { pin: '2026-07-28' } },
    ...(reply ? { capabilities: { elicitation: { form: {} } } } : {}),
  });
  if (reply) client.setRequestHandler('elicitation/create', async () => reply() as never);
  await client.connect(transport as Transport2);
  expect(client.getProtocolEra()).toBe('modern');
  const h: Host = {
    asked,
    call: (name, args) => client.callTool({ name, arguments: args }) as Promise<CallResult>,
    listTools: async () => (await client.listTools()).tools.map((t) => t.name),
    close: () => client.close(),
  };
  cleanups.push(h.close);
  return h;
}

/** An escalated TaskIR ambiguity: the decision item its commit enqueued (waiting for a human). */
async function decision(inst: Instance, options?: string[]): Promise<WorkItem> {
  await inst.docs.commit({
    kind: 'task-ir',
    id: 'login',
    expected_version: 0,
    body: {
      goal: 'Add login',
      acceptance_criteria: [{ id: 'ac1', text: 'users can log in' }],
      ambiguities: [
        { id: 'a1', question: 'OAuth or passwords?', status: 'escalated', ...(options ? { options } : {}) },
      ],
    },
    actor: 'planner',
  });
  const [item] = await inst.work.list({ status: 'waiting_human', kind: 'task-ir.ambiguity' });
  expect(item?.payload).toMatchObject({ ambiguity_id: 'a1' });
  return item!;
}

/** A parked approval: an ordinary item waiting for a human. */
const approval = (inst: Instance) =>
  inst.work.enqueue({
    title: 'deploy to production',
    payload: { question: 'Deploy build 42 to production?' },
    waiting_human: true,
  });

async function snapshot(inst: Instance) {
  return {
    head: (await inst.events.head())?.position ?? 0,
    items: (await inst.work.list({ limit: 1000 })).map((w) => [w.id, w.status, w.updated_at]),
    docs: (await inst.docs.list()).map((d) => [d.kind, d.id, d.version]),
  };
}

const newest = async (inst: Instance, id: string): Promise<EventRecord> =>
  (await inst.events.read({ work_item_id: id, reverse: true, limit: 1 }))[0]!;

function refusal(r: CallResult, code: string) {
  expect(r.isError, JSON.stringify(r)).toBe(true);
  const e = refusalOf(r)!;
  expect(e?.code, JSON.stringify(r.content)).toBe(code);
  expect(JSON.stringify(r.content)).not.toMatch(/\\n\s+at /);
  return e;
}

describe.each(backends)('ask_human on $name', (b: BackendUnderTest) => {
  it('a decision: the person picks an option in the host; recorded as the dashboard records it, as human via elicitation', async () => {
    const inst = await b.open();
    cleanups.push(() => inst.close());
    const mcp = createAgentStateMcp({ instance: inst, model: 'm-1' });
    cleanups.push(() => mcp.close());
    const item = await decision(inst, ['OAuth', 'passwords']);
    const h = await host2025(mcp, () => ({ action: 'accept', content: { answer: 'OAuth' } }));
    expect(await h.listTools()).toContain('ask_human');

    const r = await h.call('ask_human', { id: item.id, note: 'blocks the login task' });
    expect(r.isError, JSON.stringify(r)).toBeFalsy();
    expect(r.structuredContent).toEqual({ id: item.id, asked: true, action: 'accept', status: 'done' });
    // One form, with the item's question, its options and the model's note set apart.
    expect(h.asked).toHaveLength(1);
    expect(h.asked[0]!.message).toContain('OAuth or passwords?');
    expect(h.asked[0]!.message).toContain('The agent adds: blocks the login task');
    expect(h.asked[0]!.requestedSchema).toMatchObject({
      properties: { answer: { enum: ['OAuth', 'passwords'] } },
    });

    const done = await inst.work.get(item.id);
    expect(done.result).toEqual({ answer: 'OAuth' });
    const e = await newest(inst, item.id);
    expect(e.type).toBe('work_item_resolved');
    expect(e.actor).toBe('human@host-app');
    const data = e.data as JsonObject;
    expect(data.actor_kind).toBe('human');
    expect(data.provenance).toMatchObject({ via: 'elicitation', mcp_client: 'host-app/4.5.6' });
    // The document recorded the answer in the same transaction, with the same provenance.
    const doc = await inst.docs.get({ kind: 'task-ir', id: 'login' });
    expect((doc.body.ambiguities as JsonObject[])[0]).toMatchObject({
      status: 'resolved',
      resolution: 'OAuth',
      resolved_by: 'human@host-app',
    });
    const last = (await inst.docs.history({ kind: 'task-ir', id: 'login' })).entries.at(-1)!;
    expect(last.actor_kind).toBe('human');
    expect(last.provenance).toMatchObject({ via: 'elicitation', mcp_client: 'host-app/4.5.6' });
    expect(((await runOperation(inst, 'verify')) as { ok: boolean }).ok).toBe(true);
  });

  it("a durable run's question: asked as a decision with the run's options, answered as the human, and the run gets the answer", async () => {
    const inst = await b.open();
    cleanups.push(() => inst.close());
    const mcp = createAgentStateMcp({ instance: inst, model: 'm-1' });
    cleanups.push(() => mcp.close());
    const parent = await inst.work.enqueue({ title: 'refund' });
    const held = (await inst.work.claim({ worker: 'w1' }))!;
    const run = await inst.work.run({ id: parent.id, worker: 'w1', attempt: held.attempts });
    await run.ask('approve', { question: 'Refund 42 €?', options: ['yes', 'no'] }).catch(() => {});
    const [question] = await inst.work.list({ status: 'waiting_human' });
    const h = await host2025(mcp, () => ({ action: 'accept', content: { answer: 'no' } }));
    const r = await h.call('ask_human', { id: question!.id });
    expect(r.structuredContent).toEqual({ id: question!.id, asked: true, action: 'accept', status: 'done' });
    expect(h.asked[0]!.message).toContain('Decision needed: Refund 42 €?');
    expect(h.asked[0]!.requestedSchema).toMatchObject({ properties: { answer: { enum: ['yes', 'no'] } } });
    expect((await newest(inst, question!.id)).actor).toBe('human@host-app');
    const again = (await inst.work.claim({ worker: 'w1' }))!;
    expect(again.id).toBe(parent.id);
    const run2 = await inst.work.run({ id: parent.id, worker: 'w1', attempt: again.attempts });
    expect(await run2.ask('approve', { question: 'Refund 42 €?' })).toMatchObject({
      status: 'done',
      answer: { answer: 'no' },
    });
  });

  it('decline and cancel write nothing: the item still waits for a human', async () => {
    const inst = await b.open();
    cleanups.push(() => inst.close());
    const mcp = createAgentStateMcp({ instance: inst });
    cleanups.push(() => mcp.close());
    const item = await approval(inst);
    for (const action of ['decline', 'cancel'] as const) {
      const h = await host2025(mcp, () => ({ action }));
      const before = await snapshot(inst);
      const r = await h.call('ask_human', { id: item.id });
      expect(r.isError, JSON.stringify(r)).toBeFalsy();
      expect(r.structuredContent).toEqual({ id: item.id, asked: true, action, status: 'waiting_human' });
      expect(h.asked).toHaveLength(1);
      expect(await snapshot(inst)).toEqual(before);
    }
  });
});

describe('ask_human (SQLite)', () => {
  const sqlite = backends[0]!;
  async function setup(
    options: Parameters<typeof createAgentStateMcp>[0] extends infer O ? Partial<O> : never = {},
  ) {
    const inst = await sqlite.open();
    cleanups.push(() => inst.close());
    const mcp = createAgentStateMcp({ instance: inst, ...options });
    cleanups.push(() => mcp.close());
    return { inst, mcp };
  }

  it('a parked approval: approve unparks it, reject cancels it with the comment, both as the human', async () => {
    const { inst, mcp } = await setup();
    const a = await approval(inst);
    const h = await host2025(mcp, () => ({
      action: 'accept',
      content: { decision: 'approve', comment: 'go' },
    }));
    const r = await h.call('ask_human', { id: a.id });
    expect(r.structuredContent).toMatchObject({ action: 'accept', status: 'pending' });
    expect(h.asked[0]!.message).toContain('Deploy build 42 to production?');
    const un = await newest(inst, a.id);
    expect(un.type).toBe('work_item_unparked');
    expect(un.data).toMatchObject({ actor_kind: 'human', reason: 'go', provenance: { via: 'elicitation' } });

    const b2 = await approval(inst);
    const h2 = await host2025(mcp, () => ({
      action: 'accept',
      content: { decision: 'reject', comment: 'not today' },
    }));
    const r2 = await h2.call('ask_human', { id: b2.id });
    expect(r2.structuredContent).toMatchObject({ action: 'accept', status: 'cancelled' });
    expect((await inst.work.get(b2.id)).error).toBe('not today');
    const ca = await newest(inst, b2.id);
    expect(ca.type).toBe('work_item_cancelled');
    expect(ca.actor).toBe('human@host-app');
    expect(ca.data).toMatchObject({ actor_kind: 'human', provenance: { mcp_client: 'host-app/4.5.6' } });
  });

  it('the 1.x client hosts embed (elicitation: {}) answers through the same form', async () => {
    const { inst, mcp } = await setup();
    const item = await decision(inst);
    const h = await host1x(mcp, () => ({ action: 'accept', content: { answer: 'passwords, with 2FA' } }));
    // Still ten tools (DESIGN): for a host that can show a form, ask_human in the place of history.
    const names = await h.listTools();
    expect(names).toEqual([...DEFAULT_TOOLS.filter((t) => t !== 'history'), 'ask_human']);
    const r = await h.call('ask_human', { id: item.id });
    expect(r.structuredContent).toMatchObject({ action: 'accept', status: 'done' });
    expect((await inst.work.get(item.id)).result).toEqual({ answer: 'passwords, with 2FA' });
    expect((await newest(inst, item.id)).data).toMatchObject({
      actor_kind: 'human',
      provenance: { via: 'elicitation', mcp_client: 'host-app/4.5.6' },
    });
  });

  it('the 2026-07-28 era: the form rides an input_required result, the retry carries the answer', async () => {
    const { inst, mcp } = await setup();
    const item = await decision(inst, ['OAuth', 'passwords']);
    const h = await host2026(mcp, () => ({
      action: 'accept',
      content: { other: 'SSO via the company IdP' },
    }));
    expect(await h.listTools()).toContain('ask_human');
    const r = await h.call('ask_human', { id: item.id });
    expect(r.isError, JSON.stringify(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ action: 'accept', status: 'done' });
    expect(h.asked).toHaveLength(1);
    expect((await inst.work.get(item.id)).result).toEqual({ answer: 'SSO via the company IdP' });
    const e = await newest(inst, item.id);
    expect(e.data).toMatchObject({
      actor_kind: 'human',
      provenance: { via: 'elicitation', mcp_client: 'host-app/4.5.6' },
    });

    // A 2026-07-28 client that declares no elicitation is never sent a form and does not see the tool.
    const plain = await host2026(mcp);
    expect(await plain.listTools()).not.toContain('ask_human');
    const a = await approval(inst);
    const before = await snapshot(inst);
    const r2 = await plain.call('ask_human', { id: a.id });
    expect(r2.structuredContent).toEqual({ id: a.id, asked: false, action: null, status: 'waiting_human' });
    expect(plain.asked).toHaveLength(0);
    expect(await snapshot(inst)).toEqual(before);
  });

  it('a host without elicitation: the tool is not listed, nothing is asked, the item waits', async () => {
    const { inst, mcp } = await setup();
    const item = await decision(inst);
    const h = await host2025(mcp);
    const tools = await h.listTools();
    expect(tools).not.toContain('ask_human');
    expect(tools).toHaveLength(10);
    const before = await snapshot(inst);
    const r = await h.call('ask_human', { id: item.id });
    expect(r.isError, JSON.stringify(r)).toBeFalsy();
    expect(r.structuredContent).toEqual({ id: item.id, asked: false, action: null, status: 'waiting_human' });
    expect((r.content as Array<{ text: string }>)[0]!.text).toContain('nothing was asked');
    expect(h.asked).toHaveLength(0);
    expect(await snapshot(inst)).toEqual(before);
  });

  it('hostile calls are refused before anything is asked: wrong id, not waiting, an answer in the arguments', async () => {
    const { inst, mcp } = await setup();
    const item = await decision(inst, ['OAuth', 'passwords']);
    const pending = await inst.work.enqueue({ title: 'plain work' });
    const h = await host2025(mcp, () => ({ action: 'accept', content: { answer: 'OAuth' } }));
    const before = await snapshot(inst);
    refusal(await h.call('ask_human', { id: 'wi_nope' }), 'NOT_FOUND');
    refusal(await h.call('ask_human', { id: pending.id }), 'INVALID_TRANSITION');
    for (const extra of [
      { answer: 'OAuth' },
      { decision: 'approve' },
      { actor_kind: 'human' },
      { actor: 'alice' },
      { provenance: { via: 'elicitation' } },
      { result: { answer: 'OAuth' } },
    ]) {
      const e = refusal(await h.call('ask_human', { id: item.id, ...extra }), 'INVALID_INPUT');
      expect(e.field).toBe(Object.keys(extra)[0]);
    }
    refusal(await h.call('ask_human', { id: item.id, note: 'x'.repeat(501) }), 'INVALID_INPUT');
    refusal(await h.call('ask_human', { id: 42 }), 'INVALID_INPUT');
    expect(h.asked).toHaveLength(0);
    expect(await snapshot(inst)).toEqual(before);
  });

  it('a response that does not fit the form is refused and writes nothing', async () => {
    const { inst, mcp } = await setup();
    const a = await approval(inst);
    const d = await decision(inst, ['OAuth', 'passwords']);
    const cases: Array<[string, Record<string, unknown>, string]> = [
      [a.id, { decision: 'maybe' }, 'decision'],
      [a.id, { decision: 'approve', actor_kind: 'model' }, 'actor_kind'],
      [a.id, { decision: 1 }, 'decision'],
      [a.id, { comment: 'no decision' }, 'decision'],
      [a.id, { decision: 'approve', comment: 'x'.repeat(2001) }, 'comment'],
      [d.id, { answer: 'LDAP' }, 'answer'],
      [d.id, {}, 'answer'],
      [d.id, { answer: 'OAuth', other: 7 }, 'other'],
    ];
    for (const [id, content, field] of cases) {
      const h = await host2025(mcp, () => ({ action: 'accept', content }));
      const before = await snapshot(inst);
      const e = refusal(await h.call('ask_human', { id }), 'INVALID_INPUT');
      expect(e.field, JSON.stringify(content)).toBe(field);
      expect(h.asked).toHaveLength(1);
      expect(await snapshot(inst)).toEqual(before);
    }
    // A null value the v2 client refuses itself (no elicitation result carries one): an error result, no write.
    const h = await host2025(mcp, () => ({ action: 'accept', content: { answer: null } }));
    const before = await snapshot(inst);
    expect((await h.call('ask_human', { id: d.id })).isError).toBe(true);
    expect(await snapshot(inst)).toEqual(before);
    expect((await inst.work.get(a.id)).status).toBe('waiting_human');
    expect((await inst.work.get(d.id)).status).toBe('waiting_human');
  });

  it('an item that changed while the person was asked is not answered with the stale form', async () => {
    const { inst, mcp } = await setup();
    const a = await approval(inst);
    const h = await host2025(mcp, () => {
      // Someone answers on the dashboard while the form is open.
      void inst.work.unpark({ id: a.id, actor: 'bob', actor_kind: 'human' });
      return { action: 'accept', content: { decision: 'reject' } };
    });
    const r = await h.call('ask_human', { id: a.id });
    refusal(r, 'INVALID_TRANSITION');
    expect((await inst.work.get(a.id)).status).toBe('pending');
  });

  it('elicitation: false serves no ask_human at all', async () => {
    const { inst, mcp } = await setup({ elicitation: false });
    const item = await decision(inst);
    const h = await host2025(mcp, () => ({ action: 'accept', content: { answer: 'x' } }));
    expect(await h.listTools()).not.toContain('ask_human');
    // An unknown tool: a protocol error, as for any other name the server does not serve.
    await expect(h.call('ask_human', { id: item.id })).rejects.toThrow(/ask_human/);
    expect(h.asked).toHaveLength(0);
  });
});
