// The subprocess contract of the agent bundle's ten workflows, run both as `node dist/cli/main.js <Name>`
// and as `bun skill/scripts/<Name>.ts` with the MF_* environment: one JSON document on stdout and exit 0,
// or one JSON error line on stderr and the exit code of its error code. The library (`runWorkflow`) must
// give the same shape for the same payload. Each runner runs once on embedded SQLite and once more with
// AGENTSTATE_URL naming a PostgreSQL schema of its own (when a server answers; see helpers/postgres.ts).
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgresBackend } from '../../src/backends/postgres/backend.js';
import { isAgentStateError, openInstance, runWorkflow, WORKFLOW_NAMES } from '../../src/index.js';
import { invoke } from '../../src/service/invoke.js';
import { ROOT, type RunResult, runBun, runCli } from '../helpers/cli.js';
import { adminQuery, PG_URL, postgresForThisFile } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

type Env = Record<string, string | undefined>;
type Runner = (workflow: string, env: Env, input?: string) => RunResult;
// biome-ignore lint/suspicious/noExplicitAny: JSON documents from a subprocess are checked field by field.
type Doc = any;

/** The test server's URL naming `schema`. */
function pgUrl(schema: string): string {
  const u = new URL(PG_URL);
  u.searchParams.set('schema', schema);
  return u.toString();
}

/** Where a runner's instances keep their state: `url` unset means state.sqlite in each instance folder. */
interface Storage {
  /** AGENTSTATE_URL for every subprocess of the runner. */
  url?: string;
  /** Storage for the library's own instance in the runWorkflow comparison (isolated from the runner's). */
  libraryUrl?: string;
  /** A schema no instance has opened yet. */
  freshUrl?: string;
}

const pgBase = await postgresForThisFile();
/** One schema per PostgreSQL runner, plus one for its library instance and one left unmigrated. */
const pgSchemas = (short: string) => ({
  runner: `${pgBase}_${short}`,
  library: `${pgBase}_${short}_lib`,
  fresh: `${pgBase}_${short}_new`,
});
const pgStorage: Record<'cli' | 'bun', Storage> | null = pgBase === null ? null : { cli: {}, bun: {} };
if (pgBase !== null && pgStorage !== null) {
  const all: string[] = [];
  for (const short of ['cli', 'bun'] as const) {
    const s = pgSchemas(short);
    all.push(s.runner, s.library, s.fresh);
    pgStorage[short] = { url: pgUrl(s.runner), libraryUrl: pgUrl(s.library), freshUrl: pgUrl(s.fresh) };
    // Migrated up front, so no test depends on being the first to open the runner's schema.
    for (const schema of [s.runner, s.library]) {
      const backend = await openPostgresBackend({ url: PG_URL, schema, instance: 'setup/migrate' });
      await backend.close();
    }
  }
  afterAll(async () => {
    for (const schema of all) await adminQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });
}

/** Runs `run` with the storage's AGENTSTATE_URL added to the environment. */
function withStorage(storage: Storage, run: Runner): Runner {
  return (workflow, env, input) => run(workflow, { AGENTSTATE_URL: storage.url, ...env }, input);
}

const RUNNERS: Array<[string, Runner, Storage]> = [
  ['cli', (workflow, env, input) => runCli([workflow], env, input), {}],
  ['bun', (workflow, env, input) => runBun(workflow, env, input), {}],
  ...(pgStorage === null
    ? []
    : ([
        [
          'cli+postgres',
          withStorage(pgStorage.cli, (w, env, input) => runCli([w], env, input)),
          pgStorage.cli,
        ],
        ['bun+postgres', withStorage(pgStorage.bun, (w, env, input) => runBun(w, env, input)), pgStorage.bun],
      ] as Array<[string, Runner, Storage]>)),
];

/** Fields every work item JSON carries. */
const ITEM_KEYS = [
  'id',
  'title',
  'kind',
  'status',
  'priority',
  'payload',
  'notes',
  'result',
  'error',
  'attempts',
  'max_attempts',
  'lease_owner',
  'lease_expires_at',
  'blocked_by',
  'created_at',
  'updated_at',
] as const;

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const HEX64 = /^[0-9a-f]{64}$/;

const root = tempDir('agentstate-contract-');
/** HOME for the subprocesses, so nothing can land in the real ~/.config. */
const home = join(root, 'home');
let seq = 0;

/** A path for an instance folder that does not exist yet (only ScaffoldFolders creates one). */
function freshDir(label: string): string {
  seq += 1;
  // A folder name that is a valid instance name as it is ('cli+postgres' becomes 'cli-postgres').
  return join(root, `${label.replace(/[^A-Za-z0-9_-]/g, '-')}-agent-${seq}`);
}

/** Asserts the success half of the contract and returns the parsed stdout document. */
function ok(r: RunResult): Doc {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  expect(r.stdout.endsWith('\n')).toBe(true);
  expect(r.stdout.trim().split('\n')).toHaveLength(1);
  expect(r.json).not.toBeUndefined();
  return r.json;
}

/** Asserts the failure half of the contract and returns the `error` object from stderr. */
function fails(r: RunResult, code: string, exit: number): Doc {
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code: exit, stdout: '' });
  const lines = r.stderr.trim().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  const doc = JSON.parse(lines[0]!) as Doc;
  expect(doc.error.code).toBe(code);
  expect(typeof doc.error.message).toBe('string');
  expect(doc.error.message.length).toBeGreaterThan(0);
  return doc.error;
}

