// The MCP server in process (issue 14): every tool's success, each refusal code, bad arguments and hostile
// input as typed isError results that write nothing, writes attributed to the model, the tool-list budget,
// documents as resources with change notifications. SQLite only: the MCP layer calls the service table,
// whose behaviour on every backend the conformance suite holds.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/core/types.js';
import { type Instance, openInstance } from '../../src/instance/instance.js';
import { kindNames, registerKind } from '../../src/kinds/registry.js';
import { createAgentStateMcp, DEFAULT_TOOLS, selectTools } from '../../src/mcp/index.js';
import { getOperation } from '../../src/service/table.js';
import { compileSchema } from '../../src/service/validate.js';
import { ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { type Connected, callRaw, connect, connectTo, refusalOf } from './helpers.js';

const root = tempDir();
let n = 0;
let inst: Instance;
let c: Connected;
let client: Client;

beforeEach(async () => {
  inst = await openInstance({ dir: `${root}/i${++n}` });
  c = await connect(inst, { model: 'claude-test-1' });
  client = c.client;
});
afterEach(async () => {
  await c.close();
  await inst.close();
});

type Result = Awaited<ReturnType<Client['callTool']>>;
const call = (name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args });
const PROV = { prompt_ref: 'task: plan the release' };

/** The result's structured content, after checking it fits the operation's full output schema. */
function ok(name: string, r: Result): Record<string, unknown> {
  expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
  const text = (r.content as Array<{ type: string; text: string }>)[0]!;
  expect(text.type).toBe('text');
  expect(text.text.length).toBeGreaterThan(0);
  const s = r.structuredContent as Record<string, unknown>;
  const wrapped = { claim: 'item', get_document: 'document', read_events: 'events' }[name];
  const value = wrapped ? s[wrapped] : s;
  const check = compileSchema(getOperation(name).output);
  expect(check(value), JSON.stringify(check.errors)).toBe(true);
  return s;
}

/** What a refused call must leave as it was. */
async function snapshot() {
  return {
    head: (await inst.events.head())?.position ?? 0,
    items: (await inst.work.list({ limit: 1000 })).map((w) => [w.id, w.status, w.attempts]),
    docs: (await inst.docs.list()).map((d) => [d.kind, d.id, d.version]),
  };
}

/** Calls the tool, expects a typed refusal with `code`, and that nothing was written. */
async function refused(name: string, args: Record<string, unknown>, code: string) {
  const before = await snapshot();
  const r = await call(name, args);
  return expectRefusal(r, code, before);
}

async function expectRefusal(r: Result, code: string, before: Awaited<ReturnType<typeof snapshot>>) {
  expect(r.isError, JSON.stringify(r)).toBe(true);
  const text = (r.content as Array<{ text: string }>)[0]!.text;
  expect(text.startsWith(`${code}: `), text).toBe(true);
  expect(text).not.toMatch(/\n\s+at /); // never a stack trace
  // The refusal is in the text the model reads; structured content is only ever the tool's result.
  expect(r.structuredContent).toBeUndefined();
  const error = refusalOf(r)!;
  expect(error.code).toBe(code);
  expect(await snapshot()).toEqual(before);
  return error;
}

