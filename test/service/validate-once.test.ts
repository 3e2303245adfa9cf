// Input is checked once per call (issue 25): whichever edge a call comes through — the HTTP API, MCP with the
// official client, the CLI, a bundle workflow, the library — the checker runs once on its input, not once at
// the edge and again in each layer below. Every check publishes on the `agentstate:input-check` channel;
// this counts them per call.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { openInstance } from '../../src/instance/instance.js';
import { runOperation } from '../../src/service/invoke.js';
import { getOperation } from '../../src/service/table.js';
import { runWorkflowProcess } from '../../src/workflows/process.js';
import { runWorkflow } from '../../src/workflows/registry.js';
import { tempDir } from '../helpers/tmp.js';
import { startTestServer, type TestServer } from '../http/helpers.js';
import { connect } from '../mcp/helpers.js';

// biome-ignore lint/suspicious/noExplicitAny: results of many operations, read field by field.
type Any = any;
let checks = 0;
/** Checks of inputs named after the operation itself (a composite's own input). */
const named = new Map<string, number>();
const count = (message: unknown) => {
  checks++;
  const op = (message as { operation: string }).operation;
  named.set(op, (named.get(op) ?? 0) + 1);
};

/**
 * Operations that are reports or kind calls made of other calls of the library (resume reads the queue,
 * the log and the documents; a kind's operation checks its own arguments, which only the kind knows, and
 * a decision it enqueues is a new item): their own input is checked once, and the calls they make with
 * inputs they build are checked as any library call is.
 */
const COMPOSITE = new Set(['resume', 'dashboard', 'retro', 'escalate', 'apply']);
beforeAll(() => subscribe('agentstate:input-check', count));
afterAll(() => unsubscribe('agentstate:input-check', count));

let sessions = 0;
type Call = (op: string, input: Record<string, unknown>) => Promise<Any>;

/** Calls `op` through `call` and returns its result with the number of input checks it made. */
async function counted(call: Call, op: string, input: Record<string, unknown>): Promise<[Any, number]> {
  const before = checks;
  const ownBefore = named.get(op) ?? 0;
  const result = await call(op, input);
  return [result, COMPOSITE.has(op) ? (named.get(op) ?? 0) - ownBefore : checks - before];
}

/**
 * A session of calls covering the queue, the log and documents; returns each call's check count. `human`
 * says whether the edge may name an actor kind (MCP decides it itself).
 */