function expectItemShape(item: Doc): void {
  expect(item).toBeTypeOf('object');
  for (const key of ITEM_KEYS) expect(item, `work item field ${key}`).toHaveProperty(key);
  expect(item.id).toMatch(/^wi_/);
  expect(item.created_at).toMatch(ISO);
  expect(item.updated_at).toMatch(ISO);
  expect(Array.isArray(item.blocked_by)).toBe(true);
  expect(item.notes).toBeTypeOf('object');
}

/** Friendly CLI with --json against an instance folder (used to read back what a workflow did). */
/**
 * What the store holds, read through the operations the CLI's `list`, `events -t`, `get` and `verify` run, in
 * this process: a check of what a workflow did, not part of the contract under test (which keeps every
 * workflow a real process).
 */
async function inspectWith(storage: Storage, dir: string, args: string[]): Promise<Doc> {
  const [command, a, b] = args;
  const [op, input] =
    command === 'list'
      ? ['list_items', {}]
      : command === 'events' && a === '-t'
        ? ['read_events', { type: b, limit: 100 }]
        : command === 'get'
          ? ['get_item', { id: a }]
          : command === 'verify'
            ? ['verify', {}]
            : expect.unreachable(`no check for ${args.join(' ')}`);
  const r = await invoke(op, input, { instance: { dir, url: storage.url }, env: { HOME: home } });
  return JSON.parse(JSON.stringify(r));
}

/** Values that differ between two otherwise identical calls. */
function masked(x: Doc): Doc {
  const out: Doc = {};
  for (const [k, v] of Object.entries(x as object)) {
    out[k] = /^(id|created_at|updated_at|claimed_at|lease_expires_at|resolved_at)$/.test(k) ? typeof v : v;
  }
  return out;
}

