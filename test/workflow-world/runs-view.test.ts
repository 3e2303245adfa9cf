// Seeing a Workflow SDK World's runs (issue 42): runs, steps, hooks, waits and streams written through the
// World's own storage and streams, then read through the workflow_runs and workflow_run operations, the CLI
// (`agentstate runs`, `agentstate runs show`) and the HTTP API, on both backends. Newest first with keyset
// pages, filters by status and workflow, steps paged in creation order, ids with `|`, `+`, spaces and
// non-ASCII intact, what is left out said (queue messages) or never shown (hook tokens, payloads), and
// hostile ids refused with INVALID_INPUT before anything is read. The clock is injected.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Storage } from '@workflow/world';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli as runCliInProcess } from '../../src/cli/program.js';
import type { Instance } from '../../src/instance/instance.js';
import { runOperation } from '../../src/service/invoke.js';
import { getOperation } from '../../src/service/table.js';
import { compileSchema } from '../../src/service/validate.js';
import type { WorldRunDetail, WorldRunSummary } from '../../src/workflow-world/inspect.js';
import { createWorldStorage } from '../../src/workflow-world/storage.js';
import { createWorldStreams } from '../../src/workflow-world/streams.js';
import { backendsForThisFile } from '../helpers/backends.js';
import { CLI, cleanEnv, runCli } from '../helpers/cli.js';
import { PG_URL, postgresForThisFile } from '../helpers/postgres.js';
import { rejection } from '../helpers/refusals.js';
import { bytes, HOOK, ORDER, REFUND, STEP_1, STEP_2, STREAM, TOKEN, WAIT } from '../helpers/world-values.js';
import { startTestServer, type TestServer } from '../http/helpers.js';

const backends = await backendsForThisFile({ pooled: true });
const schema = await postgresForThisFile();

const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
const HOSTILE = ['../x', '..', '.hidden', 'a/b', 'a\\b', '__proto__', 'constructor', 'x'.repeat(10_000), ''];

const open: Instance[] = [];
afterAll(async () => {
  await Promise.all(open.map((i) => i.close()));
});

/** The error `p` rejects with (the test fails if it resolves). */

interface Written {
  order: string;
  refund: string;
  live: string;
}

/**
 * Three runs a second apart, written through the World's storage and streams: `order` completed, `refund`
 * failed with an error, `live` (an order too) running with two steps (one completed, one retrying after a
 * failure), a live hook, a wait and two streams (one closed).
 */
async function writeRuns(s: Storage, streams: ReturnType<typeof createWorldStreams>, clock: { now: number }) {
  const newRun = async (workflowName: string) => {
    clock.now += 1000;
    const created = await s.events.create(null, {
      eventType: 'run_created',
      eventData: { deploymentId: 'dpl|1', workflowName, input: bytes(0, 1, 0) },
    });
    await s.events.create(created.run!.runId, { eventType: 'run_started' });
    return created.run!.runId;
  };
  const order = await newRun(ORDER);
  await s.events.create(order, { eventType: 'run_completed', eventData: { output: bytes(7) } });
  const refund = await newRun(REFUND);
  await s.events.create(refund, {
    eventType: 'run_failed',
    eventData: { error: { message: 'card declined ü', stack: 'at x' }, errorCode: 'E_CARD' },
  });
  const live = await newRun(ORDER);
  const ev = (eventType: string, correlationId: string, eventData?: unknown) => {
    clock.now += 10;
    return s.events.create(live, { eventType, correlationId, eventData } as never);
  };
  await ev('step_created', STEP_1, { stepName: 'step//./src/ordér//charge', input: bytes(0) });
  await ev('step_started', STEP_1);
  await ev('step_completed', STEP_1, { result: bytes(1, 0) });
  await ev('step_created', STEP_2, { stepName: 'step//./src/ordér//ship', input: bytes(0) });
  await ev('step_started', STEP_2);
  await ev('step_retrying', STEP_2, {
    error: { message: 'carrier down' },
    retryAfter: new Date(clock.now + 60_000),
  });
  await ev('hook_created', HOOK, { token: TOKEN, metadata: bytes(9) });
  await ev('wait_created', WAIT, { resumeAt: new Date(clock.now + 3_600_000) });
  await streams.writeMulti(live, STREAM, ['a', bytes(0, 0)]);
  await streams.close(live, STREAM);
  await streams.write(live, 'strm_2', 'x');
  return { order, refund, live };
}

