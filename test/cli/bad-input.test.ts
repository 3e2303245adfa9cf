// Bad input at the process edges (workflows under node and bun, and the friendly CLI): every refusal is a
// typed error with a non-zero exit code, the output is one line (never a bare stack trace), and nothing is
// written: the event log head, the work items and the instance's files are unchanged afterwards.
//
// Each refused workflow call runs against its own copy of a seeded instance, so the calls can run
// concurrently and a call that wrongly writes shows up in its own test only.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { registerLangGraphKinds } from '../../src/adapters/langgraph/kinds/kind.js';
import {
  isAgentStateError,
  LIMITS,
  locateInstance,
  openInstance,
  runWorkflow,
  runWorkflowProcess,
  SYSTEM_EVENT_TYPES,
  type WorkflowInvocation,
  type WorkflowName,
} from '../../src/index.js';
import { getKind, kindNames } from '../../src/kinds/registry.js';
import { BUN, CLI, cleanEnv, ROOT, type RunResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { example } from '../kinds/ctx.js';

// biome-ignore lint/suspicious/noExplicitAny: JSON documents from a subprocess are checked field by field.
type Doc = any;
type Env = Record<string, string | undefined>;

const J = JSON.stringify;
const STACK = /^\s+at\s/m;
const SQL = `'; DROP TABLE work_items; --`;
const SQL_EVENTS = `Robert'); DROP TABLE events;--`;
const SQL_OR = `x' OR '1'='1`;
const SQL_DQ = `" OR 1=1 --`;

const base = tempDir('agentstate-bad-input-');
const home = join(base, 'home');
let copies = 0;

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Spawns a process without blocking, so refused calls can run concurrently; `input` goes to stdin. */
function spawnAsync(cmd: string, args: string[], env: Env, input = ''): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: cleanEnv(env) });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ code: code ?? -1, stdout, stderr, json: parse(stdout), errorJson: parse(stderr) }),
    );
    child.stdin.on('error', () => {}); // the child may exit before reading stdin
    child.stdin.end(input);
  });
}

const cli = (args: string[], env: Env = {}, input?: string) =>
  spawnAsync(process.execPath, [CLI, ...args], { HOME: home, ...env }, input);

/**
 * `runWorkflowProcess`, the function `node dist/cli/main.js <Workflow>` and `bun skill/scripts/<Workflow>.ts`
 * run, called in this process with the same environment and its output captured: the whole contract but
 * the process start, which the subprocess cases below keep covering.
 */
async function inProcess(
  workflow: WorkflowName,
  env: Env,
  flags: WorkflowInvocation = {},
): Promise<RunResult> {
  let stdout = '';
  let stderr = '';
  const code = await runWorkflowProcess(workflow, flags, cleanEnv({ HOME: home, ...env }), {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
  });
  return { code, stdout, stderr, json: parse(stdout), errorJson: parse(stderr) };
}
const bun = (workflow: WorkflowName, env: Env) =>
  spawnAsync(BUN, [`${ROOT}skill/scripts/${workflow}.ts`], { HOME: home, ...env });

/** What must not change when input is refused: log head, items, and every file except the database. */
async function snapshot(dir: string): Promise<Doc> {
  const inst = await openInstance({ dir });
  try {
    return {
      head: await inst.events.head(),
      events: (await inst.events.read({ limit: 100_000 })).length,
      items: await inst.work.list({ limit: 100_000 }),
      files: fileContents(dir),
    };
  } finally {
    await inst.close();
  }
}

function fileContents(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort()) {
    if (f.startsWith('state.sqlite')) continue;
    const p = join(dir, f);
    out[f] = statSync(p).isDirectory() ? '<dir>' : readFileSync(p, 'utf8');
  }
  return out;
}

/** A refused workflow call: exit code, empty stdout, exactly one JSON line on stderr, no stack trace. */
function expectWorkflowError(r: RunResult, code: string, exit: number): Doc {
  expect({ exit: r.code, stdout: r.stdout }, r.stderr).toEqual({ exit, stdout: '' });
  expect(r.stderr).not.toMatch(STACK);
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  expect(lines, r.stderr).toHaveLength(1);
  expect(r.stderr.endsWith('\n')).toBe(true);
  const doc = JSON.parse(lines[0]!) as Doc;
  expect(Object.keys(doc)).toEqual(['error']);
  expect(doc.error.code).toBe(code);
  expect(doc.error.message).toBeTypeOf('string');
  expect(doc.error.message.length).toBeGreaterThan(0);
  return doc.error;
}