describe.each(RUNNERS)('workflow contract via %s', (label, run, storage) => {
  const onPostgres = storage.url !== undefined;
  /**
   * How a process reads its payload and its environment does not depend on where the store is: those tests run
   * with the embedded store only (under node and bun), the store's own behaviour on every runner.
   */
  const itEmbedded: typeof it = (onPostgres ? () => {} : it) as typeof it;
  /**
   * Bun on PostgreSQL runs the same workflow code with the same driver as node on PostgreSQL and bun on the
   * embedded store, which run every test: it keeps the tests that cross the runtime with the storage (the
   * claim and lease protocol, NOT_FOUND for a schema never opened, and every workflow compared with the
   * library), not the per-workflow field checks the other three runners make.
   */
  const itPairwise: typeof it = (label === 'bun+postgres' ? () => {} : it) as typeof it;
  const friendly = (dir: string, args: string[]): Promise<Doc> => inspectWith(storage, dir, args);

  /** Runs `workflow` against instance folder `dir` with `payload` as MF_TRIGGER_PAYLOAD_JSON. */
  function call(dir: string, workflow: string, payload?: unknown): RunResult {
    return run(workflow, {
      HOME: home,
      MF_INSTANCE_DIR: dir,
      MF_TRIGGER_TYPE: 'manual',
      MF_TRIGGER_PAYLOAD_JSON: payload === undefined ? undefined : JSON.stringify(payload),
    });
  }

  /** EnqueueWorkItem as the workflow under test. */
  function enqueueViaWorkflow(dir: string, payload: Record<string, unknown>): Doc {
    return ok(call(dir, 'EnqueueWorkItem', payload));
  }

  /**
   * An item to work on, enqueued through the library on the runner's storage (set-up: the tests of the other
   * workflows start from items, EnqueueWorkItem has its own test).
   */
  async function enqueue(dir: string, payload: Record<string, unknown>): Promise<Doc> {
    const inst = await openInstance({ dir, url: storage.url, create: false });
    try {
      return JSON.parse(JSON.stringify(await runWorkflow(inst, 'EnqueueWorkItem', payload)));
    } finally {
      await inst.close();
    }
  }

  /**
   * A new instance, made as a host makes one: ScaffoldFolders first (run in-process on the runner's storage,
   * to spare a subprocess per test), since no other workflow creates an instance.
   */
  async function scaffolded(): Promise<string> {
    const dir = freshDir(label);
    const inst = await openInstance({ dir, url: storage.url });
    try {
      await runWorkflow(inst, 'ScaffoldFolders');
    } finally {
      await inst.close();
    }
    return dir;
  }

  itPairwise('ScaffoldFolders creates the instance layout, and a second call creates nothing', () => {
    const dir = freshDir(label);
    const first = ok(call(dir, 'ScaffoldFolders'));
    expect(first.instance_dir).toBe(dir);
    expect(first.name).toBe(basename(dir));
    expect(first.host).toBeTypeOf('string');
    if (onPostgres) {
      // The state is in PostgreSQL: the folder holds the files, but no state.sqlite. The schema was
      // migrated before (migrations are per schema, not per instance).
      expect(first.migrations_applied).toEqual([]);
      expect([...first.created].sort()).toEqual(['CLAUDE.md', 'context/', 'persona.md', 'retros/'].sort());
      expect(existsSync(join(dir, 'state.sqlite'))).toBe(false);
    } else {
      expect(first.db).toBe(join(dir, 'state.sqlite'));
      expect(first.migrations_applied).toContain('0001-initial.sql');
      expect([...first.created].sort()).toEqual(
        ['CLAUDE.md', 'context/', 'persona.md', 'retros/', 'state.sqlite'].sort(),
      );
      expect(existsSync(join(dir, 'state.sqlite'))).toBe(true);
    }
    for (const f of ['dashboard.md', 'CLAUDE.md', 'persona.md']) {
      expect(existsSync(join(dir, f)), f).toBe(true);
    }
    for (const d of ['retros', 'context']) expect(readdirSync(join(dir, d))).toEqual([]);
    const claude = readFileSync(join(dir, 'CLAUDE.md'), 'utf8');

    const second = ok(call(dir, 'ScaffoldFolders', {}));
    expect(second.created).toEqual([]);
    expect(second.migrations_applied).toEqual([]);
    expect(second.instance_dir).toBe(dir);
    expect(readFileSync(join(dir, 'CLAUDE.md'), 'utf8')).toBe(claude);
    if (onPostgres) expect(existsSync(join(dir, 'state.sqlite'))).toBe(false);
  });

  if (onPostgres) {
    it('ScaffoldFolders on a schema nobody has opened applies its migrations and creates no state.sqlite', () => {
      const dir = freshDir(label);
      const r = ok(
        run('ScaffoldFolders', { HOME: home, MF_INSTANCE_DIR: dir, AGENTSTATE_URL: storage.freshUrl }),
      );
      expect(r.migrations_applied).toContain('0001-initial.sql');
      expect([...r.created].sort()).toEqual(['CLAUDE.md', 'context/', 'persona.md', 'retros/'].sort());
      expect(existsSync(join(dir, 'state.sqlite'))).toBe(false);
      expect(existsSync(join(dir, 'dashboard.md'))).toBe(true);
    });
  }

  itPairwise('EnqueueWorkItem stores every field; an idempotency_key returns the same item', async () => {
    const dir = await scaffolded();
    const blocker = enqueueViaWorkflow(dir, { title: 'fetch sources' });
    expectItemShape(blocker);
    expect(blocker).toMatchObject({
      title: 'fetch sources',
      kind: null,
      status: 'pending',
      priority: 0,
      payload: null,
      notes: {},
      result: null,
      error: null,
      attempts: 0,
      max_attempts: 3,
      lease_owner: null,
      lease_expires_at: null,
      blocked_by: [],
    });

    const full = {
      title: 'compile the report',
      kind: 'build',
      payload: { repo: 'x/y', flags: ['-O2'], nested: { n: 1, ok: true, none: null } },
      priority: 7,
      idempotency_key: 'build-report-1',
      blocked_by: [blocker.id],
      not_before: '2020-01-01T00:00:00.000Z',
      max_attempts: 5,
      actor: 'planner',
    };
    const item = enqueueViaWorkflow(dir, full);
    expectItemShape(item);
    expect(item).toMatchObject({
      title: full.title,
      kind: 'build',
      status: 'pending',
      priority: 7,
      payload: full.payload,
      idempotency_key: 'build-report-1',
      blocked_by: [blocker.id],
      not_before: '2020-01-01T00:00:00.000Z',
      max_attempts: 5,
      attempts: 0,
    });
    expect(item.id).not.toBe(blocker.id);

    const again = enqueueViaWorkflow(dir, { ...full, title: 'a retried enqueue' });
    expect(again.id).toBe(item.id);
    expect(again.title).toBe(full.title);

    const parked = enqueueViaWorkflow(dir, { title: 'ask a human', waiting_human: true });
    expect(parked.status).toBe('waiting_human');

    const items = (await friendly(dir, ['list'])) as Doc[];
    expect(items.map((i) => i.id).sort()).toEqual([blocker.id, item.id, parked.id].sort());
    const enqueued = (await friendly(dir, ['events', '-t', 'work_item_enqueued'])) as Doc[];
    expect(enqueued).toHaveLength(3);
    expect(enqueued.find((e) => e.work_item_id === item.id)?.actor).toBe('planner');
  });

  it('ClaimWorkItem claims the highest-priority ready item under a lease, filters by id and kind, null when none', async () => {
    const dir = await scaffolded();
    const low = await enqueue(dir, { title: 'low', priority: 1 });
    const high = await enqueue(dir, { title: 'high', priority: 9 });
    const mid = await enqueue(dir, { title: 'mid', priority: 5 });
    const blocked = await enqueue(dir, { title: 'blocked', priority: 100, blocked_by: [low.id] });
    const kindX = await enqueue(dir, { title: 'kind x', kind: 'x', priority: -5 });

    const claimed = ok(call(dir, 'ClaimWorkItem', { worker: 'w1', lease_ms: 30_000 }));
    expectItemShape(claimed);
    expect(claimed).toMatchObject({ id: high.id, status: 'in_flight', lease_owner: 'w1', attempts: 1 });
    expect(claimed.lease_expires_at).toMatch(ISO);
    expect(claimed.claimed_at).toMatch(ISO);
    expect(Date.parse(claimed.lease_expires_at) - Date.parse(claimed.claimed_at)).toBe(30_000);

    const byKind = ok(call(dir, 'ClaimWorkItem', { kind: 'x' }));
    expect(byKind).toMatchObject({ id: kindX.id, status: 'in_flight', attempts: 1 });
    // With no worker, the lease owner is the instance's agent name.
    expect(byKind.lease_owner).toBe(basename(dir));

    expect(ok(call(dir, 'ClaimWorkItem', { id: blocked.id }))).toBeNull();
    expect(ok(call(dir, 'ClaimWorkItem', { kind: 'no-such-kind' }))).toBeNull();
    expect(ok(call(dir, 'ClaimWorkItem', { id: low.id, worker: 'w2' }))).toMatchObject({
      id: low.id,
      lease_owner: 'w2',
    });
    expect(ok(call(dir, 'ClaimWorkItem', {}))).toMatchObject({ id: mid.id, status: 'in_flight' });

    // Only `blocked` is left and its blocker is in flight, not done: nothing is ready.
    const none = call(dir, 'ClaimWorkItem');
    expect(ok(none)).toBeNull();
    expect(none.stdout).toBe('null\n');
    expect((await friendly(dir, ['get', blocked.id])).status).toBe('pending');
  });

  it('ResolveWorkItem finishes done with a result or failed with an error; a wrong worker gets LEASE_LOST', async () => {
    const dir = await scaffolded();
    const a = await enqueue(dir, { title: 'a', priority: 2 });
    const b = await enqueue(dir, { title: 'b', priority: 1 });
    expect(ok(call(dir, 'ClaimWorkItem', { worker: 'w1' })).id).toBe(a.id);
    expect(ok(call(dir, 'ClaimWorkItem', { worker: 'w1' })).id).toBe(b.id);

    const done = ok(
      call(dir, 'ResolveWorkItem', { id: a.id, status: 'done', result: { pages: 3 }, worker: 'w1' }),
    );
    expectItemShape(done);
    expect(done).toMatchObject({ id: a.id, status: 'done', result: { pages: 3 }, error: null, attempts: 1 });
    expect(done.resolved_at).toMatch(ISO);

    const lost = fails(
      call(dir, 'ResolveWorkItem', { id: b.id, status: 'done', worker: 'w2' }),
      'LEASE_LOST',
      3,
    );
    expect(lost.message).toContain(b.id);
    const fenced = fails(
      call(dir, 'ResolveWorkItem', { id: b.id, status: 'done', worker: 'w1', attempt: 2 }),
      'LEASE_LOST',
      3,
    );
    expect(fenced.message).toContain(b.id);
    expect(await friendly(dir, ['get', b.id])).toMatchObject({ status: 'in_flight', lease_owner: 'w1' });

    const failed = ok(
      call(dir, 'ResolveWorkItem', {
        id: b.id,
        status: 'failed',
        error: 'upstream 503',
        worker: 'w1',
        attempt: 1,
      }),
    );
    expect(failed).toMatchObject({ id: b.id, status: 'failed', error: 'upstream 503' });

    // A finished item cannot be resolved the other way.
    fails(
      call(dir, 'ResolveWorkItem', { id: a.id, status: 'failed', worker: 'w1' }),
      'INVALID_TRANSITION',
      3,
    );
    fails(call(dir, 'ResolveWorkItem', { id: 'wi_missing', status: 'done' }), 'NOT_FOUND', 1);

    const resolved = (await friendly(dir, ['events', '-t', 'work_item_resolved'])) as Doc[];
    expect(resolved.map((e) => [e.work_item_id, e.data.status])).toEqual([
      [a.id, 'done'],
      [b.id, 'failed'],
    ]);
  });

  itPairwise('GetWorkItem returns the item, or exits 1 with NOT_FOUND', async () => {
    const dir = await scaffolded();
    const item = await enqueue(dir, { title: 'read me', payload: { k: 'v' } });
    const got = ok(call(dir, 'GetWorkItem', { id: item.id }));
    expectItemShape(got);
    expect(got).toEqual(item);

    const err = fails(call(dir, 'GetWorkItem', { id: 'wi_does_not_exist' }), 'NOT_FOUND', 1);
    expect(err.message).toContain('wi_does_not_exist');
  });

  itPairwise('AnnotateWorkItem merges notes and emits work_item_annotated', async () => {
    const dir = await scaffolded();
    const item = await enqueue(dir, { title: 'annotate me' });
    const one = ok(call(dir, 'AnnotateWorkItem', { id: item.id, notes: { session_id: 's-1', tries: 1 } }));
    expectItemShape(one);
    expect(one.notes).toEqual({ session_id: 's-1', tries: 1 });
    const two = ok(
      call(dir, 'AnnotateWorkItem', { id: item.id, notes: { host: 'claude', tries: 2, session_id: null } }),
    );
    expect(two.notes).toEqual({ host: 'claude', tries: 2 });
    expect(ok(call(dir, 'GetWorkItem', { id: item.id })).notes).toEqual({ host: 'claude', tries: 2 });

    const events = (await friendly(dir, ['events', '-t', 'work_item_annotated'])) as Doc[];
    expect(events).toHaveLength(2);
    expect(events.every((e) => e.work_item_id === item.id)).toBe(true);

    fails(call(dir, 'AnnotateWorkItem', { id: 'wi_nope', notes: { a: 1 } }), 'NOT_FOUND', 1);
  });

  itPairwise('AppendEvent returns the event with its position and chained hash', async () => {
    const dir = await scaffolded();
    const item = await enqueue(dir, { title: 'subject' });
    const before = (await friendly(dir, ['verify'])).events as number; // at least the work_item_enqueued event
    expect(before).toBeGreaterThanOrEqual(1);
    const e1 = ok(
      call(dir, 'AppendEvent', {
        type: 'tool_called',
        data: { tool: 'grep', args: ['-r', 'x'] },
        stream: 'session:abc',
        work_item_id: item.id,
        correlation_id: 'corr-1',
        causation_id: 'cause-1',
      }),
    );
    expect(e1).toMatchObject({
      position: before + 1,
      stream: 'session:abc',
      stream_seq: 1,
      type: 'tool_called',
      data: { tool: 'grep', args: ['-r', 'x'] },
      work_item_id: item.id,
      correlation_id: 'corr-1',
      causation_id: 'cause-1',
      actor: basename(dir),
    });
    expect(e1.hash).toMatch(HEX64);
    expect(e1.prev_hash).toMatch(HEX64);
    expect(e1.created_at).toMatch(ISO);

    const e2 = ok(call(dir, 'AppendEvent', { type: 'note', work_item_id: item.id }));
    expect(e2).toMatchObject({
      position: before + 2,
      stream: `work_item:${item.id}`,
      stream_seq: 2,
      data: null,
    });
    expect(e2.prev_hash).toBe(e1.hash);

    const e3 = ok(call(dir, 'AppendEvent', { type: 'heartbeat.tick', data: 42, actor: 'host' }));
    expect(e3).toMatchObject({
      position: before + 3,
      stream: 'instance',
      stream_seq: 1,
      data: 42,
      actor: 'host',
    });
    expect(e3.prev_hash).toBe(e2.hash);

    expect(await friendly(dir, ['verify'])).toMatchObject({ ok: true, events: before + 3, head: e3.hash });
  });

  itPairwise('ReplayPending returns every unfinished item and re-emits it', async () => {
    const dir = await scaffolded();
    const pending = await enqueue(dir, { title: 'pending', priority: 1 });
    const inFlight = await enqueue(dir, { title: 'in flight', priority: 3 });
    const finished = await enqueue(dir, { title: 'finished', priority: 2 });
    const waiting = await enqueue(dir, { title: 'waiting', waiting_human: true });
    expect(ok(call(dir, 'ClaimWorkItem', { id: finished.id, worker: 'w' })).id).toBe(finished.id);
    ok(call(dir, 'ResolveWorkItem', { id: finished.id, status: 'done', worker: 'w' }));
    expect(ok(call(dir, 'ClaimWorkItem', { id: inFlight.id, worker: 'w' })).id).toBe(inFlight.id);

    const replayed = ok(call(dir, 'ReplayPending')) as Doc[];
    expect(Array.isArray(replayed)).toBe(true);
    for (const i of replayed) expectItemShape(i);
    expect(Object.fromEntries(replayed.map((i) => [i.id, i.status]))).toEqual({
      [pending.id]: 'pending',
      [inFlight.id]: 'in_flight',
      [waiting.id]: 'waiting_human',
    });
    const events = (await friendly(dir, ['events', '-t', 'work_item_replayed'])) as Doc[];
    expect(events.map((e) => e.work_item_id).sort()).toEqual([pending.id, inFlight.id, waiting.id].sort());

    // The lease survives a replay: the item is still the worker's.
    expect(ok(call(dir, 'GetWorkItem', { id: inFlight.id }))).toMatchObject({
      status: 'in_flight',
      lease_owner: 'w',
    });
  });

  itPairwise(
    'RegenerateDashboard writes dashboard.md and returns its path, position and counts',
    async () => {
      const dir = await scaffolded();
      await enqueue(dir, { title: 'first item' });
      await enqueue(dir, { title: 'second item' });
      const c = await enqueue(dir, { title: 'claimed item', priority: 9 });
      expect(ok(call(dir, 'ClaimWorkItem', { worker: 'w' })).id).toBe(c.id);

      const head = (await friendly(dir, ['verify'])).events as number;
      const r = ok(call(dir, 'RegenerateDashboard'));
      expect(r.path).toBe(join(dir, 'dashboard.md'));
      expect(r.position).toBe(head);
      expect(r.counts).toMatchObject({ pending: 2, in_flight: 1, done: 0, failed: 0 });
      const md = readFileSync(r.path, 'utf8');
      expect(md).toContain(`position=${head}`);
      expect(md).toContain('## Work items (3)');
      expect(md).toContain('| pending | 2 |');
      expect(md).toContain('| in_flight | 1 |');
      expect(md).toContain('claimed item');
    },
  );

  itPairwise('RetrospectiveSummary writes a retro to retros/ and returns its summary', async () => {
    const dir = freshDir(label);
    ok(call(dir, 'ScaffoldFolders'));
    const a = await enqueue(dir, { title: 'went well', priority: 2 });
    const b = await enqueue(dir, { title: 'went badly', priority: 1 });
    expect(ok(call(dir, 'ClaimWorkItem', { worker: 'w' })).id).toBe(a.id);
    ok(call(dir, 'ResolveWorkItem', { id: a.id, status: 'done', worker: 'w' }));
    expect(ok(call(dir, 'ClaimWorkItem', { worker: 'w' })).id).toBe(b.id);
    ok(call(dir, 'ResolveWorkItem', { id: b.id, status: 'failed', error: 'disk full', worker: 'w' }));

    const events = (await friendly(dir, ['verify'])).events as number;
    const r = ok(call(dir, 'RetrospectiveSummary', { since: '1h' }));
    expect(r.summary).toMatchObject({ done: 1, failed: 1, reclaimed: 0, retried_items: 0, events });
    expect(events).toBeGreaterThanOrEqual(6); // 2 enqueued, 2 claimed, 2 resolved
    expect(r.since).toMatch(ISO);
    expect(r.until).toMatch(ISO);
    expect(Date.parse(r.until) - Date.parse(r.since)).toBe(3_600_000);
    expect(r.path.startsWith(`${join(dir, 'retros')}/`)).toBe(true);
    expect(readdirSync(join(dir, 'retros'))).toEqual([basename(r.path)]);
    expect(readFileSync(r.path, 'utf8')).toBe(r.markdown);
    expect(r.markdown).toContain('went well');
    expect(r.markdown).toContain('disk full');
  });

  itEmbedded('EnqueueWorkItem without MF_TRIGGER_PAYLOAD_JSON is INVALID_INPUT naming title', () => {
    const dir = freshDir(label);
    const err = fails(call(dir, 'EnqueueWorkItem'), 'INVALID_INPUT', 2);
    expect(err.field).toBe('title');
    expect(err.message).toContain('title');
    const blank = fails(
      run('EnqueueWorkItem', { HOME: home, MF_INSTANCE_DIR: dir, MF_TRIGGER_PAYLOAD_JSON: '' }),
      'INVALID_INPUT',
      2,
    );
    expect(blank.field).toBe('title');
  });

  itEmbedded('a workflow without an instance (no MF_INSTANCE_DIR / MF_AGENT_NAME) exits 2', () => {
    for (const workflow of ['ScaffoldFolders', 'ClaimWorkItem']) {
      const err = fails(run(workflow, { HOME: home }), 'INVALID_INPUT', 2);
      expect(err.message).toMatch(/MF_AGENT_NAME|MF_INSTANCE_DIR|--name|--dir/);
    }
    fails(run('ReplayPending', { HOME: home, MF_AGENT_NAME: '', MF_INSTANCE_DIR: '' }), 'INVALID_INPUT', 2);
    expect(existsSync(join(home, '.config'))).toBe(false);
  });

  it('every workflow but ScaffoldFolders refuses a missing instance: NOT_FOUND (exit 1) saying how to create it, creating nothing', () => {
    const dir = freshDir(label);
    for (const [workflow, payload] of [
      ['EnqueueWorkItem', { title: 't' }],
      ['ClaimWorkItem', {}],
      ['RegenerateDashboard', {}],
      ['RetrospectiveSummary', {}],
    ] as const) {
      const err = fails(call(dir, workflow, payload), 'NOT_FOUND', 1);
      expect(err.message, workflow).toContain('agentstate init');
      expect(err.message, workflow).toContain('ScaffoldFolders');
      expect(err.reason, workflow).toBe('no_such_instance');
    }
    const named = { HOME: home, AGENTSTATE_ROOT: freshDir(`${label}-root`), MF_AGENT_NAME: 'nobody' };
    fails(run('GetWorkItem', { ...named, MF_TRIGGER_PAYLOAD_JSON: '{"id":"wi_x"}' }), 'NOT_FOUND', 1);
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(named.AGENTSTATE_ROOT)).toBe(false);
    // ScaffoldFolders creates it; then the same call succeeds.
    ok(call(dir, 'ScaffoldFolders'));
    expect(ok(call(dir, 'ClaimWorkItem', {}))).toBeNull();
  });

  itPairwise(
    'MF_AGENT_NAME / MF_HOST with AGENTSTATE_ROOT place the instance at <root>/<host>/agents/<name>',
    () => {
      const r = freshDir(`${label}-root`);
      const env = { HOME: home, AGENTSTATE_ROOT: r, MF_AGENT_NAME: 'planner', MF_HOST: 'box-1' };
      const s = ok(run('ScaffoldFolders', env));
      expect(s).toMatchObject({
        name: 'planner',
        host: 'box-1',
        instance_dir: join(r, 'box-1', 'agents', 'planner'),
      });
      const item = ok(run('EnqueueWorkItem', { ...env, MF_TRIGGER_PAYLOAD_JSON: '{"title":"t"}' }));
      expect(
        ok(run('GetWorkItem', { ...env, MF_TRIGGER_PAYLOAD_JSON: JSON.stringify({ id: item.id }) })).id,
      ).toBe(item.id);
    },
  );

  itEmbedded(
    'MF_TRIGGER_PAYLOAD_FILE (a file, or - for stdin) carries a payload larger than an environment variable can (issue 12, point 13)',
    async () => {
      const dir = await scaffolded();
      const files = join(root, `${label.replace(/[^A-Za-z0-9_-]/g, '-')}-payloads-${++seq}`);
      mkdirSync(files, { recursive: true });
      // Just under the 1 MiB limit of one JSON value: eight times what Linux lets one variable carry.
      const blob = 'x'.repeat(1_000_000);
      const text = JSON.stringify({ title: 'big', payload: { blob } });
      if (process.platform === 'linux') {
        const viaEnv = spawnSync(process.execPath, ['-e', ''], { env: { MF_TRIGGER_PAYLOAD_JSON: text } });
        expect((viaEnv.error as NodeJS.ErrnoException | undefined)?.code).toBe('E2BIG');
      }
      const file = join(files, 'payload.json');
      writeFileSync(file, text);
      const env = { HOME: home, MF_INSTANCE_DIR: dir };
      const fromFile = ok(run('EnqueueWorkItem', { ...env, MF_TRIGGER_PAYLOAD_FILE: file }));
      expect([fromFile.title, fromFile.payload.blob.length]).toEqual(['big', blob.length]);
      const fromStdin = ok(run('EnqueueWorkItem', { ...env, MF_TRIGGER_PAYLOAD_FILE: '-' }, text));
      expect(fromStdin.payload.blob).toBe(blob);
      expect(
        ok(run('GetWorkItem', { ...env, MF_TRIGGER_PAYLOAD_JSON: JSON.stringify({ id: fromFile.id }) }))
          .payload.blob,
      ).toBe(blob);
    },
  );

  itEmbedded(
    'a hostile payload file is refused unread, INVALID_INPUT (exit 2), and nothing is written (issue 12, point 13)',
    () => {
      const files = join(root, `${label.replace(/[^A-Za-z0-9_-]/g, '-')}-hostile-${++seq}`);
      mkdirSync(files, { recursive: true });
      const fifo = join(files, 'fifo');
      expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
      const huge = join(files, 'huge.json');
      // One byte over the 4 MiB input cap.
      writeFileSync(huge, `{"title":"${'x'.repeat(4 * 1024 * 1024 - 11)}"}`);
      const bad = join(files, 'bad.json');
      writeFileSync(bad, Buffer.from([0x7b, 0xff, 0x7d]));
      const cases: Array<[string, Env, RegExp]> = [
        ['a FIFO', { MF_TRIGGER_PAYLOAD_FILE: fifo }, /FIFO.*refused unread/],
        ['a device', { MF_TRIGGER_PAYLOAD_FILE: '/dev/zero' }, /device.*refused unread/],
        ['a directory', { MF_TRIGGER_PAYLOAD_FILE: files }, /directory.*refused unread/],
        ['over the cap', { MF_TRIGGER_PAYLOAD_FILE: huge }, /larger than the 4194304 byte limit/],
        ['invalid UTF-8', { MF_TRIGGER_PAYLOAD_FILE: bad }, /not valid UTF-8/],
        ['missing', { MF_TRIGGER_PAYLOAD_FILE: join(files, 'nope.json') }, /does not exist/],
        [
          'both variables',
          { MF_TRIGGER_PAYLOAD_FILE: huge, MF_TRIGGER_PAYLOAD_JSON: '{"title":"t"}' },
          /both MF_TRIGGER_PAYLOAD_JSON and MF_TRIGGER_PAYLOAD_FILE/,
        ],
      ];
      // A FIFO with bytes waiting in it, held open here (so opening it cannot block): what the run leaves there.
      const full = join(files, 'full-fifo');
      expect(spawnSync('mkfifo', [full]).status).toBe(0);
      const waiting = '{"title":"waiting in the fifo"}';
      const fd = openSync(full, constants.O_RDWR | constants.O_NONBLOCK);
      writeSync(fd, waiting);
      cases.push(['a FIFO with bytes in it', { MF_TRIGGER_PAYLOAD_FILE: full }, /FIFO.*refused unread/]);
      try {
        for (const [what, extra, message] of cases) {
          const dir = freshDir(label);
          // The run ended on its own, exit 2 (`fails`): one blocked on the FIFO's open, or reading /dev/zero
          // without end, is killed by the runner's guard and has no exit code.
          const err = fails(
            run('EnqueueWorkItem', { HOME: home, MF_INSTANCE_DIR: dir, ...extra }),
            'INVALID_INPUT',
            2,
          );
          expect(err.message, what).toMatch(message);
          expect(err.message, what).toMatch(/MF_TRIGGER_PAYLOAD_FILE/);
          expect(err.field, what).toBe('payload');
          // Refused before the instance was opened: no folder, no database, no schema written.
          expect(existsSync(dir), what).toBe(false);
        }
        // Unread: every byte is still in the FIFO (none at all: EAGAIN).
        const left = Buffer.alloc(waiting.length + 1);
        let kept = '';
        try {
          kept = left.subarray(0, readSync(fd, left, 0, left.length, null)).toString();
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
        }
        expect(kept, 'what the refusals left in the FIFO').toBe(waiting);
      } finally {
        closeSync(fd);
      }
    },
  );

  itEmbedded(
    'a payload is a JSON object: null is refused like a list or a number, empty means {} (issue 12, point 14)',
    async () => {
      const dir = freshDir(label);
      const env = { HOME: home, MF_INSTANCE_DIR: dir };
      for (const text of ['null', '[]', '5', '"x"', ' null ']) {
        const err = fails(
          run('ClaimWorkItem', { ...env, MF_TRIGGER_PAYLOAD_JSON: text }),
          'INVALID_INPUT',
          2,
        );
        expect(err.message, text).toMatch(
          /^MF_TRIGGER_PAYLOAD_JSON must be a JSON object of the workflow's fields, not /,
        );
        expect(err.field, text).toBe('payload');
      }
      expect(existsSync(dir)).toBe(false);
      ok(call(dir, 'ScaffoldFolders'));
      const file = join(root, `${label.replace(/[^A-Za-z0-9_-]/g, '-')}-null-${++seq}.json`);
      writeFileSync(file, 'null');
      const fromFile = fails(
        run('ClaimWorkItem', { ...env, MF_TRIGGER_PAYLOAD_FILE: file }),
        'INVALID_INPUT',
        2,
      );
      expect(fromFile.message).toMatch(/^MF_TRIGGER_PAYLOAD_FILE must be a JSON object/);
      // Unset, empty or blank (variable or file) is {}.
      writeFileSync(file, '\n');
      for (const extra of [
        {},
        { MF_TRIGGER_PAYLOAD_JSON: '' },
        { MF_TRIGGER_PAYLOAD_JSON: '  ' },
        { MF_TRIGGER_PAYLOAD_FILE: file },
      ]) {
        expect(ok(run('ClaimWorkItem', { ...env, ...extra }))).toBeNull();
      }
      // The library holds the same rule: no payload is {}, null is refused.
      const inst = await openInstance({ dir: freshDir(`${label}-lib`), url: storage.libraryUrl });
      try {
        expect(await runWorkflow(inst, 'ClaimWorkItem')).toBeNull();
        const e = await runWorkflow(inst, 'ClaimWorkItem', null).catch((x: unknown) => x);
        expect(isAgentStateError(e, 'INVALID_INPUT')).toBe(true);
      } finally {
        await inst.close();
      }
    },
  );

  it('the library (runWorkflow) gives the same documents and errors as this runner', async () => {
    const viaRunner = await scaffolded();
    const viaLib = freshDir(`${label}-lib`);
    // Same name as the runner's instance (default lease owner and actor); on PostgreSQL in a schema of its
    // own, since the same host/name in one schema would be the same instance.
    const inst = await openInstance({ dir: viaLib, name: basename(viaRunner), url: storage.libraryUrl });
    try {
      const json = (x: unknown): Doc => JSON.parse(JSON.stringify(x));
      const payload = {
        title: 'same everywhere',
        kind: 'k',
        payload: { a: [1, 2, { b: null }] },
        priority: 3,
        idempotency_key: 'same-key',
        max_attempts: 2,
      };
      const a = ok(call(viaRunner, 'EnqueueWorkItem', payload));
      const b = json(await runWorkflow(inst, 'EnqueueWorkItem', payload));
      expect(Object.keys(b).sort()).toEqual(Object.keys(a).sort());
      expect(masked(b)).toEqual(masked(a));

      // A lease that cannot run out while the subprocesses below run, however loaded the machine.
      const claimA = ok(call(viaRunner, 'ClaimWorkItem', { worker: 'w', lease_ms: 600_000 }));
      const claimB = json(await runWorkflow(inst, 'ClaimWorkItem', { worker: 'w', lease_ms: 600_000 }));
      expect(masked(claimB)).toEqual(masked(claimA));
      expect(ok(call(viaRunner, 'ClaimWorkItem', {}))).toBeNull();
      expect(await runWorkflow(inst, 'ClaimWorkItem', {})).toBeNull();

      const annA = ok(call(viaRunner, 'AnnotateWorkItem', { id: a.id, notes: { s: 1 } }));
      const annB = json(await runWorkflow(inst, 'AnnotateWorkItem', { id: b.id, notes: { s: 1 } }));
      expect(masked(annB)).toEqual(masked(annA));

      const evA = ok(call(viaRunner, 'AppendEvent', { type: 'x.y', data: { z: 1 }, stream: 's' }));
      const evB = json(await runWorkflow(inst, 'AppendEvent', { type: 'x.y', data: { z: 1 }, stream: 's' }));
      expect(Object.keys(evB).sort()).toEqual(Object.keys(evA).sort());
      expect({ ...evB, created_at: 0, hash: 0, prev_hash: 0, work_item_id: 0 }).toEqual({
        ...evA,
        created_at: 0,
        hash: 0,
        prev_hash: 0,
        work_item_id: 0,
      });

      const resA = ok(
        call(viaRunner, 'ResolveWorkItem', { id: a.id, status: 'done', worker: 'w', result: [1] }),
      );
      const resB = json(
        await runWorkflow(inst, 'ResolveWorkItem', { id: b.id, status: 'done', worker: 'w', result: [1] }),
      );
      expect(masked(resB)).toEqual(masked(resA));

      const replayA = ok(call(viaRunner, 'ReplayPending'));
      expect(json(await runWorkflow(inst, 'ReplayPending', {}))).toEqual(replayA);
      const dashA = ok(call(viaRunner, 'RegenerateDashboard'));
      const dashB = json(await runWorkflow(inst, 'RegenerateDashboard'));
      expect({ ...dashB, path: basename(dashB.path) }).toEqual({ ...dashA, path: basename(dashA.path) });

      const retroA = ok(call(viaRunner, 'RetrospectiveSummary', { since: '1h' }));
      const retroB = json(await runWorkflow(inst, 'RetrospectiveSummary', { since: '1h' }));
      expect(Object.keys(retroB).sort()).toEqual(Object.keys(retroA).sort());
      // Durations are wall-clock time between the claim and the resolve, so they differ.
      const counts = (x: Doc) => ({ ...x.summary, median_duration_ms: 0, p95_duration_ms: 0 });
      expect(counts(retroB)).toEqual(counts(retroA));

      // Errors: the same code and field.
      const errA = fails(call(viaRunner, 'GetWorkItem', { id: 'wi_nope' }), 'NOT_FOUND', 1);
      const errB = await runWorkflow(inst, 'GetWorkItem', { id: 'wi_nope' }).catch((e: unknown) => e);
      expect(isAgentStateError(errB, 'NOT_FOUND')).toBe(true);
      expect((errB as Error).message).toBe(errA.message);

      const badA = fails(call(viaRunner, 'EnqueueWorkItem', { title: 5 }), 'INVALID_INPUT', 2);
      const badB = await runWorkflow(inst, 'EnqueueWorkItem', { title: 5 }).catch((e: unknown) => e);
      expect(isAgentStateError(badB, 'INVALID_INPUT')).toBe(true);
      expect({ message: (badB as Error).message, field: (badB as Doc).details.field }).toEqual({
        message: badA.message,
        field: badA.field,
      });
    } finally {
      await inst.close();
    }
  });
});