describe.each(backends)('$name: seeing the World’s runs', (b) => {
  let k = 0;
  async function fresh() {
    const clock = { now: T0 };
    const key = `runs${++k}`;
    const inst = await b.open(key, { clock: () => clock.now });
    open.push(inst);
    const runs = await writeRuns(createWorldStorage(inst), createWorldStreams(inst), clock);
    return { key, inst, runs };
  }

  it('workflow_runs: newest first, by status and workflow, in keyset pages; an unknown cursor is refused', async () => {
    const { inst, runs } = await fresh();
    const list = async (input: Record<string, unknown> = {}) =>
      ((await runOperation(inst, 'workflow_runs', input)) as WorldRunSummary[]).map((r) => r.run_id);
    const all = (await runOperation(inst, 'workflow_runs', {})) as WorldRunSummary[];
    expect(compileSchema(getOperation('workflow_runs').output)(all)).toBe(true);
    expect(all.map((r) => r.run_id)).toEqual([runs.live, runs.refund, runs.order]);
    expect(all[1]).toEqual({
      run_id: runs.refund,
      workflow_name: REFUND,
      status: 'failed',
      created_at: new Date(T0 + 2000).toISOString(),
      updated_at: new Date(T0 + 2000).toISOString(),
      started_at: new Date(T0 + 2000).toISOString(),
      completed_at: new Date(T0 + 2000).toISOString(),
      error: { message: 'card declined ü', code: 'E_CARD' },
    });
    expect(all[0]).toMatchObject({
      workflow_name: ORDER,
      status: 'running',
      completed_at: null,
      error: null,
    });
    expect(await list({ status: 'failed' })).toEqual([runs.refund]);
    expect(await list({ status: 'cancelled' })).toEqual([]);
    expect(await list({ workflow: ORDER })).toEqual([runs.live, runs.order]);
    expect(await list({ workflow: ORDER, status: 'completed' })).toEqual([runs.order]);
    // Pages: each starts after the last run the one before showed.
    expect(await list({ limit: 2 })).toEqual([runs.live, runs.refund]);
    expect(await list({ limit: 2, after: runs.refund })).toEqual([runs.order]);
    expect(await list({ after: runs.order })).toEqual([]);
    expect(await list({ workflow: ORDER, limit: 1, after: runs.live })).toEqual([runs.order]);
    expect(await rejection(runOperation(inst, 'workflow_runs', { after: 'wrun_none' }))).toMatchObject({
      code: 'INVALID_INPUT',
      details: { field: 'after' },
    });
    for (const bad of [{ status: 'done' }, { limit: 0 }, { limit: 1001 }, { workflow: 'a\u0000b' }]) {
      expect(await rejection(runOperation(inst, 'workflow_runs', bad)), JSON.stringify(bad)).toMatchObject({
        code: 'INVALID_INPUT',
      });
    }
  });

  it('workflow_run: the run, its steps in pages, live hooks without tokens, waits, streams; what is left out said', async () => {
    const { inst, runs } = await fresh();
    const show = async (input: Record<string, unknown>) =>
      (await runOperation(inst, 'workflow_run', input)) as WorldRunDetail;
    const live = await show({ run_id: runs.live });
    expect(compileSchema(getOperation('workflow_run').output)(live)).toBe(true);
    expect(live.run).toMatchObject({
      run_id: runs.live,
      workflow_name: ORDER,
      status: 'running',
      deployment_id: 'dpl|1',
      started_at: new Date(T0 + 3000).toISOString(),
      completed_at: null,
    });
    expect(live.steps).toEqual([
      {
        step_id: STEP_1,
        step_name: 'step//./src/ordér//charge',
        status: 'completed',
        attempt: 1,
        created_at: new Date(T0 + 3010).toISOString(),
        updated_at: new Date(T0 + 3030).toISOString(),
        started_at: new Date(T0 + 3020).toISOString(),
        completed_at: new Date(T0 + 3030).toISOString(),
        retry_after: null,
        error: null,
      },
      expect.objectContaining({
        step_id: STEP_2,
        status: 'pending',
        attempt: 1,
        retry_after: new Date(T0 + 3050 + 60_000).toISOString(),
        error: { message: 'carrier down', code: null },
      }),
    ]);
    expect(live.hooks).toEqual([
      { hook_id: HOOK, created_at: new Date(T0 + 3070).toISOString(), is_webhook: false },
    ]);
    expect(live.waits).toEqual([
      {
        wait_id: WAIT,
        status: 'waiting',
        created_at: new Date(T0 + 3080).toISOString(),
        resume_at: new Date(T0 + 3070 + 3_600_000).toISOString(),
        completed_at: null,
      },
    ]);
    expect(live.streams).toEqual([
      { name: 'strm_2', chunks: 1, done: false },
      { name: STREAM, chunks: 2, done: true },
    ]);
    expect(live.not_included).toEqual([
      { part: 'work_items', reason: expect.stringMatching(/queue messages .*titled flow <run id>/) },
    ]);
    // A hook's token resumes it: never shown; nor the payloads.
    const text = JSON.stringify(live);
    expect(text).not.toContain('secret-token');
    expect(text).not.toMatch(/"(input|output|metadata)"/);
    // Steps page in creation order; the rest comes with every page.
    const first = await show({ run_id: runs.live, limit: 1 });
    expect(first.steps.map((s) => s.step_id)).toEqual([STEP_1]);
    expect(first.hooks).toHaveLength(1);
    const second = await show({ run_id: runs.live, limit: 1, after: STEP_1 });
    expect(second.steps.map((s) => s.step_id)).toEqual([STEP_2]);
    expect((await show({ run_id: runs.live, after: STEP_2 })).steps).toEqual([]);
    expect(await rejection(show({ run_id: runs.live, after: 'never' }))).toMatchObject({
      code: 'INVALID_INPUT',
      details: { field: 'after' },
    });
    // An ended run: its hooks and waits ended with it.
    const done = await show({ run_id: runs.order });
    expect(done.run).toMatchObject({ status: 'completed', completed_at: new Date(T0 + 1000).toISOString() });
    expect([done.steps, done.hooks, done.waits, done.streams]).toEqual([[], [], [], []]);
    expect((await show({ run_id: runs.refund })).run.error).toEqual({
      message: 'card declined ü',
      code: 'E_CARD',
    });
    // No such run: NOT_FOUND; hostile ids: INVALID_INPUT naming the field, before anything is read.
    expect(await rejection(show({ run_id: 'wrun_01NONE' }))).toMatchObject({ code: 'NOT_FOUND' });
    for (const id of [...HOSTILE, 'a\u0000b', 'a\nb', '\ud800']) {
      expect(await rejection(show({ run_id: id })), JSON.stringify(id.slice(0, 20))).toMatchObject({
        code: 'INVALID_INPUT',
        details: { field: 'run_id' },
      });
      expect(await rejection(show({ run_id: runs.live, after: id }))).toMatchObject({
        code: 'INVALID_INPUT',
        details: { field: 'after' },
      });
      expect(await rejection(runOperation(inst, 'workflow_runs', { after: id }))).toMatchObject({
        code: 'INVALID_INPUT',
        details: { field: 'after' },
      });
    }
  });

  it('agentstate runs / runs show: tables for people, the operation’s result with --json, the error table’s exits', async () => {
    const { key, inst, runs } = await fresh();
    const at = b.cliArgs(key);
    const listed = runCli(['runs', ...at, '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.json).toEqual(await runOperation(inst, 'workflow_runs', {}));
    // `runs` alone and `runs list` are the same command.
    expect(runCli(['runs', 'list', ...at, '--json']).json).toEqual(listed.json);
    const table = runCli(['runs', ...at]);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^RUN +STATUS +WORKFLOW +CREATED +ENDED +ERROR$/);
    expect(lines.slice(1).map((l) => l.split(/ {2,}/).slice(0, 3))).toEqual([
      [runs.live, 'running', ORDER],
      [runs.refund, 'failed', REFUND],
      [runs.order, 'completed', ORDER],
    ]);
    expect(lines[2]).toContain('card declined ü [E_CARD]');
    const failed = runCli(['runs', '--status', 'failed', '--workflow', REFUND, ...at, '--json']);
    expect((failed.json as WorldRunSummary[]).map((r) => r.run_id)).toEqual([runs.refund]);
    const page = runCli(['runs', 'list', '-n', '1', '--after', runs.live, ...at]);
    expect(page.stdout).toMatch(new RegExp(`^${runs.refund} +failed`, 'm'));
    expect(page.stdout).toContain(`more: agentstate runs list --after "${runs.refund}"`);
    expect(runCli(['runs', ...at, '--status', 'done']).code).toBe(2);
    // A run id without `show` is no argument of the default `list`: the error says what the group has.
    const bare = runCli(['runs', runs.live, ...at]);
    expect([bare.code, bare.stdout]).toEqual([2, '']);
    expect(bare.stderr).toContain(
      `agentstate runs has no command "${runs.live}": its commands are list, show (to show one: agentstate runs show ${runs.live})`,
    );
    expect(runCli(['runs', 'list', 'extra', ...at]).stderr).toContain("too many arguments for 'list'");

    const shown = runCli(['runs', 'show', runs.live, ...at, '--json']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.json).toEqual(await runOperation(inst, 'workflow_run', { run_id: runs.live }));
    const human = runCli(['runs', 'show', runs.live, ...at]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(new RegExp(`^run +${runs.live}$`, 'm'));
    expect(human.stdout).toMatch(/^status +running$/m);
    expect(human.stdout).toMatch(/^STEP +NAME +STATUS +ATTEMPT +CREATED +ENDED +ERROR$/m);
    expect(human.stdout).toMatch(/^step\|ü\+1 φ +step\/\/\.\/src\/ordér\/\/charge +completed +1 /m);
    expect(human.stdout).toContain('carrier down');
    expect(human.stdout).toMatch(/^hook\|ä\+1 +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +no$/m);
    expect(human.stdout).toMatch(/^strm\|ü\+1 φ +2 +yes$/m);
    expect(human.stdout).toContain('not shown: its queue messages');
    expect(human.stdout).not.toContain('secret-token');
    // A step id the World takes may hold characters a terminal acts on (a CSI, a right-to-left override):
    // a table shows them escaped, --json as they are.
    const evil = await createWorldStorage(inst).events.create(runs.live, {
      eventType: 'step_created',
      correlationId: 'evil\u009b2J\u202etxt.exe',
      eventData: { stepName: 'x', input: bytes(0) },
    });
    expect(evil.step?.stepId).toBe('evil\u009b2J\u202etxt.exe');
    const escaped = runCli(['runs', 'show', runs.live, ...at]);
    expect(escaped.stdout).toContain('evil\\u{9b}2J\\u{202e}txt.exe');
    expect(escaped.stdout).not.toMatch(/[\u009b\u202e]/);
    const raw = runCli(['runs', 'show', runs.live, ...at, '--json']);
    expect((raw.json as WorldRunDetail).steps.map((x) => x.step_id)).toContain('evil\u009b2J\u202etxt.exe');
    const steps = runCli(['runs', 'show', runs.live, '--after', STEP_1, '--limit', '1', ...at, '--json']);
    expect((steps.json as WorldRunDetail).steps.map((s) => s.step_id)).toEqual([STEP_2]);

    const missing = runCli(['runs', 'show', 'wrun_01NONE', ...at]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no workflow run "wrun_01NONE" \[NOT_FOUND\]/);
    for (const id of HOSTILE.filter((h) => h !== '')) {
      const r = runCli(['runs', 'show', id, ...at]);
      expect(r.code, `${id.slice(0, 20)}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(/run_id .*\[INVALID_INPUT\]/);
      expect(r.stderr.length).toBeLessThan(600);
    }
    const asJson = runCli(['runs', 'show', '__proto__', ...at, '--json']);
    expect(asJson.errorJson).toMatchObject({ error: { code: 'INVALID_INPUT', field: 'run_id' } });
    expect(runCli(['runs', 'list', '--after', '../x', ...at]).code).toBe(2);
  });

  it('a NUL in an id (no process receives one in argv) is INVALID_INPUT, exit 2, through the CLI in process', async () => {
    const { key } = await fresh();
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect(await runCliInProcess(['runs', 'show', 'a\u0000b', ...b.cliArgs(key)])).toBe(2);
      expect(String(err.mock.calls.at(-1)?.[0])).toMatch(/run_id .*\[INVALID_INPUT\]/);
    } finally {
      err.mockRestore();
      out.mockRestore();
      process.exitCode = undefined;
    }
  });
});

const servers = [
  { name: 'sqlite', target: {} },
  ...(schema === null ? [] : [{ name: 'postgres', target: { url: `${PG_URL}?schema=${schema}` } }]),
];

describe.each(servers)('$name: the World’s runs over HTTP', ({ target }) => {
  let s: TestServer;
  let runs: Written;
  beforeAll(async () => {
    s = await startTestServer(['planner'], target);
    const inst = await s.instance('planner');
    const clock = { now: Date.now() };
    runs = await writeRuns(createWorldStorage(inst), createWorldStreams(inst), clock);
  });
  afterAll(() => s?.close());

  it('GET /api/v1/workflow_runs and /api/v1/workflow_run: the operations’ results, Link to the next page, the error table’s statuses', async () => {
    const all = await s.call('GET', '/api/v1/workflow_runs');
    expect(all.status).toBe(200);
    expect(all.json.map((r: WorldRunSummary) => r.run_id)).toEqual([runs.live, runs.refund, runs.order]);
    const page = await s.call('GET', '/api/v1/workflow_runs', { query: { workflow: ORDER, limit: '1' } });
    expect(page.json.map((r: WorldRunSummary) => r.run_id)).toEqual([runs.live]);
    const link = /^<([^>]+)>; rel="next"$/.exec(page.headers.get('link') ?? '');
    expect(link, page.headers.get('link') ?? 'no Link').not.toBeNull();
    const next = await s.call('GET', new URL(link![1]!, `${s.url}/api/v1/workflow_runs`).href);
    expect(next.json.map((r: WorldRunSummary) => r.run_id)).toEqual([runs.order]);

    const shown = await s.call('GET', '/api/v1/workflow_run', { query: { run_id: runs.live } });
    expect(shown.status).toBe(200);
    expect(shown.json.steps.map((x: { step_id: string }) => x.step_id)).toEqual([STEP_1, STEP_2]);
    expect(shown.json.hooks.map((x: { hook_id: string }) => x.hook_id)).toEqual([HOOK]);
    expect(shown.json.streams.map((x: { name: string }) => x.name)).toEqual(['strm_2', STREAM]);
    expect(JSON.stringify(shown.json)).not.toContain('secret-token');
    const steps = await s.call('GET', '/api/v1/workflow_run', {
      query: { run_id: runs.live, limit: '1' },
    });
    const stepsNext = /^<([^>]+)>; rel="next"$/.exec(steps.headers.get('link') ?? '');
    const second = await s.call('GET', new URL(stepsNext![1]!, `${s.url}/api/v1/workflow_run`).href);
    expect(second.json.steps.map((x: { step_id: string }) => x.step_id)).toEqual([STEP_2]);

    const missing = await s.call('GET', '/api/v1/workflow_run', { query: { run_id: 'wrun_01NONE' } });
    expect([missing.status, missing.json.error.code]).toEqual([404, 'NOT_FOUND']);
    for (const id of [...HOSTILE, 'a\u0000b']) {
      const r = await s.call('GET', '/api/v1/workflow_run', { query: { run_id: id } });
      expect([r.status, r.json.error?.code], JSON.stringify(id.slice(0, 20))).toEqual([400, 'INVALID_INPUT']);
    }
    expect((await s.call('POST', '/api/v1/workflow_runs', { body: {} })).status).toBe(405);
  });
});

describe('over MCP (`--tools workflow_runs,workflow_run`): the official client, a small result budget', () => {
  it('pages a run of 60 steps within 3,000 characters a result, every step once, in order', async () => {
    const sqlite = backends[0]!;
    const inst = await sqlite.open('mcp');
    const dir = inst.paths.dir;
    const s = createWorldStorage(inst);
    const created = await s.events.create(null, {
      eventType: 'run_created',
      eventData: { deploymentId: 'd', workflowName: ORDER, input: bytes(0) },
    });
    const runId = created.run!.runId;
    const ids = Array.from({ length: 60 }, (_, n) => `step|${String(n).padStart(2, '0')}+ü`);
    for (const id of ids) {
      await s.events.create(runId, {
        eventType: 'step_created',
        correlationId: id,
        eventData: { stepName: `step//./src/ordér//s${id}`, input: bytes(0) },
      });
    }
    await inst.close();
    const client = new Client({ name: 'runs-view-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [
          CLI,
          '--dir',
          dir,
          'mcp',
          '--tools',
          'workflow_runs,workflow_run',
          '--max-result-chars',
          '3000',
        ],
        env: cleanEnv() as Record<string, string>,
        stderr: 'ignore',
      }),
    );
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['workflow_runs', 'workflow_run']);
      // The 1.x client checks every structuredContent against the tool's output schema.
      const call = async (name: string, args: Record<string, unknown>) =>
        (await client.callTool({ name, arguments: args })) as CallToolResult;
      const listed = await call('workflow_runs', {});
      expect(listed.isError).toBeFalsy();
      expect((listed.structuredContent as { runs: WorldRunSummary[] }).runs.map((r) => r.run_id)).toEqual([
        runId,
      ]);
      const seen: string[] = [];
      let args: Record<string, unknown> = { run_id: runId };
      for (let pages = 0; pages < 60; pages++) {
        const r = await call('workflow_run', args);
        expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
        expect(
          JSON.stringify({ content: r.content, structuredContent: r.structuredContent }).length,
        ).toBeLessThanOrEqual(3000);
        const page = r.structuredContent as unknown as WorldRunDetail & { next?: Record<string, unknown> };
        expect(page.run.run_id).toBe(runId);
        seen.push(...page.steps.map((x) => x.step_id));
        if (page.next === undefined) break;
        args = { run_id: runId, ...page.next };
      }
      expect(seen).toEqual(ids);
      const missing = await call('workflow_run', { run_id: '../x' });
      expect(missing.isError).toBe(true);
      expect(JSON.stringify(missing.content)).toContain('INVALID_INPUT');
    } finally {
      await client.close();
    }
  });
});