/** A refused friendly command without --json: exactly one `agentstate: <message> [CODE]` line. */
function expectFriendlyError(r: RunResult, code: string, exit: number): string {
  expect({ exit: r.code, stdout: r.stdout }, r.stderr).toEqual({ exit, stdout: '' });
  expect(r.stderr).not.toMatch(STACK);
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^agentstate: .+ \\[${code}\\]$`));
  return lines[0]!;
}

interface Seed {
  /** A pending item. */
  a: string;
  /** An item in flight, leased to w1 for an hour. */
  b: string;
}

/** Creates an instance with a pending item, an item leased to w1, notes, an event and a dashboard. */
async function seed(dir: string): Promise<Seed> {
  const inst = await openInstance({ dir });
  try {
    await runWorkflow(inst, 'ScaffoldFolders');
    const a = (await runWorkflow(inst, 'EnqueueWorkItem', { title: 'pending A', kind: 'k' })) as Doc;
    const b = (await runWorkflow(inst, 'EnqueueWorkItem', { title: 'claimed B', priority: 5 })) as Doc;
    const claimed = (await runWorkflow(inst, 'ClaimWorkItem', { worker: 'w1', lease_ms: 3_600_000 })) as Doc;
    expect(claimed.id).toBe(b.id);
    await runWorkflow(inst, 'AnnotateWorkItem', { id: a.id, notes: { session_id: 's-0' } });
    await runWorkflow(inst, 'AppendEvent', { type: 'seeded', data: { ok: true } });
    await runWorkflow(inst, 'RegenerateDashboard');
    return { a: a.id, b: b.id };
  } finally {
    await inst.close();
  }
}

/** A fresh copy of a seeded (closed) instance folder. */
function copyOf(template: string): string {
  copies += 1;
  const dir = join(base, `copy-${copies}`);
  cpSync(template, dir, { recursive: true });
  return dir;
}

interface Case {
  name: string;
  workflow: WorkflowName;
  /** The payload: a string is sent as is (so malformed JSON can be sent), anything else as JSON. */
  payload: (s: Seed) => unknown;
  code: string;
  exit: number;
  /** The `field` the error must name. */
  field: string | undefined;
}

type Row = [name: string, payload: (s: Seed) => unknown, field?: string];

function group(workflow: WorkflowName, rows: Row[], code = 'INVALID_INPUT', exit = 2): Case[] {
  return rows.map(([name, payload, field]) => ({
    name: `${workflow}: ${name}`,
    workflow,
    payload,
    code,
    exit,
    field,
  }));
}

const text = (c: Case, s: Seed): string => {
  const p = c.payload(s);
  return typeof p === 'string' ? p : J(p);
};
const big = (n: number) => 'x'.repeat(n);
/** A JSON string whose serialized form is just over the per-value byte limit. */
const over = big(LIMITS.jsonBytes);
const t = (extra: Record<string, unknown>) => () => ({ title: 'ok title', ...extra });

function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

const CASES: Case[] = [
  // Malformed JSON and payloads that are not objects.
  ...group('EnqueueWorkItem', [
    ['truncated JSON', () => '{"title": "x"'],
    ['single quotes', () => "{'title': 'x'}"],
    ['not JSON at all', () => 'title=x'],
    ['an array payload', () => '[{"title":"x"}]'],
  ]),
  ...group('ClaimWorkItem', [
    ['trailing comma', () => '{"worker": "w",}'],
    ['a string payload', () => '"w1"'],
  ]),
  ...group('AppendEvent', [['two JSON documents', () => '{"type":"x"} {"type":"y"}']]),
  ...group('ReplayPending', [['a number payload', () => '42']]),
  // A payload is a JSON object; null is refused like any other non-object (issue 12, point 14).
  ...group('ResolveWorkItem', [['a null payload', () => 'null', 'payload']]),

  // Wrong types and values.
  ...group('EnqueueWorkItem', [
    ['title: 5', () => ({ title: 5 }), 'title'],
    ['title: null', () => ({ title: null }), 'title'],
    ['title: ["x"]', () => ({ title: ['x'] }), 'title'],
    ['blank title', () => ({ title: '   ' }), 'title'],
    ['priority: "high"', t({ priority: 'high' }), 'priority'],
    ['priority: 1.5', t({ priority: 1.5 }), 'priority'],
    ['priority out of range', t({ priority: 1e12 }), 'priority'],
    ['blocked_by: "x"', t({ blocked_by: 'x' }), 'blocked_by'],
    ['blocked_by: [5]', t({ blocked_by: [5] }), 'blocked_by[0]'],
    ['blocked_by: [""]', t({ blocked_by: [''] }), 'blocked_by[0]'],
    ['kind: 7', t({ kind: 7 }), 'kind'],
    ['empty kind', t({ kind: '' }), 'kind'],
    ['kind with NUL', t({ kind: 'a\u0000b' }), 'kind'],
    ['kind with a newline', t({ kind: 'a\nb' }), 'kind'],
    ['idempotency_key: {}', t({ idempotency_key: {} }), 'idempotency_key'],
    ['not_before: "tomorrow"', t({ not_before: 'tomorrow' }), 'not_before'],
    ['not_before: month 13', t({ not_before: '2020-13-45T00:00:00Z' }), 'not_before'],
    ['max_attempts: 0', t({ max_attempts: 0 }), 'max_attempts'],
    ['max_attempts: "3"', t({ max_attempts: '3' }), 'max_attempts'],
    ['waiting_human: "yes"', t({ waiting_human: 'yes' }), 'waiting_human'],
    ['actor: 5', t({ actor: 5 }), 'actor'],
  ]),
  ...group('ClaimWorkItem', [
    ['worker: 5', () => ({ worker: 5 }), 'worker'],
    ['lease_ms: 0', () => ({ lease_ms: 0 }), 'lease_ms'],
    ['lease_ms over a day', () => ({ lease_ms: LIMITS.leaseMs + 1 }), 'lease_ms'],
    ['lease_ms: "60s"', () => ({ lease_ms: '60s' }), 'lease_ms'],
    ['kind: []', () => ({ kind: [] }), 'kind'],
    ['id: 5', () => ({ id: 5 }), 'id'],
  ]),
  ...group('ResolveWorkItem', [
    ['status "maybe"', (s) => ({ id: s.b, status: 'maybe', worker: 'w1' }), 'status'],
    ['status "DONE"', (s) => ({ id: s.b, status: 'DONE', worker: 'w1' }), 'status'],
    ['no status', (s) => ({ id: s.b, worker: 'w1' }), 'status'],
    ['no id', () => ({ status: 'done', worker: 'w1' }), 'id'],
    ['error: 5', (s) => ({ id: s.b, status: 'failed', error: 5, worker: 'w1' }), 'error'],
    ['attempt: 0', (s) => ({ id: s.b, status: 'done', attempt: 0, worker: 'w1' }), 'attempt'],
  ]),
  ...group('AnnotateWorkItem', [
    ['notes: [1]', (s) => ({ id: s.a, notes: [1] }), 'notes'],
    ['notes: "s"', (s) => ({ id: s.a, notes: 's' }), 'notes'],
    ['notes: null', (s) => ({ id: s.a, notes: null }), 'notes'],
    ['no notes', (s) => ({ id: s.a }), 'notes'],
  ]),
  ...group('AppendEvent', [
    ['no type', () => ({ data: 1 }), 'type'],
    ['type: 5', () => ({ type: 5 }), 'type'],
    ['type with a space', () => ({ type: 'has space' }), 'type'],
    ['stream: ""', () => ({ type: 'ok', stream: '' }), 'stream'],
    ['work_item_id: 5', () => ({ type: 'ok', work_item_id: 5 }), 'work_item_id'],
    ['correlation_id: {}', () => ({ type: 'ok', correlation_id: {} }), 'correlation_id'],
  ]),
  ...group('GetWorkItem', [
    ['no id', () => ({}), 'id'],
    ['id: ""', () => ({ id: '' }), 'id'],
    ['id with a newline', () => ({ id: 'a\nb' }), 'id'],
  ]),
  ...group('RetrospectiveSummary', [
    ['since: "banana"', () => ({ since: 'banana' }), 'since'],
    ['since: 5', () => ({ since: 5 }), 'since'],
    ['until: month 13', () => ({ until: '2020-13-45T00:00:00Z' }), 'until'],
    ['since after until', () => ({ since: '2030-01-01T00:00:00Z', until: '2029-01-01T00:00:00Z' })],
  ]),

  // Unknown fields, including names that exist on Object.prototype.
  ...group('EnqueueWorkItem', [
    ['unknown field bogus', t({ bogus: 1 }), 'bogus'],
    ['miscased field Title', t({ Title: 'y' }), 'Title'],
    ['unknown field constructor', t({ constructor: 1 }), 'constructor'],
    ['unknown field toString', t({ toString: 'y' }), 'toString'],
    ['unknown field __proto__', () => '{"title":"ok","__proto__":{"priority":9}}', '__proto__'],
  ]),
  ...group('ClaimWorkItem', [['unknown field wrker', () => ({ wrker: 'w' }), 'wrker']]),
  ...group('ScaffoldFolders', [['unknown field', () => ({ force: true }), 'force']]),
  ...group('ReplayPending', [['unknown field', () => ({ all: true }), 'all']]),
  ...group('RegenerateDashboard', [['unknown field', () => ({ x: 1 }), 'x']]),
  ...group('RetrospectiveSummary', [['unknown field', () => ({ window: '1h' }), 'window']]),
  ...group('GetWorkItem', [['unknown field', (s) => ({ id: s.a, x: 1 }), 'x']]),
  ...group('ResolveWorkItem', [
    ['unknown field', (s) => ({ id: s.b, status: 'done', worker: 'w1', extra: 1 }), 'extra'],
  ]),
  ...group('AnnotateWorkItem', [['unknown field', (s) => ({ id: s.a, notes: { k: 1 }, x: 1 }), 'x']]),
  ...group('AppendEvent', [['unknown field', () => ({ type: 'ok', foo: 1 }), 'foo']]),

  // System event types cannot be forged.
  ...group('AppendEvent', [
    ['work_item_claimed', (s) => ({ type: 'work_item_claimed', work_item_id: s.a }), 'type'],
    ['work_item_resolved', () => ({ type: 'work_item_resolved', data: { status: 'done' } }), 'type'],
    ['work_item_enqueued', () => ({ type: 'work_item_enqueued' }), 'type'],
  ]),

  // References to items that do not exist.
  ...group('EnqueueWorkItem', [
    ['blocked_by an unknown item', t({ blocked_by: ['wi_nope'] }), 'blocked_by'],
    [
      'blocked_by a known and an unknown item',
      (s) => ({ title: 't', blocked_by: [s.a, 'wi_nope'] }),
      'blocked_by',
    ],
  ]),
  ...group(
    'AppendEvent',
    [['an unknown item', () => ({ type: 'ok', work_item_id: 'wi_nope' })]],
    'NOT_FOUND',
    1,
  ),
  ...group('GetWorkItem', [['an unknown item', () => ({ id: 'wi_nope' })]], 'NOT_FOUND', 1),
  ...group(
    'AnnotateWorkItem',
    [['an unknown item', () => ({ id: 'wi_nope', notes: { a: 1 } })]],
    'NOT_FOUND',
    1,
  ),
  ...group(
    'ResolveWorkItem',
    [['an unknown item', () => ({ id: 'wi_nope', status: 'done' })]],
    'NOT_FOUND',
    1,
  ),

  // State the caller does not own.
  ...group(
    'ResolveWorkItem',
    [
      ['the wrong worker', (s) => ({ id: s.b, status: 'done', worker: 'w2' })],
      ['a stale attempt', (s) => ({ id: s.b, status: 'done', worker: 'w1', attempt: 7 })],
    ],
    'LEASE_LOST',
    3,
  ),
  ...group(
    'ResolveWorkItem',
    [['a pending item', (s) => ({ id: s.a, status: 'done' })]],
    'INVALID_TRANSITION',
    3,
  ),
  ...group(
    'AnnotateWorkItem',
    [['under a lease held by another worker', (s) => ({ id: s.b, notes: { a: 1 }, worker: 'w2' })]],
    'LEASE_LOST',
    3,
  ),

  // Oversize values (sent on stdin: one environment variable holds at most 128 KiB).
  ...group('EnqueueWorkItem', [
    ['title over the limit', () => ({ title: big(LIMITS.title + 1) }), 'title'],
    ['kind over the limit', t({ kind: big(LIMITS.name + 1) }), 'kind'],
    ['idempotency_key over the limit', t({ idempotency_key: big(LIMITS.name + 1) }), 'idempotency_key'],
    [
      'blocked_by with too many entries',
      (s) => ({ title: 't', blocked_by: Array.from({ length: LIMITS.blockedBy + 1 }, () => s.a) }),
      'blocked_by',
    ],
    ['payload over the limit', t({ payload: over }), 'payload'],
    ['payload text over 4 x the limit', () => ({ title: big(LIMITS.jsonBytes * 4 + 10) })],
  ]),
  ...group('AnnotateWorkItem', [
    ['notes over the limit', (s) => ({ id: s.a, notes: { big: over } }), 'notes'],
    [
      "notes nested deeper than SQLite's JSON limit",
      (s) => ({ id: s.a, notes: { deep: nested(1100) } }),
      'notes',
    ],
  ]),
  ...group('ResolveWorkItem', [
    ['result over the limit', (s) => ({ id: s.b, status: 'done', worker: 'w1', result: over }), 'result'],
    [
      'error over the limit',
      (s) => ({ id: s.b, status: 'failed', worker: 'w1', error: big(LIMITS.error + 1) }),
      'error',
    ],
  ]),
  ...group('AppendEvent', [['data over the limit', () => ({ type: 'ok', data: over }), 'data']]),
];

describe('workflows refuse bad input and write nothing', () => {
  const template = join(base, 'template');
  let s: Seed;
  let baseline: Doc;
  beforeAll(async () => {
    s = await seed(template);
    baseline = await snapshot(template);
  });

  // Every case through the workflow process's own function; large payloads through a real
  // `node dist/cli/main.js <Workflow> --payload -` reading stdin (and the cases picked below through real
  // node and bun processes).
  describe.concurrent('runWorkflowProcess, as node dist/cli/main.js <Workflow> runs it', () => {
    it.for(CASES.map((c) => [c.name, c] as const))('%s', async ([, c]) => {
      const dir = copyOf(template);
      const payload = text(c, s);
      // Small payloads go through MF_TRIGGER_PAYLOAD_JSON, large ones through `--payload -` on stdin.
      const r =
        payload.length > 64 * 1024
          ? await cli([c.workflow, '--dir', dir, '--payload', '-'], {}, payload)
          : await inProcess(c.workflow, { MF_INSTANCE_DIR: dir, MF_TRIGGER_PAYLOAD_JSON: payload });
      const err = expectWorkflowError(r, c.code, c.exit);
      if (c.field !== undefined) expect(err.field).toBe(c.field);
      expect(await snapshot(dir)).toEqual(baseline);
    });
  });

  // The same refusals through `bun skill/scripts/<Workflow>.ts` give the same error (engine-specific JSON
  // parser messages aside).
  const picked = [
    'EnqueueWorkItem: truncated JSON',
    'EnqueueWorkItem: an array payload',
    'EnqueueWorkItem: title: 5',
    'EnqueueWorkItem: priority: "high"',
    'EnqueueWorkItem: blocked_by: "x"',
    'EnqueueWorkItem: unknown field bogus',
    'EnqueueWorkItem: blocked_by an unknown item',
    'AppendEvent: work_item_claimed',
    'ResolveWorkItem: status "maybe"',
    'ResolveWorkItem: the wrong worker',
    'GetWorkItem: an unknown item',
  ];
  const bunCases = CASES.filter((c) => picked.includes(c.name));

  it('every case picked for bun exists', () => {
    expect(bunCases.map((c) => c.name).sort()).toEqual([...picked].sort());
  });

  describe.concurrent('bun skill/scripts/<Workflow>.ts', () => {
    it.for(bunCases.map((c) => [c.name, c] as const))('%s', async ([, c]) => {
      const dir = copyOf(template);
      const env = { MF_INSTANCE_DIR: dir, MF_TRIGGER_PAYLOAD_JSON: text(c, s) };
      const viaBun = expectWorkflowError(await bun(c.workflow, env), c.code, c.exit);
      const viaNode = expectWorkflowError(await cli([c.workflow], env), c.code, c.exit);
      const { message: bunMessage, ...bunRest } = viaBun;
      const { message: nodeMessage, ...nodeRest } = viaNode;
      expect(bunRest).toEqual(nodeRest);
      if (!c.name.includes('JSON')) expect(bunMessage).toBe(nodeMessage);
      expect(await snapshot(dir)).toEqual(baseline);
    });
  });

  it('malformed JSON does not even create the instance folder', async () => {
    const fresh = join(base, 'never-created');
    const env = { MF_INSTANCE_DIR: fresh, MF_TRIGGER_PAYLOAD_JSON: '{"title":' };
    expectWorkflowError(await cli(['EnqueueWorkItem'], env), 'INVALID_INPUT', 2);
    expectWorkflowError(await bun('EnqueueWorkItem', env), 'INVALID_INPUT', 2);
    expectWorkflowError(await cli(['EnqueueWorkItem', '--dir', fresh, '--payload', '{']), 'INVALID_INPUT', 2);
    expect(existsSync(fresh)).toBe(false);
  });

  it('unknown workflow flags, stray arguments and a missing flag value are INVALID_INPUT', async () => {
    const dir = copyOf(template);
    expectWorkflowError(await cli(['ScaffoldFolders', '--dir', dir, '--bogus']), 'INVALID_INPUT', 2);
    expectWorkflowError(
      await cli(['EnqueueWorkItem', '--dir', dir, '--payload', '{"title":"x"}', 'extra']),
      'INVALID_INPUT',
      2,
    );
    expectWorkflowError(await cli(['EnqueueWorkItem', '--dir', dir, '--payload']), 'INVALID_INPUT', 2);
    expect(await snapshot(dir)).toEqual(baseline);
  });

  it('an unreadable store is STORAGE_UNAVAILABLE (exit 5) and is left as it was', async () => {
    const corrupt = join(base, 'corrupt');
    mkdirSync(corrupt);
    const garbage = Buffer.alloc(8192, 'not a database ');
    writeFileSync(join(corrupt, 'state.sqlite'), garbage);
    const env = { MF_INSTANCE_DIR: corrupt, MF_TRIGGER_PAYLOAD_JSON: '{"title":"x"}' };
    expectWorkflowError(await cli(['EnqueueWorkItem'], env), 'STORAGE_UNAVAILABLE', 5);
    expectWorkflowError(await bun('EnqueueWorkItem', env), 'STORAGE_UNAVAILABLE', 5);
    expectFriendlyError(await cli(['--dir', corrupt, 'list']), 'STORAGE_UNAVAILABLE', 5);
    expectWorkflowError(await cli(['--dir', corrupt, '--json', 'list']), 'STORAGE_UNAVAILABLE', 5);
    expect(readFileSync(join(corrupt, 'state.sqlite')).equals(garbage)).toBe(true);

    const aFile = join(base, 'a-file');
    writeFileSync(aFile, 'hello');
    expectWorkflowError(await cli(['ClaimWorkItem', '--dir', aFile]), 'STORAGE_UNAVAILABLE', 5);
    expect(readFileSync(aFile, 'utf8')).toBe('hello');
  });
});

describe('the library refuses the same input atomically', () => {
  async function refused(p: Promise<unknown>, code: string): Promise<void> {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isAgentStateError(err, code as never), String(err)).toBe(true);
  }

  it('refuses every system event type, alone or in a batch; a batch with one bad entry writes nothing', async () => {
    const dir = join(base, 'lib-inst');
    const s = await seed(dir);
    const inst = await openInstance({ dir });
    try {
      const head = await inst.events.head();
      const items = await inst.work.list({ limit: 1000 });
      for (const type of SYSTEM_EVENT_TYPES) {
        await refused(runWorkflow(inst, 'AppendEvent', { type }), 'INVALID_INPUT');
        await refused(inst.events.appendMany([{ type: 'fine' }, { type }]), 'INVALID_INPUT');
      }
      await refused(
        inst.work.enqueueMany([{ title: 'good' }, { title: 'bad', blocked_by: [s.a, 'wi_nope'] }]),
        'INVALID_INPUT',
      );
      await refused(
        inst.events.appendMany([{ type: 'fine' }, { type: 'ok', work_item_id: 'wi_nope' }]),
        'NOT_FOUND',
      );
      expect(await inst.events.head()).toEqual(head);
      expect(await inst.work.list({ limit: 1000 })).toEqual(items);
    } finally {
      await inst.close();
    }
  });

  it('refuses the event types kinds write with their commits (emits), naming the kind; their commits still write them', async () => {
    // Grid's audit events, and an adapter's once the adapter is loaded (its kinds are registered then).
    registerLangGraphKinds();
    const owned = kindNames().flatMap((k) => (getKind(k).emits ?? []).map((type) => ({ type, k })));
    expect(owned.map((o) => o.type)).toEqual(
      expect.arrayContaining(['grid_state_updated', 'grid_phase_advanced', 'langgraph_run_started']),
    );
    const dir = join(base, 'kind-types');
    await seed(dir);
    const inst = await openInstance({ dir });
    try {
      const head = await inst.events.head();
      for (const { type, k } of owned) {
        await refused(runWorkflow(inst, 'AppendEvent', { type }), 'INVALID_INPUT');
        await expect(inst.events.append({ type })).rejects.toThrow(`commits of ${k} documents`);
        await refused(inst.events.appendMany([{ type: 'fine' }, { type }]), 'INVALID_INPUT');
      }
      expect(await inst.events.head()).toEqual(head);
      // The kind's own commit writes its audit event.
      await inst.docs.commit({
        kind: 'grid-mission',
        id: 'STATE',
        expected_version: 0,
        body: example('grid/seed'),
        actor: 'mc',
        actor_kind: 'human',
      });
      const written = await inst.events.read({ type: 'grid_state_updated' });
      expect(written).toHaveLength(1);
    } finally {
      await inst.close();
    }
  });

  it('names with NUL (which no process can receive in argv or env) are refused', async () => {
    const root = join(base, 'nul-root');
    for (const loc of [
      { root, name: 'a\0b' },
      { root, name: 'ok', host: 'h\0' },
      { root, name: '\0' },
      { dir: join(base, 'nul\0dir') },
    ]) {
      let thrown: unknown;
      try {
        locateInstance(loc);
      } catch (e) {
        thrown = e;
      }
      expect(isAgentStateError(thrown, 'INVALID_INPUT'), String(thrown)).toBe(true);
      await refused(openInstance(loc), 'INVALID_INPUT');
    }
    expect(existsSync(root)).toBe(false);
  });
});

describe('hostile instance names are refused with exit 2 and create nothing', () => {
  // Anything wrongly written lands inside `sandbox`; the root is nested so `../..` escapes stay visible.
  const sandbox = tempDir('agentstate-hostile-');
  const root = join(sandbox, 'a', 'b', 'root');
  // Bun keeps a transpiler cache under $HOME/.bun; that is the only thing allowed to appear.
  const env = (extra: Env): Env => ({ HOME: join(sandbox, 'home'), AGENTSTATE_ROOT: root, ...extra });

  const NAMES = [
    '../../x',
    '../../../../../x',
    '..',
    '.',
    '.hidden',
    'a/b',
    '/abs',
    'a\\b',
    'x/../../y',
    'ok/..',
    '',
    ' a',
    'a b',
    '-x',
    'a'.repeat(129),
  ];
  const ENV_NAMES = [...NAMES.filter((n) => n !== ''), 'a\nb', 'a\tb', ' '];

  // Each name through the workflow process's own function (flags as the command line passes them, or the
  // environment); a real process for the flag parsing, the environment and bun below.
  describe.concurrent('refused', () => {
    it.for(NAMES)('ScaffoldFolders --name=%j', async (name) => {
      const r = await inProcess('ScaffoldFolders', env({}), { root, name });
      expect(expectWorkflowError(r, 'INVALID_INPUT', 2).field).toBe('name');
    });

    it.for(ENV_NAMES)('EnqueueWorkItem with MF_AGENT_NAME=%j', async (name) => {
      const r = await inProcess(
        'EnqueueWorkItem',
        env({ MF_AGENT_NAME: name, MF_TRIGGER_PAYLOAD_JSON: '{"title":"x"}' }),
      );
      expect(expectWorkflowError(r, 'INVALID_INPUT', 2).field).toBe('name');
    });

    it.for(['../../x', '.hidden', 'a/b', '..'])('hostile host %j', async (host) => {
      const flag = await inProcess('ScaffoldFolders', env({}), { root, name: 'ok', host });
      expect(expectWorkflowError(flag, 'INVALID_INPUT', 2).field).toBe('host');
      const fromEnv = await inProcess('ScaffoldFolders', env({ MF_AGENT_NAME: 'ok', MF_HOST: host }));
      expect(expectWorkflowError(fromEnv, 'INVALID_INPUT', 2).field).toBe('host');
    });

    it('real processes: --name and --host flags, MF_AGENT_NAME', async () => {
      const name = await cli(['ScaffoldFolders', '--root', root, '--name=../../x'], env({}));
      expect(expectWorkflowError(name, 'INVALID_INPUT', 2).field).toBe('name');
      const host = await cli(['ScaffoldFolders', '--root', root, '--name', 'ok', '--host=a/b'], env({}));
      expect(expectWorkflowError(host, 'INVALID_INPUT', 2).field).toBe('host');
      const fromEnv = await cli(
        ['EnqueueWorkItem'],
        env({ MF_AGENT_NAME: 'a\nb', MF_TRIGGER_PAYLOAD_JSON: '{"title":"x"}' }),
      );
      expect(expectWorkflowError(fromEnv, 'INVALID_INPUT', 2).field).toBe('name');
    });

    it('MF_INSTANCE_DIR with a hostile MF_AGENT_NAME', async () => {
      const r = await cli(
        ['ScaffoldFolders'],
        env({ MF_INSTANCE_DIR: join(sandbox, 'inst'), MF_AGENT_NAME: '../x' }),
      );
      expectWorkflowError(r, 'INVALID_INPUT', 2);
    });

    it('bun skill scripts', async () => {
      expect(
        expectWorkflowError(
          await bun('ScaffoldFolders', env({ MF_AGENT_NAME: '../../x' })),
          'INVALID_INPUT',
          2,
        ).field,
      ).toBe('name');
      const r = await bun(
        'EnqueueWorkItem',
        env({ MF_AGENT_NAME: '.hidden', MF_TRIGGER_PAYLOAD_JSON: '{"title":"x"}' }),
      );
      expectWorkflowError(r, 'INVALID_INPUT', 2);
    });

    it('friendly commands', async () => {
      const init = await cli(['--root', root, '--name', '../../x', 'init'], env({}));
      expect(expectFriendlyError(init, 'INVALID_INPUT', 2)).toContain('../../x');
      expectFriendlyError(await cli(['init'], env({ MF_AGENT_NAME: 'a/b' })), 'INVALID_INPUT', 2);
      expectFriendlyError(
        await cli(['--root', root, '--name', 'ok', '--host', '../x', 'list'], env({})),
        'INVALID_INPUT',
        2,
      );
      const json = await cli(['--root', root, '--name', '.hidden', '--json', 'enqueue', 't'], env({}));
      expect(expectWorkflowError(json, 'INVALID_INPUT', 2).field).toBe('name');
    });
  });

  it('after all of the above, nothing exists in the sandbox', () => {
    const entries = readdirSync(sandbox, { recursive: true, encoding: 'utf8' });
    expect(entries.filter((e) => e !== 'home' && !e.startsWith(join('home', '.bun')))).toEqual([]);
  });
});

describe('SQL metacharacters are data, never SQL', () => {
  const dir = join(base, 'sql-inst');
  // Binding is the storage's: the workflow process's function in this process reaches the same statements.
  const wf = (workflow: WorkflowName, payload: unknown) =>
    inProcess(workflow, { MF_INSTANCE_DIR: dir, MF_TRIGGER_PAYLOAD_JSON: J(payload) });
  const friendly = (args: string[]) => cli(['--dir', dir, ...args]);
  function ok(r: RunResult): Doc {
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    return r.json;
  }
  /** Either stored verbatim (exit 0, `check` passes) or refused as INVALID_INPUT; never anything else. */
  function verbatimOrRefused(r: RunResult, check: (doc: Doc) => void): void {
    if (r.code === 0) check(r.json);
    else expectWorkflowError(r, 'INVALID_INPUT', 2);
  }

  it('round-trips titles, kinds, keys, workers, notes and event fields verbatim; the tables survive', async () => {
    ok(await wf('ScaffoldFolders', {}));
    const one = ok(
      await wf('EnqueueWorkItem', {
        title: SQL,
        kind: SQL_EVENTS,
        idempotency_key: SQL_DQ,
        payload: { q: SQL },
      }),
    );
    expect(one).toMatchObject({ title: SQL, kind: SQL_EVENTS, idempotency_key: SQL_DQ, payload: { q: SQL } });
    expect(ok(await wf('EnqueueWorkItem', { title: 'retry', idempotency_key: SQL_DQ })).id).toBe(one.id);
    const two = ok(await wf('EnqueueWorkItem', { title: SQL_OR, kind: SQL_OR, blocked_by: [one.id] }));
    expect(two).toMatchObject({ title: SQL_OR, kind: SQL_OR, blocked_by: [one.id] });

    expect(ok(await wf('GetWorkItem', { id: one.id }))).toEqual(one);
    for (const id of [SQL, SQL_OR, SQL_DQ]) {
      expectWorkflowError(await wf('GetWorkItem', { id }), 'NOT_FOUND', 1);
      expectWorkflowError(await wf('ResolveWorkItem', { id, status: 'done' }), 'NOT_FOUND', 1);
    }
    // Injected filters would match every item; bound ones match none.
    expect(ok(await wf('ClaimWorkItem', { id: SQL_OR }))).toBeNull();
    expect(ok(await wf('ClaimWorkItem', { kind: `' OR 1=1 --` }))).toBeNull();
    expect(ok(await wf('ClaimWorkItem', { kind: SQL_OR }))).toBeNull(); // blocked by `one`

    const claimed = ok(await wf('ClaimWorkItem', { kind: SQL_EVENTS, worker: SQL_DQ }));
    expect(claimed).toMatchObject({ id: one.id, lease_owner: SQL_DQ });
    expectWorkflowError(
      await wf('ResolveWorkItem', { id: one.id, status: 'done', worker: SQL }),
      'LEASE_LOST',
      3,
    );
    const done = ok(
      await wf('ResolveWorkItem', { id: one.id, status: 'done', worker: SQL_DQ, result: { sql: SQL } }),
    );
    expect(done).toMatchObject({ status: 'done', result: { sql: SQL } });

    const annotated = ok(
      await wf('AnnotateWorkItem', { id: two.id, notes: { [SQL]: SQL_EVENTS, k: SQL_OR } }),
    );
    expect(annotated.notes).toEqual({ [SQL]: SQL_EVENTS, k: SQL_OR });

    const eventFields = {
      data: { sql: SQL, [SQL_OR]: SQL_DQ },
      actor: SQL_EVENTS,
      correlation_id: SQL_DQ,
      causation_id: SQL,
    };
    const ev = ok(
      await wf('AppendEvent', { type: 'note', stream: 'ok:stream', work_item_id: two.id, ...eventFields }),
    );
    expect(ev).toMatchObject(eventFields);
    verbatimOrRefused(await wf('AppendEvent', { type: 'note', stream: SQL }), (e) =>
      expect(e.stream).toBe(SQL),
    );
    verbatimOrRefused(await wf('AppendEvent', { type: 'note', stream: SQL_OR }), (e) =>
      expect(e.stream).toBe(SQL_OR),
    );
    verbatimOrRefused(await wf('AppendEvent', { type: SQL_EVENTS }), (e) => expect(e.type).toBe(SQL_EVENTS));

    // The friendly CLI binds its arguments too.
    const three = ok(await friendly(['--json', 'enqueue', SQL_EVENTS, '-k', SQL, '--key', SQL_OR]));
    expect(three).toMatchObject({ title: SQL_EVENTS, kind: SQL, idempotency_key: SQL_OR });
    expect((ok(await friendly(['--json', 'list', '-k', SQL])) as Doc[]).map((i) => i.id)).toEqual([three.id]);
    expect(ok(await friendly(['--json', 'list', '-k', `' OR 1=1 --`]))).toEqual([]);
    const byStream = await friendly(['--json', 'events', '-s', SQL]);
    verbatimOrRefused(byStream, (events: Doc[]) => expect(events.every((e) => e.stream === SQL)).toBe(true));
    expect(ok(await friendly(['--json', 'events', '-t', SQL_OR]))).toEqual([]);
    expectFriendlyError(await friendly(['get', SQL_OR]), 'NOT_FOUND', 1);
    expectFriendlyError(await friendly(['annotate', SQL, '{}']), 'NOT_FOUND', 1);

    // The schema is intact, every row is there, and the hash chain verifies.
    const db = new Database(join(dir, 'state.sqlite'), { readonly: true, fileMustExist: true });
    try {
      const names = (sql: string) => (db.prepare(sql).all() as Array<{ name: string }>).map((r) => r.name);
      expect(names("SELECT name FROM sqlite_master WHERE type = 'table'")).toEqual(
        expect.arrayContaining(['events', 'work_items']),
      );
      expect(names("SELECT name FROM sqlite_master WHERE type = 'trigger'")).toEqual(
        expect.arrayContaining(['events_no_update', 'events_no_delete']),
      );
      const titles = db.prepare('SELECT title FROM work_items ORDER BY created_at, id').all() as Array<{
        title: string;
      }>;
      expect(titles.map((r) => r.title)).toEqual([SQL, SQL_OR, SQL_EVENTS]);
    } finally {
      db.close();
    }
    const inst = await openInstance({ dir });
    try {
      expect((await inst.events.verify()).ok).toBe(true);
      expect(await inst.work.get(two.id)).toMatchObject({ title: SQL_OR, notes: { [SQL]: SQL_EVENTS } });
    } finally {
      await inst.close();
    }
  });
});

