// `agentstate mcp` as hosts run it (issue 14): a real process spawned by the SDK's stdio client; then four of
// them — four agent sessions — racing on one instance: every item claimed exactly once, and read-modify-commit
// loops on one document with exactly one success per version and STATE_CONFLICT for the rest, nothing lost.
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
});
