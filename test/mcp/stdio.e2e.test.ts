// `agentstate mcp` as hosts run it (issue 14): a real process spawned by the SDK's stdio client; then four of
// them — four agent sessions — racing on one instance: every item claimed exactly once, and read-modify-commit
// loops on one document with exactly one success per version and STATE_CONFLICT for the rest, nothing lost.
import { spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, describe, expect, it } from 'vitest';
import { openInstance } from '../../src/instance/instance.js';
import { CLI, cleanEnv, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { refusalOf } from './helpers.js';

const root = tempDir();
const open: Client[] = [];
afterAll(async () => {
  await Promise.all(open.map((c) => c.close()));
});

async function session(dir: string, name: string, extra: string[] = []): Promise<Client> {
  const client = new Client({ name, version: '0.0.1' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, '--dir', dir, 'mcp', '--model', 'test-model', ...extra],
      env: cleanEnv() as Record<string, string>,
      stderr: 'pipe',
    }),
  );
  open.push(client);
  return client;
}

type Structured = Record<string, unknown>;
const sc = (r: Awaited<ReturnType<Client['callTool']>>) => r.structuredContent as Structured;

describe('agentstate mcp over stdio', () => {
  it('initializes, lists its tools, and serves resume, claim, resolve and commit', async () => {
    const dir = `${root}/e2e`;
    expect(runCli(['--dir', dir, 'init']).code).toBe(0);
    expect(runCli(['--dir', dir, 'enqueue', 'write the notes']).code).toBe(0);
    const c = await session(dir, 'e2e-host');
    expect(c.getServerVersion()?.name).toBe('agentstate');
    const tools = (await c.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['resume', 'claim', 'resolve', 'commit']));
    const r = sc(await c.callTool({ name: 'resume', arguments: {} }));
    expect(r.counts).toMatchObject({ pending: 1 });
    const item = sc(await c.callTool({ name: 'claim', arguments: {} })).item as {
      id: string;
      attempts: number;
    };
    expect(item.id).toMatch(/^wi_/);
    const done = sc(
      await c.callTool({
        name: 'resolve',
        arguments: { id: item.id, status: 'done', attempt: item.attempts },
      }),
    );
    expect(done.status).toBe('done');
    const commit = sc(
      await c.callTool({
        name: 'commit',
        arguments: {
          kind: 'json',
          id: 'notes',
          expected_version: 0,
          body: { done: [item.id] },
          provenance: { prompt_ref: 'e2e' },
        },
      }),
    );
    expect(commit).toMatchObject({ version: 1, changed: true });
    const history = runCli(['--dir', dir, '--json', 'state', 'history', 'json', 'notes']).json as {
      entries: Array<{ actor_kind: string; provenance: Record<string, unknown> }>;
    };
    expect(history.entries[0]).toMatchObject({
      actor_kind: 'model',
      provenance: { model_id: 'test-model', mcp_client: 'e2e-host/0.0.1', prompt_ref: 'e2e' },
    });
  });

  it('refuses a missing instance and bad --tools before serving', () => {
    const missing = runCli(['--dir', `${root}/nope`, 'mcp']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/NOT_FOUND/);
    expect(runCli(['--dir', `${root}/e2e`, 'mcp', '--tools', 'everything']).code).toBe(2);
    expect(runCli(['--dir', `${root}/e2e`, 'mcp', '--http', '--bind', '0.0.0.0']).stderr).toMatch(/--token/);
  });

  it('four sessions race: 200 items each claimed exactly once; commits lose nothing', async () => {
    const dir = `${root}/race`;
    expect(runCli(['--dir', dir, 'init']).code).toBe(0);
    const inst = await openInstance({ dir, create: false });
    await inst.work.enqueueMany(Array.from({ length: 200 }, (_, i) => ({ title: `item ${i}` })));
    const clients = await Promise.all([0, 1, 2, 3].map((i) => session(dir, `agent-${i}`)));

    const claimed = await Promise.all(
      clients.map(async (c) => {
        const mine: string[] = [];
        for (;;) {
          const item = sc(await c.callTool({ name: 'claim', arguments: {} })).item as {
            id: string;
            attempts: number;
          } | null;
          if (!item) return mine;
          mine.push(item.id);
          const r = await c.callTool({
            name: 'resolve',
            arguments: { id: item.id, status: 'done', attempt: item.attempts },
          });
          expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
        }
      }),
    );
    const all = claimed.flat();
    expect(all.length).toBe(200);
    expect(new Set(all).size).toBe(200);
    expect(claimed.every((m) => m.length > 0)).toBe(true);
    expect(await inst.work.counts()).toMatchObject({ done: 200, pending: 0, in_flight: 0 });

    // Read-modify-commit: each session appends its name to a list, 10 tries each.
    await inst.docs.commit({ kind: 'json', id: 'tally', expected_version: 0, body: { by: [] } });
    const wins: number[] = [];
    let conflicts = 0;
    await Promise.all(
      clients.map(async (c, i) => {
        for (let t = 0; t < 10; t++) {
          const doc = sc(await c.callTool({ name: 'get_document', arguments: { kind: 'json', id: 'tally' } }))
            .document as { version: number; body: { by: string[] } };
          const r = await c.callTool({
            name: 'commit',
            arguments: {
              kind: 'json',
              id: 'tally',
              expected_version: doc.version,
              body: { by: [...doc.body.by, `agent-${i}#${t}`] },
              provenance: { prompt_ref: `try ${t}` },
            },
          });
          if (r.isError) {
            expect(refusalOf(r)?.code).toBe('STATE_CONFLICT');
            conflicts++;
          } else wins.push(sc(r).version as number);
        }
      }),
    );
    const final = await inst.docs.get({ kind: 'json', id: 'tally' });
    expect(wins.length + conflicts).toBe(40);
    // Exactly one success per version, and every success is in the body: no update was lost.
    expect([...wins].sort((a, b) => a - b)).toEqual(Array.from({ length: wins.length }, (_, k) => k + 2));
    expect(final.version).toBe(wins.length + 1);
    expect((final.body.by as string[]).length).toBe(wins.length);
    expect((await inst.events.verify()).ok).toBe(true);
    await inst.close();
  }, 60_000);

  it('answers a line that is no JSON-RPC message with a JSON-RPC error, and goes on serving', async () => {
    const p = spawn(process.execPath, [CLI, '--dir', `${root}/lines`, 'mcp', '--init'], {
      env: cleanEnv(),
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    const replies: Array<Record<string, unknown>> = [];
    let out = '';
    p.stdout.on('data', (d) => {
      out += d;
      for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
        replies.push(JSON.parse(out.slice(0, nl)) as Record<string, unknown>);
        out = out.slice(nl + 1);
      }
    });
    const exited = new Promise<number | null>((r) => p.once('exit', r));
    /** Sends one line and waits for the one reply it gets. */
    const send = async (line: string) => {
      const before = replies.length;
      p.stdin.write(`${line}\n`);
      for (let i = 0; i < 300 && replies.length === before; i++) await new Promise((r) => setTimeout(r, 50));
      expect(replies.length, `no reply to ${line.slice(0, 80)}`).toBe(before + 1);
      return replies.at(-1)!;
    };
    const rpc = (id: number, method: string, params: unknown) =>
      JSON.stringify({ jsonrpc: '2.0', id, method, params });
    try {
      expect(await send('not json')).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, message: expect.stringMatching(/^Parse error/) },
      });
      expect(await send('{"hello":1}')).toMatchObject({ id: null, error: { code: -32600 } });
      expect(await send('{"jsonrpc":"2.0","id":7,"method":5}')).toMatchObject({
        id: 7,
        error: { code: -32600 },
      });
      p.stdin.write('\n'); // a blank line is no message, and no reply
      const init = await send(
        rpc(1, 'initialize', {
          protocolVersion: '2025-03-26',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        }),
      );
      expect(init).toMatchObject({ id: 1, result: { protocolVersion: '2025-03-26' } });
      p.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
      // Over the 4 MiB a request may be (as over HTTP), here 12 MiB: refused unread, by its id; the session goes on.
      const huge = rpc(2, 'tools/call', {
        name: 'enqueue',
        arguments: { title: 'x'.repeat(12 * 1024 * 1024) },
      });
      expect(await send(huge)).toMatchObject({
        id: 2,
        error: { code: -32000, message: /Payload Too Large/ },
      });
      // A top-level "__proto__" key (which the SDK's copy of the arguments would drop or turn into a prototype)
      // is refused as documented, before the SDK sees it, whatever its value; nested ones reach the tool and are
      // refused there. Nothing is written.
      for (const [id, value] of [
        [3, '{"waiting_human":true}'],
        [6, '1'],
      ] as const) {
        const proto = await send(
          `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"enqueue","arguments":{"title":"p","__proto__":${value}}}}`,
        );
        expect(proto).toMatchObject({ id, result: { isError: true } });
        expect((proto.result as { content: Array<{ text: string }> }).content[0]!.text).toMatch(
          /^INVALID_INPUT: enqueue: .*"__proto__"/,
        );
      }
      const nested = await send(
        '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"enqueue","arguments":{"title":"p","payload":{"__proto__":{"x":1}}}}}',
      );
      expect(nested).toMatchObject({ id: 5, result: { isError: true } });
      expect((nested.result as { content: Array<{ text: string }> }).content[0]!.text).toMatch(
        /^INVALID_INPUT: .*__proto__/,
      );
      const ok = await send(
        rpc(4, 'tools/call', { name: 'enqueue', arguments: { title: 'after all that' } }),
      );
      expect(ok).toMatchObject({ id: 4, result: { structuredContent: { title: 'after all that' } } });
      expect((ok.result as { isError?: boolean }).isError).toBeFalsy();
    } finally {
      p.stdin.end();
    }
    expect(await exited).toBe(0);
  }, 60_000);
});