async function session(call: Call, human = true): Promise<Record<string, number>> {
  const seen: Record<string, number> = {};
  const doc = `plan-${++sessions}`;
  const run = async (op: string, input: Record<string, unknown>) => {
    const [r, n] = await counted(call, op, input);
    seen[`${op} ${JSON.stringify(input).slice(0, 60)}`] = n;
    return r;
  };
  const a = await run('enqueue', { title: 'fetch |+ ü', kind: 'k', payload: { at: 'x' }, priority: 2 });
  await run('enqueue', { title: 'later', kind: 'k', not_before: '5m', blocked_by: [a.id] });
  await run('list_items', { status: ['pending', 'in_flight'], limit: 10 });
  await run('count_items', {});
  await run('get_item', { id: a.id });
  const c = await run('claim', { worker: 'w1', kind: 'k', lease_ms: 600_000 });
  await run('heartbeat', { id: c.id, worker: 'w1', attempt: c.attempts });
  await run('annotate', { id: c.id, notes: { step: 1 }, worker: 'w1' });
  await run('resolve', { id: c.id, worker: 'w1', attempt: c.attempts, status: 'done', result: { ok: true } });
  const many = await run('claim_many', { worker: 'w2', limit: 5 });
  if (many[0]) await run('release', { id: many[0].id, worker: 'w2' });
  await run('append_event', { type: 'note', data: { n: 1 }, stream: 's' });
  await run('read_events', { type: ['note', 'work_item_enqueued'], since: '24h', limit: 50 });
  await run('commit', {
    kind: 'json',
    id: doc,
    expected_version: 0,
    body: { todo: ['a'] },
    ...(human ? { actor_kind: 'human' } : { provenance: { model_id: 'm-1', input_hash: 'sha256:00' } }),
  });
  await run('get_document', { kind: 'json', id: doc });
  await run('history', { kind: 'json', id: doc });
  await run('list_documents', {});
  await run('verify', {});
  if (!human) return seen;
  // The rest of the table's store operations (the MCP edge serves only its ten tools).
  const b = await run('enqueue', { title: 'to cancel' });
  await run('cancel', { id: b.id, reason: 'no' });
  await run('retry', { id: b.id, reason: 'yes' });
  await run('cancel', { id: b.id });
  await run('retry_many', { ids: [b.id] });
  await run('park', { id: b.id });
  await run('unpark', { id: b.id });
  await run('replay', {});
  await run('resume', { worker: 'w1' });
  await run('commit', {
    kind: 'json',
    id: doc,
    expected_version: 1,
    merge_patch: { done: true },
    actor_kind: 'human',
  });
  await run('diff', { kind: 'json', id: doc, from: 1, to: 2 });
  await run('fork', { kind: 'json', id: doc, version: 1, new_id: `${doc}-fork`, actor_kind: 'human' });
  await run('validate_document', { kind: 'json', id: doc, body: { x: 1 } });
  await run('prune', { kind: 'json', id: doc, keep: 1 });
  await run('commit', {
    kind: 'task-ir',
    id: `${doc}-task`,
    expected_version: 0,
    body: { goal: 'g', acceptance_criteria: [], ambiguities: [{ id: 'a1', question: 'q?', status: 'open' }] },
    actor_kind: 'human',
  });
  await run('escalate', { id: `${doc}-task`, actor_kind: 'human' });
  await run('dashboard', {});
  await run('retro', { since: '1h' });
  return seen;
}

/** A read's input as query parameters (arrays repeated). */
function asQuery(input: Record<string, unknown>): Record<string, string | string[]> {
  return Object.fromEntries(
    Object.entries(input).map(([k, v]) => [
      k,
      Array.isArray(v) ? v.map(String) : typeof v === 'object' ? JSON.stringify(v) : String(v),
    ]),
  );
}

function expectOnce(seen: Record<string, number>): void {
  const wrong = Object.entries(seen).filter(([, n]) => n !== 1);
  expect(wrong, 'calls whose input was not checked exactly once').toEqual([]);
  expect(Object.keys(seen).length).toBeGreaterThan(5);
}