describe('tools/list', () => {
  it('has at most 10 tools in at most 12,000 characters, each with an output schema and annotations', async () => {
    const list = await client.listTools();
    expect(list.tools.map((t) => t.name)).toEqual([...DEFAULT_TOOLS]);
    expect(list.tools.length).toBeLessThanOrEqual(10);
    // ≈ 3k tokens (DESIGN.md): heartbeat's and resolve's schemas list only the item fields they change.
    expect(JSON.stringify(list).length).toBeLessThanOrEqual(12_000);
    for (const t of list.tools) {
      const op = getOperation(t.name);
      expect(t.outputSchema?.type, t.name).toBe('object');
      expect(t.inputSchema.type, t.name).toBe('object');
      expect(t.annotations?.readOnlyHint, t.name).toBe(!op.writes);
      if (op.writes) expect(t.annotations?.destructiveHint, t.name).toBe(false);
      expect(t.annotations?.idempotentHint ?? false, t.name).toBe(op.writes && op.idempotent === true);
      // The edge's own fields are not offered: a model cannot write as a human or as someone else.
      expect(Object.keys(t.inputSchema.properties ?? {}), t.name).not.toContain('actor_kind');
      expect(Object.keys(t.inputSchema.properties ?? {}), t.name).not.toContain('actor');
    }
  });

  it('docs/mcp.md gives the tool-list sizes the code has (written by scripts/mcp-doc.mjs)', async () => {
    const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'mcp-doc.mjs'), '--check'], {
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    // The script reads dist/; the figure must also be what this source serves.
    const doc = readFileSync(join(ROOT, 'docs', 'mcp.md'), 'utf8');
    const all = /<!-- mcp-doc:all -->([\d,]+) characters/.exec(doc)?.[1];
    expect(all).toBe(JSON.stringify(await client.listTools()).length.toLocaleString('en-US'));
  });

  it("commit names the registered kinds, a kind registered later included, so a model's first commit can succeed", async () => {
    const kindOf = async (cl: Client) =>
      (await cl.listTools()).tools.find((t) => t.name === 'commit')!.inputSchema.properties!.kind as {
        enum?: string[];
      };
    expect((await kindOf(client)).enum).toEqual(kindNames());
    expect(kindNames()).toEqual(expect.arrayContaining(['json', 'task-ir', 'agent-run']));
    // One server definition, built before the kind existed, serves it to its next connection.
    const mcp = createAgentStateMcp({ instance: inst, model: 'claude-test-1' });
    const first = await connectTo(mcp);
    expect((await kindOf(first.client)).enum).not.toContain('mcp-test-note');
    await first.close();
    registerKind({
      name: 'mcp-test-note',
      description: 'a note',
      schema: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
    });
    const later = await connectTo(mcp);
    try {
      expect((await kindOf(later.client)).enum).toContain('mcp-test-note');
      const r = await later.client.callTool({
        name: 'commit',
        arguments: {
          kind: 'mcp-test-note',
          id: 'n1',
          expected_version: 0,
          body: { text: 'hi' },
          provenance: PROV,
        },
      });
      expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    } finally {
      await later.close();
      await mcp.close();
    }
  });

  it('--tools serves toolsets and tools, never more than 10, never a local operation', async () => {
    expect(selectTools('core')).toEqual(['resume', 'claim', 'resolve', 'commit']);
    expect(selectTools('events,diff')).toEqual(['resume', 'append_event', 'read_events', 'diff']);
    expect(() => selectTools('nope')).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
    expect(() => selectTools('export_file')).toThrow(/paths on this machine/);
    expect(() => selectTools('all,diff')).toThrow(/at most 10/);
    const few = await connect(inst, { tools: 'core' });
    try {
      expect((await few.client.listTools()).tools.map((t) => t.name)).toEqual(selectTools('core'));
      // A tool not served is a protocol error (the host's mistake), not a tool result.
      await expect(few.client.callTool({ name: 'enqueue', arguments: { title: 'x' } })).rejects.toThrow(
        /not found/,
      );
    } finally {
      await few.close();
    }
  });
});