describe('friendly commands: one readable line (or one JSON line with --json), nothing written', () => {
  const template = join(base, 'friendly-template');
  let s: Seed;
  let baseline: Doc;
  beforeAll(async () => {
    s = await seed(template);
    baseline = await snapshot(template);
  });
  const unchanged = async (dir: string) => expect(await snapshot(dir)).toEqual(baseline);

  it('service errors print `agentstate: <message> [CODE]` and exit with the code', async () => {
    const dir = copyOf(template);
    const run = (args: string[]) => cli(['--dir', dir, ...args]);
    expect(expectFriendlyError(await run(['get', 'wi_nope']), 'NOT_FOUND', 1)).toContain('wi_nope');
    expect(
      expectFriendlyError(await run(['resolve', s.b, 'maybe', '-w', 'w1']), 'INVALID_INPUT', 2),
    ).toContain('maybe');
    expectFriendlyError(await run(['resolve', s.b, 'done', '-w', 'w2']), 'LEASE_LOST', 3);
    expectFriendlyError(await run(['resolve', s.a, 'done']), 'INVALID_TRANSITION', 3);
    expectFriendlyError(await run(['append', 'work_item_claimed', '-i', s.a]), 'INVALID_INPUT', 2);
    expectFriendlyError(await run(['append', 'work_item_resolved']), 'INVALID_INPUT', 2);
    // A kind's event type (Grid's audit event).
    expectFriendlyError(await run(['append', 'grid_state_updated']), 'INVALID_INPUT', 2);
    expectFriendlyError(await run(['append', 'ok', '-i', 'wi_nope']), 'NOT_FOUND', 1);
    expectFriendlyError(await run(['enqueue', 'x', '-b', 'wi_nope']), 'INVALID_INPUT', 2);
    expectFriendlyError(await run(['enqueue', big(LIMITS.title + 1)]), 'INVALID_INPUT', 2);
    expectFriendlyError(await run(['annotate', s.a, '{bad']), 'INVALID_INPUT', 2);
    expectFriendlyError(await run(['annotate', s.a, '[1]']), 'INVALID_INPUT', 2);
    expectFriendlyError(await run(['list', '-s', 'maybe']), 'INVALID_INPUT', 2);
    await unchanged(dir);
  });

  it('service errors with --json print one JSON error line', async () => {
    const dir = copyOf(template);
    const run = (args: string[]) => cli(['--dir', dir, '--json', ...args]);
    expectWorkflowError(await run(['get', 'wi_nope']), 'NOT_FOUND', 1);
    expect(
      expectWorkflowError(await run(['resolve', s.b, 'maybe', '-w', 'w1']), 'INVALID_INPUT', 2).field,
    ).toBe('status');
    expectWorkflowError(await run(['resolve', s.b, 'done', '-w', 'w2']), 'LEASE_LOST', 3);
    expectWorkflowError(await run(['append', 'work_item_claimed']), 'INVALID_INPUT', 2);
    expect(expectWorkflowError(await run(['enqueue', 'x', '-b', 'wi_nope']), 'INVALID_INPUT', 2).field).toBe(
      'blocked_by',
    );
    await unchanged(dir);
  });

  // Option parsing errors (commander): a wrong option type, a malformed JSON option, unknown options/commands.
  const USAGE = [
    ['enqueue', 'x', '-p', 'high'],
    ['enqueue', 'x', '--payload', '{bad'],
    ['enqueue', 'x', '--bogus'],
    ['claim', '--lease', 'forever'],
    ['nosuchcommand'],
  ].map((args) => [args.join(' '), args] as const);

  describe.concurrent('usage errors', () => {
    it.for(USAGE)('`%s` prints one `agentstate: ... [INVALID_INPUT]` line', async ([, args]) => {
      const dir = copyOf(template);
      expectFriendlyError(await cli(['--dir', dir, ...args]), 'INVALID_INPUT', 2);
      await unchanged(dir);
    });

    it.for(USAGE)('`%s` with --json prints one JSON error line', async ([, args]) => {
      const dir = copyOf(template);
      expectWorkflowError(await cli(['--dir', dir, '--json', ...args]), 'INVALID_INPUT', 2);
      await unchanged(dir);
    });
  });
});