describe('each call checks its input once', () => {
  it('through the library (runOperation) and a bundle workflow', async () => {
    const inst = await openInstance({ dir: join(tempDir(), 'lib'), worker: 'agent' });
    try {
      expectOnce(await session((op, i) => runOperation(inst, op, i)));
      const [, n] = await counted((_, i) => runWorkflow(inst, 'EnqueueWorkItem', i), 'enqueue', {
        title: 'w',
      });
      expect(n).toBe(1);
      // A stream: its filters are checked once, not on every poll.
      const before0 = checks;
      const ac = new AbortController();
      const watch = (await runOperation(
        inst,
        'watch_events',
        { type: ['note'], after: 0 },
        { signal: ac.signal, pollMs: 10 },
      )) as { events: AsyncIterable<{ type: string }> };
      let seenNotes = 0;
      for await (const e of watch.events) {
        expect(e.type).toBe('note');
        if (++seenNotes === 1) await inst.events.append({ type: 'note', data: {} });
        if (seenNotes === 2) break;
      }
      expect(checks - before0).toBe(2); // watch_events once, and the append made while it ran
      // A library call that skips the table is checked once, at the public method.
      const before = checks;
      const item = await inst.work.enqueue({ title: 'direct' });
      await inst.work.claim({ worker: 'd' });
      await inst.work.get(item.id);
      expect(checks - before).toBe(3);
    } finally {
      await inst.close();
    }
  });

  it('through a workflow process (checked before the instance opens, and not again)', async () => {
    const dir = join(tempDir(), 'wf');
    let stderr = '';
    const out = {
      stdout: () => {},
      stderr: (t: string) => {
        stderr += t;
      },
    };
    expect(await runWorkflowProcess('ScaffoldFolders', { dir, name: 'agent' }, {}, out)).toBe(0);
    for (const [workflow, payload] of [
      ['EnqueueWorkItem', { title: 'w', not_before: '1s', payload: { u: 'ü|+' } }],
      ['ClaimWorkItem', { worker: 'w' }],
      ['AppendEvent', { type: 'note', data: {} }],
    ] as const) {
      const before = checks;
      const code = await runWorkflowProcess(
        workflow,
        { dir, name: 'agent', payloadText: JSON.stringify(payload) },
        {},
        out,
      );
      expect(code, stderr).toBe(0);
      expect(checks - before, workflow).toBe(1);
    }
  });

  describe('through the HTTP API and MCP (official client)', () => {
    let s: TestServer;
    beforeAll(async () => {
      s = await startTestServer(['planner']);
    });
    afterAll(() => s.close());

    it('HTTP', async () => {
      expectOnce(
        await session(async (op, input) => {
          const instance = { instance: 'h/planner' };
          const r = getOperation(op).writes
            ? await s.call('POST', `/api/v1/${op}`, { body: input, query: instance })
            : await s.call('GET', `/api/v1/${op}`, { query: { ...instance, ...asQuery(input) } });
          expect(r.status, `${op}: ${JSON.stringify(r.json)}`).toBe(200);
          return r.json;
        }),
      );
    });

    it('MCP', async () => {
      const inst = await s.instance('planner');
      const { client, close } = await connect(inst);
      try {
        const tools = new Set((await client.listTools()).tools.map((t) => t.name));
        const seen = await session(async (op, input) => {
          if (!tools.has(op)) return runOperation(inst, op, input);
          const r = (await client.callTool({ name: op, arguments: input })) as {
            isError?: boolean;
            structuredContent?: unknown;
            content: Array<{ text?: string }>;
          };
          expect(r.isError ?? false, `${op}: ${r.content[0]?.text}`).toBe(false);
          const sc = r.structuredContent as Record<string, unknown>;
          const keys = Object.keys(sc);
          // A result that is not an object travels wrapped in one key (e.g. { item }).
          return keys.length === 1 && !('id' in sc) ? sc[keys[0]!] : sc;
        }, false);
        expectOnce(seen);
        // The MCP calls themselves were among them.
        expect(Object.keys(seen).some((k) => k.startsWith('claim '))).toBe(true);
      } finally {
        await close();
      }
    });
  });

  it('through the CLI', async () => {
    const dir = join(tempDir(), 'cli');
    const write = process.stdout.write;
    let out = '';
    process.stdout.write = ((chunk: string) => {
      out += chunk;
      return true;
    }) as typeof process.stdout.write;
    try {
      const cli = async (argv: string[]) => {
        out = '';
        const code = await runCli(['--dir', dir, '--name', 'agent', ...argv, '--json']);
        expect(code, `${argv.join(' ')}: ${out}`).toBe(0);
        return JSON.parse(out);
      };
      await cli(['init']);
      const seen: Record<string, number> = {};
      const run = async (argv: string[]) => {
        const before = checks;
        const r = await cli(argv);
        seen[argv.join(' ')] = checks - before;
        return r;
      };
      const a = await run(['enqueue', 'fetch', '-k', 'k', '--payload', '{"a":1}', '--not-before', '0s']);
      await run(['list', '--status', 'pending']);
      await run(['get', a.id]);
      const c = await run(['claim', '-w', 'w', '--lease', '10m']);
      await run(['resolve', c.id, 'done', '-w', 'w', '--attempt', String(c.attempts)]);
      await run(['append', 'note', '--data', '{"x":1}']);
      await run(['events', '--type', 'note', '--since', '1h']);
      await run(['state', 'list']);
      expectOnce(seen);
    } finally {
      process.stdout.write = write;
    }
  });
});