describe('the runs toolset: a model signals a durable run and reads its records', () => {
  it('signal wakes a waiting run (attributed to the model); list_steps lists the records; bad signals are refused', async () => {
    expect(selectTools('runs')).toEqual(['resume', 'claim', 'heartbeat', 'resolve', 'signal', 'list_steps']);
    const item = await inst.work.enqueue({ title: 'waits for a model' });
    const held = (await inst.work.claim({ worker: 'w-runs', id: item.id }))!;
    const run = await inst.work.run({ id: item.id, worker: 'w-runs', attempt: held.attempts });
    await run.step('draft', () => 'd1');
    await run.waitFor('reviewed').catch(() => {});
    const c = await connect(inst, { tools: 'runs' });
    try {
      const sent = await c.client.callTool({
        name: 'signal',
        arguments: { id: item.id, name: 'reviewed', payload: { score: 9 } },
      });
      expect(sent.isError).not.toBe(true);
      expect(sent.structuredContent).toMatchObject({ type: 'signal', name: 'reviewed', actor_kind: 'model' });
      expect((await inst.work.get(item.id)).not_before).not.toBe('9999-12-31T23:59:59.999Z');
      const listed = await c.client.callTool({ name: 'list_steps', arguments: { id: item.id } });
      expect(
        (listed.structuredContent as { records: Array<{ type: string }> }).records.map((r) => r.type),
      ).toEqual(['step', 'waiting']);
      for (const [args, code] of [
        [{ id: 'wi_none', name: 'x' }, 'NOT_FOUND'],
        [{ id: item.id, name: '__proto__' }, 'INVALID_INPUT'],
        [{ id: item.id, name: 'x', actor: 'ada' }, 'INVALID_INPUT'],
        [{ id: item.id, name: 'x', payload: 'y'.repeat(1024 * 1024 + 1) }, 'INVALID_INPUT'],
      ] as const) {
        const r = await c.client.callTool({ name: 'signal', arguments: args });
        expect(refusalOf(r)?.code, JSON.stringify(args).slice(0, 80)).toBe(code);
      }
    } finally {
      await c.close();
    }
    // Resetting a step is a person's decision: served as a tool, a model's call is refused.
    await inst.work
      .resolve({ id: item.id, status: 'failed', error: 'stop', worker: 'w-runs', attempt: held.attempts })
      .catch(() => {});
    const r = await connect(inst, { tools: 'reset_step' });
    try {
      const refused = await r.client.callTool({
        name: 'reset_step',
        arguments: { id: item.id, name: 'draft' },
      });
      expect(refusalOf(refused)?.code).toBe('PERMISSION_DENIED');
      expect((await inst.work.steps(item.id)).map((x) => x.type)).toEqual(['step', 'waiting']);
    } finally {
      await r.close();
    }
  });
});

describe('every tool succeeds with a typed result and a short text', () => {
  it('work items: enqueue, claim, heartbeat, resolve, resume', async () => {
    const e = ok('enqueue', await call('enqueue', { title: 'fetch', priority: 5, payload: { url: 'u' } }));
    await call('enqueue', { title: 'later' });
    const claimed = ok('claim', await call('claim', { lease_ms: 30_000 })).item as Record<string, unknown>;
    expect(claimed).toMatchObject({ id: e.id, status: 'in_flight', attempts: 1 });
    // The session's worker holds it: the default lease owner is this connection's actor.
    expect(claimed.lease_owner).toMatch(/^test-client-[0-9a-f]{6}$/);
    ok('heartbeat', await call('heartbeat', { id: e.id, attempt: 1, lease_ms: 60_000 }));
    const r = ok('resume', await call('resume'));
    expect(r.held).toEqual([expect.objectContaining({ id: e.id, attempts: 1 })]);
    expect(r.ready).toEqual([expect.objectContaining({ title: 'later' })]);
    const done = ok(
      'resolve',
      await call('resolve', { id: e.id, status: 'done', attempt: 1, result: { n: 1 } }),
    );
    expect(done).toMatchObject({ status: 'done', result: { n: 1 } });
    expect(ok('claim', await call('claim', { kind: 'none-of-these' })).item).toBeNull();
  });

  it('documents: commit, get_document (whole, a version, a field), history', async () => {
    const v1 = ok(
      'commit',
      await call('commit', {
        kind: 'json',
        id: 'plan',
        expected_version: 0,
        body: { steps: ['a'], owner: 'me' },
        provenance: PROV,
      }),
    );
    expect(v1).toMatchObject({ version: 1, changed: true });
    ok(
      'commit',
      await call('commit', {
        kind: 'json',
        id: 'plan',
        expected_version: 1,
        merge_patch: { owner: 'you' },
        provenance: PROV,
      }),
    );
    const doc = ok('get_document', await call('get_document', { kind: 'json', id: 'plan' }));
    expect(doc.document).toMatchObject({ version: 2, body: { owner: 'you' } });
    const old = ok('get_document', await call('get_document', { kind: 'json', id: 'plan', version: 1 }));
    expect(old.document).toMatchObject({ version: 1, body: { owner: 'me' } });
    const field = ok(
      'get_document',
      await call('get_document', { kind: 'json', id: 'plan', paths: ['/owner'] }),
    );
    expect(field.document).toMatchObject({ version: 2, values: { '/owner': 'you' } });
    const h = ok('history', await call('history', { kind: 'json', id: 'plan' }));
    expect((h.entries as unknown[]).length).toBe(2);
  });

  it('events: append_event, read_events', async () => {
    const e = ok('append_event', await call('append_event', { type: 'note', data: { text: 'hi' } }));
    expect(e).toMatchObject({ type: 'note', actor: expect.stringMatching(/^test-client-/) });
    const r = ok('read_events', await call('read_events', { type: 'note' }));
    expect(r.events).toEqual([expect.objectContaining({ position: e.position, data: { text: 'hi' } })]);
  });
});