describe('workflow entry points', () => {
  it("the bundle's ten workflows are registered, and every registered workflow has a bun script", () => {
    const bundle = [
      'ScaffoldFolders',
      'EnqueueWorkItem',
      'ClaimWorkItem',
      'ResolveWorkItem',
      'GetWorkItem',
      'AnnotateWorkItem',
      'AppendEvent',
      'ReplayPending',
      'RegenerateDashboard',
      'RetrospectiveSummary',
    ];
    expect(WORKFLOW_NAMES).toEqual(expect.arrayContaining(bundle));
    for (const name of WORKFLOW_NAMES) {
      expect(existsSync(join(ROOT, 'skill/scripts', `${name}.ts`)), name).toBe(true);
    }
  });

  it('the CLI takes the payload from --payload and the instance from --dir as well', () => {
    const dir = freshDir('flags');
    ok(runCli(['ScaffoldFolders', '--dir', dir], { HOME: home }));
    const item = ok(
      runCli(['EnqueueWorkItem', '--dir', dir, '--payload', '{"title":"by flag"}'], { HOME: home }),
    );
    expect(item.title).toBe('by flag');
    const viaStdin = ok(
      runCli(
        ['GetWorkItem', '--dir', dir, '--payload', '-'],
        { HOME: home },
        JSON.stringify({ id: item.id }),
      ),
    );
    expect(viaStdin).toEqual(item);
    // --payload wins over MF_TRIGGER_PAYLOAD_JSON.
    const flagWins = ok(
      runCli(['EnqueueWorkItem', '--dir', dir, '--payload', '{"title":"flag"}'], {
        HOME: home,
        MF_TRIGGER_PAYLOAD_JSON: '{"title":"env"}',
      }),
    );
    expect(flagWins.title).toBe('flag');
  });
});