describe('refusals are isError results with the code and its details, and write nothing', () => {
  it("append_event: the store's own event types and those a kind's commits write cannot be forged", async () => {
    for (const type of ['work_item_resolved', 'state_committed', 'grid_state_updated', 'grid_status_changed'])
      await refused('append_event', { type, data: { forged: true } }, 'INVALID_INPUT');
  });

  it('commit: STATE_CONFLICT with expected and actual versions, PROVENANCE_REQUIRED, VALIDATION_FAILED', async () => {
    await call('commit', { kind: 'json', id: 'd', expected_version: 0, body: { a: 1 }, provenance: PROV });
    const conflict = await refused(
      'commit',
      { kind: 'json', id: 'd', expected_version: 0, body: { a: 2 }, provenance: PROV },
      'STATE_CONFLICT',
    );
    expect(conflict).toMatchObject({ expected: 0, actual: 1 });
    const prov = await refused(
      'commit',
      { kind: 'json', id: 'd', expected_version: 1, body: { a: 2 } },
      'PROVENANCE_REQUIRED',
    );
    expect(prov.missing).toEqual(['input_hash or prompt_ref']);
    const invalid = await refused(
      'commit',
      { kind: 'task-ir', id: 't', expected_version: 0, body: { goal: 5 }, provenance: PROV },
      'VALIDATION_FAILED',
    );
    expect(invalid.pointer ?? invalid.field).toBeDefined();
  });

  it('work items: LEASE_LOST, INVALID_TRANSITION, NOT_FOUND, PERMISSION_DENIED for a human decision', async () => {
    const e = (await call('enqueue', { title: 'x' })).structuredContent as { id: string };
    await call('claim');
    await refused('heartbeat', { id: e.id, attempt: 7 }, 'LEASE_LOST');
    await refused('resolve', { id: e.id, status: 'done', worker: 'someone-else' }, 'LEASE_LOST');
    await refused('heartbeat', { id: 'wi_missing' }, 'NOT_FOUND');
    await call('resolve', { id: e.id, status: 'done', attempt: 1 });
    await refused('resolve', { id: e.id, status: 'failed', attempt: 1 }, 'INVALID_TRANSITION');
    // A decision a document asked for is a human's: a model resolving it is refused.
    const task = {
      goal: 'g',
      acceptance_criteria: [{ id: 'ac1', text: 't' }],
      ambiguities: [{ id: 'a1', question: 'q?', status: 'open' }],
    };
    await inst.docs.commit({ kind: 'task-ir', id: 'login', expected_version: 0, body: task });
    (task.ambiguities[0] as JsonObject).status = 'escalated';
    await inst.docs.commit({ kind: 'task-ir', id: 'login', expected_version: 1, body: task });
    const [q] = await inst.work.list({ status: 'waiting_human' });
    const r = ok('resume', await call('resume'));
    expect(r.decisions).toEqual([expect.objectContaining({ id: q!.id })]);
    const denied = await refused(
      'resolve',
      { id: q!.id, status: 'done', result: { answer: 'oauth' } },
      'PERMISSION_DENIED',
    );
    expect(denied.rule).toBe('human-decision');
  });

  it('reads: NOT_FOUND for a missing document, INVALID_INPUT for bad filters', async () => {
    await refused('get_document', { kind: 'json', id: 'nope' }, 'NOT_FOUND');
    await refused('history', { kind: 'json', id: 'nope' }, 'NOT_FOUND');
    await refused('read_events', { since: 'yesterday-ish' }, 'INVALID_INPUT');
    await refused('resume', { documents: ['no-slash'] }, 'INVALID_INPUT');
  });

  it('bad arguments to every tool: unknown fields, wrong types, missing fields — INVALID_INPUT naming the field', async () => {
    for (const name of DEFAULT_TOOLS) {
      const e = await refused(name, { bogus: 1 }, 'INVALID_INPUT');
      expect(e.field, name).toBe('bogus');
    }
    expect((await refused('enqueue', { title: 7 }, 'INVALID_INPUT')).field).toBe('title');
    expect((await refused('enqueue', { title: '  ' }, 'INVALID_INPUT')).field).toBe('title');
    expect((await refused('claim', { lease_ms: -1 }, 'INVALID_INPUT')).field).toBe('lease_ms');
    expect((await refused('commit', { kind: 'json', id: 'd' }, 'INVALID_INPUT')).field).toBe(
      'expected_version',
    );
    expect((await refused('resolve', { id: 'x', status: 'maybe' }, 'INVALID_INPUT')).field).toBe('status');
    expect(
      (
        await refused(
          'commit',
          { kind: 'json', id: '../../etc', expected_version: 0, body: {}, provenance: 'me' },
          'INVALID_INPUT',
        )
      ).field,
    ).toBe('provenance');
  });

  it('hostile JSON: __proto__ / constructor keys, deep nesting, huge values — refused, nothing written', async () => {
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const before = await snapshot();
      const body = `{"a":{"${key}":{"x":1}}}`;
      const e1 = await expectRefusal(
        await callRaw(
          client,
          'commit',
          `{"kind":"json","id":"d","expected_version":0,"body":${body},"provenance":{"prompt_ref":"p"}}`,
        ),
        'INVALID_INPUT',
        before,
      );
      expect(e1.pointer).toBe(`/a/${key}`);
      await expectRefusal(
        await callRaw(client, 'enqueue', `{"title":"t","payload":${body}}`),
        'INVALID_INPUT',
        before,
      );
      await expectRefusal(
        await callRaw(client, 'append_event', `{"type":"t","data":${body}}`),
        'INVALID_INPUT',
        before,
      );
      await expectRefusal(
        await callRaw(
          client,
          'commit',
          `{"kind":"json","id":"d","expected_version":0,"body":{"a":1},"provenance":{"prompt_ref":"p","${key}":{"model_id":"x"}}}`,
        ),
        'INVALID_INPUT',
        before,
      );
    }
    // A top-level "__proto__" never reaches the call as a field: the item is not parked for a human.
    const r = await callRaw(client, 'enqueue', '{"title":"t","__proto__":{"waiting_human":true}}');
    const item = r.isError ? null : (r.structuredContent as { status: string });
    if (item) expect(item.status).toBe('pending');
    else expect(refusalOf(r)?.code).toBe('INVALID_INPUT');
    let deep: unknown = 1;
    for (let i = 0; i < 300; i++) deep = [deep];
    const before = await snapshot();
    await expectRefusal(
      await call('commit', {
        kind: 'json',
        id: 'deep',
        expected_version: 0,
        body: { deep },
        provenance: PROV,
      }),
      'INVALID_INPUT',
      before,
    );
    await expectRefusal(await call('enqueue', { title: 'x'.repeat(100_000) }), 'INVALID_INPUT', before);
    await expectRefusal(
      await call('commit', {
        kind: 'json',
        id: 'big',
        expected_version: 0,
        body: { s: 'x'.repeat(1_100_000) },
        provenance: PROV,
      }),
      'INVALID_INPUT',
      before,
    );
  });

  it('over the wire as text: 1e400, NaN, 100k-deep nesting and oversize bodies never write and never crash', async () => {
    const mcp = createAgentStateMcp({ instance: inst, model: 'm' });
    const h = createMcpHandler(mcp.factory);
    const post = async (body: string) => {
      const res = await h.fetch(
        new Request('http://127.0.0.1/mcp', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-06-18',
          },
          body,
        }),
      );
      return { status: res.status, text: await res.text() };
    };
    const commit = (body: string) =>
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"commit","arguments":{"kind":"json","id":"d","expected_version":0,"body":${body},"provenance":{"prompt_ref":"p"}}}}`;
    try {
      const before = await snapshot();
      const inf = await post(commit('{"a":1e400}'));
      expect(inf.text).toContain('INVALID_INPUT: commit: body at /a holds Infinity');
      const nan = await post(commit('{"a":NaN}'));
      expect(nan.text).toMatch(/Parse error|-32700/); // not JSON: a protocol error, no tool ran
      const deep = await post(commit(`{"a":${'['.repeat(100_000)}1${']'.repeat(100_000)}}`));
      expect(deep.text).toContain('nested deeper than');
      const huge = await post(commit(`{"s":"${'x'.repeat(5_000_000)}"}`));
      expect(huge.status).toBe(413);
      for (const r of [inf, nan, deep, huge]) expect(r.text).not.toMatch(/\n\s+at /);
      expect(await snapshot()).toEqual(before);
      // The server still serves.
      const after = await post(
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"resume","arguments":{}}}',
      );
      expect(after.text).toContain('"position"');
    } finally {
      await h.close();
      await mcp.close();
    }
  });
});

describe('writes through MCP are the model’s', () => {
  it('commit records actor_kind model and a provenance of client, session, request and the host’s model', async () => {
    await call('commit', {
      kind: 'json',
      id: 'p',
      expected_version: 0,
      body: { a: 1 },
      provenance: { ...PROV, model_id: 'i-am-gpt' },
    });
    const [entry] = (await inst.docs.history({ kind: 'json', id: 'p' })).entries;
    expect(entry!.actor).toMatch(/^test-client-[0-9a-f]{6}$/);
    expect(entry!.actor_kind).toBe('model');
    expect(entry!.provenance).toMatchObject({
      prompt_ref: PROV.prompt_ref,
      model_id: 'claude-test-1', // the host's word over the call's
      run_id: expect.stringMatching(/^mcp-/),
      step_id: expect.stringMatching(/^mcp-request-/),
      via: 'mcp',
      mcp_client: 'test-client/1.2.3',
    });
  });

  it('a call cannot claim to be a human or someone else, and without a model id the kind rule refuses', async () => {
    for (const [field, value] of [
      ['actor_kind', 'human'],
      ['actor', 'alice'],
      ['override', { rules: ['x'], reason: 'r' }],
    ] as const) {
      const e = await refused(
        'commit',
        { kind: 'json', id: 'p', expected_version: 0, body: {}, provenance: PROV, [field]: value },
        'INVALID_INPUT',
      );
      expect(e.field).toBe(field);
    }
    const e = await refused(
      'resolve',
      { id: 'x', status: 'done', actor_kind: 'human', actor: 'alice' },
      'INVALID_INPUT',
    );
    expect(e.field).toBe('actor');
    const anonymous = await connect(inst);
    try {
      const r = await anonymous.client.callTool({
        name: 'commit',
        arguments: { kind: 'json', id: 'p', expected_version: 0, body: {}, provenance: PROV },
      });
      expect(refusalOf(r)).toMatchObject({
        code: 'PROVENANCE_REQUIRED',
        missing: ['model_id'],
      });
      const ok2 = await anonymous.client.callTool({
        name: 'commit',
        arguments: {
          kind: 'json',
          id: 'p',
          expected_version: 0,
          body: {},
          provenance: { ...PROV, model_id: 'm-1' },
        },
      });
      expect(ok2.isError).toBeFalsy();
    } finally {
      await anonymous.close();
    }
  });
});

describe('resume', () => {
  it('reports what happened since the last call, and stays under 1,500 tokens for 100 items', async () => {
    await inst.work.enqueueMany(
      Array.from({ length: 100 }, (_, i) => ({
        title: `task number ${i} of the release plan`,
        priority: i % 7,
        payload: { i },
      })),
    );
    for (let i = 0; i < 3; i++) await call('claim');
    for (let i = 0; i < 4; i++)
      await inst.docs.commit({ kind: 'json', id: `doc-${i}`, expected_version: 0, body: { i } });
    await inst.work.enqueue({ title: 'approve the budget', waiting_human: true });
    const first = await call('resume');
    const r = ok('resume', first);
    expect((r.held as unknown[]).length).toBe(3);
    expect((r.ready as unknown[]).length).toBe(5);
    expect((r.documents as unknown[]).length).toBe(4);
    expect((r.decisions as unknown[]).length).toBe(1);
    const size = JSON.stringify(first.structuredContent).length + JSON.stringify(first.content).length;
    expect(size / 4).toBeLessThan(1_500);
    await call('append_event', { type: 'note' });
    const second = ok('resume', await call('resume'));
    expect(second.events).toEqual([
      expect.objectContaining({ type: 'note', position: (r.position as number) + 1 }),
    ]);
    expect(second.more).toBe(0);
    const full = ok('resume', await call('resume', { full: true, after: 0, events: 2 }));
    expect((full.held as Array<Record<string, unknown>>)[0]).toHaveProperty('payload');
    expect(full.more).toBeGreaterThan(0);
  });
});

describe('documents as resources', () => {
  it('lists, reads the latest and one version, refuses unknown ones as protocol errors', async () => {
    await inst.docs.commit({ kind: 'json', id: 'plan/a b', expected_version: 0, body: { v: 1 } });
    await inst.docs.commit({ kind: 'json', id: 'plan/a b', expected_version: 1, body: { v: 2 } });
    const list = await client.listResources();
    const uri = 'agentstate://json/plan%2Fa%20b';
    expect(list.resources.map((r) => r.uri)).toContain(uri);
    const latest = await client.readResource({ uri });
    expect(JSON.parse((latest.contents[0] as { text: string }).text)).toMatchObject({
      version: 2,
      body: { v: 2 },
    });
    const v1 = await client.readResource({ uri: `${uri}@1` });
    expect(JSON.parse((v1.contents[0] as { text: string }).text)).toMatchObject({
      version: 1,
      body: { v: 1 },
    });
    await expect(client.readResource({ uri: 'agentstate://json/missing' })).rejects.toMatchObject({
      code: -32602,
    });
  });

  it('notifies a subscribed client when another process commits the document', async () => {
    await inst.docs.commit({ kind: 'json', id: 'watched', expected_version: 0, body: { v: 1 } });
    const updates: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', (m) => {
      updates.push(m.params.uri);
    });
    // Once the subscription is acknowledged, every later commit is notified (no wait for the watcher).
    await client.subscribeResource({ uri: 'agentstate://json/watched' });
    const other = await openInstance({ dir: `${root}/i${n}` });
    try {
      await other.docs.commit({ kind: 'json', id: 'other', expected_version: 0, body: {} });
      await other.docs.commit({ kind: 'json', id: 'watched', expected_version: 1, body: { v: 2 } });
    } finally {
      await other.close();
    }
    // Notifications are polled (250 ms here); the bound only ends a wait that would never succeed.
    const until = Date.now() + 30_000;
    while (updates.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
    expect(updates).toEqual(['agentstate://json/watched']);
  });
});
